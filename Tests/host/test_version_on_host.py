"""`padbridge --version` prints the version written in Sources/padbridge/Version.swift, the one place it is kept
(scripts/package reads the same line for the Debian package's version)."""

import os
import re
import subprocess
from pathlib import Path

BINARY = os.environ.get("PADBRIDGE_BIN", ".build/debug/padbridge")


def test_version_is_the_one_in_version_swift():
    source = (Path(__file__).resolve().parents[2] / "Sources/padbridge/Version.swift").read_text()
    expected = re.search(r'^let padbridgeVersion = "(.*)"$', source, re.M).group(1)
    result = subprocess.run([BINARY, "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == expected, (result.stdout, result.stderr, expected)

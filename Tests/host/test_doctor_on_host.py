"""`padbridge doctor` on the host, which has no /dev/uinput: it must fail and say what to do (the VM suite checks
that it passes where everything is in place)."""

import os
import subprocess

import pytest

BINARY = os.environ.get("PADBRIDGE_BIN", ".build/debug/padbridge")


def test_doctor_fails_and_names_modprobe_where_uinput_is_missing():
    if os.path.exists("/dev/uinput"):
        pytest.skip("this host has /dev/uinput; the kernel suite checks doctor where everything is in place")
    result = subprocess.run([BINARY, "doctor"], capture_output=True, text=True, timeout=60)
    print(result.stdout, result.stderr)
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    problem = next(i for i, line in enumerate(lines) if line.startswith("PROBLEM /dev/uinput:"))
    assert "not loaded" in lines[problem] or "no uinput module" in lines[problem], lines[problem]
    fix = lines[problem + 1].strip()
    assert fix.startswith("fix: "), fix
    assert "sudo modprobe uinput" in fix or "CONFIG_INPUT_UINPUT" in fix, fix
    assert lines[-1].endswith('block padbridge; see "fix" above.'), lines[-1]

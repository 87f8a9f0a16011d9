"""`padbridge hosts` and `doctor` where no avahi-daemon answers (the VM suite runs both sides with Avahi): `hosts`
exits 1 naming the command that starts the daemon; `doctor` gives it as advice, not as a problem."""

import os
import subprocess

BINARY = os.environ.get("PADBRIDGE_BIN", ".build/debug/padbridge")
# A bus address where nothing listens: the same answer whether or not this machine runs a system bus.
NO_BUS = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/padbridge-test-bus"}


def test_hosts_without_avahi_fails_with_the_fix(tmp_path):
    result = subprocess.run([BINARY, "hosts", "--config-dir", str(tmp_path)], capture_output=True, text=True,
                            timeout=60, env=NO_BUS)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert "cannot look for hosts on the LAN" in result.stderr, result.stderr
    assert "sudo systemctl enable --now avahi-daemon" in result.stderr, result.stderr


def test_doctor_reports_avahi_as_advice(tmp_path):
    result = subprocess.run([BINARY, "doctor"], capture_output=True, text=True, timeout=60, env=NO_BUS)
    lines = result.stdout.splitlines()
    line = next(i for i, text in enumerate(lines) if "avahi-daemon:" in text)
    assert lines[line].startswith("advice"), lines[line]
    assert "systemctl enable --now avahi-daemon" in lines[line + 1], lines[line:line + 2]

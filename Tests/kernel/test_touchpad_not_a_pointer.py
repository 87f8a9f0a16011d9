"""Issue 42, item 5: the touchpad of padbridge's own virtual DualSense (a remap's output here; a forwarded pad's is
made the same way, with the same phys prefix) is never the desktop's pointer. udev/70-padbridge.rules marks it
LIBINPUT_IGNORE_DEVICE; libinput (a desktop's reader of input devices) is asked which devices it takes, without the
rule (it takes the touchpad: the test can fail) and with it (it does not). A `padbridge virtual` DualSense, which
stands in for a physical pad and is no bridge's output, is still taken: the rule is about padbridge's outputs only.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import DEADLINE, start_dualsense
from hiding import settle, udevadm

RULE = Path("/etc/udev/rules.d/70-padbridge.rules")


def libinput_devices() -> dict[str, str]:
    """`libinput list-devices` (udev backend, seat0): each device's name -> its capabilities."""
    result = subprocess.run(["libinput", "list-devices"], capture_output=True, text=True, timeout=DEADLINE)
    assert result.returncode == 0, result.stderr
    devices, name = {}, None
    for line in result.stdout.splitlines():
        if line.startswith("Device:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("Capabilities:") and name is not None:
            devices[name] = line.split(":", 1)[1].strip()
    return devices


def udev_property(node: str, name: str) -> str | None:
    result = subprocess.run(["udevadm", "info", "--query=property", f"--name={node}"], capture_output=True, text=True,
                            timeout=DEADLINE)
    assert result.returncode == 0, result.stderr
    for line in result.stdout.splitlines():
        key, _, value = line.partition("=")
        if key == name:
            return value
    return None


def touchpad_of(ready: dict) -> str:
    (touchpad,) = [node for node in ready["eventNodes"]
                   if Path(f"/sys/class/input/{Path(node).name}/device/name").read_text().strip().endswith("Touchpad")]
    return touchpad


def remapped_dualsense(padbridge, seed: str) -> tuple[dict, dict]:
    """A stand-in DualSense (padbridge virtual) remapped as a DualSense: (the stand-in's ready, the output's ready)."""
    _, stand_in, _ = start_dualsense(padbridge, "--seed", seed, name=f"stand-in {seed}")
    remap = padbridge(stand_in["hidraw"], "--as", "dualsense", command="remap")
    output = remap.wait_ready()
    assert output["kind"] == "dualsense" and len(output["eventNodes"]) == 3, output
    return stand_in, output


def test_a_bridged_dualsenses_touchpad_is_not_taken_by_libinput(padbridge):
    assert not RULE.exists(), f"{RULE} was left by another test"
    stand_in, output = remapped_dualsense(padbridge, "touchpad-one")
    touchpad = touchpad_of(output)
    settle()
    # Without padbridge's rule, libinput takes the bridge's virtual touchpad as a pointer (the finding).
    assert udev_property(touchpad, "ID_INPUT_TOUCHPAD") == "1"
    assert udev_property(touchpad, "LIBINPUT_IGNORE_DEVICE") is None
    name = Path(f"/sys/class/input/{Path(touchpad).name}/device/name").read_text().strip()
    without_rule = libinput_devices()
    assert name in without_rule and "pointer" in without_rule[name], without_rule

    RULE.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy("udev/70-padbridge.rules", RULE)
    try:
        udevadm("control", "--reload")
        # The input device first (it takes its HID parent's phys), then the node (it takes the input device's).
        input_device = Path(f"/sys/class/input/{Path(touchpad).name}/device").resolve()
        udevadm("trigger", "--action=change", str(input_device))
        settle()
        udevadm("trigger", "--action=change", touchpad)
        settle()
        assert udev_property(touchpad, "LIBINPUT_IGNORE_DEVICE") == "1", udev_property(touchpad, "HID_PHYS")
        with_rule = libinput_devices()
        assert name not in with_rule, with_rule

        # A bridge's pad made while the rule is in place is never taken, from its first event; the stand-in (a
        # `padbridge virtual` pad, no bridge's output) still is.
        second_stand_in, second = remapped_dualsense(padbridge, "touchpad-two")
        settle()
        second_touchpad = touchpad_of(second)
        assert udev_property(second_touchpad, "LIBINPUT_IGNORE_DEVICE") == "1"
        second_name = Path(f"/sys/class/input/{Path(second_touchpad).name}/device/name").read_text().strip()
        devices = libinput_devices()
        assert second_name not in devices, devices
        assert udev_property(touchpad_of(second_stand_in), "LIBINPUT_IGNORE_DEVICE") is None
    finally:
        RULE.unlink()
        udevadm("control", "--reload")

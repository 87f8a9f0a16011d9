"""What every other test in this directory relies on. These fail (not skip): the suite is required in CI."""

import os
import shutil
import stat

import evdev

from conftest import padbridge_binary


def test_kernel_interfaces_exist():
    for path in ("/dev/uinput", "/dev/uhid"):
        assert os.path.exists(path) and stat.S_ISCHR(os.stat(path).st_mode), \
            f"{path} missing: modprobe uinput uhid (scripts/kernel-suite does this inside the VM)"
    loaded = {line.split()[0] for line in open("/proc/modules")}
    assert "hid_playstation" in loaded or os.path.isdir("/sys/bus/hid/drivers/playstation"), \
        "hid-playstation is not loaded: modprobe hid-playstation"


def test_readers_and_binary_available():
    for tool in ("evtest", "fftest"):
        assert shutil.which(tool), f"{tool} missing: apt-get install evtest joystick (scripts/kernel-deps)"
    assert os.environ.get("PYSDL2_DLL_PATH"), "set PYSDL2_DLL_PATH, or pysdl2 runs gcc and takes a minute here"
    assert hasattr(evdev, "InputDevice")
    padbridge_binary()

#!/usr/bin/python3
"""Stand-in pads for scripts/test-package, inside the booted VM (Debian's python3-evdev).

  pads.py id                   plugs the stand-in in, prints its ID as `padbridge list --json` shows it, unplugs it
  pads.py forward KEY          plugs the stand-in in, waits for the virtual pad a padbridge bridge makes of it (a new
                               node whose phys starts with padbridge-output/), taps A on the stand-in and waits for KEY
                               (BTN_A, BTN_B, ...) pressed on that virtual pad; prints what it saw and unplugs it
  pads.py hidden STOP...       plugs the stand-in in, waits for the virtual pad a bridge makes of it and for the
                               stand-in's own node to be hidden (mode 0000, owner root: padbridge-hide), runs STOP (the
                               command that ends the bridge), waits for the node to be given back, unplugs it

The stand-in is a uinput pad with xpad's ids, keys and axes (what the kernel shows for a wired Xbox 360 pad); its phys
is its own, so padbridge takes it for a physical pad. Exit status 0 when it saw what it waited for.
"""

import json
import select
import subprocess
import sys
import time

import evdev
from evdev import AbsInfo, UInput, ecodes as e

NAME = "padbridge package-test stand-in"
DEADLINE_SECONDS = 120


def stand_in() -> UInput:
    stick = AbsInfo(value=0, min=-32768, max=32767, fuzz=16, flat=128, resolution=0)
    trigger = AbsInfo(value=0, min=0, max=255, fuzz=0, flat=0, resolution=0)
    hat = AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
    capabilities = {
        e.EV_KEY: [e.BTN_A, e.BTN_B, e.BTN_X, e.BTN_Y, e.BTN_TL, e.BTN_TR, e.BTN_SELECT, e.BTN_START, e.BTN_MODE,
                   e.BTN_THUMBL, e.BTN_THUMBR],
        e.EV_ABS: [(e.ABS_X, stick), (e.ABS_Y, stick), (e.ABS_RX, stick), (e.ABS_RY, stick), (e.ABS_Z, trigger),
                   (e.ABS_RZ, trigger), (e.ABS_HAT0X, hat), (e.ABS_HAT0Y, hat)],
    }
    return UInput(capabilities, name=NAME, vendor=0x045E, product=0x028E, version=0x0114, bustype=e.BUS_USB,
                  phys="padbridge-package-test/input0")


def fail(message: str) -> None:
    print(f"pads.py: {message}", flush=True)
    sys.exit(1)


def print_id() -> None:
    with stand_in():
        deadline = time.monotonic() + DEADLINE_SECONDS
        while time.monotonic() < deadline:
            listed = json.loads(subprocess.run(["padbridge", "list", "--json"], check=True, capture_output=True,
                                               text=True).stdout)
            ids = [pad["id"] for pad in listed if pad["name"] == NAME]
            if ids:
                print(ids[0], flush=True)
                return
            time.sleep(0.2)
        fail("the stand-in never showed in `padbridge list --json`")


def wait_for_virtual_pad(before: set, deadline: float) -> evdev.InputDevice:
    while True:
        for path in sorted(set(evdev.list_devices()) - before):
            try:
                device = evdev.InputDevice(path)
            except OSError:
                continue
            if (device.phys or "").startswith("padbridge-output/"):
                return device
        if time.monotonic() > deadline:
            fail("no padbridge virtual pad appeared for the stand-in")
        time.sleep(0.1)


def hidden(stop: list[str]) -> None:
    import os
    before = set(evdev.list_devices())
    deadline = time.monotonic() + DEADLINE_SECONDS
    with stand_in() as pad:
        node = pad.device.path
        # What udev made of the node (its group and mode come after the node itself): what is to be given back. The
        # bridge takes the pad only after the hotplug burst has settled and the pads were listed, well after this.
        subprocess.run(["udevadm", "settle"], check=False, timeout=DEADLINE_SECONDS)
        visible = os.stat(node)
        if visible.st_mode & 0o7777 == 0:
            fail(f"{node} was hidden before udev settled: nothing to compare the give-back with")
        target = wait_for_virtual_pad(before, deadline)
        print(f"pads.py: virtual pad {target.path}; the stand-in is {node}, mode {visible.st_mode & 0o7777:o}", flush=True)
        while (status := os.stat(node)).st_mode & 0o7777 != 0 or status.st_uid != 0:
            if time.monotonic() > deadline:
                fail(f"{node} not hidden: mode {status.st_mode & 0o7777:o}, owner {status.st_uid}:{status.st_gid}")
            time.sleep(0.1)
        print(f"pads.py: {node} is hidden (mode 0000, owner root) while the bridge runs", flush=True)
        subprocess.run(stop, check=True, timeout=DEADLINE_SECONDS)
        while (status := os.stat(node)).st_mode & 0o7777 != visible.st_mode & 0o7777 or status.st_gid != visible.st_gid:
            if time.monotonic() > deadline:
                fail(f"{node} not given back: mode {status.st_mode & 0o7777:o}, owner {status.st_uid}:{status.st_gid}")
            time.sleep(0.1)
        print(f"pads.py: {node} given back: mode {status.st_mode & 0o7777:o}, group {status.st_gid}", flush=True)


def forward(key_name: str) -> None:
    key = e.ecodes[key_name]
    before = set(evdev.list_devices())
    deadline = time.monotonic() + DEADLINE_SECONDS
    with stand_in() as pad:
        target = wait_for_virtual_pad(before, deadline)
        print(f"pads.py: virtual pad {target.path} ({target.name}, phys {target.phys})", flush=True)
        while time.monotonic() < deadline:
            pad.write(e.EV_KEY, e.BTN_A, 1)
            pad.syn()
            tap_deadline = time.monotonic() + 2
            while time.monotonic() < tap_deadline:
                ready, _, _ = select.select([target.fd], [], [], 0.2)
                if not ready:
                    continue
                for event in target.read():
                    if event.type == e.EV_KEY and event.value == 1:
                        name = e.BTN.get(event.code, e.KEY.get(event.code, event.code))
                        print(f"pads.py: A on the stand-in came out as {name}", flush=True)
                        pad.write(e.EV_KEY, e.BTN_A, 0)
                        pad.syn()
                        if event.code == key:
                            return
                        fail(f"expected {key_name}")
            pad.write(e.EV_KEY, e.BTN_A, 0)
            pad.syn()
        fail(f"no key press on {target.path} within {DEADLINE_SECONDS} s of tapping A")


if __name__ == "__main__":
    if sys.argv[1:] == ["id"]:
        print_id()
    elif len(sys.argv) == 3 and sys.argv[1] == "forward":
        forward(sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "hidden":
        hidden(sys.argv[2:])
    else:
        fail(__doc__)

"""Helpers of the discovery tests and of every test that lists pads: `padbridge list --json` (list_json), the
controller it lists with a given node (controller_with_node), padbridge run to its end (run_padbridge), and a generic
pad made with python-evdev that only SDL's game-controller database knows how to lay out (make_dual_action)."""

from __future__ import annotations

import json
import subprocess

import evdev
from evdev import ecodes

from conftest import DEADLINE, padbridge_binary

# Logitech Dual Action (046d:c216): hid-generic makes it a joystick with BTN_TRIGGER..BTN_BASE6, four axes and a hat.
# SDL2's built-in database maps it ("Logitech Dual Action", a:b1, b:b2, x:b0, y:b3, ... lefttrigger:b6 ...);
# padbridge has no built-in layout for it, so its standard layout can only come from SDL.
DUAL_ACTION_NAME = "Logitech Logitech Dual Action"
DUAL_ACTION_KEYS = list(range(ecodes.BTN_TRIGGER, ecodes.BTN_BASE6 + 1))


def make_dual_action() -> evdev.UInput:
    stick = evdev.AbsInfo(value=128, min=0, max=255, fuzz=0, flat=15, resolution=0)
    hat = evdev.AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
    capabilities = {
        ecodes.EV_KEY: DUAL_ACTION_KEYS,
        ecodes.EV_ABS: [(ecodes.ABS_X, stick), (ecodes.ABS_Y, stick), (ecodes.ABS_Z, stick), (ecodes.ABS_RZ, stick),
                        (ecodes.ABS_HAT0X, hat), (ecodes.ABS_HAT0Y, hat)],
    }
    return evdev.UInput(capabilities, name=DUAL_ACTION_NAME, vendor=0x046D, product=0xC216, version=0x0110,
                        bustype=ecodes.BUS_USB)


def run_padbridge(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([padbridge_binary(), *args], capture_output=True, text=True, timeout=DEADLINE)
    if check and result.returncode != 0:
        raise AssertionError(f"padbridge {' '.join(args)} exited with {result.returncode}:\n{result.stderr}")
    return result


def list_json() -> list[dict]:
    result = run_padbridge("list", "--json")
    controllers = json.loads(result.stdout)
    assert isinstance(controllers, list), result.stdout
    return controllers


def controller_with_node(controllers: list[dict], path: str) -> dict:
    for controller in controllers:
        nodes = controller["nodes"]
        if path == nodes["hidraw"] or path in [node["path"] for node in nodes["evdev"]]:
            return controller
    raise AssertionError(f"no controller has {path}: {json.dumps(controllers, indent=1)}")

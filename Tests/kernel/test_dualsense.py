"""`padbridge virtual --type dualsense`: a uhid DualSense that hid-playstation binds. The kernel driver is the
independent reader: it parses padbridge's input reports into evdev events and turns LED-class and FF requests into
output reports that padbridge must decode into feedback lines."""

import math
import os
import re
import stat
import time

import evdev
import pytest
from evdev import ecodes as e

from conftest import (DEADLINE, describe_events, expect_dpad_on_hat0, expect_events, input_sysfs_name, is_rumble,
                      read_available, read_until_gone, rumble_effect, start_dualsense, wait_abs)

NAME = "padbridge test DualSense"
MAC = re.compile(r"[0-9a-f]{2}(:[0-9a-f]{2}){5}")

BUTTONS = {"a": e.BTN_SOUTH, "b": e.BTN_EAST, "x": e.BTN_WEST, "y": e.BTN_NORTH, "leftshoulder": e.BTN_TL,
           "rightshoulder": e.BTN_TR, "back": e.BTN_SELECT, "start": e.BTN_START, "guide": e.BTN_MODE,
           "leftstick": e.BTN_THUMBL, "rightstick": e.BTN_THUMBR}


def stick_u8(value):
    return (value + 32768) >> 8


def accel_lsb(meters_per_s2):
    """hid-playstation's accel axes after calibration with padbridge's identity calibration: 8192 per g."""
    return round(meters_per_s2 / 9.80665 * 8192)


def gyro_lsb(radians_per_s):
    """Raw gyro is 1/16 °/s; the kernel scales it by 64 (identity calibration) to 1024 per °/s."""
    return round(math.degrees(radians_per_s) * 16) * 64


def test_hid_playstation_binds_with_our_identity(padbridge):
    pad, ready, nodes = start_dualsense(padbridge, "--seed", "kernel-suite-identity", name=NAME)
    assert MAC.fullmatch(ready["mac"] or ""), ready
    names = [evdev.InputDevice(path).name for path in ready["eventNodes"]]
    assert names == [NAME, f"{NAME} Motion Sensors", f"{NAME} Touchpad"], \
        f"eventNodes must list gamepad, motion sensors, touchpad in that order: {names}"
    for role, device in nodes.items():
        assert device.uniq == ready["mac"], f"{role}: uniq {device.uniq!r} != mac {ready['mac']!r}"
        assert (device.info.bustype, device.info.vendor, device.info.product) == (e.BUS_BLUETOOTH, 0x054C, 0x0CE6), \
            f"{role}: {device.info}"
        assert device.info.version & 0x8000, f"{role}: version {device.info.version:#x} lacks hid-playstation's bit"
    assert ready["hidraw"] and stat.S_ISCHR(os.stat(ready["hidraw"]).st_mode), ready
    assert os.path.isdir(ready["sysfs"]), ready
    # the nodes are hid-playstation's, with its capabilities
    gamepad_caps = nodes["gamepad"].capabilities()
    assert e.BTN_SOUTH in gamepad_caps[e.EV_KEY] and e.FF_RUMBLE in gamepad_caps.get(e.EV_FF, [])
    assert e.INPUT_PROP_ACCELEROMETER in nodes["motion"].input_props()
    assert e.INPUT_PROP_BUTTONPAD in nodes["touchpad"].input_props()
    assert os.path.isdir(f"/sys/class/power_supply/ps-controller-battery-{ready['mac']}")


def test_seed_determines_the_mac(padbridge):
    first = padbridge("--type", "dualsense", "--seed", "kernel-suite-alpha")
    other = padbridge("--type", "dualsense", "--seed", "kernel-suite-beta")
    mac_alpha = first.wait_ready()["mac"]
    mac_beta = other.wait_ready()["mac"]
    assert MAC.fullmatch(mac_alpha or "") and MAC.fullmatch(mac_beta or ""), (mac_alpha, mac_beta)
    assert mac_alpha != mac_beta, "different seeds gave the same MAC"
    assert first.stop() == 0
    again = padbridge("--type", "dualsense", "--seed", "kernel-suite-alpha")
    assert again.wait_ready()["mac"] == mac_alpha, "the same seed gave a different MAC on the next run"


def test_buttons(padbridge):
    pad, _, nodes = start_dualsense(padbridge, name=NAME)
    gamepad = nodes["gamepad"]
    for name, code in BUTTONS.items():
        pad.button(name, True)
        expect_events(gamepad, [(e.EV_KEY, code, 1)])
        pad.button(name, False)
        expect_events(gamepad, [(e.EV_KEY, code, 0)])
    pad.button("touchpad", True)
    expect_events(nodes["touchpad"], [(e.EV_KEY, e.BTN_LEFT, 1)])
    pad.button("touchpad", False)
    expect_events(nodes["touchpad"], [(e.EV_KEY, e.BTN_LEFT, 0)])


def test_sticks_triggers_and_dpad(padbridge):
    pad, _, nodes = start_dualsense(padbridge, name=NAME)
    gamepad = nodes["gamepad"]
    assert gamepad.absinfo(e.ABS_X).value == 128 and gamepad.absinfo(e.ABS_Z).value == 0, "not neutral at start"
    sticks = {"leftx": (e.ABS_X, -12000), "lefty": (e.ABS_Y, 32767), "rightx": (e.ABS_RX, -32768),
              "righty": (e.ABS_RY, 10000)}
    for name, (code, value) in sticks.items():
        pad.axis(name, value)
        expect_events(gamepad, [(e.EV_ABS, code, stick_u8(value))])
    assert [stick_u8(v) for _, v in sticks.values()] == [81, 255, 0, 167]
    pad.axis("lefttrigger", 32767)
    expect_events(gamepad, [(e.EV_ABS, e.ABS_Z, 255)])
    pad.axis("righttrigger", 16384)
    expect_events(gamepad, [(e.EV_ABS, e.ABS_RZ, lambda v: v in (127, 128))])
    expect_dpad_on_hat0(pad, gamepad)
    for name in sticks:
        pad.axis(name, 0)
    pad.axis("lefttrigger", 0)
    pad.axis("righttrigger", 0)
    pad.button("dpup", False)
    pad.button("dpright", False)
    wait_abs(gamepad, {e.ABS_X: 128, e.ABS_Y: 128, e.ABS_RX: 128, e.ABS_RY: 128, e.ABS_Z: 0, e.ABS_RZ: 0,
                       e.ABS_HAT0X: 0, e.ABS_HAT0Y: 0})


class Touches:
    """Follows the multitouch protocol B state of a touchpad node from the events read."""

    def __init__(self, device):
        self.device = device
        self.slot = device.absinfo(e.ABS_MT_SLOT).value
        self.slots = {}  # slot -> {"id": tracking id, "x": .., "y": ..}
        self.keys = {}

    def feed(self, events):
        for event in events:
            if event.type == e.EV_KEY:
                self.keys[event.code] = event.value
            if event.type != e.EV_ABS:
                continue
            if event.code == e.ABS_MT_SLOT:
                self.slot = event.value
            elif event.code == e.ABS_MT_TRACKING_ID:
                if event.value == -1:
                    self.slots.pop(self.slot, None)
                else:
                    self.slots[self.slot] = {"id": event.value}
            elif event.code in (e.ABS_MT_POSITION_X, e.ABS_MT_POSITION_Y):
                self.slots.setdefault(self.slot, {})["x" if event.code == e.ABS_MT_POSITION_X else "y"] = event.value

    def positions(self):
        return {slot: (s.get("x"), s.get("y")) for slot, s in self.slots.items()}

    def wait(self, expected, touching, timeout=DEADLINE):
        deadline = time.monotonic() + timeout
        while not (self.positions() == expected and self.keys.get(e.BTN_TOUCH, 0) == touching):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"touchpad contacts {self.positions()} BTN_TOUCH {self.keys.get(e.BTN_TOUCH)}; "
                                     f"want {expected} BTN_TOUCH {touching}")
            self.feed(read_available(self.device, left))


def test_two_touch_contacts(padbridge):
    pad, _, nodes = start_dualsense(padbridge, name=NAME)
    touches = Touches(nodes["touchpad"])
    pad.send(type="touch", contact=0, active=True, x=0.25, y=0.75)
    touches.wait({0: (480, 809)}, touching=1)           # round(0.25*1919), round(0.75*1079)
    pad.send(type="touch", contact=1, active=True, x=0.8, y=0.1)
    touches.wait({0: (480, 809), 1: (1535, 108)}, touching=1)
    pad.send(type="touch", contact=0, active=True, x=0.0, y=1.0)  # the corners
    touches.wait({0: (0, 1079), 1: (1535, 108)}, touching=1)
    pad.send(type="touch", contact=0, active=False, x=0.0, y=1.0)
    touches.wait({1: (1535, 108)}, touching=1)
    pad.send(type="touch", contact=1, active=False, x=0.8, y=0.1)
    touches.wait({}, touching=0)


def test_motion_sensors(padbridge):
    pad, _, nodes = start_dualsense(padbridge, name=NAME)
    motion = nodes["motion"]
    gyro = [0.1, -0.2, 0.5]
    accel = [1.0, 9.81, -2.0]
    pad.send(type="motion", gyro=gyro, accel=accel)
    expected = {e.ABS_X: accel_lsb(accel[0]), e.ABS_Y: accel_lsb(accel[1]), e.ABS_Z: accel_lsb(accel[2]),
                e.ABS_RX: gyro_lsb(gyro[0]), e.ABS_RY: gyro_lsb(gyro[1]), e.ABS_RZ: gyro_lsb(gyro[2])}
    assert expected[e.ABS_Y] == 8195 and expected[e.ABS_RZ] == 458 * 64
    # ±2 LSB of the raw value: the kernel's calibration arithmetic rounds
    tolerance = {e.ABS_X: 2, e.ABS_Y: 2, e.ABS_Z: 2, e.ABS_RX: 128, e.ABS_RY: 128, e.ABS_RZ: 128}
    wait_abs(motion, expected, tolerance=tolerance)
    info = motion.absinfo(e.ABS_X)
    assert info.resolution == 8192 and motion.absinfo(e.ABS_RX).resolution == 1024


@pytest.mark.parametrize("percent,charging,capacity,status", [(80, False, 85, "Discharging"),
                                                             (45, True, 45, "Charging"),
                                                             (100, False, 100, "Discharging")])
def test_battery(padbridge, percent, charging, capacity, status):
    pad, ready, nodes = start_dualsense(padbridge, name=NAME)
    supply = f"/sys/class/power_supply/ps-controller-battery-{ready['mac']}"
    pad.send(type="battery", percent=percent, charging=charging)
    # The kernel parses reports in order: once a later report's button shows up, the battery one was parsed.
    pad.button("a", True)
    expect_events(nodes["gamepad"], [(e.EV_KEY, e.BTN_SOUTH, 1)])
    got = (int(open(f"{supply}/capacity").read()), open(f"{supply}/status").read().strip())
    if (percent, charging) == (100, False):
        assert got[0] == 100 and got[1] in ("Discharging", "Full"), got
    else:
        # level = percent // 10, capacity = min(level * 10 + 5, 100)
        assert got == (capacity, status), f"{supply}: capacity/status {got}, want {(capacity, status)}"


def test_led_class_devices_become_feedback(padbridge):
    pad, ready, nodes = start_dualsense(padbridge, name=NAME)
    input_name = input_sysfs_name(nodes["gamepad"].path)
    lightbar = f"/sys/class/leds/{input_name}:rgb:indicator"
    player1 = f"/sys/class/leds/{input_name}:white:player-1"
    assert os.path.isdir(lightbar) and os.path.isdir(player1), sorted(os.listdir("/sys/class/leds"))
    mark = pad.feedback_mark()
    with open(f"{lightbar}/multi_intensity", "w") as f:
        f.write("10 20 30")
    with open(f"{lightbar}/brightness", "w") as f:
        f.write("255")
    pad.wait_feedback(lambda o: o["type"] == "lightbar" and (o.get("red"), o.get("green"), o.get("blue")) == (10, 20, 30),
                      since=mark, what="lightbar 10/20/30 after writing the LED class device")
    mark = pad.feedback_mark()
    with open(f"{player1}/brightness", "w") as f:
        f.write("1")
    pad.wait_feedback(lambda o: o["type"] == "playerLeds" and isinstance(o.get("mask"), int) and o["mask"] & 1,
                      since=mark, what="playerLeds with bit 0 after writing player-1/brightness")
    mark = pad.feedback_mark()
    with open(f"{player1}/brightness", "w") as f:
        f.write("0")
    pad.wait_feedback(lambda o: o["type"] == "playerLeds" and isinstance(o.get("mask"), int) and not o["mask"] & 1,
                      since=mark, what="playerLeds without bit 0 after clearing player-1")


def test_evdev_force_feedback_through_hid_playstation(padbridge):
    pad, _, nodes = start_dualsense(padbridge, name=NAME)
    gamepad = nodes["gamepad"]
    mark = pad.feedback_mark()
    effect_id = gamepad.upload_effect(rumble_effect(0x8000, 0x4000))
    gamepad.write(e.EV_FF, effect_id, 1)
    # hid-playstation sends strong/256 and weak/256 as motor bytes: 128/255 and 64/255
    mark, _ = pad.wait_feedback(is_rumble(0.5, 0.25), since=mark, what="rumble ≈ 0.5/0.25 from hid-playstation")
    gamepad.write(e.EV_FF, effect_id, 0)
    pad.wait_feedback(is_rumble(0, 0, tolerance=0), since=mark + 1, what="rumble 0/0 after stop")


def test_usb_bus_binds_too(padbridge):
    pad, ready, nodes = start_dualsense(padbridge, "--bus", "usb", name=NAME)
    for role, device in nodes.items():
        assert (device.info.bustype, device.info.vendor, device.info.product) == (e.BUS_USB, 0x054C, 0x0CE6), \
            f"{role}: {device.info}"
        assert device.uniq == ready["mac"]
    pad.button("a", True)
    pad.axis("leftx", 32767)
    expect_events(nodes["gamepad"], [(e.EV_KEY, e.BTN_SOUTH, 1), (e.EV_ABS, e.ABS_X, 255)])
    mark = pad.feedback_mark()
    effect_id = nodes["gamepad"].upload_effect(rumble_effect(0x8000, 0x4000))
    nodes["gamepad"].write(e.EV_FF, effect_id, 1)
    pad.wait_feedback(is_rumble(0.5, 0.25), since=mark, what="rumble over the USB output report")


def test_held_inputs_are_released_on_end_of_input(padbridge):
    pad, _, nodes = start_dualsense(padbridge, name=NAME)
    gamepad = nodes["gamepad"]
    pad.button("a", True)
    pad.axis("righttrigger", 32767)
    pad.axis("leftx", 32767)
    expect_events(gamepad, [(e.EV_KEY, e.BTN_SOUTH, 1), (e.EV_ABS, e.ABS_RZ, 255), (e.EV_ABS, e.ABS_X, 255)])
    pad.close_stdin()
    events = read_until_gone(gamepad)
    final = {(ev.type, ev.code): ev.value for ev in events if ev.type in (e.EV_KEY, e.EV_ABS)}
    want = {(e.EV_KEY, e.BTN_SOUTH): 0, (e.EV_ABS, e.ABS_RZ): 0, (e.EV_ABS, e.ABS_X): 128}
    assert all(final.get(k) == v for k, v in want.items()), \
        f"before the node vanished the reader saw only: {describe_events(events)}"
    assert pad.wait_exit() == 0

"""The virtual pads games ask for beyond the Xbox 360 pad and the DualSense: a DualShock 4, a DualSense Edge and an
Xbox Series pad on Bluetooth. Each is made with uhid and bound by the kernel's own driver for the real pad
(hid-sony or hid-playstation, hid-playstation, hid-microsoft), which this checks through sysfs and python-evdev; each
is read by both SDLs (the `sdl_reader` fixture: Debian 12's 2.26 and 2.32 with its HIDAPI drivers), whose rumble and
LEDs come back as padbridge's feedback lines. A turn of 90 °/s for 1 s reads as 90 ° ± 3 ° integrated on the motion
node's MSC_TIMESTAMP and on SDL's sensor timestamps (integrated_turn.py).

Both SDLs read all three through their HIDAPI drivers at the hidraw node, as a game does by default (the Xbox pad's
test lets SDL's Xbox drivers run: `sdl_reads_xbox_pads_itself`). Where they differ the test says so: SDL 2.26 knows no
DualSense Edge (it takes it for a DualSense, without paddles); 2.32 reads the paddles."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import evdev
import pytest
from evdev import ecodes

from conftest import expect_events, is_rumble
from integrated_turn import (TOLERANCE_DEGREES, TURN_DEGREES_PER_SECOND, TURN_MICROSECONDS, describe_steps,
                             integrated_degrees, read_turn)

SONY, MICROSOFT = 0x054C, 0x045E
STANDARD_GRAVITY = 9.80665


@pytest.fixture(scope="module", autouse=True)
def drivers():
    """The drivers loaded before the pads come, as udev's autoload would have them on a desktop (the suite's VM
    loads hid-playstation; hid-sony and hid-microsoft come here)."""
    subprocess.run(["modprobe", "-a", "hid-sony", "hid-microsoft", "hid-playstation"], check=True)


def start_virtual(padbridge, kind: str, name: str, nodes: int):
    pad = padbridge("--type", kind, "--name", name, "--seed", f"virtual-kinds-{kind}")
    ready = pad.wait_ready()
    assert ready["kind"] == kind, ready
    assert len(ready["eventNodes"]) == nodes, ready
    assert ready["hidraw"] and ready["mac"], ready
    return pad, ready


def bound_driver(ready) -> str:
    """The HID driver bound to the pad's HID device (sysfs' driver link)."""
    return os.path.basename(os.path.realpath(Path(ready["sysfs"], "driver")))


def by_name(ready) -> dict[str, evdev.InputDevice]:
    return {device.name: device for device in map(evdev.InputDevice, ready["eventNodes"])}


def near(values, want, tolerance):
    return values is not None and all(abs(a - b) <= tolerance for a, b in zip(values, want))


def assert_sdl_reads_buttons(controller, pad, buttons: list[str]):
    """Each button pressed alone reads as that button (and no other of `buttons`), then released."""
    for button in buttons:
        pad.button(button, True)
        controller.wait(lambda s, b=button: s["buttons"][b] == 1 and all(s["buttons"][o] == 0 for o in buttons if o != b),
                        f"{button} pressed alone")
        pad.button(button, False)
        controller.wait(lambda s, b=button: s["buttons"][b] == 0, f"{button} released")


def assert_sdl_reads_sticks_and_triggers(controller, pad, tolerance: int):
    pad.send_frame({"type": "axis", "axis": "leftx", "value": -20000}, {"type": "axis", "axis": "righty", "value": 16000},
                   {"type": "axis", "axis": "lefttrigger", "value": 32767},
                   {"type": "axis", "axis": "righttrigger", "value": 16384})
    controller.wait(lambda s: abs(s["axes"]["leftx"] + 20000) <= tolerance and abs(s["axes"]["righty"] - 16000) <= tolerance
                    and s["axes"]["lefttrigger"] >= 32767 - tolerance
                    and abs(s["axes"]["righttrigger"] - 16384) <= tolerance + 64,
                    "leftx ≈ -20000, righty ≈ 16000, left trigger full, right trigger half")
    pad.send_frame(*({"type": "axis", "axis": axis, "value": 0} for axis in ("leftx", "righty", "lefttrigger", "righttrigger")))
    controller.wait(lambda s: abs(s["axes"]["leftx"]) <= tolerance and s["axes"]["lefttrigger"] <= tolerance,
                    "sticks and triggers back at rest")


def assert_sdl_reads_touch_and_motion(controller, pad, sdl_y=lambda y: y):
    """Two fingers, lifted, then a motion sample. `sdl_y`: where SDL puts a finger the pad reports at `y` (SDL's
    PS4 driver divides the DualShock 4's 0...941 by 920)."""
    pad.send(type="touch", contact=0, active=True, x=0.25, y=0.75)
    pad.send(type="touch", contact=1, active=True, x=0.75, y=0.5)
    controller.wait(lambda s: s["touchpads"] and len(s["touchpads"][0]) >= 2
                    and s["touchpads"][0][0]["down"] and abs(s["touchpads"][0][0]["x"] - 0.25) < 0.01
                    and abs(s["touchpads"][0][0]["y"] - sdl_y(0.75)) < 0.01
                    and s["touchpads"][0][1]["down"] and abs(s["touchpads"][0][1]["x"] - 0.75) < 0.01
                    and abs(s["touchpads"][0][1]["y"] - sdl_y(0.5)) < 0.01,
                    "two fingers on the touchpad at (0.25, 0.75) and (0.75, 0.5)")
    pad.send(type="touch", contact=0, active=False)
    pad.send(type="touch", contact=1, active=False)
    controller.wait(lambda s: not any(finger["down"] for finger in s["touchpads"][0]), "both fingers lifted")

    controller.enable_sensors("gyro", "accel")
    gyro, accel = [0.0, 0.0, 0.5], [0.0, 9.81, 0.0]
    pad.send(type="motion", gyro=gyro, accel=accel)
    controller.wait(lambda s: near(s["sensors"]["gyro"], gyro, 0.01) and near(s["sensors"]["accel"], accel, 0.05),
                    f"gyro ≈ {gyro} rad/s and accel ≈ {accel} m/s²")


def assert_a_turn_reads_90_degrees(controller, pad, motion_device: evdev.InputDevice, sdl_version: str):
    """The turn of 90 °/s for 1 s about the yaw axis (integrated_turn.py), read at once by the kernel driver's motion
    node (gyro x, y, z on ABS_RX, RY, RZ: pitch, yaw, roll) and by SDL, each integrated on its own sensor clock: 90 °
    ± 3 ° of yaw, and less than 3 ° about the other axes."""
    gyro_resolution = motion_device.absinfo(ecodes.ABS_RY).resolution
    accel_resolution = motion_device.absinfo(ecodes.ABS_X).resolution
    assert gyro_resolution > 0 and accel_resolution > 0, (gyro_resolution, accel_resolution)
    node, sdl, _, _ = read_turn(
        pad, motion_device, controller,
        gyro_dps=lambda rx, ry, rz: (rx / gyro_resolution, ry / gyro_resolution, rz / gyro_resolution),
        accel_x_mps2=lambda frame: frame[1] / accel_resolution * STANDARD_GRAVITY)
    want = TURN_DEGREES_PER_SECOND * TURN_MICROSECONDS / 1e6
    for reader, samples, bits in ((f"{motion_device.name!r} (MSC_TIMESTAMP)", node, 32),
                                  (f"SDL {sdl_version} (sensor timestamps)", sdl, 64)):
        pitch, yaw, roll = integrated_degrees(samples, timestamp_bits=bits)
        print(f"{reader}: the {want:.0f} ° turn integrated to yaw {yaw:.3f} °, pitch {pitch:.3f} °, roll {roll:.3f} °; "
              f"{describe_steps(samples, bits)}")
        assert abs(yaw - want) <= TOLERANCE_DEGREES and abs(pitch) <= TOLERANCE_DEGREES \
            and abs(roll) <= TOLERANCE_DEGREES, \
            f"{reader} integrated the {want:.0f} ° turn about yaw as pitch {pitch:.3f} °, yaw {yaw:.3f} °, " \
            f"roll {roll:.3f} °"


def assert_sdl_rumble_comes_back(controller, pad, sdl_version: str, tolerance: float):
    mark = pad.feedback_mark()
    # Long enough that SDL's expiry cannot overtake the request on a slow machine; switched off below.
    controller.rumble(0x8000, 0x4000, 10000)
    pad.wait_feedback(is_rumble(0.5, 0.25, tolerance=tolerance), since=mark,
                      what=f"SDL {sdl_version}'s rumble ≈ 0.5/0.25", pump=controller.pump)
    mark = pad.feedback_mark()
    controller.rumble(0, 0, 0)
    pad.wait_feedback(is_rumble(0, 0), since=mark, what=f"SDL {sdl_version}'s rumble off", pump=controller.pump)


# --------------------------------------------------------------------------------------------------------------
# DualShock 4


def test_a_virtual_dualshock4_is_bound_by_the_kernels_driver_and_read_by_sdl(sdl_reader, padbridge):
    name = "padbridge test DualShock 4"
    known = sdl_reader.instances()
    pad, ready = start_virtual(padbridge, "dualshock4", name, nodes=3)
    # hid-sony owns the DualShock 4 up to Linux 6.1; hid-playstation from 6.2.
    assert bound_driver(ready) in ("sony", "playstation"), bound_driver(ready)
    nodes = by_name(ready)
    assert set(nodes) == {name, f"{name} Motion Sensors", f"{name} Touchpad"}, sorted(nodes)
    assert {device.info.vendor for device in nodes.values()} == {SONY}, nodes
    gamepad = nodes[name]
    pad.button("a", True)
    expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
    pad.button("a", False)
    expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)])

    controller = sdl_reader.open([ready["hidraw"], *ready["eventNodes"]], exclude=known)
    try:
        assert controller.type == "PS4", controller
        assert controller.path == ready["hidraw"], \
            f"SDL {sdl_reader.sdl_version} reads the pad through {controller.path}, not its HIDAPI driver"
        assert (controller.vendor, controller.product) == (SONY, 0x09CC), controller
        assert_sdl_reads_buttons(controller, pad, ["a", "b", "x", "y", "back", "start", "guide", "leftshoulder",
                                                   "rightshoulder", "leftstick", "rightstick", "dpup", "dpright",
                                                   "touchpad"])
        assert_sdl_reads_sticks_and_triggers(controller, pad, tolerance=300)
        assert_sdl_reads_touch_and_motion(controller, pad, sdl_y=lambda y: round(y * 941) / 920)
        assert_a_turn_reads_90_degrees(controller, pad, nodes[f"{name} Motion Sensors"], sdl_reader.sdl_version)
        mark = pad.feedback_mark()
        controller.led(255, 0, 64)
        pad.wait_feedback(lambda o: o["type"] == "lightbar" and (o["red"], o["green"], o["blue"]) == (255, 0, 64),
                          since=mark, what=f"SDL {sdl_reader.sdl_version}'s lightbar 255/0/64", pump=controller.pump)
        # The PS4 driver sends the motors' high bytes: 0x80 and 0x40 of 255.
        assert_sdl_rumble_comes_back(controller, pad, sdl_reader.sdl_version, tolerance=0.01)
    finally:
        controller.close()


# --------------------------------------------------------------------------------------------------------------
# DualSense Edge


def test_a_virtual_dualsense_edge_shows_its_paddles_to_sdl(sdl_reader, padbridge):
    name = "padbridge test DualSense Edge"
    known = sdl_reader.instances()
    pad, ready = start_virtual(padbridge, "dualsense-edge", name, nodes=3)
    assert bound_driver(ready) == "playstation", bound_driver(ready)
    nodes = by_name(ready)
    assert set(nodes) == {name, f"{name} Motion Sensors", f"{name} Touchpad"}, sorted(nodes)
    assert nodes[name].info.product == 0x0DF2, nodes[name].info

    controller = sdl_reader.open([ready["hidraw"], *ready["eventNodes"]], exclude=known)
    try:
        assert controller.type == "PS5", controller
        assert (controller.vendor, controller.product) == (SONY, 0x0DF2), controller
        controller.wait_for_enhanced_mode()
        assert_sdl_reads_buttons(controller, pad, ["a", "misc1", "touchpad", "guide"])
        has = controller.state()["has"]["buttons"]
        if sdl_reader.version == "2.26":
            # SDL 2.26 takes the Edge for a DualSense: no paddles.
            assert not {"paddle1", "paddle2", "paddle3", "paddle4"} & set(has), has
        else:
            assert {"paddle1", "paddle2", "paddle3", "paddle4"} <= set(has), has
            assert_sdl_reads_buttons(controller, pad, ["paddle1", "paddle2", "paddle3", "paddle4"])
        assert_sdl_reads_touch_and_motion(controller, pad)
        assert_a_turn_reads_90_degrees(controller, pad, nodes[f"{name} Motion Sensors"], sdl_reader.sdl_version)
        assert_sdl_rumble_comes_back(controller, pad, sdl_reader.sdl_version, tolerance=0.13)
    finally:
        controller.close()


# --------------------------------------------------------------------------------------------------------------
# Xbox Series pad on Bluetooth


@pytest.mark.sdl_reads_xbox_pads_itself
def test_a_virtual_xbox_series_pad_shows_share_and_takes_a_games_rumble(sdl_reader, padbridge):
    name = "padbridge test Xbox Series pad"
    known = sdl_reader.instances()
    pad, ready = start_virtual(padbridge, "xbox-one", name, nodes=1)
    assert bound_driver(ready) == "microsoft", bound_driver(ready)
    gamepad = by_name(ready)[name]
    assert (gamepad.info.bustype, gamepad.info.vendor, gamepad.info.product) == (0x05, MICROSOFT, 0x0B13), gamepad.info
    assert ecodes.EV_FF in gamepad.capabilities(), "hid-microsoft gave the pad no force feedback"

    # Both SDLs read the pad through their HIDAPI Xbox driver, at its hidraw node (where Share is), as a game does by
    # default. SDL may list the event node too for a moment, before its HIDAPI driver has the pad: open the hidraw.
    controller = sdl_reader.open([ready["hidraw"]], exclude=known)
    try:
        assert controller.type == "XBOXONE", controller
        assert_sdl_reads_buttons(controller, pad, ["a", "b", "x", "y", "back", "start", "guide", "leftshoulder",
                                                   "rightshoulder", "leftstick", "rightstick", "dpdown", "dpleft",
                                                   "misc1"])
        assert_sdl_reads_sticks_and_triggers(controller, pad, tolerance=40)
        # hid-microsoft (2.26's path) and SDL's own report (2.32's) both say 0-100: 0x8000 and 0x4000 are 50 and 25.
        assert_sdl_rumble_comes_back(controller, pad, sdl_reader.sdl_version, tolerance=0.011)
    finally:
        controller.close()


# --------------------------------------------------------------------------------------------------------------
# The new kinds behind remap and forwarding


def test_a_profile_asking_for_a_dualshock4_remaps_a_dualsense_onto_one_and_its_rumble_comes_back(padbridge, tmp_path):
    """remap without --as, its profile's `as = "dualshock4"`: the DualSense stand-in's cross reaches the virtual
    DualShock 4 (hid-sony's or hid-playstation's gamepad node), and a game's rumble there reaches the stand-in."""
    from conftest import rumble_effect
    from standins import PhysicalDualSense

    profile = tmp_path / "as-dualshock4.toml"
    profile.write_text('as = "dualshock4"\n')
    pad = PhysicalDualSense()
    try:
        hidraw = pad.wait_bound()
        remap = padbridge(hidraw, "--profile", str(profile), command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "dualshock4" and len(ready["eventNodes"]) == 3, ready
        gamepad = evdev.InputDevice(ready["eventNodes"][0])
        pad.send_input(cross=True)
        expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
        pad.send_input()
        expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)])
        since = pad.mark()
        effect = gamepad.upload_effect(rumble_effect(0x8000, 0x4000))
        gamepad.write(ecodes.EV_FF, effect, 1)
        pad.wait_report(lambda r: r.rumble_flagged and abs(r.motor_strong - 128) <= 1 and abs(r.motor_weak - 64) <= 1,
                        since, what="the game's rumble on the virtual DualShock 4 at the DualSense (128 and 64)")
        gamepad.write(ecodes.EV_FF, effect, 0)
        assert remap.stop() == 0
    finally:
        pad.close()


@pytest.mark.parametrize("sdl_reader", ["2.32"], indirect=True)
def test_a_forwarded_dualsense_edge_arrives_as_an_edge_with_its_paddles(sdl_reader, padbridge, tmp_path):
    """An Edge stand-in forwarded to a host becomes a virtual DualSense Edge there (no --as on either side), whose
    paddles SDL 2.32 reads: the client reads them from the pad's hidraw reports (hid-playstation makes no event for
    them), and the host keeps the pad what it is."""
    from conftest import attached
    from forwarding import connect, paired_host
    from standins import PhysicalDualSense

    pad = PhysicalDualSense(product=0x0DF2)
    try:
        hidraw = pad.wait_bound()
        known = sdl_reader.instances()
        serve, client = paired_host(padbridge, tmp_path)
        connect(padbridge, client, hidraw)
        _, ready = attached(serve)
        assert ready["kind"] == "dualsense-edge", ready
        controller = sdl_reader.open([ready["hidraw"]], exclude=known)
        try:
            assert (controller.type, controller.product) == ("PS5", 0x0DF2), controller
            for bit, paddle in ((0x80, "paddle1"), (0x40, "paddle2"), (0x20, "paddle3"), (0x10, "paddle4")):
                pad.send_input(back_buttons=bit)
                controller.wait(lambda s, p=paddle: s["buttons"][p] == 1
                                and sum(s["buttons"][f"paddle{n}"] for n in range(1, 5)) == 1,
                                f"{paddle} alone, pressed on the forwarded Edge")
            pad.send_input(cross=True)
            controller.wait(lambda s: s["buttons"]["a"] == 1 and not any(s["buttons"][f"paddle{n}"] for n in range(1, 5)),
                            "the cross pressed, the paddles released")
        finally:
            controller.close()
    finally:
        pad.close()

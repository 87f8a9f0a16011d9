"""A virtual Steam Deck (`padbridge virtual --type steam-deck`, 28de:1205): Valve's 64-byte Deck state reports on a
vendor-defined HID interface, made with uhid on the Bluetooth bus (SDL's hidapi skips uhid devices on the USB bus:
they have no USB parent), where hid-generic binds it and makes only its hidraw node, as no kernel before 6.3 knows a
Deck (hid-steam binds USB Decks only).

Two readers padbridge did not write read it:
- SDL 2.32 with its HIDAPI drivers (the `sdl_reader` fixture): its Steam Deck driver, as a game has it by default,
  reads every button (the four back buttons as `paddle1`-`paddle4`, quick access as `misc1`), sticks, triggers and
  motion, and its rumble comes back as padbridge's feedback. Debian 12's SDL 2.26 has no Steam Deck driver (2.28
  brought one), so it is not asked.
- The trackpads, which SDL 2 does not read on a Deck: the hidraw node itself, decoded here from Valve's published
  `SteamDeckStatePacket_t` (SDL's steam/controller_structs.h) and hid-steam's bit table (left and right trackpad
  touched: byte 10, bits 3 and 4).

A Deck's reports carry no sensor clock: SDL and hid-steam stamp each report 4 ms after the one before, so a turn is
checked as a rate here (90 °/s ± 3)."""

from __future__ import annotations

import math
import os
import struct
import time
from pathlib import Path

import pytest

from conftest import DEADLINE, is_rumble, sdl_hints

VALVE, STEAM_DECK = 0x28DE, 0x1205

BUTTONS = ["a", "b", "x", "y", "back", "start", "guide", "leftshoulder", "rightshoulder", "leftstick", "rightstick",
           "dpup", "dpdown", "dpleft", "dpright", "misc1", "paddle1", "paddle2", "paddle3", "paddle4"]


def start_deck(padbridge, seed: str):
    pad = padbridge("--type", "steam-deck", "--seed", seed)
    ready = pad.wait_ready()
    assert ready["kind"] == "steam-deck", ready
    assert ready["eventNodes"] == [] and ready["hidraw"] and ready["mac"], ready
    driver = os.path.basename(os.path.realpath(Path(ready["sysfs"], "driver")))
    assert driver == "hid-generic", f"the virtual Steam Deck is bound by {driver!r}, not hid-generic"
    return pad, ready


def open_deck(sdl_reader, request, hidraw: str, known):
    """SDL's Steam Deck driver drops a Deck for good when no report comes within 16 ms of its open (its InitDevice's
    read), and a VM beside another can be descheduled that long: then SDL is started again, once, as a game started
    then would see the pad (with SDL's input log, printed with the test's output)."""
    try:
        return sdl_reader.open([hidraw], exclude=known, timeout=10)
    except AssertionError as missed:
        print(f"SDL did not take the Deck at its first open ({missed}); SDL started again")
        sdl_reader.quit()
        sdl_reader.init(sdl_hints(request), input_debug_log=True)
        return sdl_reader.open([hidraw])


def read_deck_state(hidraw: str, condition, what: str) -> dict:
    """Reads Deck state reports at the hidraw node until one decoded satisfies `condition`."""
    fd = os.open(hidraw, os.O_RDONLY)
    deadline = time.monotonic() + DEADLINE
    last = None
    try:
        while time.monotonic() < deadline:
            report = os.read(fd, 64)
            if len(report) != 64 or report[:4] != bytes([1, 0, 9, 64]):
                continue
            buttons_low, = struct.unpack_from("<I", report, 8)
            left_x, left_y, right_x, right_y = struct.unpack_from("<4h", report, 16)
            last = {"left_touched": bool(buttons_low & 1 << 19), "right_touched": bool(buttons_low & 1 << 20),
                    "left": (left_x, left_y), "right": (right_x, right_y),
                    "left_click": bool(buttons_low & 1 << 17), "right_click": bool(buttons_low & 1 << 18)}
            if condition(last):
                return last
    finally:
        os.close(fd)
    pytest.fail(f"no Deck report showed {what}; the last read: {last}")


def pad_units(fraction: float, up: bool = False) -> float:
    """Where a trackpad reports a finger at `fraction` of its width (or height, top down; the Deck's y is up)."""
    return (1 - fraction if up else fraction) * 65535 - 32768


def at(reported: tuple[int, int], x: float, y: float) -> bool:
    """A trackpad's (x, y) is the finger at fractions (x, y) of the pad, to the unit."""
    return abs(reported[0] - pad_units(x)) <= 1 and abs(reported[1] - pad_units(y, up=True)) <= 1


@pytest.mark.parametrize("sdl_reader", ["2.32"], indirect=True)
def test_a_virtual_steam_deck_is_read_by_sdls_steam_deck_driver(sdl_reader, padbridge, request):
    known = sdl_reader.instances()
    pad, ready = start_deck(padbridge, "virtual-steam-deck-sdl")
    controller = open_deck(sdl_reader, request, ready["hidraw"], known)
    try:
        assert (controller.vendor, controller.product) == (VALVE, STEAM_DECK), controller
        assert controller.name == "Steam Deck", controller
        has = set(controller.state()["has"]["buttons"])
        assert set(BUTTONS) <= has, f"SDL 2.32 lacks {sorted(set(BUTTONS) - has)}"
        for button in BUTTONS:
            pad.button(button, True)
            controller.wait(lambda s, b=button: s["buttons"][b] == 1
                            and all(s["buttons"][o] == 0 for o in BUTTONS if o != b), f"{button} pressed alone")
            pad.button(button, False)
            controller.wait(lambda s, b=button: s["buttons"][b] == 0, f"{button} released")

        pad.send_frame({"type": "axis", "axis": "leftx", "value": -20000}, {"type": "axis", "axis": "lefty", "value": -32768},
                       {"type": "axis", "axis": "righty", "value": 16000},
                       {"type": "axis", "axis": "lefttrigger", "value": 32767},
                       {"type": "axis", "axis": "righttrigger", "value": 16384})
        controller.wait(lambda s: abs(s["axes"]["leftx"] + 20000) <= 2 and s["axes"]["lefty"] <= -32767
                        and abs(s["axes"]["righty"] - 16000) <= 2 and s["axes"]["lefttrigger"] >= 32765
                        and abs(s["axes"]["righttrigger"] - 16384) <= 2,
                        "leftx -20000, left stick up, righty 16000, left trigger full, right trigger half")

        controller.enable_sensors("gyro", "accel")
        gyro, accel = [0.2, math.radians(90), -0.4], [1.0, 9.81, -2.0]
        pad.send(type="motion", gyro=gyro, accel=accel)
        # 2000 °/s in 16 bits: 0.001 rad/s a unit; 2 g in 16 bits: 0.0006 m/s² a unit.
        controller.wait(lambda s: s["sensors"]["gyro"] is not None and s["sensors"]["accel"] is not None
                        and all(abs(a - b) <= 0.002 for a, b in zip(s["sensors"]["gyro"], gyro))
                        and all(abs(a - b) <= 0.01 for a, b in zip(s["sensors"]["accel"], accel)),
                        f"gyro ≈ {gyro} rad/s (yaw 90 °/s ± 3: ± 0.05) and accel ≈ {accel} m/s²")
        yaw = controller.state()["sensors"]["gyro"][1]
        assert abs(math.degrees(yaw) - 90) <= 3, f"SDL 2.32 reads a 90 °/s turn as {math.degrees(yaw):.2f} °/s"

        mark = pad.feedback_mark()
        controller.rumble(0x8000, 0x4000, 10000)
        pad.wait_feedback(is_rumble(0.5, 0.25, tolerance=0.01), since=mark, what="SDL 2.32's rumble ≈ 0.5/0.25",
                          pump=controller.pump)
        mark = pad.feedback_mark()
        controller.rumble(0, 0, 0)
        pad.wait_feedback(is_rumble(0, 0), since=mark, what="SDL 2.32's rumble off", pump=controller.pump)
    finally:
        controller.close()


def test_the_virtual_steam_decks_trackpads_are_in_its_reports(padbridge):
    pad, ready = start_deck(padbridge, "virtual-steam-deck-trackpads")
    hidraw = ready["hidraw"]
    pad.send(type="touch", contact=0, active=True, surface="left-trackpad", x=0.25, y=0.75)
    state = read_deck_state(hidraw, lambda s: s["left_touched"] and not s["right_touched"],
                            "a finger on the left trackpad alone")
    assert at(state["left"], 0.25, 0.75), state
    pad.send(type="touch", contact=1, active=True, surface="right-trackpad", x=1, y=0)
    pad.button("touchpad", True)
    state = read_deck_state(hidraw, lambda s: s["left_touched"] and s["right_touched"] and s["right_click"],
                            "both trackpads touched, the right one clicked")
    assert at(state["right"], 1, 0) and not state["left_click"], state
    pad.button("touchpad", False)
    pad.send(type="touch", contact=0, active=False, surface="left-trackpad")
    pad.send(type="touch", contact=1, active=False, surface="right-trackpad")
    read_deck_state(hidraw, lambda s: not (s["left_touched"] or s["right_touched"] or s["right_click"]),
                    "both fingers lifted and the click released")

    # A finger on a DualSense's touchpad lands on the trackpad under it.
    pad.send(type="touch", contact=0, active=True, surface="touchpad", x=0.75, y=0.5)
    state = read_deck_state(hidraw, lambda s: s["right_touched"] and not s["left_touched"],
                            "a touchpad finger on the right half on the right trackpad")
    assert at(state["right"], 0.5, 0.5), state


@pytest.mark.parametrize("sdl_reader", ["2.32"], indirect=True)
def test_remap_as_steam_deck_shows_a_dualsense_as_a_deck_and_a_games_rumble_comes_back(sdl_reader, padbridge, request):
    """`remap --as steam-deck` of the DualSense stand-in: its cross reaches SDL's Steam Deck driver as `a`, and the
    rumble a game sets there through SDL (the Deck's simple-rumble command) reaches the DualSense."""
    from standins import PhysicalDualSense

    known = sdl_reader.instances()
    pad = PhysicalDualSense()
    try:
        remap = padbridge(pad.wait_bound(), "--as", "steam-deck", command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "steam-deck" and ready["eventNodes"] == [] and ready["hidraw"], ready
        controller = open_deck(sdl_reader, request, ready["hidraw"], known)
        try:
            assert (controller.vendor, controller.product) == (VALVE, STEAM_DECK), controller
            pad.send_input(cross=True)
            controller.wait(lambda s: s["buttons"]["a"] == 1, "the DualSense's cross as the Deck's A")
            pad.send_input()
            controller.wait(lambda s: s["buttons"]["a"] == 0, "A released")
            since = pad.mark()
            controller.rumble(0x8000, 0x4000, 10000)
            pad.wait_report(lambda r: r.rumble_flagged and abs(r.motor_strong - 128) <= 1 and abs(r.motor_weak - 64) <= 1,
                            since, what="SDL's rumble on the virtual Deck at the DualSense (128 and 64)")
            controller.rumble(0, 0, 0)
        finally:
            controller.close()
        assert remap.stop() == 0
    finally:
        pad.close()

"""A virtual Nintendo Switch Pro Controller (`padbridge virtual --type switch-pro`): made with uhid on the Bluetooth
bus (057e:2009), bound by the kernel's hid-nintendo, which asks it what it asks a real pad (the USB handshake, which
a Bluetooth pad leaves unanswered, device info, SPI flash reads of the stick and IMU calibration, input mode 0x30,
vibration and IMU enable, player and home lights) and makes its gamepad and IMU nodes; and read by both SDLs (the
`sdl_reader` fixture: Debian 12's 2.26 and 2.32) through their Switch HIDAPI driver at the hidraw node, as a game
does by default (`sdl_reads_switch_pads_itself`).

The units checked come from the pad's own calibration (EmulatedSwitchPro.swift, `SwitchProFlash`): sticks ±32767 at
the calibrated range's ends; accel 4096 a g; gyro 14.247 a °/s, hid-nintendo's resolution (its node reports 14 247 a
°/s), which SDL reads 0.27 % low (936 / 13371 °/s a unit). A Switch pad's reports carry no sensor clock (hid-nintendo
and SDL stamp the samples themselves, three a report, by the pace the reports come at), so a turn is checked as its
rate, 90 °/s ± 3 °/s about the yaw axis, and as a turn of 90 °/s for 1 s (integrated_turn.py) integrated on those
readers' own timestamps: 90 °/s times the turn's duration by the wall clock (1 s, and what the feed ran late) ± 3 °,
when the virtual pad has kept its 15 ms pace (integrated_turn.read_turn feeds the turn again when it has not)."""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path

import evdev
import pytest
from evdev import ecodes

from conftest import DEADLINE, expect_events, is_rumble, rumble_effect
from integrated_turn import (TOLERANCE_DEGREES, TURN_DEGREES_PER_SECOND, describe_steps, integrated_degrees,
                             read_turn)

NINTENDO, PRO_CONTROLLER = 0x057E, 0x2009
GAMEPAD_NAME = "Nintendo Switch Pro Controller"
IMU_NAME = "Nintendo Switch Pro Controller IMU"
GYRO_PER_DEGREE_PER_SECOND = 14247   # hid-nintendo's IMU node: ABS_RX/RY/RZ resolution
ACCEL_PER_G = 4096                   # ABS_X/Y/Z resolution
STANDARD_GRAVITY = 9.80665
PLAYER_PATTERNS = [0x04, 0x0A, 0x15, 0x1B, 0x1F]   # the model's player LED masks, players 1 to 5
# The turn's source samples every 8 ms (125 Hz). The virtual pad shows one sample a 15 ms report, so a faster source
# shows no more; and fed 250 lines a second, the debug build's `virtual` in the emulated guest missed reports of its
# 15 ms pace (reports up to 252 ms apart, while conftest's stall witness was never kept waiting 100 ms), which a reader
# counting reports takes for lost time.
SOURCE_STEP_MICROSECONDS = 8_000

# A turn of 90 °/s about the yaw axis (the model's y), with a little pitch and roll to tell the axes apart, the pad
# lying on a slope (gravity mostly on y).
GYRO = [0.2, math.radians(90), -0.4]
ACCEL = [1.0, 9.81, -2.0]

# Each button by position, as hid-nintendo's gamepad node names it.
BUTTON_CODES = {
    "a": ecodes.BTN_SOUTH, "b": ecodes.BTN_EAST, "x": ecodes.BTN_WEST, "y": ecodes.BTN_NORTH,
    "back": ecodes.BTN_SELECT, "start": ecodes.BTN_START, "guide": ecodes.BTN_MODE, "misc1": ecodes.BTN_Z,
    "leftshoulder": ecodes.BTN_TL, "rightshoulder": ecodes.BTN_TR, "leftstick": ecodes.BTN_THUMBL,
    "rightstick": ecodes.BTN_THUMBR,
}
DPAD = {"dpup": (ecodes.ABS_HAT0Y, -1), "dpdown": (ecodes.ABS_HAT0Y, 1), "dpleft": (ecodes.ABS_HAT0X, -1),
        "dpright": (ecodes.ABS_HAT0X, 1)}


@pytest.fixture(scope="module", autouse=True)
def drivers():
    """hid-nintendo loaded before the pads come, as udev's autoload would have it on a desktop."""
    import subprocess
    subprocess.run(["modprobe", "hid-nintendo"], check=True)


def start_switch_pro(padbridge, seed: str):
    pad = padbridge("--type", "switch-pro", "--seed", seed)
    ready = pad.wait_ready()
    assert ready["kind"] == "switch-pro", ready
    assert len(ready["eventNodes"]) == 2 and ready["hidraw"] and ready["mac"], ready
    driver = os.path.basename(os.path.realpath(Path(ready["sysfs"], "driver")))
    assert driver == "nintendo", f"the virtual Switch Pro Controller is bound by {driver!r}, not hid-nintendo"
    return pad, ready


def nodes_by_name(ready) -> dict[str, evdev.InputDevice]:
    return {device.name: device for device in map(evdev.InputDevice, ready["eventNodes"])}


def player_lights(ready) -> list[int]:
    """The four player lights' brightness, as hid-nintendo's LED class devices hold them."""
    leds = Path(ready["sysfs"], "leds")
    values = []
    for number in range(1, 5):
        (name,) = [n for n in os.listdir(leds) if n.endswith(f":green:player-{number}")]
        values.append(int(Path(leds, name, "brightness").read_text()))
    return values


def set_player_light(ready, number: int, on: bool):
    leds = Path(ready["sysfs"], "leds")
    (name,) = [n for n in os.listdir(leds) if n.endswith(f":green:player-{number}")]
    Path(leds, name, "brightness").write_text("1" if on else "0")


def imu_gyro_dps(rx: int, ry: int, rz: int) -> tuple[float, float, float]:
    """hid-nintendo's IMU node's gyro (x toward the triggers, y to the left, z up) as the model's pitch, yaw, roll in
    °/s."""
    return -ry / GYRO_PER_DEGREE_PER_SECOND, rz / GYRO_PER_DEGREE_PER_SECOND, -rx / GYRO_PER_DEGREE_PER_SECOND


def assert_turn_integrates(reader: str, samples, turn_seconds: float, timestamp_bits: int, witnessed: str):
    """The turn of integrated_turn.py integrated on a reader's own timestamps: 90 °/s times the time the turn lasted
    at the pad (the feed's, by the wall clock) about the yaw axis, ± 3 °, and less than 3 ° about the others."""
    want = TURN_DEGREES_PER_SECOND * turn_seconds
    pitch, yaw, roll = integrated_degrees(samples, timestamp_bits=timestamp_bits)
    print(f"{reader}: the turn of 90 °/s for {turn_seconds:.3f} s ({want:.2f} °) integrated to yaw {yaw:.3f} °, "
          f"pitch {pitch:.3f} °, roll {roll:.3f} °; {describe_steps(samples, timestamp_bits)}; {witnessed}")
    assert abs(yaw - want) <= TOLERANCE_DEGREES and abs(pitch) <= TOLERANCE_DEGREES \
        and abs(roll) <= TOLERANCE_DEGREES, \
        f"{reader} integrated the turn of {want:.2f} ° about yaw as pitch {pitch:.3f} °, yaw {yaw:.3f} °, roll " \
        f"{roll:.3f} °; {witnessed}"


def is_player_leds(mask: int):
    return lambda obj: obj.get("type") == "playerLeds" and obj.get("mask") == mask


# --------------------------------------------------------------------------------------------------------------
# the kernel's driver


def test_hid_nintendo_binds_the_virtual_switch_pro_and_reads_its_controls_motion_lights_and_rumble(padbridge):
    pad, ready = start_switch_pro(padbridge, "virtual-switch-pro-kernel")
    nodes = nodes_by_name(ready)
    assert set(nodes) == {GAMEPAD_NAME, IMU_NAME}, sorted(nodes)
    gamepad, imu = nodes[GAMEPAD_NAME], nodes[IMU_NAME]
    assert (gamepad.info.bustype, gamepad.info.vendor, gamepad.info.product) == (0x05, NINTENDO, PRO_CONTROLLER), \
        gamepad.info
    # hid-nintendo names its nodes' uniq after the MAC of the device info reply ("%02X:..."): padbridge's own.
    uniq = Path(f"/sys/class/input/{os.path.basename(gamepad.path)}/device/uniq").read_text().strip()
    assert uniq.lower() == ready["mac"].lower(), (uniq, ready["mac"])

    # The player lights hid-nintendo set at probe (player N: the first N, counting the Switch pads it has bound)
    # came back as the model's player pattern.
    lights = player_lights(ready)
    lit = lights.index(0) if 0 in lights else 4
    assert lit >= 1 and lights == [1] * lit + [0] * (4 - lit), f"lights after probe: {lights}"
    pad.wait_feedback(is_player_leds(PLAYER_PATTERNS[lit - 1]), what=f"player {lit}'s LEDs from hid-nintendo's probe")

    for button, code in BUTTON_CODES.items():
        pad.button(button, True)
        expect_events(gamepad, [(ecodes.EV_KEY, code, 1)])
        pad.button(button, False)
        expect_events(gamepad, [(ecodes.EV_KEY, code, 0)])
    for button, (code, value) in DPAD.items():
        pad.button(button, True)
        expect_events(gamepad, [(ecodes.EV_ABS, code, value)])
        pad.button(button, False)
        expect_events(gamepad, [(ecodes.EV_ABS, code, 0)])
    # ZL and ZR are digital: pressed past half of the trigger's travel.
    pad.send_frame({"type": "axis", "axis": "lefttrigger", "value": 20000},
                   {"type": "axis", "axis": "righttrigger", "value": 32767})
    expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_TL2, 1), (ecodes.EV_KEY, ecodes.BTN_TR2, 1)])
    pad.send_frame({"type": "axis", "axis": "lefttrigger", "value": 16000},
                   {"type": "axis", "axis": "righttrigger", "value": 0})
    expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_TL2, 0), (ecodes.EV_KEY, ecodes.BTN_TR2, 0)])

    # Sticks through the calibration: the model's value, y down positive, within a 12-bit step and the node's fuzz.
    pad.send_frame({"type": "axis", "axis": "leftx", "value": -20000}, {"type": "axis", "axis": "lefty", "value": 16000},
                   {"type": "axis", "axis": "rightx", "value": 32767}, {"type": "axis", "axis": "righty", "value": -32768})
    expect_events(gamepad, [(ecodes.EV_ABS, ecodes.ABS_X, lambda v: abs(v + 20000) <= 300),
                            (ecodes.EV_ABS, ecodes.ABS_Y, lambda v: abs(v - 16000) <= 300),
                            (ecodes.EV_ABS, ecodes.ABS_RX, lambda v: v == 32767),
                            (ecodes.EV_ABS, ecodes.ABS_RY, lambda v: v == -32767)])

    # Motion on hid-nintendo's axes (x toward the triggers, y to the left, z up): the model's yaw (y) is its z.
    pad.send(type="motion", gyro=GYRO, accel=ACCEL)
    degrees = [math.degrees(value) for value in GYRO]
    want_gyro = {ecodes.ABS_RX: -degrees[2], ecodes.ABS_RY: -degrees[0], ecodes.ABS_RZ: degrees[1]}
    want_accel = {ecodes.ABS_X: -ACCEL[2], ecodes.ABS_Y: -ACCEL[0], ecodes.ABS_Z: ACCEL[1]}
    seen = expect_events(imu, [
        (ecodes.EV_ABS, ecodes.ABS_RZ, lambda v: abs(v / GYRO_PER_DEGREE_PER_SECOND - 90) <= 3),
        (ecodes.EV_ABS, ecodes.ABS_RX, lambda v: abs(v / GYRO_PER_DEGREE_PER_SECOND - want_gyro[ecodes.ABS_RX]) <= 0.5),
        (ecodes.EV_ABS, ecodes.ABS_RY, lambda v: abs(v / GYRO_PER_DEGREE_PER_SECOND - want_gyro[ecodes.ABS_RY]) <= 0.5),
        *((ecodes.EV_ABS, code, lambda v, g=g: abs(v / ACCEL_PER_G * STANDARD_GRAVITY - g) <= 0.03)
          for code, g in want_accel.items()),
    ])
    yaw = [e.value / GYRO_PER_DEGREE_PER_SECOND for e in seen if e.type == ecodes.EV_ABS and e.code == ecodes.ABS_RZ]
    print(f"hid-nintendo's IMU node read the yaw rate as {yaw[-1]:.3f} °/s for 90 °/s")
    assert imu.absinfo(ecodes.ABS_RZ).resolution == GYRO_PER_DEGREE_PER_SECOND
    node, _, turn_seconds, witnessed = read_turn(
        pad, motion_device=imu, gyro_dps=imu_gyro_dps, sensor_clock=False, step_us=SOURCE_STEP_MICROSECONDS,
        accel_x_mps2=lambda frame: -frame[2] / ACCEL_PER_G * STANDARD_GRAVITY)
    assert_turn_integrates("hid-nintendo's IMU node (MSC_TIMESTAMP)", node, turn_seconds, timestamp_bits=32,
                           witnessed=witnessed)

    # A game's player lights through hid-nintendo's LED class devices: all off, then players 1 and 2.
    mark = pad.feedback_mark()
    for number in range(1, 5):
        set_player_light(ready, number, False)
    pad.wait_feedback(is_player_leds(0), since=mark, what="the player lights all off")
    set_player_light(ready, 1, True)
    set_player_light(ready, 2, True)
    pad.wait_feedback(is_player_leds(PLAYER_PATTERNS[1]), since=mark, what="player 2's pattern (lights 1 and 2)")

    # A game's rumble through hid-nintendo's force feedback: HD rumble amplitudes decoded back.
    effect = gamepad.upload_effect(rumble_effect(0x8000, 0x4000))
    mark = pad.feedback_mark()
    gamepad.write(ecodes.EV_FF, effect, 1)
    pad.wait_feedback(is_rumble(0.5, 0.25, tolerance=0.01), since=mark, what="hid-nintendo's rumble 0.5/0.25")
    mark = pad.feedback_mark()
    gamepad.write(ecodes.EV_FF, effect, 0)
    pad.wait_feedback(is_rumble(0, 0), since=mark, what="hid-nintendo's rumble stopped")
    gamepad.erase_effect(effect)


# --------------------------------------------------------------------------------------------------------------
# SDL's Switch driver at the hidraw node


SDL_BUTTONS = ["a", "b", "x", "y", "back", "start", "guide", "misc1", "leftshoulder", "rightshoulder", "leftstick",
               "rightstick", "dpup", "dpdown", "dpleft", "dpright"]


@pytest.mark.sdl_reads_switch_pads_itself
def test_sdl_reads_the_virtual_switch_pro_through_its_switch_driver_and_its_rumble_comes_back(sdl_reader, padbridge):
    known = sdl_reader.instances()
    pad, ready = start_switch_pro(padbridge, f"virtual-switch-pro-sdl-{sdl_reader.version}")
    # hid-nintendo's player lights from its probe first, so that SDL's come after the mark.
    lit = player_lights(ready).count(1)
    pad.wait_feedback(is_player_leds(PLAYER_PATTERNS[lit - 1]), what=f"player {lit}'s LEDs from hid-nintendo's probe")
    opened = pad.feedback_mark()
    controller = sdl_reader.open([ready["hidraw"]], exclude=known)
    try:
        assert controller.type == "NINTENDO_SWITCH_PRO", controller
        assert controller.path == ready["hidraw"], \
            f"SDL {sdl_reader.sdl_version} reads the pad through {controller.path}, not its Switch HIDAPI driver"
        assert (controller.vendor, controller.product) == (NINTENDO, PRO_CONTROLLER), controller

        for button in SDL_BUTTONS:
            pad.button(button, True)
            controller.wait(lambda s, b=button: s["buttons"][b] == 1
                            and all(s["buttons"][o] == 0 for o in SDL_BUTTONS if o != b), f"{button} pressed alone")
            pad.button(button, False)
            controller.wait(lambda s, b=button: s["buttons"][b] == 0, f"{button} released")

        pad.send_frame({"type": "axis", "axis": "lefttrigger", "value": 32767},
                       {"type": "axis", "axis": "righttrigger", "value": 20000})
        controller.wait(lambda s: s["axes"]["lefttrigger"] == 32767 and s["axes"]["righttrigger"] == 32767,
                        "ZL and ZR pressed (both triggers past half)")
        pad.send_frame({"type": "axis", "axis": "lefttrigger", "value": 0},
                       {"type": "axis", "axis": "righttrigger", "value": 10000})
        controller.wait(lambda s: s["axes"]["lefttrigger"] == 0 and s["axes"]["righttrigger"] == 0,
                        "ZL and ZR released (the right trigger below half)")

        # SDL takes 70 % of the calibrated range for the whole until a stick goes further, then the range it has
        # seen, as with a real pad: full deflections read full at once, and a half-way value reads true after them.
        for axis in ("leftx", "righty"):
            for value in (-32768, 32767):
                pad.axis(axis, value)
                controller.wait(lambda s, a=axis, v=value: abs(s["axes"][a] - v) <= 1, f"{axis} at {value}")
        pad.send_frame({"type": "axis", "axis": "leftx", "value": -20000},
                       {"type": "axis", "axis": "righty", "value": 16000})
        controller.wait(lambda s: abs(s["axes"]["leftx"] + 20000) <= 40 and abs(s["axes"]["righty"] - 16000) <= 40,
                        "leftx ≈ -20000, righty ≈ 16000")
        pad.send_frame({"type": "axis", "axis": "leftx", "value": 0}, {"type": "axis", "axis": "righty", "value": 0})
        controller.wait(lambda s: abs(s["axes"]["leftx"]) <= 40 and abs(s["axes"]["righty"]) <= 40, "sticks centred")

        controller.enable_sensors("gyro", "accel")
        pad.send(type="motion", gyro=GYRO, accel=ACCEL)
        yaw_tolerance = math.radians(3)
        state = controller.wait(
            lambda s: s["sensors"]["gyro"] is not None and s["sensors"]["accel"] is not None
            and abs(s["sensors"]["gyro"][1] - GYRO[1]) <= yaw_tolerance
            and abs(s["sensors"]["gyro"][0] - GYRO[0]) <= 0.01 and abs(s["sensors"]["gyro"][2] - GYRO[2]) <= 0.01
            and all(abs(a - b) <= 0.05 for a, b in zip(s["sensors"]["accel"], ACCEL)),
            f"gyro ≈ {GYRO} rad/s (yaw 90 °/s ± 3 °/s) and accel ≈ {ACCEL} m/s²")
        print(f"SDL {sdl_reader.sdl_version} read gyro {state['sensors']['gyro']} rad/s "
              f"({math.degrees(state['sensors']['gyro'][1]):.3f} °/s of yaw), accel {state['sensors']['accel']} m/s²")
        # hid-nintendo's IMU node beside SDL: its event times are when the virtual pad wrote each report.
        imu = nodes_by_name(ready)[IMU_NAME]
        node, sdl, turn_seconds, witnessed = read_turn(
            pad, motion_device=imu, controller=controller, gyro_dps=imu_gyro_dps, sensor_clock=False,
            step_us=SOURCE_STEP_MICROSECONDS, accel_x_mps2=lambda frame: -frame[2] / ACCEL_PER_G * STANDARD_GRAVITY)
        assert_turn_integrates(f"SDL {sdl_reader.sdl_version} (sensor timestamps)", sdl, turn_seconds,
                               timestamp_bits=64, witnessed=witnessed)
        # hid-nintendo's angle beside SDL is not checked here: once, with SDL 2.26 driving the pad, hid-nintendo's
        # IMU node showed more reports than the 15 ms pace allows (86 between the still samples around the 1 s turn)
        # and, having averaged the pad's report interval to 17 ms, stamped its samples 5666 µs apart (102.5 ° for a
        # 90.6 ° turn), while SDL read 90.2 °.
        pitch, yaw, roll = integrated_degrees(node, timestamp_bits=32)
        print(f"hid-nintendo's IMU node beside SDL {sdl_reader.sdl_version}: yaw {yaw:.3f} °, pitch {pitch:.3f} °, "
              f"roll {roll:.3f} °; {describe_steps(node, 32)}")

        # SDL's rumble: the low-frequency motor in the low band, the high-frequency one in the high band.
        mark = pad.feedback_mark()
        controller.rumble(0x8000, 0x4000, 10000)
        pad.wait_feedback(is_rumble(0.5, 0.25, tolerance=0.01), since=mark,
                          what=f"SDL {sdl_reader.sdl_version}'s rumble ≈ 0.5/0.25", pump=controller.pump)
        mark = pad.feedback_mark()
        controller.rumble(0, 0, 0)
        pad.wait_feedback(is_rumble(0, 0), since=mark, what=f"SDL {sdl_reader.sdl_version}'s rumble off",
                          pump=controller.pump)
        # SDL lit the light of its first player index (light 1 alone: player 1) when it opened the pad.
        pad.wait_feedback(is_player_leds(PLAYER_PATTERNS[0]), since=opened, what="SDL's player 1 light")
    finally:
        controller.close()


# --------------------------------------------------------------------------------------------------------------
# remap --as switch-pro


def test_remap_as_switch_pro_passes_a_dualsenses_press_and_turn_and_a_games_rumble_goes_back(padbridge):
    """The suite's DualSense stand-in (hid-playstation binds it; its identity calibration makes raw gyro 1/16 °/s
    and accel 8192 a g), remapped as a Switch Pro Controller: its cross is the bottom button, its turn of 90 °/s about
    the vertical reads 90 °/s on hid-nintendo's yaw axis; a game's rumble on the virtual pad's node (through
    hid-nintendo's HD rumble) reaches the DualSense's motors, as do the player lights hid-nintendo sets."""
    from standins import PhysicalDualSense

    dualsense = PhysicalDualSense("usb")
    try:
        hidraw = dualsense.wait_bound()
        mark = dualsense.mark()
        remap = padbridge(hidraw, "--as", "switch-pro", command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "switch-pro" and len(ready["eventNodes"]) == 2, ready
        assert os.path.basename(os.path.realpath(Path(ready["sysfs"], "driver"))) == "nintendo"
        nodes = nodes_by_name(ready)
        gamepad, imu = nodes[GAMEPAD_NAME], nodes[IMU_NAME]
        lit = player_lights(ready).count(1)
        dualsense.wait_report(lambda r: r.player_leds == PLAYER_PATTERNS[lit - 1], since=mark,
                              what=f"hid-nintendo's player {lit} lights on the DualSense's player LEDs")

        ticks = 0
        for cross in (True, False):
            ticks += 3000  # 1 ms of the DualSense's 1/3 µs clock
            dualsense.send_input(cross=cross, gyro=(0, 90 * 16, 0), accel=(0, 8192, 0), sensor_ticks=ticks)
            expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, int(cross))])
            if cross:
                # Gravity comes in the same sample as the turn (and may have been there before: no event then).
                expect_events(imu, [
                    (ecodes.EV_ABS, ecodes.ABS_RZ, lambda v: abs(v / GYRO_PER_DEGREE_PER_SECOND - 90) <= 3)])
                assert abs(imu.absinfo(ecodes.ABS_Z).value / ACCEL_PER_G - 1) <= 0.03, imu.absinfo(ecodes.ABS_Z)

        # The game rumbles while the DualSense turns, its reports every 4 ms (250 Hz, each a new gyro reading).
        # hid-nintendo sends a rumble (or light) command only after three reports 8-17 ms apart, and gives up waiting
        # after 500 reports ("exceeded max attempts"): the virtual pad keeps its 15 ms pace whatever comes in, which
        # its hidraw node shows (a pad that sent each change at once sent about one report for each of the
        # DualSense's on top of its pace).
        dmesg_before = kernel_log()
        counter = ReportCounter(ready["hidraw"], 0x30)
        stop, enough = threading.Event(), threading.Event()
        sent = [0]

        def turn():
            started = time.monotonic()
            while not stop.is_set():
                sent[0] += 1
                stop.wait(max(0.0, started + sent[0] * 0.004 - time.monotonic()))
                dualsense.send_input(gyro=(0, (90 + sent[0] % 2) * 16, 0), accel=(0, 8192, 0),
                                     sensor_ticks=ticks + sent[0] * 12000)
                if sent[0] >= 250:
                    enough.set()

        turning = threading.Thread(target=turn, daemon=True)
        streaming_started, counted_before = time.monotonic(), counter.count()
        turning.start()
        try:
            effect = gamepad.upload_effect(rumble_effect(0x8000, 0x4000))
            mark = dualsense.mark()
            gamepad.write(ecodes.EV_FF, effect, 1)
            dualsense.wait_report(lambda r: r.rumble_flagged and abs(r.motor_strong - 128) <= 2
                                  and abs(r.motor_weak - 64) <= 2, since=mark,
                                  what="the game's rumble 0.5/0.25 on the DualSense's motors")
            mark = dualsense.mark()
            gamepad.write(ecodes.EV_FF, effect, 0)
            dualsense.wait_report(lambda r: r.rumble_flagged and r.motor_strong == 0 and r.motor_weak == 0,
                                  since=mark, what="the rumble stopped on the DualSense")
            assert enough.wait(DEADLINE), f"the DualSense stand-in sent only {sent[0]} reports"
        finally:
            stop.set()
            turning.join(DEADLINE)
            streamed_s = time.monotonic() - streaming_started
            reports = counter.count() - counted_before
            counter.close()
        paced = streamed_s / 0.015
        print(f"while the DualSense sent {sent[0]} reports in {streamed_s:.2f} s, the virtual Switch Pro sent {reports} "
              f"(its 15 ms pace: {paced:.0f})")
        assert reports <= paced * 1.2 + 5, \
            f"the virtual pad sent {reports} reports in {streamed_s:.2f} s, more than its 15 ms pace ({paced:.0f})"
        gave_up = [line for line in kernel_log()[len(dmesg_before):] if "exceeded max attempts" in line]
        assert not gave_up, f"hid-nintendo waited in vain for a steady report pace: {gave_up}"
        assert remap.stop() == 0
    finally:
        dualsense.close()


def test_remap_as_switch_pro_of_a_switch_pro_keeps_its_layout_motion_and_rumble(padbridge):
    """The suite's Switch Pro stand-in (switch_pro.py, on USB; hid-nintendo binds it too) remapped as a virtual Switch
    Pro Controller: Nintendo's A (the right face button), Capture and ZR arrive as the same controls, its turn of
    90 °/s about its up axis as the same on the virtual pad's IMU node, and a game's rumble on the virtual pad reaches
    the stand-in's HD rumble blocks with the amplitudes hid-nintendo encodes (0-1003)."""
    from switch_pro import PhysicalSwitchPro

    physical = PhysicalSwitchPro("usb")
    try:
        bound = physical.wait_bound()
        remap = padbridge(bound["pad"], "--as", "switch-pro", command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "switch-pro" and len(ready["eventNodes"]) == 2, ready
        assert os.path.basename(os.path.realpath(Path(ready["sysfs"], "driver"))) == "nintendo"
        nodes = nodes_by_name(ready)
        gamepad, imu = nodes[GAMEPAD_NAME], nodes[IMU_NAME]

        physical.send_state(buttons=["b", "misc1", "righttrigger"])
        expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_EAST, 1), (ecodes.EV_KEY, ecodes.BTN_Z, 1),
                                (ecodes.EV_KEY, ecodes.BTN_TR2, 1)])
        physical.send_state()
        expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_EAST, 0), (ecodes.EV_KEY, ecodes.BTN_Z, 0),
                                (ecodes.EV_KEY, ecodes.BTN_TR2, 0)])
        # 1282 raw units: 89.98 °/s under the stand-in's calibration (14.247 a °/s), about its z (up); 1 g on z.
        # The stand-in lies flat from the start (gravity on z): gravity is there before the turn, without an event.
        physical.send_motion(gyro=(0, 0, 1282), accel=(0, 0, 4096))
        expect_events(imu, [(ecodes.EV_ABS, ecodes.ABS_RZ, lambda v: abs(v / GYRO_PER_DEGREE_PER_SECOND - 90) <= 3)])
        assert abs(imu.absinfo(ecodes.ABS_Z).value / ACCEL_PER_G - 1) <= 0.03, imu.absinfo(ecodes.ABS_Z)

        effect = gamepad.upload_effect(rumble_effect(0x8000, 0x4000))
        _, since = physical.mark()
        gamepad.write(ecodes.EV_FF, effect, 1)
        index, _ = physical.wait_rumble(lambda r: abs(r.strong - 501) <= 15 and abs(r.weak - 251) <= 15, since,
                                        what="the game's rumble 0.5/0.25 as amplitudes ≈ 501 and 251")
        gamepad.write(ecodes.EV_FF, effect, 0)
        physical.wait_rumble(lambda r: r.strong == 0 and r.weak == 0, index + 1, what="the rumble stopped")
        assert remap.stop() == 0
    finally:
        physical.close()


class ReportCounter:
    """Counts the input reports with ID `report_id` a hidraw node delivers, on a thread of its own."""

    def __init__(self, hidraw: str, report_id: int):
        self._fd = os.open(hidraw, os.O_RDONLY | os.O_NONBLOCK)
        self._id, self._count, self._lock = report_id, 0, threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        import select
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        while not self._done.is_set():
            if not poller.poll(100):
                continue
            try:
                report = os.read(self._fd, 64)
            except BlockingIOError:
                continue
            if report[:1] == bytes([self._id]):
                with self._lock:
                    self._count += 1

    def count(self) -> int:
        with self._lock:
            return self._count

    def close(self):
        self._done.set()
        self._thread.join(DEADLINE)
        os.close(self._fd)


def kernel_log() -> list[str]:
    import subprocess
    return subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout.splitlines()

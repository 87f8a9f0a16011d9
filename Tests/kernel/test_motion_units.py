"""Motion from a pad that is not a DualSense reaches a virtual DualSense in the right units (issue 27).

A uhid DualShock 4 stand-in (Tests/kernel/standins.py), bound by the kernel's Sony driver (hid-sony on Linux 6.1,
whose calibration turns its raw units into 1024 per °/s and 8192 per g), turns at a constant 90 °/s for 1 s of its
own sensor clock (251 samples 4 ms apart, 250 Hz) while lying flat, gravity on its Y axis. `remap --as dualsense`
makes a virtual DualSense of it, which hid-playstation binds. Two readers padbridge did not write check the units:
python-evdev integrates the virtual pad's motion node (hid-playstation's ABS_RX/RY/RZ at 1024 per °/s, ABS_X/Y/Z at
8192 per g, MSC_TIMESTAMP in µs) over its own timestamps: 90 ° ± 3 °, gravity 1 g ± 3 %; and SDL, reading the
virtual pad through its HIDAPI PS5 driver as a game does, reads the rotation as π/2 rad/s ± 3 % and gravity as
9.81 m/s² ± 3 %.
"""

from __future__ import annotations

import ctypes
import math
import threading
import time

import evdev

from motion_node import MotionNode, yaw_integrated
from sdl_reading import joystick_ids, open_controller, pump, sdl_wait, wait_for_enhanced_mode
from standins import PhysicalDualShock4

STEPS = 250                      # 251 samples, 250 steps of 4 ms: 1 s of the stand-in's clock
STEP_MICROSECONDS = 4_000
DS4_TICKS_PER_STEP = 750         # the DualShock 4's clock counts 16/3 µs: 4,000 µs = 750 ticks
YAW_DEGREES_PER_SECOND = 90
YAW_RAW = YAW_DEGREES_PER_SECOND * 16   # 1/16 °/s a unit under the stand-in's calibration
GRAVITY_RAW = 8192
ACCEL_UNITS_PER_G = 8192
STANDARD_GRAVITY = 9.80665


def test_a_dualshock4_turned_90_degrees_turns_the_virtual_dualsense_90_degrees(sdl, padbridge):
    known = joystick_ids(sdl)
    ds4 = PhysicalDualShock4()
    try:
        hidraw = ds4.wait_bound()
        remap = padbridge(hidraw, "--as", "dualsense", command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "dualsense" and len(ready["eventNodes"]) == 3, ready
        motion = evdev.InputDevice(ready["eventNodes"][1])
        assert motion.name.endswith("Motion Sensors"), motion.name
        node = MotionNode(motion)
        controller = open_controller(sdl, [ready["hidraw"], *ready["eventNodes"]], known)
        try:
            wait_for_enhanced_mode(sdl, controller)
            for kind in (sdl.SDL_SENSOR_ACCEL, sdl.SDL_SENSOR_GYRO):
                assert sdl.SDL_GameControllerSetSensorEnabled(controller, kind, sdl.SDL_TRUE) == 0

            # At rest first: the pad flat, gravity on its Y axis, not turning.
            timestamp = 0
            ds4.send_motion(gyro=(0, 0, 0), accel=(0, GRAVITY_RAW, 0), timestamp=timestamp)
            rest = node.wait_for_frame(lambda f: f[2] > 0 and f[5] == 0, "the pad at rest, gravity on Y")
            # 90 °/s about the vertical for 1 s of the pad's clock, at its pace (251 samples, 4 ms apart).
            pace = threading.Event()
            started = time.monotonic()
            for k in range(1, STEPS + 1):
                pace.wait(max(0.0, started + k * STEP_MICROSECONDS / 1e6 - time.monotonic()))
                timestamp += DS4_TICKS_PER_STEP
                ds4.send_motion(gyro=(0, YAW_RAW, 0), accel=(0, GRAVITY_RAW, 0), timestamp=timestamp)
            turning = node.wait_for_frame(lambda f: f[5] > 0, "the pad turning", rest)

            # SDL, as a game reads it, while the last sample holds: the rate in rad/s, gravity in m/s².
            data = (ctypes.c_float * 3)()

            def sdl_reads(kind, axis, want):
                def check():
                    sdl.SDL_GameControllerGetSensorData(controller, kind, data, 3)
                    return list(data) if abs(abs(data[axis]) - want) <= 0.03 * want else None
                return check

            gyro = sdl_wait(sdl, sdl_reads(sdl.SDL_SENSOR_GYRO, 1, math.radians(YAW_DEGREES_PER_SECOND)),
                            "SDL reading the turn as π/2 rad/s ± 3 %")
            accel = sdl_wait(sdl, sdl_reads(sdl.SDL_SENSOR_ACCEL, 1, STANDARD_GRAVITY), "SDL reading 1 g ± 3 %")

            # The pad stops: a last sample at rest, 4 ms after the turn's last.
            timestamp += DS4_TICKS_PER_STEP
            ds4.send_motion(gyro=(0, 0, 0), accel=(0, GRAVITY_RAW, 0), timestamp=timestamp)
            stopped = node.wait_for_frame(lambda f: f[5] == 0, "the pad at rest again", turning)
        finally:
            sdl.SDL_GameControllerClose(controller)
            pump(sdl, 0)
        frames = node.stop()
        assert not node.dropped, "the test's own reader fell behind (SYN_DROPPED): the check says nothing"
        assert remap.stop() == 0
    finally:
        ds4.close()

    # The turn: from the frame before the first turning one (the pad at rest, where the turn starts) to the last
    # turning frame, every frame's rate over its interval.
    turn = frames[turning - 1:stopped]
    assert turn[0][5] == 0 and all(f[5] > 0 for f in turn[1:]), f"frames of the turn: {turn}"
    degrees = yaw_integrated(turn)
    gravity = [f[2] / ACCEL_UNITS_PER_G for f in frames[rest:stopped + 1]]
    span_us = (turn[-1][0] - turn[0][0]) & 0xFFFFFFFF
    print(f"DualShock 4 turned {YAW_DEGREES_PER_SECOND} °/s for 1 s of its clock: the virtual DualSense's motion "
          f"node turned {degrees:.3f} ° over {span_us} µs of MSC_TIMESTAMP in {len(turn)} frames; gravity "
          f"{min(gravity):.4f}...{max(gravity):.4f} g; SDL read gyro {gyro} rad/s, accel {accel} m/s²")
    # The angle is the check (the 90 ° ± 3 °): at a constant rate it bounds the span of the virtual pad's
    # clock too. That span is printed: one full-suite run saw 1,004,382 µs for the pad's 1,000,000 (0.44 % long,
    # 90.4 °), where a forwarded DualSense's clock is exact (test_motion_clock): to be looked into.
    assert abs(degrees - YAW_DEGREES_PER_SECOND) <= 3, \
        f"turned {degrees:.3f} °, not 90 ° ± 3 °, over {span_us} µs of the virtual pad's clock"
    assert all(abs(g - 1) <= 0.03 for g in gravity), f"gravity read as {min(gravity)}...{max(gravity)} g"

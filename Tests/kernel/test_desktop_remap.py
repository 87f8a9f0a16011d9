"""`padbridge remap` onto a virtual keyboard and mouse (issue 28): keys, combos, tap/hold, mouse buttons, the wheel, a
stick and the gyro on the pointer. Read by python-evdev (the raw events) and by libinput (`libinput debug-events`, as
a desktop reads them); padbridge wrote neither.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time

import evdev
from evdev import ecodes

from conftest import DEADLINE, describe_events, expect_events, read_until_gone, start_xbox
from discovery import controller_with_node, list_json
from standins import PhysicalDualSense


class LibinputEvents:
    """`libinput debug-events` on some device nodes, its lines collected as they come."""

    def __init__(self, *nodes: str):
        command = ["stdbuf", "-oL", "libinput", "debug-events", "--show-keycodes"]
        for node in nodes:
            command += ["--device", node]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()

    def wait(self, pattern: str, since: int = 0, what: str = "") -> tuple[int, re.Match]:
        """The first line from `since` matching the regular expression `pattern`: (its index, the match)."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + DEADLINE
        with self._cond:
            while True:
                for index in range(since, len(self.lines)):
                    match = regex.search(self.lines[index])
                    if match:
                        return index, match
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"libinput never showed {what or pattern}; it printed:\n" + "\n".join(self.lines))
                self._cond.wait(left)

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=DEADLINE)


def read_frames(device: evdev.InputDevice, until, timeout: float = DEADLINE) -> list[list]:
    """Reads SYN_REPORT frames (each a list of events) until `until(frames)` holds."""
    frames: list[list] = []
    current: list = []
    deadline = time.monotonic() + timeout
    while not until(frames):
        left = deadline - time.monotonic()
        assert left > 0, f"{device.name}: frames so far: {[describe_events(f) for f in frames]}"
        for event in expect_events(device, [(ecodes.EV_SYN, ecodes.SYN_REPORT, 0)], timeout=left):
            if event.type == ecodes.EV_SYN and event.code == ecodes.SYN_REPORT:
                frames.append(current)
                current = []
            else:
                current.append(event)
    return frames


def frame_index(frames, code: int, value: int) -> int:
    return next(i for i, frame in enumerate(frames) if any(e.type == ecodes.EV_KEY and e.code == code and e.value == value
                                                          for e in frame))


def has_key(code: int, value: int):
    return lambda frames: any(e.type == ecodes.EV_KEY and e.code == code and e.value == value for f in frames for e in f)


PROFILE = """
[map]
a = "key:space"
x = ["key:leftctrl", "key:c"]
righttrigger = "mouse:left"
dpup = "scroll:up"

[tap_hold.b]
tap = "key:esc"
hold = "key:leftshift"

[mouse]
stick = "right"
speed = 2000
"""


def test_keys_combos_tap_hold_buttons_wheel_and_a_stick_as_evdev_and_libinput_read_them(padbridge, tmp_path):
    profile = tmp_path / "desktop.toml"
    profile.write_text(PROFILE)
    pad, pad_ready, _ = start_xbox(padbridge, "--name", "padbridge desktop stand-in")
    remap = padbridge(pad_ready["eventNodes"][0], "--as", "none", "--profile", str(profile), command="remap")
    ready = remap.wait_ready()
    assert ready["kind"] == "none" and ready["eventNodes"] == [], ready
    keyboard, mouse = evdev.InputDevice(ready["keyboard"]), evdev.InputDevice(ready["mouse"])
    assert (keyboard.name, mouse.name) == ("padbridge virtual keyboard", "padbridge virtual mouse")
    keys = keyboard.capabilities()[ecodes.EV_KEY]
    assert ecodes.KEY_SPACE in keys and ecodes.KEY_F5 in keys and ecodes.BTN_LEFT not in keys and ecodes.BTN_SOUTH not in keys
    assert set(mouse.capabilities()[ecodes.EV_REL]) == {ecodes.REL_X, ecodes.REL_Y, ecodes.REL_WHEEL, ecodes.REL_HWHEEL,
                                                       ecodes.REL_WHEEL_HI_RES, ecodes.REL_HWHEEL_HI_RES}
    desktop = LibinputEvents(keyboard.path, mouse.path)
    try:
        desktop.wait(r"DEVICE_ADDED\s+padbridge virtual keyboard.*cap:k", what="the keyboard, as a keyboard")
        desktop.wait(r"DEVICE_ADDED\s+padbridge virtual mouse.*cap:p", what="the mouse, as a pointer")

        # A key.
        pad.button("a", True)
        expect_events(keyboard, [(ecodes.EV_KEY, ecodes.KEY_SPACE, 1)])
        desktop.wait(r"KEYBOARD_KEY.*KEY_SPACE \(57\) pressed")
        pad.button("a", False)
        expect_events(keyboard, [(ecodes.EV_KEY, ecodes.KEY_SPACE, 0)])
        mark, _ = desktop.wait(r"KEYBOARD_KEY.*KEY_SPACE \(57\) released")

        # A combo: ctrl down in a report before c's, c up in a report before ctrl's.
        pad.button("x", True)
        frames = read_frames(keyboard, has_key(ecodes.KEY_C, 1))
        assert frame_index(frames, ecodes.KEY_LEFTCTRL, 1) < frame_index(frames, ecodes.KEY_C, 1), frames
        index, _ = desktop.wait(r"KEY_LEFTCTRL \(29\) pressed", since=mark)
        desktop.wait(r"KEY_C \(46\) pressed", since=index + 1, what="c after ctrl")
        pad.button("x", False)
        frames = read_frames(keyboard, has_key(ecodes.KEY_LEFTCTRL, 0))
        assert frame_index(frames, ecodes.KEY_C, 0) < frame_index(frames, ecodes.KEY_LEFTCTRL, 0), frames

        # Tap: esc pressed and released in two reports; hold: shift from 200 ms on, until released.
        # (a in the same reports as b: its key shows each report was read, so b's press and release are two)
        pad.send_frame(dict(type="button", button="a", pressed=True), dict(type="button", button="b", pressed=True))
        expect_events(keyboard, [(ecodes.EV_KEY, ecodes.KEY_SPACE, 1)])
        pad.send_frame(dict(type="button", button="a", pressed=False), dict(type="button", button="b", pressed=False))
        frames = read_frames(keyboard, has_key(ecodes.KEY_ESC, 0))
        assert frame_index(frames, ecodes.KEY_ESC, 1) < frame_index(frames, ecodes.KEY_ESC, 0), frames
        assert not has_key(ecodes.KEY_LEFTSHIFT, 1)(frames), frames
        desktop.wait(r"KEY_ESC \(1\) released", since=mark)
        pressed = time.monotonic()
        pad.button("b", True)
        expect_events(keyboard, [(ecodes.EV_KEY, ecodes.KEY_LEFTSHIFT, 1)])
        assert time.monotonic() - pressed >= 0.2 - 0.01, "held for the hold time first"
        pad.button("b", False)
        frames = read_frames(keyboard, has_key(ecodes.KEY_LEFTSHIFT, 0))
        assert not has_key(ecodes.KEY_ESC, 1)(frames), "a hold never taps"

        # A trigger past its threshold clicks; the d-pad scrolls one notch (high resolution and classic).
        pad.axis("righttrigger", 32767)
        expect_events(mouse, [(ecodes.EV_KEY, ecodes.BTN_LEFT, 1)])
        desktop.wait(r"POINTER_BUTTON.*BTN_LEFT \(272\) pressed")
        pad.axis("righttrigger", 0)
        expect_events(mouse, [(ecodes.EV_KEY, ecodes.BTN_LEFT, 0)])
        pad.button("dpup", True)
        expect_events(mouse, [(ecodes.EV_REL, ecodes.REL_WHEEL_HI_RES, 120), (ecodes.EV_REL, ecodes.REL_WHEEL, 1)])
        pad.button("dpup", False)
        # (libinput's vertical axis is positive downwards: one notch up is -120)
        desktop.wait(r"POINTER_SCROLL_WHEEL\s.*vert -15\.00/-120\.0", what="a notch up")

        # The right stick pushed right moves the pointer right, and only right.
        pad.axis("rightx", 32767)
        moved = []
        while sum(e.value for e in moved if e.code == ecodes.REL_X) < 200:
            moved += [e for e in expect_events(mouse, [(ecodes.EV_REL, ecodes.REL_X, lambda v: v > 0)]) if e.type == ecodes.EV_REL]
        assert all(e.code == ecodes.REL_X for e in moved), describe_events(moved)
        _, motion = desktop.wait(r"POINTER_MOTION\s.*?(-?\d+\.\d+)/\s*(-?\d+\.\d+)", what="the pointer moving")
        assert float(motion.group(1)) > 0 and float(motion.group(2)) == 0, motion.group(0)
        pad.axis("rightx", 0)

        # The pad unplugged while a key and a button are held: both released at once; the devices stay for its return.
        pad.button("a", True)
        pad.axis("righttrigger", 32767)
        expect_events(keyboard, [(ecodes.EV_KEY, ecodes.KEY_SPACE, 1)])
        expect_events(mouse, [(ecodes.EV_KEY, ecodes.BTN_LEFT, 1)])
        held, _ = desktop.wait(r"POINTER_BUTTON.*BTN_LEFT \(272\) pressed", since=mark + 1)
        pad.stop()
        expect_events(keyboard, [(ecodes.EV_KEY, ecodes.KEY_SPACE, 0)])
        expect_events(mouse, [(ecodes.EV_KEY, ecodes.BTN_LEFT, 0)])
        desktop.wait(r"KEYBOARD_KEY.*KEY_SPACE \(57\) released", since=held, what="the space key let go")
        desktop.wait(r"POINTER_BUTTON.*BTN_LEFT \(272\) released", since=held, what="the left button let go")
        remap.proc.send_signal(signal.SIGTERM)
        assert remap.wait_exit() == 0
        read_until_gone(keyboard)
        read_until_gone(mouse)
    finally:
        desktop.close()


GYRO_PROFILE = """
[map]
a = "mouse:right"

[gyro]
output = "mouse"
counts_per_turn = 3600
sensitivity = 1
"""

TICKS_PER_STEP = 12_000      # the DualSense's sensor clock counts 1/3 µs: 4 ms
YAW_RAW = 90 * 16            # 90 °/s at the stand-in's 1/16 °/s per unit
GRAVITY_RAW = 8192


def test_a_dualsense_turned_a_quarter_turn_moves_the_mouse_a_quarter_turn_of_counts(padbridge, tmp_path):
    profile = tmp_path / "gyro.toml"
    profile.write_text(GYRO_PROFILE)
    pad = PhysicalDualSense()
    try:
        hidraw = pad.wait_bound()
        remap = padbridge(hidraw, "--as", "dualsense", "--profile", str(profile), command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "dualsense" and len(ready["eventNodes"]) == 3 and ready["keyboard"] is None, ready
        mouse = evdev.InputDevice(ready["mouse"])
        desktop = LibinputEvents(mouse.path)
        desktop.wait(r"DEVICE_ADDED\s+padbridge virtual mouse.*cap:p", what="the mouse, as a pointer")
        # `list` shows the mouse with the virtual pad it was made beside (not as a pad of its own).
        listed = list_json()
        assert controller_with_node(listed, ready["eventNodes"][0])["nodes"]["desktop"] == [ready["mouse"]], listed
        assert not any(ready["mouse"] in [n["path"] for n in c["nodes"]["evdev"]] for c in listed), listed

        # At rest, then 90 °/s of yaw for 250 steps of 4 ms on the pad's clock (sent at that pace), then at rest again
        # and cross pressed: its click on the mouse comes after every count of the turn. The mouse is read meanwhile
        # (250 reports overflow an unread evdev client's buffer).
        read = {}
        reader = threading.Thread(target=lambda: read.setdefault(
            "events", expect_events(mouse, [(ecodes.EV_KEY, ecodes.BTN_RIGHT, 1)])), daemon=True)
        reader.start()
        ticks = 3_000
        pad.send_input(gyro=(0, 0, 0), accel=(0, GRAVITY_RAW, 0), sensor_ticks=ticks)
        pace = threading.Event()
        started = time.monotonic()
        for step in range(1, 251):
            pace.wait(max(0.0, started + step * 0.004 - time.monotonic()))
            ticks += TICKS_PER_STEP
            pad.send_input(gyro=(0, YAW_RAW, 0), accel=(0, GRAVITY_RAW, 0), sensor_ticks=ticks)
        ticks += TICKS_PER_STEP
        pad.send_input(cross=True, gyro=(0, 0, 0), accel=(0, GRAVITY_RAW, 0), sensor_ticks=ticks)
        reader.join(DEADLINE)
        events = read["events"]
        assert not any(e.type == ecodes.EV_SYN and e.code == ecodes.SYN_DROPPED for e in events), "the reader kept up"
        x = sum(e.value for e in events if e.type == ecodes.EV_REL and e.code == ecodes.REL_X)
        y = sum(e.value for e in events if e.type == ecodes.EV_REL and e.code == ecodes.REL_Y)
        print(f"a quarter turn left at 3600 counts per turn: REL_X {x}, REL_Y {y}")
        assert abs(x - -900) <= 27 and abs(y) <= 3, (x, y)

        # Killed while cross holds the right button: the kernel destroys the mouse with remap's descriptors, and the
        # desktop lets go of the button.
        held, _ = desktop.wait(r"POINTER_BUTTON.*BTN_RIGHT \(273\) pressed", what="the right button held")
        remap.proc.send_signal(signal.SIGKILL)
        remap.proc.wait(timeout=DEADLINE)
        read_until_gone(mouse)
        desktop.wait(r"POINTER_BUTTON.*BTN_RIGHT \(273\) released", since=held, what="the right button let go")
        desktop.wait(r"DEVICE_REMOVED\s+padbridge virtual mouse", since=held)
        desktop.close()
    finally:
        pad.close()

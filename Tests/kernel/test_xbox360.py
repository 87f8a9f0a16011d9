"""`padbridge virtual --type xbox360`: a uinput pad that readers must not be able to tell from xpad's 045e:028e."""

import os
import re
import select
import signal
import threading
import subprocess
import time

import pytest
from evdev import ecodes as e

from conftest import (DEADLINE, describe_events, expect_dpad_on_hat0, expect_events, is_rumble, read_until_gone,
                      rumble_effect, start_xbox, wait_abs)

XPAD_KEYS = [e.BTN_A, e.BTN_B, e.BTN_X, e.BTN_Y, e.BTN_TL, e.BTN_TR, e.BTN_SELECT, e.BTN_START, e.BTN_MODE,
             e.BTN_THUMBL, e.BTN_THUMBR]
# code: (min, max, fuzz, flat) as xpad_set_up_abs() sets them for XTYPE_XBOX360
XPAD_ABS = {
    e.ABS_X: (-32768, 32767, 16, 128), e.ABS_Y: (-32768, 32767, 16, 128),
    e.ABS_RX: (-32768, 32767, 16, 128), e.ABS_RY: (-32768, 32767, 16, 128),
    e.ABS_Z: (0, 255, 0, 0), e.ABS_RZ: (0, 255, 0, 0),
    e.ABS_HAT0X: (-1, 1, 0, 0), e.ABS_HAT0Y: (-1, 1, 0, 0),
}
# FF_RUMBLE from xpad, the rest added by ff-memless
XPAD_FF = [e.FF_RUMBLE, e.FF_PERIODIC, e.FF_SQUARE, e.FF_TRIANGLE, e.FF_SINE, e.FF_GAIN]

BUTTONS = {"a": e.BTN_A, "b": e.BTN_B, "x": e.BTN_X, "y": e.BTN_Y, "leftshoulder": e.BTN_TL,
           "rightshoulder": e.BTN_TR, "back": e.BTN_SELECT, "start": e.BTN_START, "guide": e.BTN_MODE,
           "leftstick": e.BTN_THUMBL, "rightstick": e.BTN_THUMBR}


def trigger_u8(value):
    return (value * 255 + 16383) // 32767


def test_ready_line_and_identity(padbridge):
    pad, ready, device = start_xbox(padbridge)
    assert ready["hidraw"] is None and ready["mac"] is None, ready
    assert re.fullmatch(r"/dev/input/event\d+", ready["eventNodes"][0]), ready
    assert os.path.isdir(ready["sysfs"]), ready
    assert open(os.path.join(ready["sysfs"], "name")).read().strip() == "Microsoft X-Box 360 pad"
    assert os.path.basename(ready["sysfs"]) == os.path.basename(
        os.path.realpath(f"/sys/class/input/{os.path.basename(ready['eventNodes'][0])}/device")), \
        "ready.sysfs is not the input device of ready.eventNodes[0]"
    assert device.name == "Microsoft X-Box 360 pad"
    assert (device.info.bustype, device.info.vendor, device.info.product) == (e.BUS_USB, 0x045E, 0x028E), device.info


def test_name_option(padbridge):
    _, _, device = start_xbox(padbridge, "--name", "padbridge kernel-suite pad")
    assert device.name == "padbridge kernel-suite pad"


def test_capabilities_are_exactly_xpads(padbridge):
    _, _, device = start_xbox(padbridge)
    caps = device.capabilities(absinfo=True)
    assert set(caps) - {e.EV_SYN} == {e.EV_KEY, e.EV_ABS, e.EV_FF}, \
        f"event types {sorted(e.EV.get(t, t) for t in caps)}"
    assert sorted(caps[e.EV_KEY]) == sorted(XPAD_KEYS), f"keys {caps[e.EV_KEY]}"
    absinfo = dict(caps[e.EV_ABS])
    assert sorted(absinfo) == sorted(XPAD_ABS), f"axes {sorted(absinfo)}"
    for code, (lo, hi, fuzz, flat) in XPAD_ABS.items():
        info = absinfo[code]
        assert (info.min, info.max, info.fuzz, info.flat, info.resolution) == (lo, hi, fuzz, flat, 0), \
            f"{e.ABS[code]}: {info}"
        assert info.value == 0, f"{e.ABS[code]} starts at {info.value}"
    assert sorted(caps[e.EV_FF]) == sorted(XPAD_FF), f"FF {caps[e.EV_FF]}"
    assert device.ff_effects_count >= 1
    assert device.input_props() == []


def test_buttons_arrive_as_xpad_keys(padbridge):
    pad, _, device = start_xbox(padbridge)
    for name, code in BUTTONS.items():
        pad.button(name, True)
        expect_events(device, [(e.EV_KEY, code, 1)])
        pad.button(name, False)
        expect_events(device, [(e.EV_KEY, code, 0)])


def test_sticks_and_triggers(padbridge):
    pad, _, device = start_xbox(padbridge)
    sticks = {"leftx": (e.ABS_X, -12000), "lefty": (e.ABS_Y, 20000), "rightx": (e.ABS_RX, 32767),
              "righty": (e.ABS_RY, -32768)}
    for name, (code, value) in sticks.items():
        pad.axis(name, value)
        expect_events(device, [(e.EV_ABS, code, value)])
    triggers = [("lefttrigger", e.ABS_Z, 32767), ("righttrigger", e.ABS_RZ, 16384), ("righttrigger", e.ABS_RZ, 100)]
    for name, code, value in triggers:
        pad.axis(name, value)
        expect_events(device, [(e.EV_ABS, code, trigger_u8(value))])
    assert trigger_u8(16384) == 128 and trigger_u8(100) == 1
    for name, (code, _) in sticks.items():
        pad.axis(name, 0)
    pad.axis("lefttrigger", 0)
    wait_abs(device, {e.ABS_X: 0, e.ABS_Y: 0, e.ABS_RX: 0, e.ABS_RY: 0, e.ABS_Z: 0})


def test_dpad_is_hat0(padbridge):
    pad, _, device = start_xbox(padbridge)
    expect_dpad_on_hat0(pad, device)


def test_evtest_reads_the_pad(padbridge):
    pad, ready, _ = start_xbox(padbridge)
    node = ready["eventNodes"][0]
    # stdbuf: evtest writes through stdio, block-buffered into a pipe
    reader = subprocess.Popen(["stdbuf", "-oL", "evtest", node], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
    lines = []
    try:
        deadline = time.monotonic() + DEADLINE

        def read_until(pattern):
            while time.monotonic() < deadline:
                if not select.select([reader.stdout], [], [], max(0, deadline - time.monotonic()))[0]:
                    break
                raw = reader.stdout.readline()
                if not raw:
                    break
                lines.append(raw.decode(errors="replace").rstrip())
                if re.search(pattern, lines[-1]):
                    return lines[-1]
            raise AssertionError(f"evtest never printed /{pattern}/; output:\n" + "\n".join(lines[-40:]))

        read_until(r'Input device name: "Microsoft X-Box 360 pad"')
        read_until(r"Testing \.\.\. \(interrupt to exit\)")
        header = "\n".join(lines)
        assert "Input device ID: bus 0x3 vendor 0x45e product 0x28e" in header, header
        assert re.search(r"Event code 304 \((BTN_A|BTN_SOUTH)\)", header), header
        assert re.search(r"Event code 80 \(FF_RUMBLE\)", header), header
        pad.button("a", True)
        read_until(r"type 1 \(EV_KEY\), code 304 \((BTN_A|BTN_SOUTH)\), value 1")
        pad.axis("leftx", -12000)
        read_until(r"type 3 \(EV_ABS\), code 0 \(ABS_X\), value -12000")
    finally:
        reader.kill()
        reader.wait()


# ---- force feedback: we are the FF client, padbridge is the uinput owner that must answer uploads ----

def test_rumble_upload_play_stop(padbridge):
    pad, _, device = start_xbox(padbridge)
    mark = pad.feedback_mark()
    started = time.monotonic()
    effect_id = device.upload_effect(rumble_effect(0x8000, 0x4000, length_ms=0))  # blocks until padbridge answers
    assert time.monotonic() - started < 10, "the upload took as long as the kernel's 30 s timeout: unanswered?"
    device.write(e.EV_FF, effect_id, 1)
    mark, _ = pad.wait_feedback(is_rumble(0.5, 0.25), since=mark, what="rumble ≈ 0.5/0.25 after EV_FF play")
    device.write(e.EV_FF, effect_id, 0)
    pad.wait_feedback(is_rumble(0, 0, tolerance=0), since=mark + 1, what="rumble 0/0 after EV_FF stop")
    device.erase_effect(effect_id)


def test_rumble_stops_after_its_replay_length(padbridge):
    pad, _, device = start_xbox(padbridge)
    mark = pad.feedback_mark()
    effect_id = device.upload_effect(rumble_effect(0xFFFF, 0x0000, length_ms=300))
    played = time.monotonic()
    device.write(e.EV_FF, effect_id, 1)
    index, _ = pad.wait_feedback(is_rumble(1.0, 0.0), since=mark, what="rumble 1/0 after play")
    index, _ = pad.wait_feedback(is_rumble(0, 0, tolerance=0), since=index + 1,
                                 what="rumble 0/0 by itself after the 300 ms replay length")
    stopped_at = pad.stdout[index][0]
    assert stopped_at - played >= 0.25, f"stopped after {stopped_at - played:.3f} s, before the 300 ms replay length"


def test_rumble_effect_update_and_erase(padbridge):
    pad, _, device = start_xbox(padbridge)
    mark = pad.feedback_mark()
    effect = rumble_effect(0x8000, 0x4000)
    effect_id = device.upload_effect(effect)
    device.write(e.EV_FF, effect_id, 1)
    mark, _ = pad.wait_feedback(is_rumble(0.5, 0.25), since=mark, what="rumble ≈ 0.5/0.25")
    # SDL's way of changing the magnitude: upload again with the same id while playing
    effect = rumble_effect(0x4000, 0x8000)
    effect.id = effect_id
    assert device.upload_effect(effect) == effect_id
    mark, _ = pad.wait_feedback(is_rumble(0.25, 0.5), since=mark + 1, what="rumble ≈ 0.25/0.5 after re-upload")
    # erasing a playing effect stops it
    device.erase_effect(effect_id)
    pad.wait_feedback(is_rumble(0, 0, tolerance=0), since=mark + 1, what="rumble 0/0 after erasing the effect")


# ---- lifecycle ----

@pytest.mark.parametrize("how", ["end-of-input", "SIGTERM", "SIGINT"])
def test_held_inputs_are_released_before_the_pad_goes(padbridge, how):
    pad, _, device = start_xbox(padbridge)
    pad.button("a", True)
    pad.axis("lefttrigger", 32767)
    pad.axis("leftx", 20000)
    pad.axis("righty", -20000)
    expect_events(device, [(e.EV_KEY, e.BTN_A, 1), (e.EV_ABS, e.ABS_Z, 255), (e.EV_ABS, e.ABS_X, 20000),
                           (e.EV_ABS, e.ABS_RY, -20000)])
    if how == "end-of-input":
        pad.close_stdin()
    else:
        pad.proc.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
    events = read_until_gone(device)
    final = {}
    for event in events:
        if event.type in (e.EV_KEY, e.EV_ABS):
            final[(event.type, event.code)] = event.value
    released = {(e.EV_KEY, e.BTN_A): 0, (e.EV_ABS, e.ABS_Z): 0, (e.EV_ABS, e.ABS_X): 0, (e.EV_ABS, e.ABS_RY): 0}
    missing = {k: v for k, v in released.items() if final.get(k) != v}
    assert not missing, f"before the node vanished the reader saw only: {describe_events(events)}"
    assert pad.wait_exit() == 0


def final_values(events) -> dict:
    """The last value of each key and axis among `events`."""
    final = {}
    for event in events:
        if event.type in (e.EV_KEY, e.EV_ABS):
            final[(event.type, event.code)] = event.value
    return final


def read_until_gone_timed(device) -> tuple[list, float]:
    """Every event read until the node goes, and when (CLOCK_REALTIME, as the events' stamps) its going was seen."""
    from conftest import DeviceGone, read_available

    seen = []
    deadline = time.monotonic() + DEADLINE
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"{device.path} still exists {DEADLINE:.0f} s later"
        try:
            seen.extend(read_available(device, left))
        except DeviceGone:
            return seen, time.time()


def test_end_of_input_right_after_the_signal_keeps_the_release(padbridge):
    """Ctrl-C on `padbridge monitor --json 0 | padbridge virtual`: both get SIGINT, monitor ends and `virtual` sees
    end of input a moment after its signal. That is not a second request to stop: the release is shown for its
    whole grace period (100 ms), so a game reading once a frame sees it before the node goes."""
    pad, _, device = start_xbox(padbridge)
    pad.send_frame({"type": "button", "button": "a", "pressed": True},
                   {"type": "axis", "axis": "lefttrigger", "value": 32767},
                   {"type": "axis", "axis": "leftx", "value": 20000})
    expect_events(device, [(e.EV_KEY, e.BTN_A, 1), (e.EV_ABS, e.ABS_Z, 255), (e.EV_ABS, e.ABS_X, 20000)])
    pad.proc.send_signal(signal.SIGINT)
    pad.close_stdin()
    events, gone_at = read_until_gone_timed(device)
    final = final_values(events)
    released = {(e.EV_KEY, e.BTN_A): 0, (e.EV_ABS, e.ABS_Z): 0, (e.EV_ABS, e.ABS_X): 0}
    assert all(final.get(k) == v for k, v in released.items()), \
        f"before the node vanished the reader saw only: {describe_events(events)}"
    released_at = next(event.timestamp() for event in events
                       if (event.type, event.code, event.value) == (e.EV_KEY, e.BTN_A, 0))
    shown = gone_at - released_at
    # The grace is 100 ms; the reader notices the node going after it went, never before.
    assert shown >= 0.095, f"the released pad was there for {shown * 1000:.0f} ms only: the grace was skipped"
    assert pad.wait_exit() == 0


def test_input_after_the_signal_presses_nothing_again(padbridge):
    """`kill` of `virtual` while its input still streams presses: input stops being read when shutting down
    starts, so nothing is pressed again on top of the release before the pad goes."""
    pad, _, device = start_xbox(padbridge)
    pad.send_frame({"type": "button", "button": "a", "pressed": True},
                   {"type": "axis", "axis": "righttrigger", "value": 32767})
    expect_events(device, [(e.EV_KEY, e.BTN_A, 1), (e.EV_ABS, e.ABS_RZ, 255)])
    stop = threading.Event()
    frames = 0

    def keep_pressing():
        nonlocal frames
        while not stop.is_set():
            try:
                pad.send_frame({"type": "button", "button": "a", "pressed": True},
                               {"type": "axis", "axis": "righttrigger", "value": 32767 - frames % 2},
                               {"type": "axis", "axis": "leftx", "value": 10000 + 100 * (frames % 2)})
            except (BrokenPipeError, ValueError):
                return
            frames += 1
            stop.wait(0.002)

    writer = threading.Thread(target=keep_pressing, daemon=True)
    writer.start()
    try:
        pad.proc.send_signal(signal.SIGTERM)
        events = read_until_gone(device)
        assert pad.wait_exit() == 0
    finally:
        stop.set()
        writer.join(5)
    released_at = next((i for i, event in enumerate(events)
                        if (event.type, event.code, event.value) == (e.EV_KEY, e.BTN_A, 0)), None)
    assert released_at is not None, f"no release before the node went: {describe_events(events[-40:])}"
    pressed_again = [event for event in events[released_at:]
                     if (event.type, event.code) in ((e.EV_KEY, e.BTN_A), (e.EV_ABS, e.ABS_RZ), (e.EV_ABS, e.ABS_X))
                     and event.value != 0]
    assert not pressed_again, \
        f"pressed again after the release ({frames} frames sent): {describe_events(pressed_again)}"


def test_lines_written_together_are_one_frame(padbridge):
    """What a writer sends in one write (a frame from `monitor --json`) reaches readers between the same two
    SYN_REPORTs; lines written apart are separate frames."""
    pad, _, device = start_xbox(padbridge)
    pad.send_frame({"type": "button", "button": "a", "pressed": True},
                   {"type": "axis", "axis": "leftx", "value": -20000},
                   {"type": "axis", "axis": "righttrigger", "value": 32767})
    events = expect_events(device, [(e.EV_KEY, e.BTN_A, 1), (e.EV_ABS, e.ABS_X, -20000), (e.EV_ABS, e.ABS_RZ, 255)])
    frames, current = [], []
    for event in events:
        if event.type == e.EV_SYN and event.code == e.SYN_REPORT:
            if current:
                frames.append(current)
            current = []
        elif event.type in (e.EV_KEY, e.EV_ABS):
            current.append((event.type, event.code, event.value))
    if current:
        frames.append(current)
    assert frames == [[(e.EV_KEY, e.BTN_A, 1), (e.EV_ABS, e.ABS_X, -20000), (e.EV_ABS, e.ABS_RZ, 255)]], \
        f"expected one frame, got {frames}"


def test_malformed_line_is_reported_and_skipped(padbridge):
    pad, _, device = start_xbox(padbridge)
    pad.button("a", True)                                     # line 1
    pad.send_line('{"type":"button","button":"a",')          # line 2: truncated JSON
    pad.button("b", True)                                     # line 3
    pad.send_line('{"type":"button","button":"nosuchbutton","pressed":true}')  # line 4: unknown name
    pad.send_line('{"type":"axis","axis":"leftx","value":"far"}')              # line 5: wrong value type
    pad.axis("leftx", -1000)                                  # line 6
    expect_events(device, [(e.EV_KEY, e.BTN_A, 1), (e.EV_KEY, e.BTN_B, 1), (e.EV_ABS, e.ABS_X, -1000)])
    for n in (2, 4, 5):
        pad.wait_event("lineIgnored", where=lambda event, n=n: event["line"] == n, what=f"error for line {n}")
    errors = pad.events("lineIgnored")
    assert not any(event["line"] in (1, 3, 6) for event in errors), errors
    assert pad.proc.poll() is None, "padbridge died on a malformed line"
    pad.close_stdin()
    assert pad.wait_exit() == 0

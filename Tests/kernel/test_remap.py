"""`padbridge remap`: a physical pad (stand-in: a `padbridge virtual` pad, which the kernel treats as real) grabbed and
forwarded to a virtual pad of the same or another type; feedback going back; unplug and replug; clean exit.
Independent readers (python-evdev) read the virtual pad; the stand-in's own feedback output shows what reached it.
"""

from __future__ import annotations

import json
import math
import signal
import threading

import evdev
import pytest
from evdev import ecodes

from conftest import (DEADLINE, assert_released_before_gone, drain, expect_events, expect_only, is_rumble, read_available,
                      read_until_gone, rumble_effect, start_dualsense, start_xbox, wait_abs)


def start_remap(padbridge, pad_argument: str, *options: str):
    remap = padbridge(pad_argument, *options, command="remap")
    ready = remap.wait_ready()
    return remap, ready


def test_dualsense_shown_as_an_xbox_pad_with_rumble_going_back(padbridge):
    physical, physical_ready, nodes = start_dualsense(padbridge, "--seed", "remap-physical")
    remap, ready = start_remap(padbridge, physical_ready["hidraw"], "--as", "xbox360")
    assert ready["kind"] == "xbox360" and len(ready["eventNodes"]) == 1, ready
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    assert virtual.name == "Microsoft X-Box 360 pad"

    physical.button("a", True)
    physical.axis("righttrigger", 32767)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 1), (ecodes.EV_ABS, ecodes.ABS_RZ, 255)])
    # the grab: the physical pad's own node shows nothing to anyone else while remap runs
    assert [e for e in read_available(nodes["gamepad"], 0) if e.type != ecodes.EV_SYN] == []

    # a game rumbles the virtual Xbox pad; the physical DualSense receives it as an output report
    mark = physical.feedback_mark()
    effect_id = virtual.upload_effect(rumble_effect(0x8000, 0x4000))
    virtual.write(ecodes.EV_FF, effect_id, 1)
    physical.wait_feedback(is_rumble(0.5, 0.25, tolerance=0.01), since=mark, what="rumble relayed to the DualSense")

    # exit: the virtual pad goes, the physical pad is released (readable again) and quiet
    mark = physical.feedback_mark()
    remap.proc.send_signal(signal.SIGINT)
    # read while remap ends: what a reader has not read when the node vanishes is lost with it
    assert_released_before_gone(read_until_gone(virtual), [(ecodes.EV_KEY, ecodes.BTN_A), (ecodes.EV_ABS, ecodes.ABS_RZ)])
    assert remap.wait_exit() == 0
    physical.wait_feedback(is_rumble(0, 0), since=mark, what="rumble off when remap ends")
    drain(nodes["gamepad"])
    physical.button("b", True)
    expect_events(nodes["gamepad"], [(ecodes.EV_KEY, ecodes.BTN_EAST, 1)])


def test_exit_while_the_pad_keeps_reporting_leaves_nothing_held(padbridge):
    """Remap ends while the pad still holds a button, a trigger and a stick and keeps sending frames (as a DualSense's
    motion node does every few ms): forwarding stops before the virtual pad shows the release, so no later frame
    presses anything again before the virtual pad goes."""
    physical, physical_ready, _ = start_dualsense(padbridge, "--seed", "remap-exit-reporting")
    remap, ready = start_remap(padbridge, physical_ready["hidraw"], "--as", "xbox360")
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.send_frame({"type": "button", "button": "a", "pressed": True},
                        {"type": "axis", "axis": "righttrigger", "value": 32767},
                        {"type": "axis", "axis": "leftx", "value": 30000})
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 1), (ecodes.EV_ABS, ecodes.ABS_RZ, 255),
                            (ecodes.EV_ABS, ecodes.ABS_X, lambda v: v > 29000)])

    # The pad keeps reporting (a changing gyro reading) until remap has gone: frames keep arriving during its release.
    remap_gone = threading.Event()
    frames_sent = 0

    def keep_reporting():
        nonlocal frames_sent
        while not remap_gone.is_set():
            physical.send(type="motion", gyro=[0, 0, 0.01 * (frames_sent % 50 + 1)], accel=[0, 9.81, 0])
            frames_sent += 1
            remap_gone.wait(0.002)

    reporter = threading.Thread(target=keep_reporting, daemon=True)
    reporter.start()
    try:
        remap.proc.send_signal(signal.SIGTERM)
        events = read_until_gone(virtual)
        assert remap.wait_exit() == 0
    finally:
        remap_gone.set()
        reporter.join(5)
    assert frames_sent > 10, f"the stand-in sent only {frames_sent} frames while remap ended"
    assert_released_before_gone(events, [(ecodes.EV_KEY, ecodes.BTN_A), (ecodes.EV_ABS, ecodes.ABS_RZ),
                                         (ecodes.EV_ABS, ecodes.ABS_X)])


def test_remap_reads_no_input_and_keeps_running_without_any(padbridge):
    """remap takes no input: with standard input at its end from the start (/dev/null, as under a systemd unit or
    nohup), it keeps bridging (it used to end 100 ms after start)."""
    physical, _, device = start_xbox(padbridge, "--name", "remap without input")
    remap = padbridge(device.path, "--as", "xbox360", command="remap")
    remap.close_stdin()
    ready = remap.wait_ready()
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 1)])
    physical.button("a", False)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 0)])
    assert remap.proc.poll() is None, f"remap ended by itself\n{remap.describe()}"


def test_xbox_pad_shown_as_a_dualsense(padbridge):
    physical, physical_ready, device = start_xbox(padbridge, "--name", "remap physical xbox")
    remap, ready = start_remap(padbridge, device.path, "--as", "dualsense")
    assert ready["kind"] == "dualsense" and ready["mac"], ready
    pad_node = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("y", True)
    physical.axis("leftx", -32768)
    expect_events(pad_node, [(ecodes.EV_KEY, ecodes.BTN_NORTH, 1), (ecodes.EV_ABS, ecodes.ABS_X, 0)])


def test_unplug_goes_neutral_and_replug_resumes(padbridge):
    physical, physical_ready, _ = start_dualsense(padbridge, "--seed", "remap-replug")
    remap, ready = start_remap(padbridge, physical_ready["hidraw"], "--as", "xbox360")
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("a", True)
    physical.axis("leftx", 30000)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 1), (ecodes.EV_ABS, ecodes.ABS_X, lambda v: v > 29000)])

    # Unplugged mid-press: SIGKILL, so the stand-in cannot release anything first (the kernel destroys its uhid
    # device when the fd closes); only remap can make the virtual pad neutral.
    physical.proc.kill()
    physical.proc.wait(DEADLINE)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 0), (ecodes.EV_ABS, ecodes.ABS_X, 0)])
    assert remap.proc.poll() is None, "remap must outlive its physical pad"

    again, again_ready, _ = start_dualsense(padbridge, "--seed", "remap-replug")  # same MAC: same ID
    again.button("b", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_B, 1)], timeout=DEADLINE * 2)


def test_all_bridges_every_pad_in_id_order(padbridge):
    from discovery import list_json

    first = start_xbox(padbridge, "--name", "remap all one")
    second = start_dualsense(padbridge, "--seed", "remap-all-two")
    listed = [c["id"] for c in list_json()]
    remap = padbridge("--all", command="remap")
    readies = []
    for _ in range(len(listed)):
        index, ready = remap.wait_event("ready", since=(readies[-1][0] + 1) if readies else 0,
                                        what="a ready event per pad")
        readies.append((index, ready))
    sources = [ready["source"] for _, ready in readies]
    assert sorted(sources) == sorted(listed), (sources, listed)
    # created in ID order (ready events may come in another: a DualSense is ready once hid-playstation bound it)
    bridged = remap.events("bridging")
    order = [event["pad"] for event in bridged]
    assert order == sorted(listed), bridged
    kinds = {ready["source"]: ready["kind"] for _, ready in readies}
    # each pad as itself where padbridge can build it: the DualSense as a DualSense, the Xbox pad as an Xbox pad
    assert sorted(kinds.values()) == ["dualsense", "xbox360"], kinds
    first[0].button("a", True)
    xbox_ready = next(ready for _, ready in readies if ready["kind"] == "xbox360")
    expect_events(evdev.InputDevice(xbox_ready["eventNodes"][0]), [(ecodes.EV_KEY, ecodes.BTN_A, 1)])


def test_profile_swap_and_reload(padbridge, tmp_path):
    import signal

    profile = tmp_path / "swap.toml"
    profile.write_text('[map]\na = "b"\nb = "a"\n')
    physical, physical_ready, _ = start_dualsense(padbridge, "--seed", "remap-profile")
    remap, ready = start_remap(padbridge, physical_ready["hidraw"], "--as", "xbox360", "--profile", str(profile))
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_B, 1)])
    physical.button("a", False)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_B, 0)])

    # a broken profile: reported with its key and line, the swap stays
    mark = len(remap.stderr)
    profile.write_text('[map]\na = "b"\nb = "touchpad"\n')
    remap.proc.send_signal(signal.SIGHUP)
    _, kept = remap.wait_event("profileKept", since=mark, what="the broken profile reported")
    message = kept["message"]
    assert "keeping the previous profile" in message and "map.b" in message and "line 3" in message, message
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_B, 1)])
    physical.button("a", False)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_B, 0)])

    # a good one applies without a new virtual pad, this time just by saving the file (no signal)
    mark = len(remap.stderr)
    profile.write_text('[map]\na = "y"\n')
    remap.wait_event("profileReloaded", since=mark, what="reload notice after the file changed")
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_Y, 1)])
    assert virtual.path in [n for n in evdev.list_devices()], "the virtual pad was kept"


def test_a_broken_profile_stops_remap_before_any_device(padbridge, tmp_path):
    profile = tmp_path / "broken.toml"
    profile.write_text('[map]\na = "b"\n[sticks.left]\ndeadzone = 2\n')
    pad, ready, device = start_xbox(padbridge, "--name", "remap broken profile source")
    remap = padbridge(device.path, "--profile", str(profile), "--as", "xbox360", command="remap")
    assert remap.wait_exit() == 64
    text = "\n".join(remap.messages())
    assert "broken.toml" in text and "sticks.left.deadzone" in text and "line 4" in text, text
    assert not remap.events("ready"), "no virtual pad may be made"
    pad.button("a", True)  # and the source was never grabbed
    expect_events(device, [(ecodes.EV_KEY, ecodes.BTN_A, 1)])


# What docs/remapping.md documents for shaping (linear curve), computed here from the source's raw values: the
# expected output comes from the documentation, not from padbridge.

def documented_stick(x: int, y: int, deadzone: float, outer: float = 0, anti: float = 0) -> tuple[int, int]:
    """"Stick shaping": r is the stick's radius (value / 32767; corners read as 1), its direction kept; r within
    `deadzone` reads centred, beyond 1 - `outer` full; in between t = (r - deadzone) / (1 - outer - deadzone) and
    the radius is anti + (1 - anti) × t."""
    fx, fy = max(-1.0, x / 32767), max(-1.0, y / 32767)
    r = math.hypot(fx, fy)
    if r <= deadzone:
        return 0, 0
    radius = 1.0 if r >= 1 - outer else anti + (1 - anti) * (r - deadzone) / (1 - outer - deadzone)
    return tuple(round(max(-1.0, min(1.0, f / r * radius)) * 32767) for f in (fx, fy))


def documented_trigger(value: int, deadzone: float, outer: float, maximum: int) -> int:
    """`[triggers.*]`: travel up to `deadzone` reads 0, beyond 1 - `outer` full, linear in between."""
    travel = value / 32767
    if travel <= deadzone:
        return 0
    if travel >= 1 - outer:
        return maximum
    return round(maximum * (travel - deadzone) / (1 - outer - deadzone))


def test_profile_deadzones_shape_the_stick_and_the_trigger(padbridge, tmp_path):
    """A radial stick deadzone with an outer deadzone and an anti-deadzone, and a trigger deadzone with an outer
    one: within the deadzones the reader sees the centre (and 0), beyond them what docs/remapping.md's formulas give."""
    deadzone, outer, anti = 0.2, 0.1, 0.1
    trigger_deadzone, trigger_outer = 0.25, 0.1
    profile = tmp_path / "deadzones.toml"
    profile.write_text(f"[sticks.left]\ndeadzone = {deadzone}\nouter_deadzone = {outer}\nanti_deadzone = {anti}\n"
                       f"[triggers.right]\ndeadzone = {trigger_deadzone}\nouter_deadzone = {trigger_outer}\n")
    physical, _, device = start_xbox(padbridge, "--name", "remap deadzone source")
    _, ready = start_remap(padbridge, device.path, "--as", "xbox360", "--profile", str(profile))
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    trigger_maximum = virtual.absinfo(ecodes.ABS_RZ).max
    # A count or two for rounding (the trigger also goes through the source's 0...255 byte). Every step below moves
    # an output axis by far more than the kernel's fuzz filter (2 × 16) could swallow or average.
    tolerance = {ecodes.ABS_X: 2, ecodes.ABS_Y: 2, ecodes.ABS_RZ: 2}

    def raw(fraction: float) -> int:
        return round(fraction * 32767)

    shown = {"stick": (0, 0)}

    def left_stick(x: float, y: float) -> tuple[int, int]:
        """Moves the physical left stick (leftx, then lefty), waits for the documented output of (x, y) and returns
        what the reader sees. Each step's output differs from the last, so the wait cannot pass on a stale state."""
        want = documented_stick(raw(x), raw(y), deadzone, outer, anti)
        assert want != shown["stick"], f"a step must change the output: {want}"
        physical.axis("leftx", raw(x))
        physical.axis("lefty", raw(y))
        values = wait_abs(virtual, {ecodes.ABS_X: want[0], ecodes.ABS_Y: want[1]}, tolerance=tolerance)
        shown["stick"] = want
        return values[ecodes.ABS_X], values[ecodes.ABS_Y]

    # Inside both deadzones, the stick on a diagonal: nothing moves. `a` is the fence: it must come alone.
    assert documented_stick(raw(0.12), raw(-0.12), deadzone) == (0, 0)
    physical.axis("leftx", raw(0.12))
    physical.axis("lefty", raw(-0.12))
    physical.axis("righttrigger", raw(0.2))
    physical.button("a", True)
    expect_only(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 1)])
    assert [virtual.absinfo(code).value for code in (ecodes.ABS_X, ecodes.ABS_Y, ecodes.ABS_RZ)] == [0, 0, 0]

    # Radial, not per axis: each axis is within the deadzone, the diagonal's radius (0.255) is beyond it.
    x, y = left_stick(0.18, -0.18)
    assert x > 0 > y, (x, y)
    # Back within the deadzone (0.18 on one axis): the reader sees the centre again.
    left_stick(0.18, 0)
    # The live zone, one axis and a diagonal; beyond the outer deadzone, full (on a diagonal: direction kept).
    left_stick(0.6, 0)
    left_stick(-0.45, 0.55)
    x, y = left_stick(-0.95, 0.55)
    assert math.hypot(x, y) == pytest.approx(32767, abs=3) and x < 0 < y, (x, y)
    left_stick(-0.95, 0)
    left_stick(0.1, 0)

    # The trigger: live zone, beyond the outer deadzone, back within the deadzone.
    previous = 0
    for fraction in (0.6, 0.95, 0.1):
        want = documented_trigger(raw(fraction), trigger_deadzone, trigger_outer, trigger_maximum)
        assert want != previous, f"a step must change the output: {want}"
        physical.axis("righttrigger", raw(fraction))
        previous = want
        wait_abs(virtual, {ecodes.ABS_RZ: want}, tolerance=tolerance)


def test_profile_layer_while_held_and_nothing_stuck_when_it_changes(padbridge, tmp_path):
    """docs/remapping.md, "Layers and turbo": while the hold button is held the layer's mappings replace the base ones, the hold
    button itself is never passed on; a button held across a change of layer releases what its old mapping pressed
    and stays silent until it is let go. Lines sent apart may share a frame: a fence separates those that must not."""
    profile = tmp_path / "layer.toml"
    profile.write_text('[layers.leftshoulder.map]\na = "x"\n')
    physical, _, device = start_xbox(padbridge, "--name", "remap layer source")
    _, ready = start_remap(padbridge, device.path, "--as", "xbox360", "--profile", str(profile))
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    key = ecodes.EV_KEY

    def button(name: str, pressed: bool) -> dict:
        return {"type": "button", "button": name, "pressed": pressed}

    # Without the layer, a is a.
    physical.button("a", True)
    expect_only(virtual, [(key, ecodes.BTN_A, 1)])
    physical.button("a", False)
    expect_only(virtual, [(key, ecodes.BTN_A, 0)])

    # Holding leftshoulder: it is not passed on (b is the fence); a gives x, never a.
    physical.button("leftshoulder", True)
    physical.button("b", True)
    expect_only(virtual, [(key, ecodes.BTN_B, 1)])
    physical.button("a", True)
    expect_only(virtual, [(key, ecodes.BTN_X, 1)])
    physical.button("a", False)
    expect_only(virtual, [(key, ecodes.BTN_X, 0)])
    physical.button("a", True)
    expect_only(virtual, [(key, ecodes.BTN_X, 1)])

    # Letting go of leftshoulder with a still held: x is released, and a does not press a by itself (b's release is
    # the fence); a's own release then releases nothing (b's press is the fence); pressed anew, a is a.
    physical.button("leftshoulder", False)
    expect_only(virtual, [(key, ecodes.BTN_X, 0)])
    physical.button("b", False)
    expect_only(virtual, [(key, ecodes.BTN_B, 0)])
    physical.button("a", False)
    physical.button("b", True)
    expect_only(virtual, [(key, ecodes.BTN_B, 1)])
    physical.button("a", True)
    expect_only(virtual, [(key, ecodes.BTN_A, 1)])

    # The other way: a held as a when the layer comes: a is released and x not pressed until a is pressed anew.
    physical.button("leftshoulder", True)
    expect_only(virtual, [(key, ecodes.BTN_A, 0)])
    physical.button("b", False)
    expect_only(virtual, [(key, ecodes.BTN_B, 0)])
    physical.button("a", False)
    physical.button("b", True)
    expect_only(virtual, [(key, ecodes.BTN_B, 1)])
    physical.button("a", True)
    expect_only(virtual, [(key, ecodes.BTN_X, 1)])
    physical.button("leftshoulder", False)
    expect_only(virtual, [(key, ecodes.BTN_X, 0)])
    physical.send_frame(button("a", False), button("b", False))
    expect_only(virtual, [(key, ecodes.BTN_B, 0)])

    # A button pressed in the same report as the change was not held across it: it follows the new layer at once.
    physical.send_frame(button("leftshoulder", True), button("a", True))
    expect_only(virtual, [(key, ecodes.BTN_X, 1)])
    physical.button("a", False)
    expect_only(virtual, [(key, ecodes.BTN_X, 0)])
    physical.send_frame(button("leftshoulder", False), button("a", True))
    expect_only(virtual, [(key, ecodes.BTN_A, 1)])


def test_record_captures_both_sides_of_the_bridge_and_replay_brings_the_pad_back(padbridge, tmp_path):
    physical, physical_ready, nodes = start_dualsense(padbridge, "--seed", "remap-recorded",
                                                      name="padbridge bridged DualSense")
    path = tmp_path / "bridge.rec"
    remap, ready = start_remap(padbridge, physical_ready["hidraw"], "--as", "xbox360", "--record", str(path))
    _, recording = remap.wait_event("recording", where=lambda e: e["file"] == str(path), what="the recording started")
    assert recording["virtualNodes"], f"the recording does not take in the virtual pad: {recording}"
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    for pressed in (True, False):
        physical.button("a", pressed)
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, int(pressed))])
    mark = physical.feedback_mark()
    effect_id = virtual.upload_effect(rumble_effect(0x8000, 0x4000))
    virtual.write(ecodes.EV_FF, effect_id, 1)
    physical.wait_feedback(is_rumble(0.5, 0.25, tolerance=0.01), since=mark, what="rumble relayed to the DualSense")
    remap.proc.send_signal(signal.SIGINT)
    read_until_gone(virtual)
    assert remap.wait_exit() == 0
    assert any(event["file"] == str(path) for event in remap.events("recorded")), remap.describe()

    lines = [line.split(" ", 3) if line.startswith("f ") else line.split() for line in path.read_text().splitlines()]
    nodes_by_side = {}
    for fields in lines:
        if fields[0] == "evdev":
            side = next(f for f in fields if f.startswith("side="))[5:]
            role = next(f for f in fields if f.startswith("role="))[5:]
            nodes_by_side.setdefault(side, {})[role] = fields[1]
    assert set(nodes_by_side.get("physical", {})) == {"pad", "motion", "touchpad"}, nodes_by_side
    assert set(nodes_by_side.get("virtual", {})) == {"pad"}, nodes_by_side

    def key_values(node):
        return [int(f[5]) for f in lines if f[0] == "e" and f[2] == node
                and f[3] == str(ecodes.EV_KEY) and f[4] == str(ecodes.BTN_SOUTH)]

    # What the pad sent, as remap read it from the grabbed node, and what the virtual pad showed for it.
    assert key_values(nodes_by_side["physical"]["pad"]) == [1, 0], path.read_text()[-3000:]
    assert key_values(nodes_by_side["virtual"]["pad"])[:2] == [1, 0], path.read_text()[-3000:]
    assert sum(1 for f in lines if f[0] == "r") >= 2, "the pad's hidraw input reports"
    feedback = {side: [json.loads(f[3]) for f in lines if f[0] == "f" and f[2] == side] for side in ("virtual", "physical")}
    assert any(is_rumble(0.5, 0.25)(obj) for obj in feedback["virtual"]), feedback
    assert any(is_rumble(0.5, 0.25)(obj) for obj in feedback["physical"]), feedback
    times = [int(f[1]) for f in lines if f[0] in ("e", "r", "f")]
    assert times == sorted(times), "one clock, never decreasing"
    assert times[-1] < 60_000_000, f"microseconds since the recording started, on one clock: {times[-5:]}"

    # The recording brings the pad back (the physical side): hid-playstation binds it, the taps come again, and
    # the feedback that reached the pad is printed as recorded.
    physical.stop()
    replay = padbridge(str(path), "--delay", "1", command="replay")
    replayed = replay.wait_ready()
    gamepad = next(evdev.InputDevice(node) for node in replayed["eventNodes"]
                   if evdev.InputDevice(node).name == "padbridge bridged DualSense")
    # One wait for both: replayed at the recorded pace, the release can come in the same read as the press, and the
    # pad is gone once the replay ends (two waits failed with DeviceGone when a slow reader got both at once).
    events = expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)])
    south = [event.value for event in events if event.type == ecodes.EV_KEY and event.code == ecodes.BTN_SOUTH]
    assert south[:2] == [1, 0], south
    replay.wait_stdout(lambda line: line.startswith("recorded {") and is_rumble(0.5, 0.25)(json.loads(line[9:])),
                       what="the recorded rumble that reached the pad")
    replay.wait_event("replayFinished", what="the replay finished")
    assert replay.wait_exit() == 0


def test_record_does_not_stall_the_running_bridge_reading_the_pads_feature_reports(padbridge, tmp_path):
    """`remap --record` reads every feature report the pad declares (about 20 on a DualSense, each a request to the
    pad: over Bluetooth a round trip, seconds when unanswered). They are read before the bridge runs: a press made
    as soon as the pad is bridged reaches the virtual pad at once, not after the reads (here 0.3 s each)."""
    import re

    from standins import PhysicalDualSense

    pad = PhysicalDualSense("usb")
    try:
        hidraw = pad.wait_bound()
        pad.feature_delay = 0.3  # the probe is done: from now on every feature report takes 0.3 s
        remap = padbridge(hidraw, "--as", "xbox360", "--record", str(tmp_path / "slow.rec"), command="remap")
        _, created = remap.wait_event("virtualPadCreated", what="the virtual pad's node", timeout=DEADLINE * 2)
        virtual = evdev.InputDevice(next(node for node in created["nodes"].split(",")
                                         if re.fullmatch(r"/dev/input/event\d+", node)))
        remap.wait_event("bridging", what="the pad grabbed and read")
        requests = len(pad.feature_requests)
        pad.send_input(cross=True)
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 1)], timeout=3)
        remap.wait_ready()
        assert len(pad.feature_requests) == requests, \
            f"feature reports were read while the bridge ran: {pad.feature_requests[requests:]}"
        pad.send_input(cross=False)
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_A, 0)])
        remap.stop()
        recorded = [line.split()[2] for line in (tmp_path / "slow.rec").read_text().splitlines()
                    if line.startswith("hidraw-feature ")]
        assert {"5", "9", "32"} <= set(recorded), f"the recording lacks the feature reports: {recorded}"
    finally:
        pad.close()


def test_a_refused_grab_leaves_an_earlier_recording_as_it_was(padbridge, tmp_path):
    """`remap --record FILE` that cannot grab the pad (another program holds it) fails without touching FILE: the
    recording is written under another name and takes FILE's name only once it has begun."""
    physical, physical_ready, nodes = start_dualsense(padbridge, "--seed", "remap-refused-grab")
    path = tmp_path / "earlier.rec"
    path.write_text("an earlier recording\n")
    nodes["gamepad"].grab()
    try:
        remap = padbridge(physical_ready["hidraw"], "--as", "xbox360", "--record", str(path), command="remap")
        status = remap.wait_exit()
        assert status != 0, remap.describe()
        assert any("EVIOCGRAB" in line or "busy" in line for line in remap.messages()), remap.describe()
    finally:
        nodes["gamepad"].ungrab()
    assert path.read_text() == "an earlier recording\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier.rec"], "no temporary file may stay behind"


def test_all_follows_hotplug_with_each_pads_profile_from_the_directory(padbridge, tmp_path):
    """`remap --all` as its user unit runs it: started with no pad, it bridges pads as they are plugged in, each with
    the profile the directory holds for it (its ID's file, else its kind's, else default.toml), never its own virtual
    pads; a broken file leaves only its pad passing through unchanged; a file added later applies at once."""
    from discovery import list_json

    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "default.toml").write_text('[map]\na = "y"\n')
    (profiles / "dualsense.toml").write_text('[map]\na = "paddle1"\n')  # a DualSense has no paddles: broken
    assert list_json() == [], "no pad may be left from an earlier test"
    remap = padbridge("--all", "--profiles", str(profiles), command="remap")
    remap.wait_event("noPadYet", what="remap --all starting with no pad")

    xbox, _, _ = start_xbox(padbridge, "--name", "remap hotplug xbox")
    _, xbox_virtual = remap.wait_event("ready", what="the Xbox pad bridged")
    xbox_id = xbox_virtual["source"]
    assert any((event["pad"], event["file"]) == (xbox_id, f"{profiles}/default.toml")
               for event in remap.events("profileChosen")), remap.describe()
    virtual = evdev.InputDevice(xbox_virtual["eventNodes"][0])
    xbox.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_Y, 1)])
    xbox.button("a", False)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_Y, 0)])

    mark = len(remap.stderr)
    dualsense, _, _ = start_dualsense(padbridge, "--seed", "remap-hotplug-dualsense")
    _, broken = remap.wait_event("profileBroken", since=mark, what="the broken profile reported")
    reported = broken["message"]
    assert "dualsense.toml" in reported and "paddle1" in reported and "passes through unchanged" in reported, reported
    _, ds_virtual = remap.wait_event("ready", since=mark, what="the DualSense bridged")
    assert ds_virtual["kind"] == "dualsense" and ds_virtual["source"] != xbox_id, ds_virtual
    gamepad = next(evdev.InputDevice(path) for path in ds_virtual["eventNodes"]
                   if ecodes.BTN_SOUTH in evdev.InputDevice(path).capabilities().get(ecodes.EV_KEY, []))
    dualsense.button("a", True)
    expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
    # the other pad keeps its profile
    xbox.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_Y, 1)])
    xbox.button("a", False)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_Y, 0)])

    # the Xbox pad's own file, saved while remap runs, wins over default.toml
    mark = len(remap.stderr)
    (profiles / f"{xbox_id}.toml").write_text('[map]\na = "x"\n')
    remap.wait_event("profileChosen", where=lambda e: (e["pad"], e["file"]) == (xbox_id, f"{profiles}/{xbox_id}.toml"),
                     since=mark, what="the pad's own profile applied after it was saved")
    xbox.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_X, 1)])

    readies = remap.events("ready")
    assert len(readies) == 2, f"only the two plugged-in pads are bridged, never remap's own virtual pads: {readies}"

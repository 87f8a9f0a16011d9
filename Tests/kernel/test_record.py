"""padbridge record / replay: a pad recorded while its stand-in produces input, brought back as a virtual pad,
and read by python-evdev. A DualSense comes back through uhid (hid-playstation binds it from its recorded
descriptor and feature reports); an Xbox pad through uinput with its recorded capabilities."""
import json
import os
import select
import signal
import subprocess
import time

import evdev
from evdev import ecodes

from conftest import (DEADLINE, drain, expect_events, is_rumble, padbridge_binary, parse_event, read_available,
                      rumble_effect, start_dualsense, start_xbox, wait_abs)

# Replayed timing: the gap between two recorded events and the same gap on the replayed node (kernel stamps)
# agree within this, at --speed 1 and 2, in the emulated VM.
TIMING_TOLERANCE_S = 0.06


def recorded_lines(path, keyword):
    with open(path) as file:
        return [line.split() for line in file if line.startswith(keyword + " ")]


def recorded_key_times(path, node_role, code):
    """(value, seconds) of every EV_KEY `code` event recorded on the node with `node_role`."""
    nodes = {fields[1] for fields in recorded_lines(path, "evdev") if f"role={node_role}" in fields}
    return [(int(f[5]), int(f[1]) / 1e6) for f in recorded_lines(path, "e")
            if f[2] in nodes and f[3] == str(ecodes.EV_KEY) and f[4] == str(code)]


def key_times(device, code, count, timeout=DEADLINE):
    """(value, kernel timestamp) of the next `count` EV_KEY `code` events on `device`."""
    seen = []
    deadline = time.monotonic() + timeout
    while len(seen) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"{device.path}: {len(seen)} of {count} events of key {code} after {timeout:.0f} s: {seen}"
        seen += [(e.value, e.timestamp()) for e in read_available(device, left)
                 if e.type == ecodes.EV_KEY and e.code == code]
    return seen[:count]


def record_taps(padbridge, tmp_path, target, pad, reader, name, to_file, then=None):
    """Records `target` while the stand-in `pad` taps A twice with the left stick moved in between, then runs
    `then(recorder)` if given; the recording goes to a file (-o) or through standard output. Returns the recording's
    path."""
    path = tmp_path / name
    recorder = padbridge(target, *(["-o", str(path)] if to_file else []), command="record")
    recorder.wait_event("recording", what="the recording started")
    drain(reader)
    for tap, pressed in enumerate((True, False, True, False)):
        pad.button("a", pressed)
        expect_events(reader, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, int(pressed))])
        if tap == 0 and not to_file:
            pad.axis("leftx", 32767)
            expect_events(reader, [(ecodes.EV_ABS, ecodes.ABS_X, lambda v: v > 200)])
    if not to_file:
        # Through standard output: the recorder's own line for the last release shows it has everything.
        release = f" {ecodes.EV_KEY} {ecodes.BTN_SOUTH} 0"
        index, _ = recorder.wait_stdout(lambda line: line.startswith("e ") and line.endswith(release),
                                        what="first release line")
        recorder.wait_stdout(lambda line: line.startswith("e ") and line.endswith(release), since=index + 1,
                             what="second release line")
    if then:
        then(recorder)
    # With -o, the recorder reads what is queued before it exits: everything the reader saw is in the file.
    assert recorder.stop() == 0
    assert recorder.events("recorded"), recorder.describe()
    if not to_file:
        path.write_text("".join(line + "\n" for _, line in recorder.stdout))
    assert [v for v, _ in recorded_key_times(path, "pad", ecodes.BTN_SOUTH)] == [1, 0, 1, 0], path.read_text()[-2000:]
    return path


def assert_same_gaps(recorded, replayed, speed=1.0):
    assert [v for v, _ in replayed] == [v for v, _ in recorded], f"replayed {replayed}, recorded {recorded}"
    for index in range(1, len(recorded)):
        want = (recorded[index][1] - recorded[index - 1][1]) / speed
        got = replayed[index][1] - replayed[index - 1][1]
        assert abs(got - want) <= TIMING_TOLERANCE_S, \
            f"gap {index}: replayed {got * 1000:.1f} ms, recorded {want * 1000:.1f} ms (speed {speed})"


# A touch and a motion sample (values as test_dualsense.py computes them for hid-playstation's nodes).
# The touchpad's pointer emulation (ABS_X/ABS_Y follow the first contact): a slot's ABS_MT_* value read through
# EVIOCGABS is the current slot's, and hid-playstation ends every report on slot 1.
TOUCH_AT = {ecodes.ABS_X: 480, ecodes.ABS_Y: 809}  # x 0.25, y 0.75 of 1920x1080
MOTION = {ecodes.ABS_Y: 8195, ecodes.ABS_RZ: 458 * 64}  # accel y 9.81 m/s², gyro z 0.5 rad/s
MOTION_TOLERANCE = {ecodes.ABS_Y: 2, ecodes.ABS_RZ: 128}


def test_a_recorded_dualsense_comes_back_through_uhid_and_hid_playstation_binds_it(padbridge, tmp_path):
    pad, ready, nodes = start_dualsense(padbridge, "--seed", "record", name="padbridge recorded DualSense")

    def touch_and_move(recorder):
        pad.send(type="touch", contact=0, active=True, x=0.25, y=0.75)
        pad.send(type="motion", gyro=[0, 0, 0.5], accel=[0, 9.81, 0])
        wait_abs(nodes["touchpad"], TOUCH_AT, tolerance={code: 1 for code in TOUCH_AT})
        wait_abs(nodes["motion"], MOTION, tolerance=MOTION_TOLERANCE)
        # The replay plays the hidraw reports, so one with the motion sample must be in the recording before it
        # stops. hid-playstation shows a report's events before hidraw has the report (its raw_event handler runs
        # first), so the motion on the event node does not say the recorder can read the report yet (seen once:
        # the recording ended between the two). The recorder's line of the motion, then a report line after it: the
        # pad sends its whole state every 20 ms, so any report from then on carries the sample.
        def motion_line(line):
            fields = line.split()
            return (line.startswith("e ") and fields[3:5] == [str(ecodes.EV_ABS), str(ecodes.ABS_RZ)]
                    and abs(int(fields[5]) - MOTION[ecodes.ABS_RZ]) <= MOTION_TOLERANCE[ecodes.ABS_RZ])

        index, _ = recorder.wait_stdout(motion_line, what="the recorder's line of the motion sample")
        recorder.wait_stdout(lambda line: line.startswith("r "), since=index + 1,
                             what="a report recorded after the motion sample")

    path = record_taps(padbridge, tmp_path, ready["hidraw"], pad, nodes["gamepad"], "dualsense.rec", to_file=False,
                       then=touch_and_move)

    header = open(path).read()
    assert header.startswith("padbridge-recording 1\n"), header[:200]
    (hidraw,) = recorded_lines(path, "hidraw")
    assert any(field.startswith("descriptor=") and len(field) > 100 for field in hidraw), hidraw
    features = {int(fields[2]) for fields in recorded_lines(path, "hidraw-feature")}
    assert {0x05, 0x09, 0x20} <= features, f"hid-playstation's probe reports missing: {sorted(features)}"
    assert len(recorded_lines(path, "r")) >= 5, "input reports"
    roles = sorted(fields[3] for fields in recorded_lines(path, "evdev"))
    assert roles == ["role=motion", "role=pad", "role=touchpad"], roles
    pad.stop()  # the original leaves: the replayed one must be what the readers see

    replay = padbridge(str(path), "--delay", "2", "--hold", command="replay")
    replayed = replay.wait_ready()
    assert replayed["hidraw"], replayed
    driver = os.path.basename(os.path.realpath(os.path.join(replayed["sysfs"], "driver")))
    assert driver == "playstation", f"bound by {driver}"
    by_name = {evdev.InputDevice(node).name: evdev.InputDevice(node) for node in replayed["eventNodes"]}
    assert set(by_name) >= {"padbridge recorded DualSense", "padbridge recorded DualSense Motion Sensors",
                            "padbridge recorded DualSense Touchpad"}, sorted(by_name)
    gamepad = by_name["padbridge recorded DualSense"]
    replayed_taps = key_times(gamepad, ecodes.BTN_SOUTH, 4)
    assert_same_gaps(recorded_key_times(path, "pad", ecodes.BTN_SOUTH), replayed_taps)
    assert gamepad.absinfo(ecodes.ABS_X).value > 200, "the stick moved with the first tap"
    # After the taps, the touch and the motion sample come back on their own nodes (--hold keeps the pad after
    # the last report).
    replay.wait_event("replayFinished", where=lambda e: e["holding"] is True, what="the replay finished, holding the pad")
    touchpad = by_name["padbridge recorded DualSense Touchpad"]
    wait_abs(touchpad, TOUCH_AT, tolerance={code: 1 for code in TOUCH_AT})
    assert ecodes.BTN_TOUCH in touchpad.active_keys(), touchpad.active_keys()
    wait_abs(by_name["padbridge recorded DualSense Motion Sensors"], MOTION, tolerance=MOTION_TOLERANCE)
    assert replay.stop() == 0


def test_a_recorded_xbox_pad_comes_back_through_uinput_at_twice_the_speed_with_force_feedback(padbridge, tmp_path):
    pad, ready, device = start_xbox(padbridge)
    path = record_taps(padbridge, tmp_path, ready["eventNodes"][0], pad, device, "xbox.rec", to_file=True)
    assert recorded_lines(path, "hidraw") == [], "an Xbox 360 pad has no hidraw node"
    codes = {int(fields[2]): fields[3:] for fields in recorded_lines(path, "evdev-codes")}
    assert str(ecodes.BTN_SOUTH) in codes[ecodes.EV_KEY], codes
    assert str(ecodes.FF_RUMBLE) in codes[ecodes.EV_FF], codes
    # The recording converted to evemu's format describes the node as evemu-describe does, with the same taps.
    converted = tmp_path / "xbox-converted.evemu"
    result = subprocess.run([padbridge_binary(), "record", "--evemu", "--from", str(path), "-o", str(converted)],
                            capture_output=True, text=True, timeout=DEADLINE)
    assert result.returncode == 0 and f"wrote {converted}" in result.stderr, result.stderr
    assert evemu_description(converted.read_text()) == evemu_describe(device.path)
    assert evemu_key_values(converted.read_text(), ecodes.BTN_SOUTH) == [1, 0, 1, 0], converted.read_text()[-1500:]
    pad.stop()

    replay = padbridge(str(path), "--delay", "2", "--speed", "2", command="replay")
    replayed = replay.wait_ready()
    (node,) = replayed["eventNodes"]
    copy = evdev.InputDevice(node)
    assert copy.name == device.name and copy.info.vendor == 0x045E and copy.info.product == 0x028E, copy
    assert copy.absinfo(ecodes.ABS_X).max == 32767 and copy.absinfo(ecodes.ABS_X).min == -32768
    # Force feedback, as a game sends it (EVIOCSFF, then play), in the 2 s before playing starts: replay plays it
    # as ff-memless would and prints the motors' output.
    assert ecodes.FF_RUMBLE in copy.capabilities().get(ecodes.EV_FF, []), copy.capabilities()
    effect = copy.upload_effect(rumble_effect(0x8000, 0x4000, 1000))
    copy.write(ecodes.EV_FF, effect, 1)
    replay.wait_stdout(lambda line: line.startswith("now {") and is_rumble(0.5, 0.25)(json.loads(line[4:])),
                       what="the rumble the replayed pad was sent, as a 'now' line")
    assert_same_gaps(recorded_key_times(path, "pad", ecodes.BTN_SOUTH), key_times(copy, ecodes.BTN_SOUTH, 4), speed=2)
    replay.wait_event("replayFinished", what="the replay finished")
    assert replay.wait_exit() == 0


def evemu_description(text):
    """The lines of an evemu file that describe the device (name, ids, property and code bits, axes)."""
    return [line for line in text.splitlines() if line[:2] in ("N:", "I:", "P:", "B:", "A:", "L:", "S:")]


def evemu_describe(node):
    result = subprocess.run(["evemu-describe", node], capture_output=True, text=True, timeout=DEADLINE)
    assert result.returncode == 0, result.stderr
    return evemu_description(result.stdout)


def evemu_key_values(text, code):
    """The values of every EV_KEY `code` event line (E: TIME TYPE CODE VALUE, type and code in hex)."""
    return [int(fields[4]) for fields in (line.split() for line in text.splitlines() if line.startswith("E: "))
            if int(fields[2], 16) == ecodes.EV_KEY and int(fields[3], 16) == code]


def test_record_evemu_writes_what_evemu_describe_sees_and_evemu_play_plays_it(padbridge, tmp_path):
    pad, ready, device = start_xbox(padbridge)
    path = tmp_path / "xbox.evemu"
    recorder = padbridge(ready["eventNodes"][0], "--evemu", "-o", str(path), command="record")
    recorder.wait_event("recording", what="the recording started")
    drain(device)
    for pressed in (True, False, True, False):
        pad.button("a", pressed)
        expect_events(device, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, int(pressed))])
    assert recorder.stop() == 0
    text = path.read_text()
    assert text.startswith("# EVEMU 1.3\n"), text[:200]
    assert evemu_description(text) == evemu_describe(device.path)
    assert evemu_key_values(text, ecodes.BTN_SOUTH) == [1, 0, 1, 0], text[-1500:]
    pad.stop()

    # evemu-play makes the device from the file, prints "NAME: NODE", and plays the events on a line of input.
    player = subprocess.Popen(["evemu-play", str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        first = player.stdout.readline()
        assert first.startswith("Microsoft X-Box 360 pad: /dev/input/event"), f"evemu-play said {first!r}"
        copy = evdev.InputDevice(first.rsplit(": ", 1)[1].strip())
        assert copy.absinfo(ecodes.ABS_X).min == -32768 and copy.absinfo(ecodes.ABS_X).max == 32767
        player.stdin.write("\n")
        player.stdin.flush()
        assert [value for value, _ in key_times(copy, ecodes.BTN_SOUTH, 4)] == [1, 0, 1, 0]
    finally:
        player.kill()
        player.wait()


def test_record_evemu_writes_a_file_per_dualsense_node(padbridge, tmp_path):
    pad, ready, nodes = start_dualsense(padbridge, "--seed", "evemu", name="padbridge evemu DualSense")
    base = tmp_path / "ds.evemu"
    no_file = subprocess.run([padbridge_binary(), "record", ready["hidraw"], "--evemu", "--duration", "1"],
                             capture_output=True, text=True, timeout=DEADLINE)
    assert no_file.returncode != 0 and "-o FILE" in no_file.stderr, no_file.stderr
    recorder = padbridge(ready["hidraw"], "--evemu", "-o", str(base), command="record")
    recorder.wait_event("recording", what="the recording started")
    drain(nodes["gamepad"])
    pad.button("a", True)
    expect_events(nodes["gamepad"], [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
    assert recorder.stop() == 0
    files = sorted(tmp_path.glob("ds*.evemu"))
    assert [f.name for f in files] == ["ds.evemu", "ds.motion.evemu", "ds.touchpad.evemu"], files
    by_node = {}
    for file in files:
        text = file.read_text()
        (origin,) = [line for line in text.splitlines() if line.startswith("# Recorded by padbridge: ")]
        by_node[origin.split(": ", 1)[1].split(",")[0]] = text
    assert set(by_node) == {device.path for device in nodes.values()}, sorted(by_node)
    for node, text in by_node.items():
        assert evemu_description(text) == evemu_describe(node), node
    assert evemu_key_values(by_node[nodes["gamepad"].path], ecodes.BTN_SOUTH) == [1]


def test_a_broken_recording_names_its_line_and_creates_nothing(tmp_path):
    before = set(os.listdir("/dev/input"))
    good = ("padbridge-recording 1\npad id=a kind=generic bus=usb vendor=1 product=2 version=3 name=x\n"
            "evdev 0 side=physical role=pad path=/e bus=3 vendor=1 product=2 version=3 name=x\n"
            "evdev-codes 0 1 304\ne 5 0 1 304 1\n")
    cases = {
        "corrupt": (good.replace("e 5 0 1 304 1", "e 5 0 one 304 1"), "line 5"),
        "truncated": (good[:good.index("evdev-codes") + 13], "line 4"),
        "not-a-recording": ("# just a comment\nhello\n", "line 2"),
    }
    for name, (text, line) in cases.items():
        path = tmp_path / f"{name}.rec"
        path.write_text(text)
        result = subprocess.run([padbridge_binary(), "replay", str(path)], capture_output=True, text=True,
                                timeout=DEADLINE)
        assert result.returncode == 1, f"{name}: status {result.returncode}: {result.stderr}"
        assert line in result.stderr and str(path) in result.stderr, f"{name}: {result.stderr}"
        assert "Traceback" not in result.stderr and "Fatal error" not in result.stderr, result.stderr
    assert set(os.listdir("/dev/input")) == before, "a broken recording created a device"


F_SETPIPE_SZ = 1031  # fcntl.h; Python's fcntl module names it only from 3.10 on some builds


def replay_and_hold(padbridge, path):
    """Replays `path` with --hold until it is all played; returns (replay process, the replayed node)."""
    replay = padbridge(str(path), "--hold", command="replay")
    (node,) = replay.wait_ready()["eventNodes"]
    replay.wait_event("replayFinished", what="the replay finished")
    return replay, evdev.InputDevice(node)


def test_a_release_the_kernel_dropped_is_recorded_and_replayed(padbridge, tmp_path):
    """The recorder falls behind (its output is a pipe nobody reads for a while), the kernel drops its events
    (SYN_DROPPED) and a release is among them: libevdev's catch-up, the pad's state after the gap, is recorded,
    so the replay ends released (it kept the button held when the catch-up was left out)."""
    import fcntl
    import threading

    stick = evdev.AbsInfo(value=0, min=-32768, max=32767, fuzz=0, flat=0, resolution=0)
    pad = evdev.UInput({ecodes.EV_KEY: [ecodes.BTN_SOUTH, ecodes.BTN_EAST, ecodes.BTN_NORTH, ecodes.BTN_WEST],
                        ecodes.EV_ABS: [(ecodes.ABS_X, stick), (ecodes.ABS_Y, stick)]},
                       name="padbridge recorded while behind", vendor=0x1209, product=0x0b0b, version=1,
                       bustype=ecodes.BUS_USB)
    try:
        read_end, write_end = os.pipe()
        fcntl.fcntl(read_end, F_SETPIPE_SZ, 4096)  # the smallest pipe: the recorder blocks soon
        recorder = subprocess.Popen([padbridge_binary(), "record", "--events", "json", pad.device.path],
                                    stdout=write_end, stderr=subprocess.PIPE, text=True)
        os.close(write_end)
        status = []
        started = threading.Event()

        def read_status():
            for line in iter(recorder.stderr.readline, ""):
                status.append(line)
                event = parse_event(line)
                if event is not None and event["event"] == "recording":
                    started.set()

        threading.Thread(target=read_status, daemon=True).start()
        collected = bytearray()
        try:
            assert started.wait(DEADLINE), f"no 'recording' event: {status}"

            def frame(type_, code, value):
                pad.write(type_, code, value)
                pad.syn()

            def flood(frames):
                for n in range(frames):
                    frame(ecodes.EV_ABS, ecodes.ABS_X, 1000 + n % 20000)

            frame(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)
            # Read the recording until the press is in it; from then on nobody reads it for a while.
            press = f" {ecodes.EV_KEY} {ecodes.BTN_SOUTH} 1\n".encode()
            deadline = time.monotonic() + DEADLINE
            while not any(line.startswith(b"e ") and line.endswith(press.strip())
                          for line in bytes(collected).splitlines()):
                left = deadline - time.monotonic()
                assert left > 0, f"the press never reached the recording: {bytes(collected)[-500:]!r}"
                if select.select([read_end], [], [], left)[0]:
                    collected.extend(os.read(read_end, 65536))
            flood(2000)  # the recorder's output pipe fills and it stops reading; its evdev buffer overflows
            frame(ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)  # dropped: thousands of events follow before it reads again
            flood(2000)
            frame(ecodes.EV_KEY, ecodes.BTN_EAST, 1)
            # The recorder reads again once its output is read.
            drainer = threading.Thread(target=lambda: collected.extend(iter_pipe(read_end)), daemon=True)
            drainer.start()
            recorder.send_signal(signal.SIGINT)
            assert recorder.wait(DEADLINE) == 0, status
            drainer.join(DEADLINE)
        finally:
            if recorder.poll() is None:
                recorder.kill()
                recorder.wait()
    finally:
        pad.close()
    path = tmp_path / "behind.rec"
    path.write_bytes(bytes(collected))
    values = [v for v, _ in recorded_key_times(path, "pad", ecodes.BTN_SOUTH)]
    assert values and values[0] == 1, f"{values}: {path.read_text()[:1500]}"
    assert values[-1] == 0, f"the release is missing from the recording: BTN_SOUTH values {values}"
    assert any(f[3:5] == [str(ecodes.EV_SYN), str(ecodes.SYN_DROPPED)] for f in recorded_lines(path, "e")), \
        "the recorder never fell behind: the test did not test anything"
    replay, copy = replay_and_hold(padbridge, path)
    keys = copy.active_keys()
    assert ecodes.BTN_SOUTH not in keys and ecodes.BTN_EAST in keys, f"replayed pad ends with keys {keys}"
    assert replay.stop() == 0


def iter_pipe(descriptor):
    while True:
        chunk = os.read(descriptor, 65536)
        if not chunk:
            os.close(descriptor)
            return
        yield from chunk


def test_what_is_held_when_recording_starts_is_recorded_and_replayed(padbridge, tmp_path):
    """A button and a stick already held when `record` starts are part of the pad's state: the recording holds
    them and the replay shows them (the replay created each axis at 0 and never pressed the button)."""
    pad, ready, device = start_xbox(padbridge, "--name", "held at start")
    pad.send_frame({"type": "button", "button": "a", "pressed": True},
                   {"type": "axis", "axis": "leftx", "value": 20000},
                   {"type": "axis", "axis": "righttrigger", "value": 32767})
    expect_events(device, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_ABS, ecodes.ABS_X, 20000),
                           (ecodes.EV_ABS, ecodes.ABS_RZ, 255)])
    path = tmp_path / "held.rec"
    recorder = padbridge(device.path, "-o", str(path), command="record")
    recorder.wait_event("recording", what="the recording started")
    pad.button("b", True)
    expect_events(device, [(ecodes.EV_KEY, ecodes.BTN_EAST, 1)])
    assert recorder.stop() == 0
    pad.stop()
    replay, copy = replay_and_hold(padbridge, path)
    keys = copy.active_keys()
    assert ecodes.BTN_SOUTH in keys and ecodes.BTN_EAST in keys, f"replayed pad ends with keys {keys}"
    assert copy.absinfo(ecodes.ABS_X).value == 20000 and copy.absinfo(ecodes.ABS_RZ).value == 255, \
        (copy.absinfo(ecodes.ABS_X), copy.absinfo(ecodes.ABS_RZ))
    assert replay.stop() == 0


def test_a_pad_that_cannot_be_opened_leaves_an_earlier_recording_as_it_was(padbridge, tmp_path):
    """`record -o FILE` of a pad whose node cannot be opened fails without emptying FILE."""
    pad, ready, nodes = start_dualsense(padbridge, "--seed", "record-unopenable")
    path = tmp_path / "earlier.rec"
    path.write_text("an earlier recording\n")
    motion = nodes["motion"].path
    hidden = motion + ".padbridge-test"
    os.rename(motion, hidden)  # the node is listed (sysfs) but cannot be opened
    try:
        result = subprocess.run([padbridge_binary(), "record", ready["hidraw"], "-o", str(path)],
                                capture_output=True, text=True, timeout=DEADLINE)
    finally:
        os.rename(hidden, motion)
    assert result.returncode != 0 and motion in result.stderr, result.stderr
    assert path.read_text() == "an earlier recording\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier.rec"], "no temporary file may stay behind"


def test_a_hidraw_node_the_user_cannot_open_is_left_out_and_said(padbridge, tmp_path):
    """A pad whose hidraw node cannot be opened (a generic HID pad without a udev rule for it: Xbox One over
    Bluetooth, Switch Pro, 8BitDo) is recorded from its event nodes alone, and record says so."""
    pad, ready, nodes = start_dualsense(padbridge, "--seed", "record-no-hidraw")
    hidraw = ready["hidraw"]
    hidden = hidraw + ".padbridge-test"
    os.rename(hidraw, hidden)
    try:
        path = tmp_path / "evdev-only.rec"
        recorder = padbridge(ready["eventNodes"][0], "-o", str(path), command="record")
        recorder.wait_event("recording", what="the recording started")
    finally:
        os.rename(hidden, hidraw)
    drain(nodes["gamepad"])
    pad.button("a", True)
    expect_events(nodes["gamepad"], [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
    assert recorder.stop() == 0
    said = "\n".join(recorder.messages())
    assert hidraw in said and "event nodes" in said and "/dev/uinput" in said, said
    assert recorded_lines(path, "hidraw") == [], "no hidraw node in the recording"
    assert [v for v, _ in recorded_key_times(path, "pad", ecodes.BTN_SOUTH)] == [1], path.read_text()[-1500:]

"""`padbridge monitor`: the events a pad produces, readable, as JSON lines that `padbridge virtual` reads, or raw in
evtest's format; `--grab` keeps them from everyone else; unplugging ends it cleanly.

The pad under test is a `padbridge virtual` stand-in; what it is told to do (its JSON input) is what monitor must
print back, having gone through the kernel and hid-playstation in between.
"""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import threading
import time

import evdev
from evdev import ecodes

from conftest import (DEADLINE, Padbridge, event_message, expect_events, padbridge_binary, parse_event, read_available,
                      start_dualsense, start_xbox)
from discovery import controller_with_node, list_json, make_dual_action


def json_event(predicate):
    def match(line):
        try:
            obj = json.loads(line)
        except ValueError:
            raise AssertionError(f"monitor --json printed a line that is not JSON: {line!r}") from None
        return obj if predicate(obj) else None
    return match


def start_monitor(padbridge, pad_argument: str, *options: str) -> Padbridge:
    monitor = padbridge(pad_argument, *options, command="monitor")
    monitor.wait_event("monitoring", what="monitor under way")
    return monitor


def test_monitor_json_prints_what_the_pad_did(padbridge):
    pad, ready, _ = start_dualsense(padbridge, "--seed", "monitor-json")
    controller = controller_with_node(list_json(), ready["hidraw"])
    monitor = start_monitor(padbridge, controller["id"][:6], "--json")

    def expect(what, predicate):
        return monitor.wait_stdout(json_event(predicate), what=what)[1]

    pad.button("a", True)
    expect("a pressed", lambda o: o == {"type": "button", "button": "a", "pressed": True})
    pad.axis("leftx", -20000)
    # hid-playstation carries sticks as 8 bits: within one step of 256
    expect("leftx ≈ -20000", lambda o: o.get("type") == "axis" and o["axis"] == "leftx"
           and abs(o["value"] + 20000) <= 256)
    pad.axis("righttrigger", 32767)
    expect("righttrigger full", lambda o: o.get("type") == "axis" and o["axis"] == "righttrigger" and o["value"] == 32767)
    pad.send(type="touch", contact=0, active=True, x=0.25, y=0.5)
    pad.send(type="touch", contact=1, active=True, x=0.75, y=0.125)
    for contact, x, y in ((0, 0.25, 0.5), (1, 0.75, 0.125)):
        got = expect(f"touch contact {contact}",
                     lambda o, c=contact: o.get("type") == "touch" and o["contact"] == c and o["active"])
        assert abs(got["x"] - x) < 0.01 and abs(got["y"] - y) < 0.01, got
    pad.send(type="motion", gyro=[0.5, -0.25, 1.0], accel=[0.0, 9.80665, 0.0])
    got = expect("motion with gyro ≈ (0.5, -0.25, 1)", lambda o: o.get("type") == "motion"
                 and abs(o["gyro"][0] - 0.5) < 0.01 and abs(o["gyro"][2] - 1.0) < 0.01)
    assert abs(got["gyro"][1] + 0.25) < 0.01 and abs(got["accel"][1] - 9.80665) < 0.05, got
    pad.button("a", False)
    expect("a released", lambda o: o == {"type": "button", "button": "a", "pressed": False})


def test_monitor_json_forwards_into_a_virtual_pad(padbridge):
    """`padbridge monitor --json PAD | padbridge virtual --type xbox360`: the second pad does what the first did."""
    source, ready, _ = start_xbox(padbridge)
    monitor = subprocess.Popen([padbridge_binary(), "monitor", ready["eventNodes"][0], "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    sink = subprocess.Popen([padbridge_binary(), "virtual", "--events", "json", "--type", "xbox360", "--name",
                             "forwarded pad"], stdin=monitor.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    monitor.stdout.close()  # the sink holds the pipe's read end now
    status_lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [status_lines.put(line) for line in iter(sink.stderr.readline, "")],
                     daemon=True).start()
    try:
        deadline = time.monotonic() + DEADLINE
        forwarded = None
        while forwarded is None:
            event = parse_event(status_lines.get(timeout=max(0.0, deadline - time.monotonic())))
            if event is not None and event["event"] == "ready":
                forwarded = evdev.InputDevice(event["eventNodes"][0])
        source.button("y", True)
        source.axis("lefty", -30000)
        expect_events(forwarded, [(ecodes.EV_KEY, ecodes.BTN_Y, 1), (ecodes.EV_ABS, ecodes.ABS_Y, -30000)])
    finally:
        monitor.send_signal(signal.SIGINT)
        assert monitor.wait(DEADLINE) == 0
        assert sink.wait(DEADLINE) == 0, "the forwarded pad must end cleanly when monitor's output ends"


def test_monitor_raw_prints_evtests_format(padbridge):
    pad, ready, device = start_xbox(padbridge)
    node = device.path
    monitor = start_monitor(padbridge, node, "--raw")
    evtest = subprocess.Popen(["evtest", node], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    evtest_lines: list[str] = []
    cond = threading.Condition()

    def pump():
        for line in iter(evtest.stdout.readline, ""):
            with cond:
                evtest_lines.append(line.rstrip("\n"))
                cond.notify_all()
    threading.Thread(target=pump, daemon=True).start()
    try:
        with cond:
            assert cond.wait_for(lambda: any(l.startswith("Testing ...") for l in evtest_lines), DEADLINE), evtest_lines
        pad.button("b", True)
        pad.axis("leftx", 12345)
        event_line = re.compile(r"^Event: time \d+\.\d{6}, ")
        _, ours = monitor.wait_stdout(lambda l: l if "code 305 (BTN_EAST)" in l else None, what="BTN_EAST line")
        with cond:
            assert cond.wait_for(lambda: any("code 0 (ABS_X), value 12345" in l for l in evtest_lines), DEADLINE)
            theirs = [l for l in evtest_lines if event_line.match(l)]
        # evtest's last line so far (the frame's SYN_REPORT) must be among padbridge's too, then all before it
        monitor.wait_stdout(lambda l: l == theirs[-1], what=f"the line evtest printed last: {theirs[-1]}")
        with monitor._cond:
            mine = [line for _, line in monitor.stdout if event_line.match(line)]
        # Both read the same kernel events, so the lines, timestamps included, are identical.
        assert mine[:len(theirs)] == theirs, f"padbridge:\n" + "\n".join(mine) + "\nevtest:\n" + "\n".join(theirs)
        header = [line for _, line in monitor.stdout]
        assert any(l.startswith("Input device ID: bus 0x3 vendor 0x45e product 0x28e") for l in header), header[:10]
        assert 'Input device name: "Microsoft X-Box 360 pad"' in header, header[:10]
    finally:
        evtest.terminate()
        evtest.wait(DEADLINE)


def test_monitor_grab_keeps_events_from_other_readers(padbridge):
    pad, ready, device = start_xbox(padbridge)
    monitor = start_monitor(padbridge, device.path, "--json", "--grab")
    pad.button("x", True)
    monitor.wait_stdout(json_event(lambda o: o == {"type": "button", "button": "x", "pressed": True}),
                        what="x pressed in monitor")
    # The kernel hands an event to every reader at once; monitor has it, so an ungrabbed reader would have it too.
    assert [e for e in read_available(device, 0) if e.type == ecodes.EV_KEY] == []
    assert monitor.stop() == 0
    pad.button("x", False)
    expect_events(device, [(ecodes.EV_KEY, ecodes.BTN_X, 0)])


def test_monitor_generic_pad_through_sdls_layout(padbridge):
    with make_dual_action() as pad:
        monitor = start_monitor(padbridge, pad.device.path, "--json")
        pad.write(ecodes.EV_KEY, ecodes.BTN_THUMB, 1)  # b1 -> a
        pad.write(ecodes.EV_KEY, ecodes.BTN_BASE, 1)  # b6 -> lefttrigger
        pad.write(ecodes.EV_ABS, ecodes.ABS_HAT0Y, -1)  # h0.1 -> dpup
        pad.syn()
        for what, predicate in (
            ("a pressed", lambda o: o == {"type": "button", "button": "a", "pressed": True}),
            ("lefttrigger full", lambda o: o == {"type": "axis", "axis": "lefttrigger", "value": 32767}),
            ("dpup pressed", lambda o: o == {"type": "button", "button": "dpup", "pressed": True}),
        ):
            monitor.wait_stdout(json_event(predicate), what=what)


def test_monitor_ends_cleanly_when_the_pad_is_unplugged(padbridge):
    pad, ready, _ = start_dualsense(padbridge, "--seed", "unplug")
    monitor = start_monitor(padbridge, ready["hidraw"])
    pad.button("a", True)
    monitor.wait_stdout(lambda line: " a " in f" {line} " or "button a" in line, what="readable line for a")
    assert pad.stop() == 0
    assert monitor.wait_exit() == 0
    monitor.wait_event("padUnplugged", what="monitor saying the pad was unplugged")
    assert not any("Fatal error" in line or "fatal" in line.lower() for line in monitor.messages())


def test_monitor_stats_reports_the_report_interval(padbridge):
    pad, ready, device = start_xbox(padbridge)
    monitor = start_monitor(padbridge, device.path, "--stats")
    # Separate frames (each seen by monitor before the next is sent), so there are intervals to measure.
    for value in (1000, 2000, 3000, 4000):
        pad.axis("leftx", value)
        monitor.wait_stdout(lambda line, v=value: line.endswith(f"axis leftx {v}"), what=f"leftx {value} line")
    _, statistics = monitor.wait_event("statistics", what="rate summary on stderr")
    line = statistics["message"]
    assert "reports/s" in line and re.search(r"interval min [\d.]+ ms avg [\d.]+ ms max [\d.]+ ms", line), line


def test_monitor_ends_when_its_reader_goes_away_and_releases_the_grab(padbridge):
    """`monitor --json --grab PAD | padbridge virtual ...` whose reader died: the next write finds the pipe closed
    (EPIPE); monitor ends (status 0, saying why) and gives the grab back, instead of holding the pad forever."""
    pad, ready, device = start_xbox(padbridge)
    monitor = subprocess.Popen([padbridge_binary(), "monitor", "--events", "json", device.path, "--json", "--grab"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    status_lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [status_lines.put(line) for line in iter(monitor.stderr.readline, "")],
                     daemon=True).start()
    try:
        deadline = time.monotonic() + DEADLINE
        while True:
            event = parse_event(status_lines.get(timeout=max(0.0, deadline - time.monotonic())))
            if event is not None and event["event"] == "monitoring":
                break
        monitor.stdout.close()  # the reader goes away
        pad.button("x", True)  # monitor's next write finds no reader
        try:
            status = monitor.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            raise AssertionError("monitor still runs (and holds the grab) after its reader went away") from None
        assert status == 0, status
        said = []
        while not status_lines.empty():
            said.append(event_message(status_lines.get()))
        assert any("standard output" in line for line in said), said
        # the grab is gone with it: an ungrabbed reader sees the pad again
        pad.button("y", True)
        expect_events(device, [(ecodes.EV_KEY, ecodes.BTN_Y, 1)])
    finally:
        if monitor.poll() is None:
            monitor.kill()
            monitor.wait()

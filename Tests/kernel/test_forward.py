"""Forwarding over the VM's loopback: a stand-in pad (a `padbridge virtual` pad, which the kernel treats as real) ->
`padbridge connect` -> `padbridge serve` -> a virtual pad, read by python-evdev; a game's rumble on the virtual pad
reaches the stand-in as feedback. Without pairing nothing is created; a cut link leaves the virtual pad neutral
and a new connection resumes the same virtual pad."""

from __future__ import annotations

import json
import subprocess

import evdev
from evdev import ecodes

from conftest import (DEADLINE, expect_events, is_rumble, padbridge_binary, rumble_effect, start_dualsense, start_xbox,
                      wait_abs)
from test_pairing import pair, pairing_code

PORT = 48177


def paired_host(padbridge, tmp_path, *serve_options: str):
    host, client = tmp_path / "host", tmp_path / "client"
    serve = padbridge("--listen", f"127.0.0.1:{PORT}", "--config-dir", str(host), "--pair", *serve_options,
                      command="serve")
    result = pair(client, pairing_code(serve))
    assert result.returncode == 0, result.stderr
    return serve, client


def connect(padbridge, client_config, *pads: str):
    process = padbridge(f"127.0.0.1:{PORT}", *pads, "--config-dir", str(client_config), command="connect")
    process.wait_stderr(lambda line: "connected to" in line, what="the client connected")
    return process


def attached(serve, since: int = 0) -> tuple[int, dict]:
    index, line = serve.wait_stderr(lambda line: "pad attached" in line, since=since, what="a pad attached on the host")
    return index, json.loads(line[line.index(" as {") + 4:])


def test_a_dualsense_is_forwarded_and_rumble_comes_back(padbridge, tmp_path):
    serve, client = paired_host(padbridge, tmp_path)
    physical, physical_ready, _ = start_dualsense(padbridge, "--seed", "forward-physical")
    connect(padbridge, client, physical_ready["hidraw"])
    _, ready = attached(serve)
    assert ready["kind"] == "dualsense" and len(ready["eventNodes"]) == 3, ready
    gamepad = evdev.InputDevice(ready["eventNodes"][0])

    physical.button("a", True)
    physical.axis("leftx", -32768)
    expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_ABS, ecodes.ABS_X, 0)])
    physical.button("a", False)
    expect_events(gamepad, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)])

    # a game rumbles the virtual DualSense (evdev force feedback through hid-playstation); the stand-in gets it
    mark = physical.feedback_mark()
    effect = gamepad.upload_effect(rumble_effect(0x8000, 0x4000))
    gamepad.write(ecodes.EV_FF, effect, 1)
    physical.wait_feedback(lambda obj: obj.get("type") == "rumble" and obj.get("strong", 0) > 0.3, since=mark,
                           what="the host's rumble reaching the physical pad")


def test_an_xbox_pad_is_forwarded(padbridge, tmp_path):
    serve, client = paired_host(padbridge, tmp_path)
    physical, _, device = start_xbox(padbridge, "--name", "forward physical xbox")
    connect(padbridge, client, device.path)
    _, ready = attached(serve)
    assert ready["kind"] == "xbox360", ready
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("y", True)
    physical.axis("righttrigger", 32767)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_Y, 1), (ecodes.EV_ABS, ecodes.ABS_RZ, 255)])


def test_without_pairing_nothing_is_created(padbridge, tmp_path):
    serve = padbridge("--listen", f"127.0.0.1:{PORT}", "--config-dir", str(tmp_path / "host"), command="serve")
    serve.wait_stderr(lambda line: "listening on" in line, what="the listening line")
    _, _, device = start_xbox(padbridge, "--name", "unpaired pad")
    result = subprocess.run([padbridge_binary(), "connect", f"127.0.0.1:{PORT}", device.path, "--config-dir",
                             str(tmp_path / "client")], capture_output=True, text=True, timeout=DEADLINE)
    assert result.returncode != 0 and "padbridge pair" in result.stderr, result.stderr
    assert not any("pad attached" in line for _, line in serve.stderr), serve.describe()


def test_a_cut_link_leaves_the_pad_neutral_and_a_reconnection_resumes_it(padbridge, tmp_path):
    serve, client = paired_host(padbridge, tmp_path)
    physical, _, device = start_xbox(padbridge, "--name", "forward cut")
    connection = connect(padbridge, client, device.path)
    _, ready = attached(serve)
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("a", True)
    physical.axis("lefttrigger", 32767)
    physical.axis("leftx", 30000)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_ABS, ecodes.ABS_Z, 255),
                            (ecodes.EV_ABS, ecodes.ABS_X, lambda v: v > 29000)])

    # The link is cut (the client killed: it cannot say goodbye); the host notices and releases everything.
    mark = len(serve.stderr)
    connection.proc.kill()
    connection.proc.wait(DEADLINE)
    serve.wait_stderr(lambda line: "link lost" in line, since=mark, what="the host noticing the lost link")
    wait_abs(virtual, {ecodes.ABS_Z: 0, ecodes.ABS_X: 0})
    assert virtual.active_keys() == [], virtual.active_keys()

    # A new connection resumes the same virtual pad (same node), still holding what the pad holds.
    connect(padbridge, client, device.path)
    serve.wait_stderr(lambda line: "resumed" in line or "connected from" in line, since=mark, what="the client back")
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
    assert not any("pad attached" in line for _, line in serve.stderr[mark:]), "no second virtual pad"

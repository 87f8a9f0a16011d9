"""`padbridge remap`: a physical pad (stand-in: a `padbridge virtual` pad, which the kernel treats as real) grabbed and
forwarded to a virtual pad of the same or another type; feedback going back; unplug and replug; clean exit.
Independent readers (python-evdev) read the virtual pad; the stand-in's own feedback output shows what reached it.
"""

from __future__ import annotations

import json

import evdev
from evdev import ecodes

from conftest import (DEADLINE, drain, expect_events, is_rumble, read_available, read_until_gone, rumble_effect,
                      start_dualsense, start_xbox)


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
    assert remap.stop() == 0
    read_until_gone(virtual)
    physical.wait_feedback(is_rumble(0, 0), since=mark, what="rumble off when remap ends")
    drain(nodes["gamepad"])
    physical.button("b", True)
    expect_events(nodes["gamepad"], [(ecodes.EV_KEY, ecodes.BTN_EAST, 1)])


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
    from test_discovery import list_json

    first = start_xbox(padbridge, "--name", "remap all one")
    second = start_dualsense(padbridge, "--seed", "remap-all-two")
    listed = [c["id"] for c in list_json()]
    remap = padbridge("--all", command="remap")
    readies = []
    for _ in range(len(listed)):
        index, ready = remap.wait_stderr(lambda line: line.startswith("padbridge: ready "),
                                         since=(readies[-1][0] + 1) if readies else 0, what="a ready line per pad")
        readies.append((index, json.loads(ready[len("padbridge: ready "):])))
    sources = [ready["source"] for _, ready in readies]
    assert sorted(sources) == sorted(listed), (sources, listed)
    # created in ID order (ready lines may come in another: a DualSense is ready once hid-playstation bound it)
    with remap._cond:
        bridged = [line for _, line in remap.stderr if "bridging" in line]
    order = [next(fp for fp in listed if f"[{fp}]" in line) for line in bridged]
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
    _, message = remap.wait_stderr(lambda line: "keeping the previous profile" in line, since=mark,
                                   what="the broken profile reported")
    assert "map.b" in message and "line 3" in message, message
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_B, 1)])
    physical.button("a", False)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_B, 0)])

    # a good one applies without a new virtual pad, this time just by saving the file (no signal)
    mark = len(remap.stderr)
    profile.write_text('[map]\na = "y"\n')
    remap.wait_stderr(lambda line: "reloaded" in line, since=mark, what="reload notice after the file changed")
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_Y, 1)])
    assert virtual.path in [n for n in evdev.list_devices()], "the virtual pad was kept"


def test_a_broken_profile_stops_remap_before_any_device(padbridge, tmp_path):
    profile = tmp_path / "broken.toml"
    profile.write_text('[map]\na = "b"\n[sticks.left]\ndeadzone = 2\n')
    pad, ready, device = start_xbox(padbridge, "--name", "remap broken profile source")
    remap = padbridge(device.path, "--profile", str(profile), "--as", "xbox360", command="remap")
    assert remap.wait_exit() == 64
    text = "\n".join(line for _, line in remap.stderr)
    assert "broken.toml" in text and "sticks.left.deadzone" in text and "line 4" in text, text
    assert not any("ready" in line for _, line in remap.stderr), "no virtual pad may be made"
    pad.button("a", True)  # and the source was never grabbed
    expect_events(device, [(ecodes.EV_KEY, ecodes.BTN_A, 1)])

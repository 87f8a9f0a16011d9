"""Discovery: `padbridge list` groups each pad's nodes into one controller, fingerprints it stably, joins SDL2's view,
and `list --watch` follows pads coming and going. `padbridge doctor` passes here.

Stand-ins for physical pads: `padbridge virtual` DualSense (uhid, bound by hid-playstation) and Xbox 360 pad
(uinput), and a generic pad made with python-evdev that only SDL's game-controller database knows how to lay out.
"""

from __future__ import annotations

import json
import os

from conftest import start_dualsense, start_xbox
from discovery import controller_with_node, list_json, make_dual_action, run_padbridge


def test_dualsense_nodes_form_one_controller(padbridge):
    pad, ready, nodes = start_dualsense(padbridge, "--seed", "discovery-1")
    controllers = list_json()
    controller = controller_with_node(controllers, ready["hidraw"])
    assert sum(1 for c in controllers if c["id"] == controller["id"]) == 1
    roles = {node["path"]: node["role"] for node in controller["nodes"]["evdev"]}
    assert roles == {nodes["gamepad"].path: "pad", nodes["motion"].path: "motion", nodes["touchpad"].path: "touchpad"}
    assert controller["nodes"]["evdev"][0]["role"] == "pad"
    assert controller["nodes"]["hidraw"] == ready["hidraw"]
    # hid-playstation's LED class devices: the lightbar and the five player LEDs
    leds = sorted(os.listdir(f"/sys/class/hidraw/{os.path.basename(ready['hidraw'])}/device/leds"))
    assert sorted(controller["nodes"]["leds"]) == [f"/sys/class/leds/{name}" for name in leds] and len(leds) == 6, \
        controller["nodes"]
    assert (controller["kind"], controller["bus"]) == ("dualsense", "bluetooth")
    assert (controller["vendor"], controller["product"]) == ("054c", "0ce6")
    assert controller["serial"] == ready["mac"]
    assert controller["name"] == "padbridge test DualSense"
    caps = controller["capabilities"]
    for feature in ("touchpad", "motion", "rumble", "lightbar", "playerLeds", "adaptiveTriggers", "battery"):
        assert caps[feature] is True, (feature, caps)
    assert set(caps["buttons"]) >= {"a", "b", "x", "y", "back", "guide", "start", "leftstick", "rightstick",
                                    "leftshoulder", "rightshoulder", "dpup", "dpdown", "dpleft", "dpright"}
    assert set(caps["axes"]) == {"leftx", "lefty", "rightx", "righty", "lefttrigger", "righttrigger"}
    # no other controller claims any of its nodes
    others = [c for c in controllers if c["id"] != controller["id"]]
    claimed = {n["path"] for c in others for n in c["nodes"]["evdev"]} | {c["nodes"]["hidraw"] for c in others}
    assert not claimed & (set(ready["eventNodes"]) | {ready["hidraw"]})


def test_fingerprint_survives_recreation_and_tells_serials_apart(padbridge):
    ids = []
    for seed in ("twin", "twin", "other"):
        pad, ready, _ = start_dualsense(padbridge, "--seed", seed)
        ids.append((controller_with_node(list_json(), ready["hidraw"])["id"], ready["mac"], ready["hidraw"]))
        assert pad.stop() == 0
    print(f"fingerprints: {ids}")
    assert ids[0][0] == ids[1][0], f"same serial {ids[0][1]}, re-created: ids differ {ids}"
    assert ids[0][1] != ids[2][1]
    assert ids[2][0] != ids[0][0], f"different serials share an id: {ids}"


def test_xbox360_pad_is_one_controller_without_hidraw(padbridge):
    pad, ready, device = start_xbox(padbridge)
    controller = controller_with_node(list_json(), device.path)
    assert controller["kind"] == "xbox360"
    assert (controller["vendor"], controller["product"]) == ("045e", "028e")
    assert controller["nodes"]["hidraw"] is None
    assert [node["path"] for node in controller["nodes"]["evdev"]] == [device.path]
    assert controller["capabilities"]["rumble"] is True
    assert controller["capabilities"]["lightbar"] is False
    assert set(controller["capabilities"]["buttons"]) >= {"a", "b", "x", "y", "guide", "dpup"}


def test_two_identical_serialless_pads_get_distinct_ids(padbridge):
    first = start_xbox(padbridge)[2]
    second = start_xbox(padbridge)[2]
    controllers = list_json()
    ids = {controller_with_node(controllers, first.path)["id"], controller_with_node(controllers, second.path)["id"]}
    assert len(ids) == 2, ids


def test_generic_pad_gets_its_layout_from_sdls_database():
    with make_dual_action() as pad:
        controller = controller_with_node(list_json(), pad.device.path)
        assert controller["kind"] == "generic"
        sdl = controller["sdl"]
        assert sdl is not None, "SDL2 does not list the pad"
        assert sdl["path"] == pad.device.path
        # bus 0x0003, then SDL 2.26's CRC-16 of the name (which its database lookup ignores), vendor, product
        assert sdl["guid"].startswith("0300") and sdl["guid"][8:20] == "6d04000016c2", sdl
        assert sdl["mappingName"] == "Logitech Dual Action", sdl
        caps = controller["capabilities"]
        assert set(caps["buttons"]) == {"a", "b", "x", "y", "back", "start", "leftstick", "rightstick",
                                        "leftshoulder", "rightshoulder", "dpup", "dpdown", "dpleft", "dpright"}, caps
        assert set(caps["axes"]) == {"leftx", "lefty", "rightx", "righty", "lefttrigger", "righttrigger"}, caps


def test_list_table_names_each_pad(padbridge):
    pad, ready, _ = start_dualsense(padbridge, "--seed", "table")
    controller = controller_with_node(list_json(), ready["hidraw"])
    table = run_padbridge("list").stdout.splitlines()
    assert table[0].split()[:4] == ["#", "ID", "KIND", "NAME"], table
    row = next((line for line in table if controller["id"] in line), None)
    assert row is not None, table
    assert "DualSense" in row and "bluetooth" in row and "touchpad" in row, row


def test_list_watch_reports_add_and_remove(padbridge):
    watch = padbridge("--watch", "--json", command="list")
    # the initial listing comes first, as one "present" line per pad; then changes
    # udevd runs in the VM (virtme-ng's init starts it): the udev source; test_without_udevd covers the kernel's
    watch.wait_event("watching", where=lambda e: e["source"] == "udev", what="the watch under way through udev")
    mark = watch.stdout_mark()
    pad, ready, _ = start_dualsense(padbridge, "--seed", "watch")

    def event(kind, path):
        def match(line):
            obj = json.loads(line)
            if obj.get("event") != kind:
                return None
            nodes = obj["controller"]["nodes"]
            return obj if path == nodes["hidraw"] or path in [n["path"] for n in nodes["evdev"]] else None
        return match

    _, added = watch.wait_stdout(event("add", ready["hidraw"]), since=mark, what="add line for the DualSense")
    assert len(added["controller"]["nodes"]["evdev"]) == 3, "add is reported once the pad is complete"
    mark = watch.stdout_mark()
    assert pad.stop() == 0
    _, removed = watch.wait_stdout(event("remove", ready["hidraw"]), since=mark, what="remove line for the DualSense")
    assert removed["controller"]["id"] == added["controller"]["id"]


def test_doctor_passes_here():
    result = run_padbridge("doctor", check=False)
    print(result.stdout)
    assert result.returncode == 0, f"doctor failed in the VM:\n{result.stdout}\n{result.stderr}"
    lines = result.stdout.splitlines()
    assert any(line.split()[:2] == ["ok", "/dev/uinput:"] for line in lines), result.stdout
    assert any(line.split()[:2] == ["ok", "/dev/uhid:"] for line in lines), result.stdout
    assert not any(line.startswith("PROBLEM") for line in lines), result.stdout

"""Discovery without udevd, as in containers and minimal systems: no udev re-broadcast and no rules run on new
nodes, so `list --watch` must hear the kernel's own uevents and grouping must not depend on udev's ID_INPUT_* or
ID_PATH properties. The VM runs udevd (virtme-ng's init starts it); this module stops it and starts it again.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import DEADLINE, start_dualsense
from discovery import controller_with_node, list_json

UDEVD = "/lib/systemd/systemd-udevd"


@pytest.fixture
def without_udevd():
    # `control --exit` returns once udevd has exited; `--daemon` once the new one listens.
    subprocess.run(["udevadm", "control", "--exit"], check=True, timeout=DEADLINE, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([UDEVD, "--daemon"], check=True, timeout=DEADLINE, capture_output=True)
        subprocess.run(["udevadm", "trigger", "--action=add", "--subsystem-match=input", "--subsystem-match=hidraw"],
                       check=True, timeout=DEADLINE, capture_output=True)
        subprocess.run(["udevadm", "settle", f"--timeout={int(DEADLINE)}"], check=True, timeout=DEADLINE,
                       capture_output=True)


def test_same_controller_and_id_without_udevs_rules(padbridge, without_udevd):
    pad, ready, nodes = start_dualsense(padbridge, "--seed", "no-udevd")
    info = subprocess.run(["udevadm", "info", "--query=property", nodes["gamepad"].path], capture_output=True,
                          text=True, timeout=DEADLINE).stdout
    assert "ID_INPUT_JOYSTICK" not in info, f"udev's rules ran on a node made after udevd stopped:\n{info}"
    controller = controller_with_node(list_json(), ready["hidraw"])
    assert {n["role"] for n in controller["nodes"]["evdev"]} == {"pad", "motion", "touchpad"}
    assert (controller["kind"], controller["serial"]) == ("dualsense", ready["mac"])
    assert pad.stop() == 0
    # The same pad again (same seed, so same MAC) while udevd runs: the same id.
    subprocess.run([UDEVD, "--daemon"], check=True, timeout=DEADLINE, capture_output=True)
    try:
        again, ready_again, _ = start_dualsense(padbridge, "--seed", "no-udevd")
        subprocess.run(["udevadm", "settle", f"--timeout={int(DEADLINE)}"], check=True, timeout=DEADLINE)
        with_udevd = controller_with_node(list_json(), ready_again["hidraw"])
        assert with_udevd["id"] == controller["id"], (with_udevd, controller)
        assert again.stop() == 0
    finally:
        subprocess.run(["udevadm", "control", "--exit"], timeout=DEADLINE, capture_output=True)


def test_list_watch_hears_the_kernels_uevents(padbridge, without_udevd):
    watch = padbridge("--watch", "--json", command="list")
    watch.wait_event("watching", where=lambda e: e["source"] == "kernel", what="watching via kernel uevents")
    mark = watch.stdout_mark()
    pad, ready, _ = start_dualsense(padbridge, "--seed", "no-udevd-watch")

    def event(kind):
        def match(line):
            obj = json.loads(line)
            return obj if obj.get("event") == kind and obj["controller"]["nodes"]["hidraw"] == ready["hidraw"] else None
        return match

    _, added = watch.wait_stdout(event("add"), since=mark, what="add line")
    mark = watch.stdout_mark()
    assert pad.stop() == 0
    _, removed = watch.wait_stdout(event("remove"), since=mark, what="remove line")
    assert removed["controller"]["id"] == added["controller"]["id"]

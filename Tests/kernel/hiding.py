"""Helpers of the hiding tests (test_hiding, and the families' own: test_xpad, test_switch_pro): udevadm and its
settle, the ACLs udev's uaccess gives the seat's user (grant, acl_users), the joysticks SDL lists when started as
nobody (sdl_controllers), `padbridge hide-service` (start_service), a pad's jsN nodes (joystick_nodes), and the check
that remap hides a pad's nodes and gives them back (assert_hidden, check_remap_hides_and_gives_back). The fixtures
logged_in_nobody and joystick_interface are conftest's."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
from pathlib import Path

from conftest import DEADLINE
from other_users import AS_NOBODY, NOBODY

ACL = "system.posix_acl_access"


def udevadm(*arguments: str):
    """udevadm, once more after udevd's queue settled when its control socket turned the request away (udevd takes
    no control message while it is busy: "Failed to send reload request: Resource temporarily unavailable")."""
    for attempt in range(5):
        result = subprocess.run(["udevadm", *arguments], timeout=DEADLINE, capture_output=True, text=True)
        if result.returncode == 0:
            return
        if arguments[0] != "control" or attempt == 4:
            raise AssertionError(f"udevadm {' '.join(arguments)}: {result.stderr}")
        subprocess.run(["udevadm", "settle", f"--timeout={int(DEADLINE)}"], timeout=DEADLINE + 5, capture_output=True)


def settle():
    udevadm("settle", f"--timeout={int(DEADLINE)}")


def grant(path: str, uid: int = NOBODY):
    """Adds a read-write ACL entry for `uid` (what `setfacl -m u:UID:rw` does), in the kernel's xattr layout."""
    mode = os.stat(path).st_mode
    entries = [(0x01, (mode >> 6) & 7, 0xFFFFFFFF), (0x02, 6, uid), (0x04, (mode >> 3) & 7, 0xFFFFFFFF),
               (0x10, 6, 0xFFFFFFFF), (0x20, mode & 7, 0xFFFFFFFF)]
    os.setxattr(path, ACL, struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries))


def acl_users(path: str) -> list[int]:
    """The uids the node's ACL names."""
    try:
        data = os.getxattr(path, ACL)
    except OSError:
        return []
    return [uid for tag, _, uid in struct.iter_unpack("<HHI", data[4:]) if tag == 0x02]


def sdl_controllers() -> list[dict]:
    """The joysticks SDL lists, started afresh as nobody."""
    script = Path(__file__).with_name("sdl_list_controllers.py")
    result = subprocess.run([*AS_NOBODY, "/usr/bin/python3", str(script)], capture_output=True, text=True,
                            timeout=DEADLINE * 2)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def start_service(padbridge):
    service = padbridge(command="hide-service")
    service.wait_event("hidingServiceListening", what="the hiding service listening")
    return service


def joystick_nodes(event_nodes: list[str]) -> list[str]:
    """The jsN nodes beside these event nodes (children of the same inputN device)."""
    found = []
    for node in event_nodes:
        device = f"/sys/class/input/{os.path.basename(node)}/device"
        found += sorted(f"/dev/input/{name}" for name in os.listdir(device) if name.startswith("js"))
    return found


def assert_hidden(path: str):
    status = os.stat(path)
    assert status.st_mode & 0o7777 == 0 and acl_users(path) == [] and (status.st_uid, status.st_gid) == (0, 0), \
        f"{path} is not hidden: mode {status.st_mode & 0o7777:o}, owner {status.st_uid}:{status.st_gid}, ACL users {acl_users(path)}"


def check_remap_hides_and_gives_back(padbridge, source: str, pad_nodes: list[str]):
    """remap of `source`, run by the seat's user (nobody) with the hiding service, takes each of `pad_nodes` (every
    node of one pad) from everyone else, so that SDL, started as that user, lists only the virtual pad; they are
    given back when remap ends. For the families other than the DualSense (test_xpad.py, test_switch_pro.py)."""
    for path in pad_nodes:
        if NOBODY not in acl_users(path):
            grant(path)  # as udev's uaccess would for the seat's user (it tags only some of them)
    before = [c["path"] for c in sdl_controllers()]
    assert any(path in pad_nodes for path in before), f"SDL, before remap, lists {before}"

    service = start_service(padbridge)
    remap = padbridge(source, "--as", "xbox360", command="remap", wrapper=AS_NOBODY)
    virtual = remap.wait_ready()
    remap.wait_event("hidden", where=lambda e: e["command"] == "remap", what="the pad hidden while remap runs")
    for path in pad_nodes:
        assert_hidden(path)
    for path in pad_nodes:
        service.wait_event("udevSeesHidden", where=lambda e, p=path: e["node"] == p, what=f"udev's refresh of {path}")
    settle()
    during = [c["path"] for c in sdl_controllers()]
    assert during == virtual["eventNodes"], f"SDL, while remap runs, lists {during}"

    mark = len(service.stderr)
    remap.proc.send_signal(signal.SIGTERM)
    assert remap.wait_exit() == 0
    for path in pad_nodes:
        service.wait_event("nodeGivenBack", where=lambda e, p=path: e["node"] == p, since=mark,
                           what=f"{path} given back")
    settle()
    after = [c["path"] for c in sdl_controllers()]
    assert any(path in pad_nodes for path in after), f"SDL, after remap, lists {after}"

"""Hiding the pad remap bridges from games (README "Hiding the pad from games"): the grab covers a pad's event nodes
only, and SDL's HIDAPI drivers and Steam read its hidraw node (and list a grabbed event node), so without hiding a
game sees the pad twice. `padbridge hide-service` (root) takes the nodes from everyone else while remap holds them.

The VM runs everything as root, which file modes do not stop: SDL (the game) and remap run here as the unprivileged
user nobody, the active user of seat0 as logind would record it, so that udev's uaccess builtin gives nobody the
ACLs a logged-in user gets (padbridge's udev/70-padbridge.rules is installed for uinput, uhid and Sony hidraw
nodes). SDL is started afresh for each look (sdl_list_controllers.py), as a game started then would be.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import DEADLINE, start_dualsense, start_xbox

NOBODY = 65534
AS_NOBODY = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
SOCKET = "/run/padbridge/hide.socket"
ACL = "system.posix_acl_access"


def udevadm(*arguments: str):
    subprocess.run(["udevadm", *arguments], check=True, timeout=DEADLINE, capture_output=True)


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


@pytest.fixture
def logged_in_nobody():
    """nobody is the active user of seat0, with padbridge's udev rule installed (/etc is the VM's own overlay)."""
    seat = Path("/run/systemd/seats/seat0")
    seat.parent.mkdir(parents=True, exist_ok=True)
    seat_before = seat.read_text() if seat.exists() else None
    rule = Path("/etc/udev/rules.d/70-padbridge.rules")
    rule.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy("udev/70-padbridge.rules", rule)
    seat.write_text(f"ACTIVE=c1\nACTIVE_UID={NOBODY}\n")
    udevadm("control", "--reload")
    udevadm("trigger", "--action=change", "/sys/class/misc/uinput", "/sys/class/misc/uhid")
    settle()
    try:
        yield
    finally:
        rule.unlink()
        if seat_before is None:
            seat.unlink()
        else:
            seat.write_text(seat_before)
        udevadm("control", "--reload")
        for node in ("/dev/uinput", "/dev/uhid"):
            try:
                os.removexattr(node, ACL)
            except OSError:
                pass


def sdl_controllers() -> list[dict]:
    """The joysticks SDL lists, started afresh as nobody."""
    script = Path(__file__).with_name("sdl_list_controllers.py")
    result = subprocess.run([*AS_NOBODY, "/usr/bin/python3", str(script)], capture_output=True, text=True,
                            timeout=DEADLINE * 2)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def start_service(padbridge):
    service = padbridge(command="hide-service")
    service.wait_stderr(lambda line: "hiding service listening" in line, what="'listening' line")
    return service


def start_stand_in(padbridge, seed):
    """A Bluetooth DualSense stand-in (SDL's HIDAPI PS5 driver takes it) that nobody can read, as a user can."""
    stand_in, ready, nodes = start_dualsense(padbridge, "--seed", seed, name="padbridge hidden DualSense")
    settle()
    node_paths = [ready["hidraw"], *ready["eventNodes"]]
    for path in node_paths:
        if NOBODY not in acl_users(path):
            grant(path)  # the motion and touchpad nodes carry no uaccess tag
    return stand_in, ready, node_paths


def assert_hidden(path: str):
    status = os.stat(path)
    assert status.st_mode & 0o7777 == 0 and acl_users(path) == [] and (status.st_uid, status.st_gid) == (0, 0), \
        f"{path} is not hidden: mode {status.st_mode & 0o7777:o}, owner {status.st_uid}:{status.st_gid}, ACL users {acl_users(path)}"


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGKILL"])
def test_remap_hides_the_pad_from_sdl_and_gives_it_back(padbridge, logged_in_nobody, ending):
    stand_in, ready, stand_in_nodes = start_stand_in(padbridge, f"hidden-{ending}")
    before = sdl_controllers()
    assert [c["path"] for c in before] == [ready["hidraw"]], f"SDL, before remap: {before}"

    service = start_service(padbridge)
    remap = padbridge(ready["hidraw"], "--as", "xbox360", command="remap", wrapper=AS_NOBODY)
    virtual = remap.wait_ready()
    remap.wait_stderr(lambda line: "is hidden from other programs while remap runs" in line, what="'hidden' line")
    settle()  # udev gave nobody the virtual pad's node and processed the hidden nodes again
    for path in stand_in_nodes:
        assert_hidden(path)
    # udev processing a hidden node again (a `udevadm trigger`, a package installing rules) keeps it hidden
    udevadm("trigger", "--action=change", f"/sys/class/input/{os.path.basename(ready['eventNodes'][0])}",
            f"/sys/class/hidraw/{os.path.basename(ready['hidraw'])}")
    settle()
    for path in stand_in_nodes:
        assert_hidden(path)
    during = sdl_controllers()
    assert [c["path"] for c in during] == virtual["eventNodes"], f"SDL, while remap runs: {during}"
    assert during[0]["gamecontroller"], during

    mark = len(service.stderr)
    if ending == "SIGTERM":
        remap.proc.send_signal(signal.SIGTERM)
        assert remap.wait_exit() == 0
    else:
        remap.proc.kill()
        remap.wait_exit()
    service.wait_stderr(lambda line: f"gave back {ready['hidraw']}" in line, since=mark, what="the nodes given back")
    settle()
    for path in stand_in_nodes:
        assert os.stat(path).st_mode & 0o7777 != 0 and NOBODY in acl_users(path), f"{path} not given back"
    after = sdl_controllers()
    assert [c["path"] for c in after] == [ready["hidraw"]], f"SDL, after remap ended by {ending}: {after}"


class HidingClient:
    """Speaks the service's protocol from this (root) process."""

    def __init__(self):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(DEADLINE)
        self.socket.connect(SOCKET)
        self.buffer = b""

    def ask(self, line: str) -> list[str]:
        self.socket.sendall(line.encode() + b"\n")
        replies = []
        while True:
            while b"\n" not in self.buffer:
                chunk = self.socket.recv(4096)
                assert chunk, f"the service closed the connection; replies so far {replies}"
                self.buffer += chunk
            reply, self.buffer = self.buffer.split(b"\n", 1)
            if reply == b"end":
                return replies
            replies.append(reply.decode())

    def close(self):
        self.socket.close()


def test_the_service_hides_only_what_the_client_holds_and_never_a_bridges_virtual_pad(padbridge):
    stand_in, ready, _ = start_dualsense(padbridge, "--seed", "hiding-refusals")
    hidraw = ready["hidraw"]
    service = start_service(padbridge)
    client = HidingClient()
    try:
        replies = client.ask(f"hide {hidraw} /etc/passwd /dev/input/../hidraw0 /dev/input/event99999")
        assert replies[0].startswith(f"refused {hidraw} ") and "does not hold it open" in replies[0], replies
        assert all(reply.startswith("refused ") for reply in replies[1:]) and len(replies) == 4, replies
        mode = os.stat(hidraw).st_mode & 0o7777
        assert mode != 0, "refused, yet hidden"

        held = os.open(hidraw, os.O_RDONLY | os.O_NONBLOCK)
        try:
            assert client.ask(f"hide {hidraw}") == [f"hidden {hidraw}"]
            assert_hidden(hidraw)
            assert client.ask(f"show {hidraw}") == [f"shown {hidraw}"]
            assert os.stat(hidraw).st_mode & 0o7777 == mode
            # A bridge's own virtual pad (phys padbridge-output/...) is never hidden, held or not.
            remap = padbridge(hidraw, "--as", "xbox360", command="remap")
            (virtual_node,) = remap.wait_ready()["eventNodes"]
            held_virtual = os.open(virtual_node, os.O_RDONLY | os.O_NONBLOCK)
            try:
                (reply,) = client.ask(f"hide {virtual_node}")
                assert reply.startswith(f"refused {virtual_node} ") and "virtual pad" in reply, reply
            finally:
                os.close(held_virtual)
        finally:
            os.close(held)
    finally:
        client.close()
    assert service.stop() == 0


def test_without_the_hiding_service_remap_says_once_what_is_not_hidden(padbridge, logged_in_nobody):
    """Without the service remap still bridges, and says once (not once per pad) what is not hidden, why, and how
    to install it; what it says holds: SDL lists each pad twice, the pad (the DualSense through its hidraw node, the
    grabbed Xbox pad's silent event node) and its virtual pad."""
    if os.path.exists(SOCKET):
        os.unlink(SOCKET)  # nothing listens there
    stand_in, ready, _ = start_stand_in(padbridge, "not-hidden")
    other, _, other_device = start_xbox(padbridge, "--name", "not hidden xbox")
    settle()
    if NOBODY not in acl_users(other_device.path):
        grant(other_device.path)
    remap = padbridge("--all", command="remap", wrapper=AS_NOBODY)
    first, _ = remap.wait_stderr(lambda line: line.startswith("padbridge: ready "), what="a ready line")
    remap.wait_stderr(lambda line: line.startswith("padbridge: ready "), since=first + 1, what="a second ready line")
    said = [line for _, line in remap.stderr if "is not hidden from other programs" in line]
    assert len(said) == 1, said
    assert "hiding service is not running" in said[0] and "systemctl enable --now padbridge-hide.socket" in said[0], said
    settle()
    listed = [c["path"] for c in sdl_controllers()]
    assert ready["hidraw"] in listed and other_device.path in listed and len(listed) == 4, f"SDL lists {listed}"
    assert remap.stop() == 0

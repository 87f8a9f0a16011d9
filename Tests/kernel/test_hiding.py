"""Hiding the pad remap bridges, or connect forwards, from games (docs/hiding.md): the grab covers a pad's event nodes
only, and SDL's HIDAPI drivers and Steam read its hidraw node (and list a grabbed event node), so without hiding a
game sees the pad twice. `padbridge hide-service` (root) takes the nodes from everyone else while remap holds them.

The VM runs everything as root, which file modes do not stop: SDL (the game) and remap run here as the unprivileged
user nobody, the active user of seat0 as logind would record it, so that udev's uaccess builtin gives nobody the
ACLs a logged-in user gets (padbridge's udev/70-padbridge.rules is installed for uinput, uhid and Sony hidraw
nodes). SDL is started afresh for each look (sdl_list_controllers.py), as a game started then would be.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import evdev
import pytest

from conftest import DEADLINE, padbridge_binary, pairing_code, start_dualsense, start_xbox
from hiding import acl_users, assert_hidden, grant, joystick_nodes, sdl_controllers, settle, start_service, udevadm
from other_users import AS_NOBODY, NOBODY, Child

SOCKET = "/run/padbridge/hide.socket"
IDLE_SECONDS = 10  # NodeHiding.idleConnectionMilliseconds
PER_USER = 8  # NodeHiding.maximumConnectionsPerUser

pytestmark = pytest.mark.usefixtures("joystick_interface")   # conftest's: joydev loaded, as on a desktop


def start_stand_in(padbridge, seed):
    """A Bluetooth DualSense stand-in (SDL's HIDAPI PS5 driver takes it) that nobody can read, as a user can; its
    nodes: hidraw, event and joystick."""
    stand_in, ready, nodes = start_dualsense(padbridge, "--seed", seed, name="padbridge hidden DualSense")
    settle()
    joysticks = joystick_nodes(ready["eventNodes"])
    assert joysticks, "joydev made no js node for the stand-in's gamepad"
    node_paths = [ready["hidraw"], *ready["eventNodes"], *joysticks]
    for path in node_paths:
        if NOBODY not in acl_users(path):
            grant(path)  # the motion and touchpad nodes carry no uaccess tag
    return stand_in, ready, node_paths


@pytest.mark.parametrize("ending", ["SIGTERM", "SIGKILL"])
def test_remap_hides_the_pad_from_sdl_and_gives_it_back(padbridge, logged_in_nobody, ending):
    stand_in, ready, stand_in_nodes = start_stand_in(padbridge, f"hidden-{ending}")
    before = sdl_controllers()
    assert [c["path"] for c in before] == [ready["hidraw"]], f"SDL, before remap: {before}"

    service = start_service(padbridge)
    remap = padbridge(ready["hidraw"], "--as", "xbox360", command="remap", wrapper=AS_NOBODY)
    virtual = remap.wait_ready()
    remap.wait_event("hidden", where=lambda e: e["command"] == "remap", what="the pad hidden while remap runs")
    for path in stand_in_nodes:  # at once, before udev processed them again
        assert_hidden(path)
    for path in stand_in_nodes:
        service.wait_event("udevSeesHidden", where=lambda e: e["node"] == path, what=f"udev's refresh of {path}")
    settle()  # udev gave nobody the virtual pad's node
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
    for path in stand_in_nodes:
        service.wait_event("nodeGivenBack", where=lambda e: e["node"] == path, since=mark, what=f"{path} given back")
    settle()
    # Given back as udev sets them: every node readable again by its owner; the seat's user (nobody) has an ACL
    # on the nodes udev tags for the seat (the hidraw node by padbridge's rule, the gamepad node by systemd's).
    for path in stand_in_nodes:
        assert os.stat(path).st_mode & 0o7777 != 0, f"{path} not given back"
    for path in (ready["hidraw"], ready["eventNodes"][0]):
        assert NOBODY in acl_users(path), f"{path}: no ACL for the seat's user after it was given back"
    after = sdl_controllers()
    assert [c["path"] for c in after] == [ready["hidraw"]], f"SDL, after remap ended by {ending}: {after}"


def test_remap_all_keeps_the_pad_it_bridges_hidden(padbridge, logged_in_nobody):
    """remap --all (the user unit's way) lists the pads again after every hotplug burst, and hiding a node makes
    udev process it again: the bridged pad must stay hidden, not be taken for gone and come back (visible)."""
    stand_in, ready, stand_in_nodes = start_stand_in(padbridge, "hidden-all")
    service = start_service(padbridge)
    remap = padbridge("--all", "--as", "xbox360", command="remap", wrapper=AS_NOBODY)
    remap.wait_event("hidden", where=lambda e: e["command"] == "remap", what="the pad hidden while remap runs")
    for path in stand_in_nodes:
        service.wait_event("udevSeesHidden", where=lambda e: e["node"] == path, what=f"udev's refresh of {path}")
    # remap lists the pads again after each hotplug burst (udev's change events for the hidden nodes make one): a
    # pad plugged in now is bridged by a listing that comes after those, so by then remap has seen them all.
    udevadm("trigger", "--action=change", f"/sys/class/hidraw/{os.path.basename(ready['hidraw'])}")
    settle()
    other, _, other_device = start_xbox(padbridge, "--name", "hidden-all second pad")
    remap.wait_event("padAdded", where=lambda e: "hidden-all second pad" in e["name"],
                     what="remap bridging the pad plugged in later")
    for path in stand_in_nodes:
        assert_hidden(path)
    # not taken for gone ("went away"), nor visible again (the service gone, or a node it refused)
    said = remap.events("padWentAway") + remap.events("hidingServiceGone") + remap.events("hidingRefused")
    assert not said, said
    assert not service.events("nodeGivenBack"), service.describe()
    assert remap.stop() == 0


class HidingClient:
    """Speaks the service's protocol from this process (or a forked child's)."""

    def __init__(self):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # As padbridge's own client connects: blocking, so that a backlog full of another user's connections is
        # waited out (SO_SNDTIMEO bounds the wait), not refused at once with EAGAIN as a non-blocking connect is.
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", int(DEADLINE), 0))
        self.socket.connect(SOCKET)
        self.socket.settimeout(DEADLINE)
        self.buffer = b""

    def ask(self, line: str, descriptors: list[int] = ()) -> list[str]:
        """Sends `line`, the `descriptors` passed with it (SCM_RIGHTS); the reply lines before `end`."""
        socket.send_fds(self.socket, [line.encode() + b"\n"], list(descriptors))
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


def node_state(path: str) -> tuple:
    status = os.stat(path)
    return status.st_mode & 0o7777, status.st_uid, status.st_gid, acl_users(path)


def test_a_node_is_hidden_only_through_a_readable_descriptor_of_it(padbridge):
    stand_in, ready, _ = start_dualsense(padbridge, "--seed", "hiding-refusals")
    hidraw = ready["hidraw"]
    before = node_state(hidraw)
    service = start_service(padbridge)

    # nobody cannot read the node (mode 0600 root, no ACL), yet can open it O_PATH: refused, nothing changes.
    def with_o_path(report):
        try:
            os.close(os.open(hidraw, os.O_RDONLY))
            report({"readable": True})
            return
        except PermissionError:
            pass
        held = os.open(hidraw, os.O_PATH)
        report({"replies": HidingClient().ask(f"hide {hidraw}", [held])})

    child = Child(NOBODY, with_o_path)
    try:
        result = child.next()
    finally:
        child.close()
    assert "replies" in result, f"the test needs a node nobody cannot read: {result}"
    (reply,) = result["replies"]
    assert reply.startswith(f"refused {hidraw} ") and "O_PATH" in reply, reply
    assert node_state(hidraw) == before, "refused, yet changed"

    client = HidingClient()
    held = os.open(hidraw, os.O_RDONLY | os.O_NONBLOCK)
    other = os.open(ready["eventNodes"][0], os.O_RDONLY | os.O_NONBLOCK)
    write_only = os.open(hidraw, os.O_WRONLY | os.O_NONBLOCK)
    try:
        # Paths alone (the old protocol, or a process naming nodes it never opened): refused whole.
        (reply,) = client.ask(f"hide {hidraw} /etc/passwd")
        assert reply.startswith("refused - ") and "descriptor" in reply, reply
        replies = client.ask(f"hide {hidraw} /etc/passwd /dev/input/../hidraw0", [other, held, held])
        assert replies[0].startswith(f"refused {hidraw} ") and "not the node" in replies[0], replies
        assert all(reply.startswith("refused ") for reply in replies[1:]) and len(replies) == 3, replies
        (reply,) = client.ask(f"hide {hidraw}", [write_only])
        assert reply.startswith(f"refused {hidraw} ") and "not opened for reading" in reply, reply
        assert node_state(hidraw) == before, "refused, yet changed"

        assert client.ask(f"hide {hidraw}", [held]) == [f"hidden {hidraw}"]
        assert_hidden(hidraw)
        mark = len(service.stderr)
        assert client.ask(f"show {hidraw}") == [f"shown {hidraw}"]
        service.wait_event("nodeGivenBack", where=lambda e: e["node"] == hidraw, since=mark,
                           what="the node given back")
        assert node_state(hidraw) == before
        # A bridge's own virtual pad (phys padbridge-output/...) is never hidden, held or not.
        remap = padbridge(hidraw, "--as", "xbox360", command="remap")
        (virtual_node,) = remap.wait_ready()["eventNodes"]
        held_virtual = os.open(virtual_node, os.O_RDONLY | os.O_NONBLOCK)
        try:
            (reply,) = client.ask(f"hide {virtual_node}", [held_virtual])
            assert reply.startswith(f"refused {virtual_node} ") and "virtual pad" in reply, reply
        finally:
            os.close(held_virtual)
    finally:
        for descriptor in (held, other, write_only):
            os.close(descriptor)
        client.close()
    assert service.stop() == 0


def test_a_keyboard_or_anything_else_but_a_pad_is_never_hidden_even_for_a_client_that_reads_it(padbridge):
    """A keyboard is refused; so is a virtual device that is not a pad (an accelerometer here) while a virtual pad
    exists: uinput devices all hang under /sys/devices/virtual/input, and are not one device's nodes."""
    pad, _, _ = start_xbox(padbridge, "--name", "a virtual pad beside them")
    keyboard = evdev.UInput({evdev.ecodes.EV_KEY: list(range(1, 120))}, name="padbridge test keyboard")
    axis = evdev.AbsInfo(value=0, min=-32768, max=32767, fuzz=0, flat=0, resolution=0)
    sensor = evdev.UInput({evdev.ecodes.EV_ABS: [(code, axis) for code in range(6)]}, name="padbridge test sensor",
                          input_props=[evdev.ecodes.INPUT_PROP_ACCELEROMETER])
    try:
        nodes = {"keyboard": keyboard.device.path, "not a game controller": sensor.device.path}
        settle()  # udev has given them their group
        before = {}
        for node in nodes.values():
            grant(node)
            before[node] = node_state(node)
        service = start_service(padbridge)

        def hide_them(report):
            replies = {}
            for node in nodes.values():
                held = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
                (replies[node],) = HidingClient().ask(f"hide {node}", [held])
            report({"replies": replies})

        child = Child(NOBODY, hide_them)
        try:
            replies = child.next()["replies"]
        finally:
            child.close()
        for reason, node in nodes.items():
            assert replies[node].startswith(f"refused {node} ") and reason in replies[node], replies
            assert node_state(node) == before[node]
        assert service.stop() == 0
    finally:
        keyboard.close()
        sensor.close()


def test_one_user_cannot_lock_the_others_out_and_idle_clients_are_closed(padbridge):
    stand_in, ready, _ = start_dualsense(padbridge, "--seed", "hiding-limits")
    hidraw = ready["hidraw"]
    service = start_service(padbridge)

    def hog(report):
        connections = []
        for _ in range(64):
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(SOCKET)
            connections.append(connection)
        started = time.monotonic()
        report({"connected": len(connections)})
        ended = []
        for connection in connections:
            connection.settimeout(IDLE_SECONDS + DEADLINE)
            said = b""
            while chunk := connection.recv(4096):
                said += chunk
            ended.append([time.monotonic() - started, said.decode()])
        report({"ended": ended})

    child = Child(NOBODY, hog)
    held = os.open(hidraw, os.O_RDONLY | os.O_NONBLOCK)
    client = None
    try:
        assert child.next()["connected"] == 64
        client = HidingClient()  # root, while nobody holds all it may
        assert client.ask(f"hide {hidraw}", [held]) == [f"hidden {hidraw}"]
        ended = child.next(timeout=IDLE_SECONDS + 2 * DEADLINE)["ended"]
    finally:
        child.close()
    refused = [seconds for seconds, said in ended if "too many connections from uid 65534" in said]
    idle = [seconds for seconds, said in ended if said == ""]
    assert len(refused) == 64 - PER_USER and len(idle) == PER_USER, ended
    assert all(seconds < IDLE_SECONDS + DEADLINE for seconds in idle), ended
    # The client that hides something is not idle: still connected, the node still hidden.
    assert_hidden(hidraw)
    assert client.ask(f"show {hidraw}") == [f"shown {hidraw}"]
    client.close()
    os.close(held)
    assert service.stop() == 0


def test_a_client_writing_nonstop_does_not_hold_up_another(padbridge):
    stand_in, ready, _ = start_dualsense(padbridge, "--seed", "hiding-flood")
    hidraw = ready["hidraw"]
    service = start_service(padbridge)
    flooder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    flooder.connect(SOCKET)
    stop = threading.Event()
    answered = threading.Event()

    def flood():
        lines = b"show /dev/hidraw0\n" * 200
        while not stop.is_set():
            try:
                flooder.sendall(lines)
            except OSError:
                return

    def read_replies():
        while not stop.is_set():
            try:
                if not flooder.recv(65536):
                    return
                answered.set()
            except OSError:
                return

    threads = [threading.Thread(target=flood, daemon=True), threading.Thread(target=read_replies, daemon=True)]
    for thread in threads:
        thread.start()
    held = os.open(hidraw, os.O_RDONLY | os.O_NONBLOCK)
    client = HidingClient()
    try:
        assert answered.wait(DEADLINE), "the flooding client got no reply"
        started = time.monotonic()
        assert client.ask(f"hide {hidraw}", [held]) == [f"hidden {hidraw}"]
        seconds = time.monotonic() - started
        print(f"hide answered in {seconds * 1000:.0f} ms while another client wrote lines nonstop")
        # One line of the flooding client per turn of the service's loop: the other's request waits a turn.
        assert seconds < 2.0, f"hide took {seconds:.1f} s while another client flooded"
        assert_hidden(hidraw)
    finally:
        stop.set()
        flooder.close()
        client.close()
        os.close(held)
    assert service.stop() == 0


def test_a_node_unplugged_while_hidden_keeps_its_number_and_a_new_node_given_it_later_is_hidden(padbridge):
    """The service keys what it hid by device and inode, and holds the descriptor it was passed until it gives the
    node back: while a node is hidden no new device gets its number, and one given it afterwards is another node."""
    service = start_service(padbridge)
    first, ready, _ = start_dualsense(padbridge, "--seed", "renumbered-1", name="padbridge renumbered one")
    hidraw = ready["hidraw"]
    client = HidingClient()
    held = os.open(hidraw, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert client.ask(f"hide {hidraw}", [held]) == [f"hidden {hidraw}"]
    finally:
        os.close(held)  # the service holds its own
    assert first.stop() == 0  # unplugged while hidden; the client still holds it hidden
    second, ready_second, _ = start_dualsense(padbridge, "--seed", "renumbered-2", name="padbridge renumbered two")
    assert ready_second["hidraw"] != hidraw, f"{hidraw} was given to a new device while hidden"
    mark = len(service.stderr)
    client.close()
    service.wait_event("nodeGivenBack", where=lambda e: e["node"] == hidraw, since=mark,
                       what="the unplugged node let go")
    third, ready_third, _ = start_dualsense(padbridge, "--seed", "renumbered-3", name="padbridge renumbered three")
    assert ready_third["hidraw"] == hidraw, f"the test needs the new pad to get {hidraw}: {ready_third}"
    assert os.stat(hidraw).st_mode & 0o7777 != 0, "a new node starts visible"
    client = HidingClient()
    held = os.open(hidraw, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert client.ask(f"hide {hidraw}", [held]) == [f"hidden {hidraw}"]
        assert_hidden(hidraw)
    finally:
        os.close(held)
        client.close()
    assert service.stop() == 0


def test_a_node_given_back_goes_to_whoever_sits_at_the_seat_then(padbridge, logged_in_nobody):
    stand_in, ready, _ = start_stand_in(padbridge, "seat-switch")
    hidraw = ready["hidraw"]
    service = start_service(padbridge)
    remap = padbridge(hidraw, "--as", "xbox360", command="remap", wrapper=AS_NOBODY)
    remap.wait_ready()
    remap.wait_event("hidden", where=lambda e: e["command"] == "remap", what="the pad hidden while remap runs")
    assert_hidden(hidraw)
    # The session switches to another user while remap runs.
    Path("/run/systemd/seats/seat0").write_text("ACTIVE=c2\nACTIVE_UID=4242\n")
    mark = len(service.stderr)
    remap.proc.send_signal(signal.SIGTERM)
    assert remap.wait_exit() == 0
    service.wait_event("nodeGivenBack", where=lambda e: e["node"] == hidraw, since=mark, what="the node given back")
    settle()
    users = acl_users(hidraw)
    assert 4242 in users and NOBODY not in users, f"{hidraw} given back with ACL users {users}"


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
    # (--as xbox360: nobody has /dev/uinput, not /dev/uhid, which is the padbridge group's)
    remap = padbridge("--all", "--as", "xbox360", command="remap", wrapper=AS_NOBODY)
    first, _ = remap.wait_event("ready", what="a ready event")
    remap.wait_event("ready", since=first + 1, what="a second ready event")
    said = [event["message"] for event in remap.events("notHidden")]
    assert len(said) == 1, said
    assert "hiding service is not running" in said[0] and "systemctl enable --now padbridge-hide.socket" in said[0], said
    settle()
    listed = [c["path"] for c in sdl_controllers()]
    assert ready["hidraw"] in listed and other_device.path in listed and len(listed) == 4, f"SDL lists {listed}"
    assert remap.stop() == 0


def test_connect_hides_the_pads_it_forwards_and_gives_them_back(padbridge, logged_in_nobody):
    """A pad forwarded to another machine plays there: connect grabs it, and hides it (its hidraw node included) from
    this machine's SDL, Steam and games while it forwards it, so they do not act on it too; given back when connect
    ends."""
    stand_in, ready, stand_in_nodes = start_stand_in(padbridge, "hidden-connect")
    assert [c["path"] for c in sdl_controllers()] == [ready["hidraw"]]
    service = start_service(padbridge)
    serve = padbridge("--listen", "127.0.0.1:48178", "--as", "xbox360", "--config-dir",
                      tempfile.mkdtemp(prefix="padbridge-host-"), "--pair", command="serve")
    code = pairing_code(serve)
    # nobody's own config directory, as a user's would be (0700, theirs)
    client_config = Path(tempfile.mkdtemp(prefix="padbridge-nobody-"))
    os.chown(client_config, NOBODY, NOBODY)
    paired = subprocess.run([*AS_NOBODY, padbridge_binary(), "pair", "127.0.0.1:48178", code, "--config-dir",
                             str(client_config)], capture_output=True, text=True, timeout=DEADLINE)
    assert paired.returncode == 0, paired.stderr

    connect = padbridge("127.0.0.1:48178", ready["hidraw"], "--config-dir", str(client_config), command="connect",
                        wrapper=AS_NOBODY)
    connect.wait_event("hidden", where=lambda e: e["command"] == "connect", what="the pad hidden while connect runs")
    serve.wait_event("padAttached", what="the pad attached on the host")
    for path in stand_in_nodes:
        assert_hidden(path)
    for path in stand_in_nodes:
        service.wait_event("udevSeesHidden", where=lambda e: e["node"] == path, what=f"udev's refresh of {path}")
    settle()
    for path in stand_in_nodes:
        assert_hidden(path)   # connect's relisting after udev's change events did not take the pad for gone
    listed = [c["path"] for c in sdl_controllers()]
    assert not set(stand_in_nodes) & set(listed), f"SDL lists the forwarded pad while connect runs: {listed}"
    said = connect.events("padDetached") + connect.events("padWentAway")   # "unplugged", "went away"
    assert not said, said

    mark = len(service.stderr)
    assert connect.stop() == 0
    for path in stand_in_nodes:
        service.wait_event("nodeGivenBack", where=lambda e: e["node"] == path, since=mark, what=f"{path} given back")
    settle()
    assert ready["hidraw"] in [c["path"] for c in sdl_controllers()], "SDL does not list the pad after connect ended"

"""The link's corrections (issue 16) where they need sockets, namespaces and devices: a one-way outage, a refusal
spoofed between two hosts, revocation by deleting a line, a second connection's pads, replies from the address
asked, a host without IPv6, and a backlog of taps and touches through an outage. The timing rules themselves are
tested on a fake clock (Tests/PadNetTests/ForwardingSimulationTests.swift); here the real programs show them."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess

import evdev
from evdev import ecodes

from conftest import DEADLINE, attached, expect_events, kernel_suite_tool, padbridge_binary, pairing_code, read_available, \
    read_until_gone, rumble_effect, start_dualsense, start_xbox, wait_abs
from forwarding import HOST_ADDRESS, PORT, NetworkNamespace, connect, in_client, paired_across_namespaces, \
    paired_host, run, udp_counters, xpad_like_source


def test_a_one_way_outage_brings_held_inputs_back_at_once_and_keeps_the_pad(padbridge, tmp_path, namespaces):
    # A short --linger: the pad must outlive it on a link that works again. (4 s, not less: on a machine busy enough
    # to starve the emulated client of CPU for 400 ms the host takes the link for lost once more, the client
    # handshakes again, and that must not outlast the linger; seen with a second VM beside the suite at 1 s.)
    host_config, client_config = tmp_path / "host", tmp_path / "client"
    serve = padbridge("--listen", f"{HOST_ADDRESS}:{PORT}", "--config-dir", str(host_config), "--pair", "--linger", "4",
                      command="serve", wrapper=("ip", "netns", "exec", "pbhost"))
    paired = subprocess.run(in_client(padbridge_binary(), "pair", f"{HOST_ADDRESS}:{PORT}", pairing_code(serve),
                                      "--config-dir", str(client_config)), capture_output=True, text=True, timeout=DEADLINE)
    assert paired.returncode == 0, paired.stderr
    physical, _, device = start_xbox(padbridge, "--name", "one-way source")
    client = padbridge(f"{HOST_ADDRESS}:{PORT}", device.path, "--config-dir", str(client_config), "--stats",
                       command="connect", wrapper=("ip", "netns", "exec", "pbclient"))
    client.wait_event("connected", what="the client connected")
    _, ready = attached(serve)
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("a", True)
    physical.axis("lefttrigger", 32767)
    physical.axis("leftx", 30000)
    held = [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_ABS, ecodes.ABS_Z, 255),
            (ecodes.EV_ABS, ecodes.ABS_X, lambda v: v > 29000)]
    expect_events(virtual, held)
    # A game rumbles the virtual pad; the stand-in feels it.
    mark = physical.feedback_mark()
    effect = virtual.upload_effect(rumble_effect(0xC000, 0x4000))
    virtual.write(ecodes.EV_FF, effect, 1)
    physical.wait_feedback(lambda obj: obj.get("type") == "rumble" and obj.get("strong", 0) > 0.5, since=mark,
                           what="the game's rumble reaching the stand-in")

    # Only the client -> host direction drops, until the host gives the client up.
    serve_mark = len(serve.stderr)
    run("ip", "netns", "exec", "pbclient", "tc", "qdisc", "add", "dev", "pbc", "root", "netem", "loss", "100%")
    serve.wait_event("linkLost", since=serve_mark, what="the host giving the client up")
    wait_abs(virtual, {ecodes.ABS_Z: 0, ecodes.ABS_X: 0})
    run("ip", "netns", "exec", "pbclient", "tc", "qdisc", "del", "dev", "pbc", "root")
    serve.wait_event("resumed", since=serve_mark, what="the host hearing the client again")
    expect_events(virtual, held)

    # Well past --linger (4 s: six of the client's statistics lines, one a second), the same node still forwards; the
    # rumble ends when the game ends it.
    for count in range(6):
        client.wait_event("statistics", since=client.stderr_mark(), what=f"statistics line {count + 1}")
    assert not serve.events("padDestroyed", since=serve_mark), serve.describe()
    assert os.path.exists(ready["eventNodes"][0])
    physical.button("b", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_EAST, 1)])
    mark = physical.feedback_mark()
    virtual.write(ecodes.EV_FF, effect, 0)
    physical.wait_feedback(lambda obj: obj.get("type") == "rumble" and obj.get("strong", 1) == 0, since=mark,
                           what="the game's rumble ending on the stand-in")


def spoofed_udp(source_port: int, destination_port: int, payload: bytes) -> bytes:
    """An IPv4 packet 127.0.0.1:source -> 127.0.0.1:destination (UDP checksum 0: none)."""
    udp = struct.pack("!HHHH", source_port, destination_port, 8 + len(payload), 0) + payload
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, socket.IPPROTO_UDP, 0,
                         socket.inet_aton("127.0.0.1"), socket.inet_aton("127.0.0.1"))
    return header + udp


def test_a_refusal_spoofed_between_two_hosts_starts_no_exchange(padbridge, tmp_path):
    subprocess.run(["ip", "netns", "del", "pbspoof"], capture_output=True)
    run("ip", "netns", "add", "pbspoof")
    try:
        run("ip", "-n", "pbspoof", "link", "set", "lo", "up")
        hosts = []
        for index, port in enumerate((48181, 48182)):
            serve = padbridge("--listen", f"127.0.0.1:{port}", "--config-dir", str(tmp_path / f"host{index}"),
                              command="serve", wrapper=("ip", "netns", "exec", "pbspoof"))
            serve.wait_event("listening", what="a host listening")
            hosts.append(serve)
        before = udp_counters(hosts[0].proc.pid)
        with NetworkNamespace("pbspoof"):
            raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        try:
            # A refusal "from" the second host to the first, then one "from" the first to the second.
            for (source, destination), host in zip(((48182, 48181), (48181, 48182)), hosts):
                mark = len(host.stderr)
                raw.sendto(spoofed_udp(source, destination, bytes([0x54, 1])), ("127.0.0.1", 0))
                host.wait_event("unanswered", since=mark, what="the host leaving it unanswered")
        finally:
            raw.close()
        received, sent = (after - was for after, was in zip(udp_counters(hosts[0].proc.pid), before))
        assert (received, sent) == (2, 0), f"{received} datagrams in and {sent} out after two spoofed refusals"
    finally:
        subprocess.run(["ip", "netns", "del", "pbspoof"], capture_output=True)


def test_deleting_a_paired_clients_line_ends_its_session_at_once(padbridge, tmp_path):
    serve, client_config = paired_host(padbridge, tmp_path)
    physical, _, device = start_xbox(padbridge, "--name", "revoked source")
    connection = connect(padbridge, client_config, device.path)
    _, ready = attached(serve)
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])

    mark = len(serve.stderr)
    paired_clients = tmp_path / "host" / "paired-clients"
    kept = [line for line in paired_clients.read_text().splitlines() if line.startswith("#")]
    paired_clients.write_text("\n".join(kept) + "\n")
    serve.wait_event("revoked", since=mark, what="the host revoking the client")
    read_until_gone(virtual)
    # The client is told (not left to take it for a lost link and try again for ever) and stops with status 1.
    _, told = connection.wait_event("revoked", what="the client told it was revoked")
    assert "padbridge pair" in told["message"], told
    assert connection.wait_exit() == 1, connection.describe()
    # A new connect with the same key: its handshakes go unanswered.
    again = padbridge(f"127.0.0.1:{PORT}", device.path, "--config-dir", str(client_config), command="connect")
    again.wait_event("noAnswer", what="a new connect's handshakes unanswered")
    assert not serve.events("padAttached", since=mark), serve.describe()


def test_a_new_connection_with_other_pads_drives_only_its_own_virtual_pad(padbridge, tmp_path):
    serve, client_config = paired_host(padbridge, tmp_path)
    first, _, first_device = start_xbox(padbridge, "--name", "slot source A")
    second, _, second_device = start_xbox(padbridge, "--name", "slot source B")
    connection = connect(padbridge, client_config, first_device.path)
    index, ready = attached(serve)
    pad_a = evdev.InputDevice(ready["eventNodes"][0])
    first.button("x", True)
    expect_events(pad_a, [(ecodes.EV_KEY, ecodes.BTN_NORTH, 1)])
    connection.proc.kill()
    connection.proc.wait(DEADLINE)

    # Within --linger, another connect with the other pad: it gets its own virtual pad in the same slot number.
    connect(padbridge, client_config, second_device.path)
    _, ready_b = attached(serve, since=index + 1)
    pad_b = evdev.InputDevice(ready_b["eventNodes"][0])
    assert pad_a.active_keys() == [], "A's pad (its client gone) is neutral"
    second.button("y", True)
    expect_events(pad_b, [(ecodes.EV_KEY, ecodes.BTN_WEST, 1)])
    # A game rumbles A's pad, then B's: only B's rumble reaches B.
    mark = second.feedback_mark()
    effect_a = pad_a.upload_effect(rumble_effect(0xFFFF, 0xFFFF))
    pad_a.write(ecodes.EV_FF, effect_a, 1)
    effect_b = pad_b.upload_effect(rumble_effect(0x4000, 0x2000))
    pad_b.write(ecodes.EV_FF, effect_b, 1)
    second.wait_feedback(lambda obj: obj.get("type") == "rumble" and 0.2 < obj.get("strong", 0) < 0.3, since=mark,
                         what="B's own rumble")
    rumbles = [obj for obj in second.feedback_objects()[mark:] if obj.get("type") == "rumble"]
    assert all(obj.get("strong", 0) < 0.9 for obj in rumbles), f"A's rumble reached B: {rumbles}"
    assert not [e for e in read_available(pad_a, 0.2) if e.type == ecodes.EV_KEY and e.value == 1], "B drove A's pad"


def test_replies_come_from_the_address_the_client_asked(padbridge, tmp_path, namespaces):
    # The host has a second IPv4 address and an IPv6 one besides; it listens on every address.
    run("ip", "-n", "pbhost", "addr", "add", "192.0.2.3/24", "dev", "pbh")
    run("ip", "-n", "pbclient", "addr", "add", "fd00:b::1/64", "dev", "pbc", "nodad")
    run("ip", "-n", "pbhost", "addr", "add", "fd00:b::2/64", "dev", "pbh", "nodad")
    run("ip", "-n", "pbhost", "addr", "add", "fd00:b::3/64", "dev", "pbh", "nodad")
    host_config, client_config = tmp_path / "host", tmp_path / "client"
    serve = padbridge("--listen", f"[::]:{PORT}", "--config-dir", str(host_config), "--pair", command="serve",
                      wrapper=("ip", "netns", "exec", "pbhost"))
    paired = subprocess.run(in_client(padbridge_binary(), "pair", f"192.0.2.3:{PORT}", pairing_code(serve),
                                      "--config-dir", str(client_config)), capture_output=True, text=True, timeout=DEADLINE)
    assert paired.returncode == 0, f"pairing through the host's second address: {paired.stderr}"
    hosts = client_config / "paired-hosts"
    hosts.write_text(hosts.read_text().replace(f"192.0.2.3:{PORT} ", f"[fd00:b::3]:{PORT} "))
    source = xpad_like_source("second address source")
    try:
        client = padbridge(f"[fd00:b::3]:{PORT}", source.device.path, "--config-dir", str(client_config),
                           command="connect", wrapper=("ip", "netns", "exec", "pbclient"))
        client.wait_event("connected", what="the client connected through a second IPv6 address")
        _, ready = attached(serve)
        virtual = evdev.InputDevice(ready["eventNodes"][0])
        source.write(ecodes.EV_KEY, ecodes.BTN_A, 1)
        source.syn()
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
    finally:
        source.close()


def test_a_host_without_ipv6_listens_on_ipv4(padbridge, tmp_path, namespaces):
    # As on a kernel booted with ipv6.disable=1: socket(AF_INET6, ...) fails with EAFNOSUPPORT.
    shim = kernel_suite_tool("no_ipv6_socket.so")
    serve = padbridge("--config-dir", str(tmp_path / "host"), "--pair", command="serve",
                      wrapper=("ip", "netns", "exec", "pbhost", "env", f"LD_PRELOAD={shim}"))
    _, listening = serve.wait_event("listening", what="the host listening")
    assert listening["address"] == "0.0.0.0:48100" and listening["port"] == 48100, listening
    assert serve.events("ipv6Unavailable"), serve.describe()
    paired = subprocess.run(in_client(padbridge_binary(), "pair", HOST_ADDRESS, pairing_code(serve),
                                      "--config-dir", str(tmp_path / "client")), capture_output=True, text=True,
                            timeout=DEADLINE)
    assert paired.returncode == 0, paired.stderr


def test_every_tap_and_touch_arrive_through_an_outage(padbridge, tmp_path, namespaces):
    serve, client_config = paired_across_namespaces(padbridge, tmp_path)
    physical, physical_ready, nodes = start_dualsense(padbridge, "--seed", "backlog source", name="backlog DualSense")
    client = padbridge(f"{HOST_ADDRESS}:{PORT}", physical_ready["hidraw"], "--no-grab", "--config-dir",
                       str(client_config), command="connect", wrapper=("ip", "netns", "exec", "pbclient"))
    client.wait_event("connected", what="the client connected")
    _, ready = attached(serve)
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    virtual_touchpad = evdev.InputDevice(ready["eventNodes"][2])

    # The link is cut; 20 taps and a finger moving on the touchpad (each frame a DualSense report with touch: more
    # than one datagram's worth). Each frame is seen on the stand-in's own node (not grabbed) before the next is
    # made (lines written at once would make one frame), and all before the link comes back.
    run("ip", "netns", "exec", "pbclient", "tc", "qdisc", "add", "dev", "pbc", "root", "netem", "loss", "100%")
    for tap in range(20):
        physical.send_frame({"type": "button", "button": "a", "pressed": True},
                            {"type": "touch", "contact": 0, "active": True, "x": 0.02 + tap * 0.04, "y": 0.5, "id": 7})
        expect_events(nodes["gamepad"], [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
        physical.send_frame({"type": "button", "button": "a", "pressed": False})
        expect_events(nodes["gamepad"], [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)])
    run("ip", "netns", "exec", "pbclient", "tc", "qdisc", "del", "dev", "pbc", "root")

    seen = []
    while len(seen) < 40:
        events = read_available(virtual, DEADLINE)
        assert events, f"only {len(seen)} of 40 edges arrived: {seen}"
        seen += [event.value for event in events if event.type == ecodes.EV_KEY and event.code == ecodes.BTN_SOUTH]
    assert seen == [1, 0] * 20, seen
    touches = [e.value for e in read_available(virtual_touchpad, 1.0) if e.type == ecodes.EV_ABS and e.code == ecodes.ABS_MT_POSITION_X]
    assert touches, "the touch never arrived"


def test_another_user_can_neither_bind_serves_port_nor_take_its_datagrams(padbridge, tmp_path):
    """serve lets its clients' connected sockets share its port through SO_REUSEPORT, which Linux lets only sockets of
    the same user share. With SO_REUSEADDR a process of any user could bind the port too, and take the handshakes,
    frames and pairing datagrams meant for serve."""
    from other_users import NOBODY, Child

    serve, client = paired_host(padbridge, tmp_path)
    physical, _, device = start_xbox(padbridge, "--name", "port-sharing source")
    connection = connect(padbridge, client, device.path)
    _, ready = attached(serve)
    virtual = evdev.InputDevice(ready["eventNodes"][0])

    def bind_the_port(report):
        outcomes = {}
        for address in ("0.0.0.0", "127.0.0.1"):
            for option in ("SO_REUSEADDR", "SO_REUSEPORT"):
                taker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                taker.setsockopt(socket.SOL_SOCKET, getattr(socket, option), 1)
                try:
                    taker.bind((address, PORT))
                    outcomes[f"{address} {option}"] = "bound"
                except OSError as error:
                    outcomes[f"{address} {option}"] = error.strerror
                finally:
                    taker.close()
        taker = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        taker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            taker.bind(("::", PORT))
            outcomes[":: SO_REUSEPORT"] = "bound"
        except OSError as error:
            outcomes[":: SO_REUSEPORT"] = error.strerror
        taker.close()
        report(outcomes)

    child = Child(NOBODY, bind_the_port)
    try:
        outcomes = child.next()
    finally:
        child.close()
    assert all(outcome != "bound" for outcome in outcomes.values()), f"another user bound serve's port: {outcomes}"
    # serve's own traffic goes on.
    physical.button("a", True)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
    physical.button("a", False)
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)])
    assert connection.stop() == 0

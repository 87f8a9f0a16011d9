"""Helpers of the forwarding tests (test_forward, test_pairing, test_link_corrections, test_flood, test_hosts, ...):
a host on loopback paired with a client (PORT, pair, paired_host, connect); two network namespaces joined by a veth
pair (HOST_ADDRESS, CLIENT_ADDRESS, run, joined_namespaces, paired_across_namespaces, in_client, NetworkNamespace,
udp_counters); and a python-evdev pad that discovery takes for a wired Xbox 360 pad (xpad_like_source).
The `namespaces` fixture (a clean link between the two namespaces) is conftest's."""

from __future__ import annotations

import ctypes
import os
import subprocess
import threading

import evdev
from evdev import ecodes

from conftest import DEADLINE, padbridge_binary, pairing_code

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
    process.wait_event("connected", what="the client connected")
    return process


def pair(config, code: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([padbridge_binary(), "pair", f"127.0.0.1:{PORT}", code, "--config-dir", str(config), *extra],
                          capture_output=True, text=True, timeout=DEADLINE)


# --------------------------------------------------------------------------------------------------------------
# two network namespaces, pbclient and pbhost

HOST_ADDRESS, CLIENT_ADDRESS = "192.0.2.2", "192.0.2.1"   # TEST-NET-1, inside the VM's own namespaces only


def run(*command: str):
    subprocess.run(command, check=True, capture_output=True, timeout=DEADLINE)


def joined_namespaces(*netem: str):
    """Two namespaces, pbclient and pbhost, joined by a veth pair (pbc, pbh); with `netem` options each side's
    sending is shaped by them. Removed afterwards."""
    run("modprobe", "-a", "veth", "sch_netem")
    for name in ("pbhost", "pbclient"):
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        run("ip", "netns", "add", name)
    run("ip", "link", "add", "pbc", "type", "veth", "peer", "name", "pbh")
    run("ip", "link", "set", "pbc", "netns", "pbclient")
    run("ip", "link", "set", "pbh", "netns", "pbhost")
    for name, device, address in (("pbclient", "pbc", CLIENT_ADDRESS), ("pbhost", "pbh", HOST_ADDRESS)):
        run("ip", "-n", name, "addr", "add", f"{address}/24", "dev", device)
        run("ip", "-n", name, "link", "set", device, "up")
        run("ip", "-n", name, "link", "set", "lo", "up")
        if netem:
            run("ip", "netns", "exec", name, "tc", "qdisc", "add", "dev", device, "root", "netem", *netem)
    yield
    for name in ("pbhost", "pbclient"):
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def paired_across_namespaces(padbridge, tmp_path):
    host_config, client_config = tmp_path / "host", tmp_path / "client"
    serve = padbridge("--listen", f"{HOST_ADDRESS}:{PORT}", "--config-dir", str(host_config), "--pair",
                      command="serve", wrapper=("ip", "netns", "exec", "pbhost"))
    code = pairing_code(serve)
    paired = subprocess.run(["ip", "netns", "exec", "pbclient", padbridge_binary(), "pair", f"{HOST_ADDRESS}:{PORT}",
                             code, "--config-dir", str(client_config)], capture_output=True, text=True, timeout=DEADLINE)
    assert paired.returncode == 0, paired.stderr
    return serve, client_config


def xpad_like_source(name: str) -> evdev.UInput:
    """A pad made with python-evdev that discovery takes for a wired Xbox 360 pad: each write + SYN is one frame."""
    keys = [ecodes.BTN_A, ecodes.BTN_B, ecodes.BTN_X, ecodes.BTN_Y, ecodes.BTN_TL, ecodes.BTN_TR, ecodes.BTN_SELECT,
            ecodes.BTN_START, ecodes.BTN_MODE, ecodes.BTN_THUMBL, ecodes.BTN_THUMBR]
    stick = evdev.AbsInfo(0, -32768, 32767, 0, 0, 0)
    trigger = evdev.AbsInfo(0, 0, 255, 0, 0, 0)
    hat = evdev.AbsInfo(0, -1, 1, 0, 0, 0)
    axes = [(ecodes.ABS_X, stick), (ecodes.ABS_Y, stick), (ecodes.ABS_RX, stick), (ecodes.ABS_RY, stick),
            (ecodes.ABS_Z, trigger), (ecodes.ABS_RZ, trigger), (ecodes.ABS_HAT0X, hat), (ecodes.ABS_HAT0Y, hat)]
    return evdev.UInput({ecodes.EV_KEY: keys, ecodes.EV_ABS: axes}, name=name, vendor=0x045E, product=0x028E,
                        version=0x114, bustype=ecodes.BUS_USB, phys=f"padbridge-test/{name}")


def in_client(*command: str) -> tuple[str, ...]:
    return ("ip", "netns", "exec", "pbclient", *command)


class NetworkNamespace:
    """Enters a network namespace for the calling thread (setns), and goes back."""

    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWNET = 0x40000000

    def __init__(self, name: str):
        self.target = os.open(f"/run/netns/{name}", os.O_RDONLY)
        self.home = os.open("/proc/self/task/%d/ns/net" % threading.get_native_id(), os.O_RDONLY)

    def __enter__(self):
        assert self.libc.setns(self.target, self.CLONE_NEWNET) == 0, os.strerror(ctypes.get_errno())

    def __exit__(self, *_):
        assert self.libc.setns(self.home, self.CLONE_NEWNET) == 0, os.strerror(ctypes.get_errno())
        os.close(self.target)
        os.close(self.home)


def udp_counters(pid: int) -> tuple[int, int]:
    """(datagrams in, datagrams out) of the network namespace process `pid` is in."""
    lines = [line.split() for line in open(f"/proc/{pid}/net/snmp") if line.startswith("Udp:")]
    values = dict(zip(lines[0][1:], (int(v) for v in lines[1][1:])))
    return values["InDatagrams"], values["OutDatagrams"]

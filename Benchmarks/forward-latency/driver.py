"""Side-by-side benchmark of network gamepad forwarders (runs as root inside the benchmark VM).

Peers, each with its own source pad and fed the same probes, interleaved (A, B, C, D, A, B, ...):
- raw-udp:   raw_udp_forwarder.c, evdev bytes in one UDP datagram each way: the floor (no crypto, no redundancy).
- udp+loop, udp+aead+ack: the same forwarder with parts of padbridge's work added, to price them apart (see
             raw_udp_forwarder.c, send-with/receive-with): an epoll loop with one clock read per wake; then also
             every datagram sealed with ChaCha20-Poly1305 (libsodium) and each one acknowledged back.
- padbridge: `padbridge connect` -> `padbridge serve` (paired first, over the scenario's network).
- remap:     `padbridge remap` (the local path, no network; loopback scenario only).
- usbip:     USB/IP, the kernel's own device forwarding: a USB HID gamepad gadget on dummy_hcd (configfs, usb_f_hid),
             exported by usbipd/usbip-host and attached through vhci-hcd. Its source is the gadget's /dev/hidgN.

Scenarios (one VM boot runs both):
- loopback: both sides in the VM's root namespace, over 127.0.0.1.
- lossy:    the sending side in namespace pbbench-client, the receiving side in pbbench-host, joined by a veth
            pair; each side's sending shaped by netem: 10 % loss and 5 ms delay.
- soak:     only when named: padbridge alone over loopback, a new ABS_X value every 1 ms for --soak-minutes; each
            side's RSS, open descriptors, threads and CPU sampled at the start and after every minute.

Figures per peer and scenario:
- added latency: one probe is written to the peer's source (an ABS_X value + SYN_REPORT in one write(2); on the
  gadget, one HID report); CLOCK_MONOTONIC is read just before the write; the latency is the kernel timestamp of the
  matching event on the peer's output node (reader clock set to CLOCK_MONOTONIC) minus that. One probe in flight
  per peer. In the lossy scenario every other probe is a button edge (BTN_A pressed, then released: a tap is two
  probes), reported apart as "taps". A probe that has not arrived within the deadline counts as lost.
- CPU per 1,000 events, both sides: /proc/PID/task/*/schedstat on-CPU time over the probe phase (processes; for
  usbip, its kernel threads stub_rx/stub_tx on the exporting side and vhci_rx/vhci_tx on the importing side).
- idle CPU: the same over a quiet window, in ms of CPU per second.
- 1 kHz: the source writes a new ABS_X value every 1 ms for a few seconds (one peer at a time); frames per second
  written and carried (distinct values seen on the output node), and the p50/p99 latency of those frames.

Usage (scripts/bench-forward boots the VM and passes these):
  driver.py --padbridge PATH --raw-udp-forwarder PATH [--peers raw-udp,padbridge,remap,usbip]
            [--scenarios loopback,lossy] [--rounds 3] [--probes-per-round 300] [--lossy-probes 400]
            [--idle-seconds 5] [--stream-seconds 3] [--soak-minutes 10] [--json results.json] [--log-dir DIR]
Exit status: 0 when the benchmark ran (even if some peers were skipped), 1 when the harness itself failed.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import importlib.util
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import evdev
from evdev import ecodes as e

HERE = os.path.dirname(os.path.abspath(__file__))


def _remap_benchmark():
    """The remap benchmark's driver, for its probe plumbing: the source pad's capabilities, the event layout, the
    clock, the sysfs listing, the percentile."""
    path = os.path.join(HERE, "..", "remap-latency", "driver.py")
    spec = importlib.util.spec_from_file_location("remap_latency_driver", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_remap = _remap_benchmark()
CLOCK_MONOTONIC, EVENT, EVIOCSCLOCKID = _remap.CLOCK_MONOTONIC, _remap.EVENT, _remap.EVIOCSCLOCKID
input_devices, node_number, now_ns = _remap.input_devices, _remap.node_number, _remap.now_ns
percentile, source_capabilities = _remap.percentile, _remap.source_capabilities

# padbridge-before: another padbridge binary (--padbridge-before, e.g. a build of an earlier commit) measured in the
# same run, interleaved with the others: a change judged against its own baseline on the same noisy machine.
PEER_ORDER = ["raw-udp", "udp+loop", "udp+aead+ack", "padbridge-before", "padbridge", "remap", "usbip"]
SCENARIOS = ["loopback", "lossy"]
# Run only when asked for (--scenarios soak): one padbridge client at 1 kHz for --soak-minutes over loopback.
EXTRA_SCENARIOS = ["soak"]

XBOX360_NAME = "Microsoft X-Box 360 pad"
RAW_UDP_NAME = "padbridge-bench raw udp forwarder"
# The floor's variants: peer -> (the forwarder's features, its port, its output pad's name).
FLOOR_VARIANTS = {
    "udp+loop": ("loop", 48172, "padbridge-bench udp loop forwarder"),
    "udp+aead+ack": ("loop,seal,ack", 48173, "padbridge-bench udp sealed forwarder"),
}
GADGET_PRODUCT = "usbip bench pad"
GADGET_MANUFACTURER = "padbridge-bench"
GADGET_NAME = f"{GADGET_MANUFACTURER} {GADGET_PRODUCT}"

# The gadget's HID report: 16 buttons (u16), X and Y (s16 each, -32768...32767), no report ID.
GADGET_REPORT_DESCRIPTOR = bytes([
    0x05, 0x01, 0x09, 0x05, 0xA1, 0x01,              # Generic Desktop, Game Pad, Collection (Application)
    0x05, 0x09, 0x19, 0x01, 0x29, 0x10,              #   Button 1...16
    0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x10, 0x81, 0x02,
    0x05, 0x01, 0x09, 0x30, 0x09, 0x31,              #   X, Y
    0x16, 0x00, 0x80, 0x26, 0xFF, 0x7F, 0x75, 0x10, 0x95, 0x02, 0x81, 0x02,
    0xC0,
])
GADGET_REPORT = struct.Struct("<Hhh")

LOOPBACK_HOST, LOOPBACK_CLIENT = "127.0.0.1", "127.0.0.1"
NAMESPACE_HOST, NAMESPACE_CLIENT = "pbbench-host", "pbbench-client"
LOSSY_HOST, LOSSY_CLIENT = "192.0.2.2", "192.0.2.1"   # TEST-NET-1, inside the VM's own namespaces only
NETEM = ["loss", "10%", "delay", "5ms"]
PADBRIDGE_PORT, RAW_UDP_PORT, USBIP_PORT = 48170, 48171, 3240

# hid-input gives the gadget's axes fuzz (range >> 8 = 255): evdev drops a change under fuzz/2 and averages one under
# 2 x fuzz, so consecutive probe values differ by more than 510 (for every peer alike).
PROBE_STEP = 1021
PROBE_SPAN = 64000
VALUE_TOLERANCE = 4
NODE_DEADLINE = 60.0
READY_DEADLINE = 60.0
WARMUP_INTERVAL = 0.1
MAX_LOST_IN_A_ROW = 20


def log(message: str):
    print(f"driver: {message}", flush=True)


def run(*command: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def write_file(path: str, content) -> None:
    with open(path, "wb" if isinstance(content, bytes) else "w") as f:
        f.write(content)


# ----------------------------------------------------------------------------------------------------------------
# Networks


@dataclass
class Network:
    name: str
    host_address: str
    client_address: str
    host_prefix: list[str]      # runs a command on the host side ("ip netns exec pbbench-host" or nothing)
    client_prefix: list[str]


def loopback_network() -> Network:
    return Network("loopback", LOOPBACK_HOST, LOOPBACK_CLIENT, [], [])


def lossy_network() -> Network:
    run("modprobe", "-a", "veth", "sch_netem")
    remove_namespaces()
    for name in (NAMESPACE_HOST, NAMESPACE_CLIENT):
        run("ip", "netns", "add", name)
    run("ip", "link", "add", "pbbc", "type", "veth", "peer", "name", "pbbh")
    run("ip", "link", "set", "pbbc", "netns", NAMESPACE_CLIENT)
    run("ip", "link", "set", "pbbh", "netns", NAMESPACE_HOST)
    for name, device, address in ((NAMESPACE_CLIENT, "pbbc", LOSSY_CLIENT), (NAMESPACE_HOST, "pbbh", LOSSY_HOST)):
        run("ip", "-n", name, "addr", "add", f"{address}/24", "dev", device)
        run("ip", "-n", name, "link", "set", device, "up")
        run("ip", "-n", name, "link", "set", "lo", "up")
        run("ip", "netns", "exec", name, "tc", "qdisc", "add", "dev", device, "root", "netem", *NETEM)
    return Network("lossy", LOSSY_HOST, LOSSY_CLIENT, ["ip", "netns", "exec", NAMESPACE_HOST],
                   ["ip", "netns", "exec", NAMESPACE_CLIENT])


def remove_namespaces():
    for name in (NAMESPACE_HOST, NAMESPACE_CLIENT):
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


# ----------------------------------------------------------------------------------------------------------------
# Processes and their CPU


class Process:
    """A peer's process; its output goes to a log file, and lines can be waited for."""

    def __init__(self, argv: list[str], log_path: str, keep_stdin: bool = False):
        self.argv = argv
        self.label = os.path.basename(next(a for a in argv if a not in ("ip", "netns", "exec", NAMESPACE_HOST,
                                                                          NAMESPACE_CLIENT)))
        self.log_path = log_path
        self.lines: list[str] = []
        self.changed = threading.Condition()
        log(f"starting {' '.join(argv)}")
        # stdin is a pipe held open for the process's life: `padbridge remap` and `connect` end at end of input.
        self.popen = subprocess.Popen(argv, stdin=subprocess.PIPE if keep_stdin else subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        with open(self.log_path, "ab") as out:
            for raw in self.popen.stdout:
                out.write(raw)
                out.flush()
                with self.changed:
                    self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                    self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def wait_line(self, predicate: Callable[[str], bool], timeout: float) -> Optional[str]:
        deadline = time.monotonic() + timeout
        with self.changed:
            seen = 0
            while True:
                for line in self.lines[seen:]:
                    if predicate(line):
                        return line
                seen = len(self.lines)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.popen.poll() is not None and not self.reader.is_alive()):
                    return None
                self.changed.wait(remaining)

    def exited(self) -> Optional[str]:
        if self.popen.poll() is None:
            return None
        tail = " | ".join(self.lines[-3:]) or "no output"
        return f"{self.label} exited with status {self.popen.returncode}: {tail}"

    def pids(self) -> list[int]:
        return [self.popen.pid] if self.popen.poll() is None else []

    def stop(self):
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        self.reader.join(5)


def on_cpu_ns(pids: list[int]) -> int:
    """On-CPU time of every thread of these processes (schedstat, ns)."""
    total = 0
    for pid in pids:
        for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
            try:
                with open(path) as f:
                    total += int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                pass  # thread gone meanwhile
    return total


CLOCK_TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def user_system_ns(pids: list[int]) -> tuple[int, int]:
    """Time in user space and in the kernel of every thread of these processes (/proc stat utime and stime: the
    scheduler's tick-sampled split, coarser than schedstat; used only to split it)."""
    user = system = 0
    for pid in pids:
        for path in glob.glob(f"/proc/{pid}/task/*/stat"):
            try:
                with open(path) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                user += int(fields[11]) * CLOCK_TICK_NS
                system += int(fields[12]) * CLOCK_TICK_NS
            except (OSError, IndexError, ValueError):
                pass  # thread gone meanwhile
    return user, system


def kernel_threads(prefixes: tuple[str, ...]) -> list[int]:
    pids = []
    for path in glob.glob("/proc/[0-9]*/comm"):
        try:
            with open(path) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith(prefixes):
            pids.append(int(path.split("/")[2]))
    return pids


# ----------------------------------------------------------------------------------------------------------------
# Sources


class UinputSource:
    """A uinput pad with the remap benchmark's Xbox 360-like capabilities (no fuzz)."""

    def __init__(self, index: int, peer: str):
        self.device = evdev.UInput(source_capabilities(), name=f"padbridge-bench source {index} ({peer})",
                                   vendor=0x1209, product=0x0B00 + index, version=1, bustype=e.BUS_USB,
                                   phys=f"padbridge-bench/forward-source-{index}")
        self.node = self.device.device.path

    def write_axis(self, value: int) -> int:
        return self._write(e.EV_ABS, e.ABS_X, value)

    def write_button(self, pressed: bool) -> int:
        return self._write(e.EV_KEY, e.BTN_A, int(pressed))

    def _write(self, type_: int, code: int, value: int) -> int:
        data = EVENT.pack(0, 0, type_, code, value) + EVENT.pack(0, 0, e.EV_SYN, e.SYN_REPORT, 0)
        t0 = now_ns()
        os.write(self.device.fd, data)
        return t0

    def close(self):
        self.device.close()


class GadgetSource:
    """The USB HID gamepad gadget's /dev/hidgN: each write is one input report (buttons, X, Y)."""

    def __init__(self, hidg: str):
        # Non-blocking: a write waits for the host to poll the previous report; one that cannot be queued now is a
        # frame the path did not take (the 1 kHz figure counts it as written, not carried).
        self.fd = os.open(hidg, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self.buttons, self.x = 0, 0

    def write_axis(self, value: int) -> Optional[int]:
        self.x = value
        return self._write()

    def write_button(self, pressed: bool) -> Optional[int]:
        self.buttons = 1 if pressed else 0
        return self._write()

    def _write(self) -> int:
        report = GADGET_REPORT.pack(self.buttons, self.x, 0)
        t0 = now_ns()
        try:
            os.write(self.fd, report)
        except BlockingIOError:
            return None
        return t0

    def close(self):
        os.close(self.fd)


# ----------------------------------------------------------------------------------------------------------------
# The USB/IP gadget


class UsbipGadget:
    """A USB HID gamepad made with configfs on dummy_hcd, exported with usbipd + usbip bind and imported with usbip
    attach (vhci-hcd). The local hid-generic node goes away at bind; the imported one appears at attach."""

    ROOT = "/sys/kernel/config/usb_gadget/pbbench"

    def __init__(self):
        run("modprobe", "-a", "dummy_hcd", "libcomposite", "usb_f_hid", "usbip-host", "vhci-hcd")
        if not os.path.ismount("/sys/kernel/config"):
            run("mount", "-t", "configfs", "none", "/sys/kernel/config")
        root = self.ROOT
        if os.path.exists(root):
            raise RuntimeError(f"{root} exists: a previous run's gadget is still there")
        os.makedirs(f"{root}/strings/0x409")
        write_file(f"{root}/idVendor", "0x1209")
        write_file(f"{root}/idProduct", "0x0b10")
        write_file(f"{root}/strings/0x409/manufacturer", GADGET_MANUFACTURER)
        write_file(f"{root}/strings/0x409/product", GADGET_PRODUCT)
        write_file(f"{root}/strings/0x409/serialnumber", "pbbench-1")
        os.makedirs(f"{root}/configs/c.1/strings/0x409")
        write_file(f"{root}/configs/c.1/strings/0x409/configuration", "gamepad")
        os.makedirs(f"{root}/functions/hid.usb0")
        write_file(f"{root}/functions/hid.usb0/protocol", "0")
        write_file(f"{root}/functions/hid.usb0/subclass", "0")
        write_file(f"{root}/functions/hid.usb0/report_length", str(GADGET_REPORT.size))
        write_file(f"{root}/functions/hid.usb0/report_desc", GADGET_REPORT_DESCRIPTOR)
        os.symlink(f"{root}/functions/hid.usb0", f"{root}/configs/c.1/hid.usb0")
        udc = sorted(os.listdir("/sys/class/udc"))
        if not udc:
            raise RuntimeError("no UDC in /sys/class/udc after modprobe dummy_hcd")
        write_file(f"{root}/UDC", udc[0])
        major_minor = open(f"{root}/functions/hid.usb0/dev").read().strip()
        self.hidg = next((f"/dev/{name}" for name in os.listdir("/dev") if name.startswith("hidg")
                          and os.path.exists(f"/sys/class/hidg/{name}/dev")
                          and open(f"/sys/class/hidg/{name}/dev").read().strip() == major_minor), "/dev/hidg0")
        self.busid = self._wait_busid()
        self.usbipd: Optional[Process] = None

    @staticmethod
    def _wait_busid() -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for path in glob.glob("/sys/bus/usb/devices/*/idVendor"):
                directory = os.path.dirname(path)
                try:
                    if open(path).read().strip() == "1209" and \
                            open(f"{directory}/idProduct").read().strip() == "0b10" and ":" not in directory:
                        return os.path.basename(directory)
                except OSError:
                    continue
            time.sleep(0.05)  # enumeration on dummy_hcd: no event to wait on from here short of a netlink socket
        raise RuntimeError("the gadget never enumerated on dummy_hcd")

    def export(self, network: Network, log_path: str):
        """usbipd on the client side (the pad's machine exports it), the device bound to usbip-host."""
        self.usbipd = Process([*network.client_prefix, "usbipd", "--ipv4", "--tcp-port", str(USBIP_PORT)], log_path)
        run("usbip", "bind", "-b", self.busid)

    def attach(self, network: Network):
        """The host side imports the device over the scenario's network (the socket lives in its namespace)."""
        deadline = time.monotonic() + 30
        while True:
            result = run(*network.host_prefix, "usbip", "--tcp-port", str(USBIP_PORT), "attach", "-r",
                         network.client_address, "-b", self.busid, check=False)
            if result.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"usbip attach failed: {result.stderr.strip()}")
            time.sleep(0.2)  # usbipd not listening yet: it gives no readiness signal

    def unexport(self, network: Network):
        subprocess.run([*network.host_prefix, "usbip", "detach", "-p", "0"], capture_output=True)
        subprocess.run(["usbip", "unbind", "-b", self.busid], capture_output=True)
        if self.usbipd:
            self.usbipd.stop()
            self.usbipd = None

    def remove(self):
        root = self.ROOT
        if not os.path.exists(root):
            return
        try:
            write_file(f"{root}/UDC", "\n")
        except OSError:
            pass
        for path in (f"{root}/configs/c.1/hid.usb0",):
            if os.path.islink(path):
                os.unlink(path)
        for path in (f"{root}/configs/c.1/strings/0x409", f"{root}/configs/c.1", f"{root}/functions/hid.usb0",
                     f"{root}/strings/0x409", root):
            try:
                os.rmdir(path)
            except OSError:
                pass


# ----------------------------------------------------------------------------------------------------------------
# Peers


@dataclass
class Peer:
    name: str
    index: int
    log_dir: str
    source: object = None
    processes: dict = field(default_factory=dict)       # side ("client"/"host"/"local") -> [Process]
    threads: dict = field(default_factory=dict)         # side -> kernel thread name prefixes (usbip)
    output_node: str = ""
    output_fd: int = -1
    output_name: str = ""
    output_phys: str = ""
    note: str = ""
    started_ns: int = 0
    first_event_after_s: Optional[float] = None
    next_value_index: int = 0
    button: bool = False
    latencies_ns: dict = field(default_factory=lambda: {"axis": [], "tap": []})
    lost: dict = field(default_factory=lambda: {"axis": 0, "tap": 0})
    lost_in_a_row: int = 0
    cpu: dict = field(default_factory=dict)
    stream: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return not self.note

    def skip(self, note: str):
        if not self.note:
            self.note = note
            log(f"{self.name}: skipped: {note}")

    def log_path(self, what: str) -> str:
        return os.path.join(self.log_dir, f"{self.name}-{what}.log")

    def next_value(self) -> int:
        value = -PROBE_SPAN // 2 + (self.next_value_index * PROBE_STEP) % PROBE_SPAN
        self.next_value_index += 1
        return value

    def exited(self) -> Optional[str]:
        for processes in self.processes.values():
            for process in processes:
                reason = process.exited()
                if reason:
                    return reason
        return None

    def side_pids(self, side: str) -> list[int]:
        pids = [pid for process in self.processes.get(side, []) for pid in process.pids()]
        return pids + kernel_threads(self.threads[side]) if side in self.threads else pids

    def sides(self) -> list[str]:
        return sorted(set(self.processes) | set(self.threads))

    def cpu_sample(self) -> dict:
        sample = {"at_ns": now_ns()}
        for side in self.sides():
            pids = self.side_pids(side)
            sample[side] = on_cpu_ns(pids)
            sample[f"{side}/user"], sample[f"{side}/system"] = user_system_ns(pids)
        return sample

    def open_output(self, node: str):
        self.output_node = node
        self.output_fd = os.open(node, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        fcntl.ioctl(self.output_fd, EVIOCSCLOCKID, struct.pack("i", CLOCK_MONOTONIC))
        log(f"{self.name}: output node {node} after {(now_ns() - self.started_ns) / 1e9:.2f} s")

    def read_output(self) -> list[tuple[int, int, int, int]]:
        events = []
        while True:
            try:
                data = os.read(self.output_fd, EVENT.size * 64)
            except BlockingIOError:
                return events
            for sec, usec, type_, code, value in EVENT.iter_unpack(data):
                events.append((sec * 1_000_000_000 + usec * 1000, type_, code, value))

    def stop(self):
        if self.output_fd >= 0:
            os.close(self.output_fd)
            self.output_fd = -1
        for processes in self.processes.values():
            for process in reversed(processes):
                process.stop()
        self.processes = {}


class PeerStarter:
    """How each peer starts on a network; each start returns once the peer's output device should appear."""

    def __init__(self, args, network: Network, work: str):
        self.args, self.network, self.work = args, network, work
        self.gadget: Optional[UsbipGadget] = None

    def source_for(self, peer: Peer):
        if peer.name == "usbip":
            self.gadget = UsbipGadget()
            return GadgetSource(self.gadget.hidg)
        return UinputSource(peer.index, peer.name)

    def start(self, peer: Peer):
        network, args = self.network, self.args
        if peer.name == "raw-udp":
            peer.output_name = RAW_UDP_NAME
            receiver = Process([*network.host_prefix, args.raw_udp_forwarder, "receive", network.host_address,
                                str(RAW_UDP_PORT), RAW_UDP_NAME], peer.log_path("host"))
            sender = Process([*network.client_prefix, args.raw_udp_forwarder, "send", peer.source.node,
                              network.host_address, str(RAW_UDP_PORT)], peer.log_path("client"))
            peer.processes = {"host": [receiver], "client": [sender]}
        elif peer.name in FLOOR_VARIANTS:
            features, port, peer.output_name = FLOOR_VARIANTS[peer.name]
            receiver = Process([*network.host_prefix, args.raw_udp_forwarder, "receive-with", features,
                                network.host_address, str(port), peer.output_name], peer.log_path("host"))
            sender = Process([*network.client_prefix, args.raw_udp_forwarder, "send-with", features,
                              peer.source.node, network.host_address, str(port)], peer.log_path("client"))
            peer.processes = {"host": [receiver], "client": [sender]}
        elif peer.name == "remap":
            peer.output_name = XBOX360_NAME
            peer.processes = {"local": [Process([args.padbridge, "remap", peer.source.node, "--as", "xbox360"],
                                                peer.log_path("local"), keep_stdin=True)]}
        elif peer.name in ("padbridge", "padbridge-before"):
            peer.output_name = XBOX360_NAME
            binary = args.padbridge if peer.name == "padbridge" else args.padbridge_before
            work = f"{self.work}/{peer.name}"
            host_config, client_config = f"{work}/host", f"{work}/client"
            shutil.rmtree(work, ignore_errors=True)
            address = f"{network.host_address}:{PADBRIDGE_PORT + (10 if peer.name == 'padbridge-before' else 0)}"
            serve = Process([*network.host_prefix, binary, "serve", "--listen", address, "--config-dir",
                             host_config, "--pair", "--as", "xbox360"], peer.log_path("host"))
            peer.processes = {"host": [serve]}
            line = serve.wait_line(lambda text: text.startswith("padbridge: pairing code"), 60)
            if not line:
                peer.skip(f"serve showed no pairing code ({serve.exited() or 'still running'})")
                return
            paired = run(*network.client_prefix, binary, "pair", address, line.split()[-1], "--config-dir",
                         client_config, check=False, timeout=120)
            if paired.returncode != 0:
                peer.skip(f"pair failed: {paired.stderr.strip()}")
                return
            connect = Process([*network.client_prefix, binary, "connect", address, peer.source.node,
                               "--config-dir", client_config, "--as", "xbox360"], peer.log_path("client"),
                              keep_stdin=True)
            peer.processes["client"] = [connect]
        elif peer.name == "usbip":
            peer.output_name, peer.output_phys = GADGET_NAME, "vhci"
            self.gadget.export(network, peer.log_path("usbipd"))
            peer.processes = {"client": [self.gadget.usbipd]}
            self.gadget.attach(network)
            peer.threads = {"client": ("stub_rx", "stub_tx"), "host": ("vhci_rx", "vhci_tx")}

    def stop(self, peer: Peer):
        if peer.name == "usbip" and self.gadget:
            self.gadget.unexport(self.network)
            peer.processes = {}
        peer.stop()
        if peer.source:
            peer.source.close()
            peer.source = None
        if peer.name == "usbip" and self.gadget:
            self.gadget.remove()
            self.gadget = None


# ----------------------------------------------------------------------------------------------------------------
# Phases


def input_device_paths() -> dict[str, str]:
    """event node -> its inputN sysfs path (inputN numbers are never reused; eventN numbers are)."""
    return {node: os.path.realpath(f"/sys/class/input/{os.path.basename(node)}/device") for node in input_devices()}


def start_and_warm_up(peers: list[Peer], starter: PeerStarter):
    """Starts the peers one at a time; each is ready when a warm-up probe (one every 100 ms) comes through."""
    for peer in peers:
        known = set(input_device_paths().values())
        peer.started_ns = now_ns()
        try:
            starter.start(peer)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
            peer.skip(f"could not start: {error}")
        if not peer.active:
            continue
        deadline = now_ns() + int(NODE_DEADLINE * 1e9)
        while not peer.output_node and peer.active:
            paths = input_device_paths()
            new = [node for node, info in sorted(input_devices().items(), key=lambda kv: node_number(kv[0]))
                   if paths.get(node) not in known and info["name"] == peer.output_name
                   and peer.output_phys in info["phys"]]
            if new:
                peer.open_output(new[0])
            elif peer.exited():
                peer.skip(f"{peer.exited()} (before its output device appeared)")
            elif now_ns() > deadline:
                listed = ", ".join(f"{i['name']} ({i['phys']})" for i in input_devices().values())
                peer.skip(f"no '{peer.output_name}' device within {NODE_DEADLINE:.0f} s; there are: {listed}")
            else:
                time.sleep(0.05)  # sysfs has no readiness event to wait on here; this is start-up, not measured
        deadline = now_ns() + int(READY_DEADLINE * 1e9)
        while peer.active and peer.first_event_after_s is None:
            if now_ns() > deadline:
                peer.skip(f"nothing came through within {READY_DEADLINE:.0f} s")
                break
            value = peer.next_value()
            peer.source.write_axis(value)
            readable, _, _ = select.select([peer.output_fd], [], [], WARMUP_INTERVAL)
            if readable and any(t == e.EV_ABS and c == e.ABS_X for _, t, c, _ in peer.read_output()):
                peer.first_event_after_s = (now_ns() - peer.started_ns) / 1e9
                log(f"{peer.name}: first event through {peer.first_event_after_s:.2f} s after start")
    settle([p for p in peers if p.active])


def settle(peers: list[Peer], quiet_s: float = 0.5):
    fds = [p.output_fd for p in peers]
    while fds:
        readable, _, _ = select.select(fds, [], [], quiet_s)
        if not readable:
            return
        for peer in peers:
            if peer.output_fd in readable:
                peer.read_output()


def probe_once(peer: Peer, kind: str, deadline_s: float) -> Optional[int]:
    if kind == "tap":
        peer.button = not peer.button
        expected = (e.EV_KEY, e.BTN_A, int(peer.button))
        t0 = peer.source.write_button(peer.button)
    else:
        value = peer.next_value()
        expected = (e.EV_ABS, e.ABS_X, value)
        t0 = peer.source.write_axis(value)
    if t0 is None:
        return None
    deadline = t0 + int(deadline_s * 1e9)
    while True:
        remaining = (deadline - now_ns()) / 1e9
        if remaining <= 0:
            return None
        readable, _, _ = select.select([peer.output_fd], [], [], remaining)
        if not readable:
            return None
        for stamp, type_, code, got in peer.read_output():
            if (type_, code) == expected[:2] and abs(got - expected[2]) <= VALUE_TOLERANCE:
                return stamp - t0


def measure(peers: list[Peer], rounds: int, per_round: int, kinds: list[str], deadline_s: float, gap_s: float):
    """Probes the peers in turn. What a peer does after its probe came out (an acknowledgement sent and read, a
    timer) must not land on the next peer's probe: each probe is followed by `gap_s` of quiet, and each turn starts
    one peer later than the last, so that no peer always follows the same one. (Back to back in a fixed order, a
    peer paid for the tail of the peer before it: padbridge measured ~100 us slower at p50 behind another padbridge.)"""
    for peer in peers:
        peer.cpu["probe_start"] = peer.cpu_sample()
    for round_index in range(rounds):
        started = time.monotonic()
        for probe in range(per_round):
            kind = kinds[probe % len(kinds)]
            first = probe % len(peers)
            for peer in peers[first:] + peers[:first]:
                if not peer.active:
                    continue
                latency = probe_once(peer, kind, deadline_s)
                time.sleep(gap_s)  # pacing, not a wait for an event: the quiet the next probe starts from
                if latency is None:
                    peer.lost[kind] += 1
                    peer.lost_in_a_row += 1
                    if peer.lost_in_a_row >= MAX_LOST_IN_A_ROW:
                        peer.skip(f"{MAX_LOST_IN_A_ROW} probes in a row did not come through "
                                  f"({peer.exited() or 'still running'})")
                    continue
                peer.lost_in_a_row = 0
                peer.latencies_ns[kind].append(latency)
        summary = ", ".join(f"{p.name} p50 {percentile(p.latencies_ns['axis'], 50) / 1000:.0f} us"
                            for p in peers if p.latencies_ns["axis"])
        log(f"round {round_index + 1}/{rounds} ({time.monotonic() - started:.1f} s): {summary}")
    for peer in peers:
        peer.cpu["probe_end"] = peer.cpu_sample()


def measure_idle(peers: list[Peer], seconds: float):
    settle(peers, 0.5)
    for peer in peers:
        peer.cpu["idle_start"] = peer.cpu_sample()
    time.sleep(seconds)  # the quiet window itself: nothing is written, nothing is read
    for peer in peers:
        peer.cpu["idle_end"] = peer.cpu_sample()


def measure_stream(peer: Peer, seconds: float, pacer: str):
    """One peer at a time: the C pacer writes a new ABS_X value to the peer's source every 1 ms on an absolute
    schedule (Python cannot keep 1 kHz in the emulated guest); this reads the output node meanwhile and counts the
    distinct values carried. Each carried frame's latency is measured from its slot in the schedule. SYN_DROPPED on
    the output node (this reader falling behind) is counted apart: such frames are not the peer's loss."""
    settle([peer], 0.3)
    count = int(seconds * 1000)
    first = peer.next_value_index
    peer.next_value_index += count
    expected = {(-PROBE_SPAN // 2 + ((first + i) * PROBE_STEP) % PROBE_SPAN): i for i in range(count)}
    fd, kind = (peer.source.fd, "hidg") if isinstance(peer.source, GadgetSource) else (peer.source.device.fd, "uinput")
    process = subprocess.Popen([pacer, "pace", kind, str(fd), str(count), str(first)], pass_fds=[fd],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: dict[int, int] = {}
    reader_dropped = 0
    finished_ns = None
    while True:
        if finished_ns is None and process.poll() is not None:
            finished_ns = now_ns()
        if finished_ns is not None and (len(seen) == count or now_ns() - finished_ns > 1_000_000_000):
            break
        readable, _, _ = select.select([peer.output_fd], [], [], 0.05)
        if readable:
            for stamp, type_, code, value in peer.read_output():
                if type_ == e.EV_ABS and code == e.ABS_X and value in expected and value not in seen:
                    seen[value] = stamp
                elif type_ == e.EV_SYN and code == e.SYN_DROPPED:
                    reader_dropped += 1
    output = process.stdout.read().split()
    if process.returncode != 0 or len(output) < 4:
        peer.stream = {"note": f"pacer failed ({process.returncode}): {' '.join(output)}"}
        log(f"{peer.name}: 1 kHz stream: {peer.stream['note']}")
        return
    start_ns, refused = int(output[1]), int(output[3])
    latencies = [stamp - (start_ns + expected[value] * 1_000_000) for value, stamp in seen.items()]
    peer.stream = {"seconds": seconds, "frames": count, "refused_by_source": refused, "carried": len(seen),
                   "written_per_s": (count - refused) / seconds, "carried_per_s": len(seen) / seconds,
                   "reader_syn_dropped": reader_dropped,
                   "p50_us": percentile(latencies, 50) / 1000 if latencies else None,
                   "p99_us": percentile(latencies, 99) / 1000 if latencies else None}
    log(f"{peer.name}: 1 kHz stream: {count - refused} of {count} frames written, {len(seen)} carried in "
        f"{seconds:.0f} s; reader SYN_DROPPED {reader_dropped}")


# ----------------------------------------------------------------------------------------------------------------
# Work per frame, counted: system calls by kind (strace -c on each side's processes), datagrams each way (the
# send and receive calls among them), wake-ups (the event loop's waits). Counts, not times: the emulated machine's
# timing is too noisy to judge a small step, its counts are not.

SENDS = ("sendto", "sendmsg", "sendmmsg")
RECEIVES = ("recvfrom", "recvmsg", "recvmmsg")
WAITS = ("epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6")


class SyscallCounter:
    """strace -c attached to every process of one side while a workload runs; `stop()` gives {syscall: calls}."""

    def __init__(self, pids: list[int], path: str):
        self.path = path
        self.process = None
        if pids:
            argv = ["strace", "-c", "-f", "-q", "-o", path] + [arg for pid in pids for arg in ("-p", str(pid))]
            self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)  # attaching takes a moment (ptrace of each thread); nothing is measured meanwhile

    def stop(self) -> dict:
        if not self.process:
            return {}
        self.process.send_signal(signal.SIGINT)
        self.process.wait(30)
        counts = {}
        with open(self.path) as f:
            for line in f:
                fields = line.split()
                if len(fields) in (5, 6) and fields[-1] != "total" and fields[3].isdigit():
                    counts[fields[-1]] = int(fields[3])
        return counts


def counted(peer: Peer, label: str, workload: Callable[[], int]) -> Optional[dict]:
    """Runs `workload` (returns how many frames it carried) with each side's system calls counted."""
    counters = {side: SyscallCounter(peer.side_pids(side), peer.log_path(f"strace-{label}-{side}"))
                for side in peer.sides() if peer.processes.get(side)}
    frames = workload()
    counts = {side: counter.stop() for side, counter in counters.items()}
    return {"frames": frames, "calls": counts}


def per_frame_report(result: Optional[dict]) -> Optional[dict]:
    if not result or not result["frames"]:
        return None
    frames = result["frames"]
    report = {"frames": frames}
    for side, calls in result["calls"].items():
        report[side] = {
            "calls_per_frame": {name: round(count / frames, 3) for name, count in sorted(calls.items())},
            "total_per_frame": round(sum(calls.values()) / frames, 3),
            "datagrams_sent_per_frame": round(sum(calls.get(n, 0) for n in SENDS) / frames, 3),
            "datagrams_received_per_frame": round(sum(calls.get(n, 0) for n in RECEIVES) / frames, 3),
            "waits_per_frame": round(sum(calls.get(n, 0) for n in WAITS) / frames, 3),
        }
    return report


def measure_counts(peer: Peer, pacer: str, isolated: int, stream_frames: int, idle_seconds: float):
    """Per forwarded frame: a steady 1 kHz stream and isolated changes (one at a time, each waited for, then 20 ms
    of quiet); and per second of idling."""
    settle([peer], 0.3)

    def isolated_changes() -> int:
        carried = 0
        for _ in range(isolated):
            if probe_once(peer, "axis", 2.0) is not None:
                carried += 1
            time.sleep(0.02)  # the pace of isolated changes, not a wait for a result
        settle([peer], 0.3)
        return carried

    def stream() -> int:
        # The 1 kHz figures are the run without strace (strace slows each system call many times over): kept.
        unstraced = peer.stream
        measure_stream(peer, stream_frames / 1000, pacer)
        settle([peer], 0.3)
        carried = peer.stream.get("carried", 0)
        peer.stream = unstraced
        return carried

    def idle() -> int:
        time.sleep(idle_seconds)  # the quiet window itself
        return 1

    peer.counts = {
        "isolated": per_frame_report(counted(peer, "isolated", isolated_changes)),
        "stream": per_frame_report(counted(peer, "stream", stream)),
    }
    quiet = counted(peer, "idle", idle)
    if quiet:
        peer.counts["idle_per_s"] = {
            side: {"calls_per_s": {n: round(c / idle_seconds, 2) for n, c in sorted(calls.items())},
                   "wakeups_per_s": round(sum(calls.get(n, 0) for n in WAITS) / idle_seconds, 2),
                   "datagrams_sent_per_s": round(sum(calls.get(n, 0) for n in SENDS) / idle_seconds, 2)}
            for side, calls in quiet["calls"].items()}
    log(f"{peer.name}: counts: {json.dumps(peer.counts)}")


def callgrind_control(peers: list[Peer], command: str, enabled: bool):
    """With --callgrind-window (the peers' processes run under `valgrind --tool=callgrind`): zeroes their counters
    before the probe phase and dumps them after it, so a dump holds the probes' work alone."""
    if not enabled:
        return
    for peer in peers:
        for side in peer.sides():
            for pid in (peer.side_pids(side) if peer.processes.get(side) else []):
                result = run("callgrind_control", command, str(pid), check=False, timeout=120)
                log(f"{peer.name}: callgrind_control {command} {pid} ({side}): status {result.returncode}")


# ----------------------------------------------------------------------------------------------------------------
# Soak: one client at 1 kHz for minutes; each side's memory and open descriptors sampled every minute.


def process_footprint(pid: int) -> Optional[dict]:
    """RSS (kB, VmRSS), open descriptors and threads of one process; None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    return {"rss_kb": int(status["VmRSS"].split()[0]), "fds": fds, "threads": int(status["Threads"])}


def measure_soak(peer: Peer, minutes: int, pacer: str) -> dict:
    """The C pacer writes a new ABS_X value to the source every 1 ms on an absolute schedule for `minutes`; this
    reads the output node meanwhile, counting the ABS_X events that came out, and at the start and after each
    minute samples each side's RSS, open descriptors, threads and CPU time, and the link-lost lines in its log."""
    settle([peer], 0.3)
    count = minutes * 60_000
    first = peer.next_value_index
    peer.next_value_index += count
    fd = peer.source.device.fd
    pids = {side: peer.side_pids(side)[0] for side in ("client", "host")}

    def sample(minute: int, out_events: int, reader_dropped: int) -> dict:
        row = {"minute": minute, "at_ns": now_ns(), "out_events": out_events, "reader_syn_dropped": reader_dropped}
        for side, pid in pids.items():
            row[side] = process_footprint(pid)
            row[f"{side}_cpu_ns"] = on_cpu_ns([pid])
            process = peer.processes[side][0]
            with process.changed:
                row[f"{side}_link_lost_lines"] = sum(
                    "link lost" in line or ("link to " in line and " lost" in line) for line in process.lines)
        return row

    samples = [sample(0, 0, 0)]
    log(f"{peer.name}: soak: {count} frames at 1 kHz ({minutes} min); minute 0: {json.dumps(samples[0])}")
    process = subprocess.Popen([pacer, "pace", "uinput", str(fd), str(count), str(first)], pass_fds=[fd],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out_events, reader_dropped = 0, 0
    started = time.monotonic()
    next_sample = started + 60
    finished_at = None
    while True:
        if finished_at is None and process.poll() is not None:
            finished_at = time.monotonic()
        if finished_at is not None and time.monotonic() - finished_at > 1.0:
            break
        readable, _, _ = select.select([peer.output_fd], [], [], 0.05)
        if readable:
            for _, type_, code, _ in peer.read_output():
                if type_ == e.EV_ABS and code == e.ABS_X:
                    out_events += 1
                elif type_ == e.EV_SYN and code == e.SYN_DROPPED:
                    reader_dropped += 1
        if time.monotonic() >= next_sample and len(samples) <= minutes:
            samples.append(sample(len(samples), out_events, reader_dropped))
            log(f"{peer.name}: soak minute {len(samples) - 1}: {json.dumps(samples[-1])}")
            next_sample += 60
    if len(samples) <= minutes:  # the last minute ends with the pacer (its schedule may end a little late)
        samples.append(sample(len(samples), out_events, reader_dropped))
    output = process.stdout.read().split()
    return {"minutes": minutes, "frames": count, "out_events": out_events, "reader_syn_dropped": reader_dropped,
            "pacer": " ".join(output) if process.returncode == 0 else f"failed ({process.returncode}): {output}",
            "samples": samples}


def soak_table(soak: dict) -> str:
    lines = [f"scenario soak: padbridge, one client, 1 kHz for {soak['minutes']} min over loopback: "
             f"{soak['frames']} frames written, {soak['out_events']} ABS_X events out "
             f"(reader SYN_DROPPED {soak['reader_syn_dropped']}); pacer: {soak['pacer']}",
             f"{'minute':>6} {'out/s':>7} {'host RSS kB':>11} {'fds':>4} {'thr':>4} {'cpu ms/s':>8} "
             f"{'client RSS kB':>13} {'fds':>4} {'thr':>4} {'cpu ms/s':>8} {'link lost lines host/client':>28}"]
    previous = None
    for row in soak["samples"]:
        seconds = (row["at_ns"] - previous["at_ns"]) / 1e9 if previous else None

        def rate(key):
            return f"{(row[key] - previous[key]) / seconds:.0f}" if previous else "-"

        def cpu(side):
            return f"{(row[f'{side}_cpu_ns'] - previous[f'{side}_cpu_ns']) / 1e6 / seconds:.0f}" if previous else "-"

        host, client = row["host"] or {}, row["client"] or {}
        lines.append(f"{row['minute']:>6} {rate('out_events'):>7} {host.get('rss_kb', '-'):>11} {host.get('fds', '-'):>4} "
                     f"{host.get('threads', '-'):>4} {cpu('host'):>8} {client.get('rss_kb', '-'):>13} "
                     f"{client.get('fds', '-'):>4} {client.get('threads', '-'):>4} {cpu('client'):>8} "
                     f"{row['host_link_lost_lines']:>13}/{row['client_link_lost_lines']}")
        previous = row
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------------------------
# Results


def cpu_delta(peer: Peer, start: str, end: str) -> Optional[dict]:
    """ms of CPU per side between two samples, and the seconds between them."""
    a, b = peer.cpu.get(start), peer.cpu.get(end)
    if not a or not b:
        return None
    sides = [key for key in a if key != "at_ns"]
    return {"seconds": (b["at_ns"] - a["at_ns"]) / 1e9, **{side: (b.get(side, 0) - a[side]) / 1e6 for side in sides}}


def results_for(peers: list[Peer], scenario: str) -> dict:
    floor = next((p for p in peers if p.name == "raw-udp" and p.latencies_ns["axis"]), None)
    rows = []
    for peer in sorted(peers, key=lambda p: PEER_ORDER.index(p.name)):
        row = {"peer": peer.name, "note": peer.note or None, "output_node": peer.output_node or None,
               "first_event_after_s": peer.first_event_after_s, "stream": peer.stream or None,
               "counts": peer.counts or None}
        for kind in ("axis", "tap"):
            values, lost = peer.latencies_ns[kind], peer.lost[kind]
            if not values and not lost:
                continue
            figures = {"probes": len(values) + lost, "lost": lost}
            if values:
                figures["p50_us"] = percentile(values, 50) / 1000
                figures["p99_us"] = percentile(values, 99) / 1000
                figures["max_us"] = max(values) / 1000
                if floor and kind == "axis":
                    figures["p50_vs_floor"] = figures["p50_us"] / (percentile(floor.latencies_ns["axis"], 50) / 1000)
                    figures["p99_vs_floor"] = figures["p99_us"] / (percentile(floor.latencies_ns["axis"], 99) / 1000)
            row[kind] = figures
        probe_cpu = cpu_delta(peer, "probe_start", "probe_end")
        events = sum(len(v) for v in peer.latencies_ns.values()) + sum(peer.lost.values())
        idle_cpu = cpu_delta(peer, "idle_start", "idle_end")
        for side in [key for key in (probe_cpu or {}) if key != "seconds" and "/" not in key]:
            split = [probe_cpu.get(f"{side}/user", 0), probe_cpu.get(f"{side}/system", 0)]
            if sum(split) > 0:
                row[f"cpu_user_share_{side}"] = split[0] / sum(split)
            if probe_cpu and events:
                # Also without the idle rate taken off: a peer whose idle work (keepalives) stops while frames flow
                # does not do it during the probes, and the net figure then takes off too much.
                row[f"gross_cpu_ms_per_1k_events_{side}"] = probe_cpu[side] * 1000 / events
                net = probe_cpu[side]
                if idle_cpu:
                    net -= idle_cpu[side] / idle_cpu["seconds"] * probe_cpu["seconds"]
                row[f"cpu_ms_per_1k_events_{side}"] = net * 1000 / events
            if idle_cpu:
                row[f"idle_cpu_ms_per_s_{side}"] = idle_cpu[side] / idle_cpu["seconds"]
        rows.append(row)
    floor_row = next((r for r in rows if r["peer"] == "raw-udp"), None)
    floor_cpu = sum(v for k, v in (floor_row or {}).items() if k.startswith("cpu_ms_per_1k_events_"))
    for row in rows:
        mine = sum(v for k, v in row.items() if k.startswith("cpu_ms_per_1k_events_"))
        if floor_cpu > 0 and mine and row is not floor_row:
            row["cpu_vs_floor"] = mine / floor_cpu
    return {"scenario": scenario, "peers": rows}


def table(report: dict) -> str:
    def fmt(value, spec):
        return format(value, spec) if value is not None else format("-", ">" + spec.split(".")[0])

    lines = []
    for scenario in report["scenarios"]:
        if scenario["scenario"] == "soak":
            lines.append(soak_table(scenario["soak"]) if scenario.get("soak") else
                         f"scenario soak: {scenario.get('note', 'not run')}\n")
            continue
        header = (f"{'peer':<16} {'kind':<4} {'probes':>6} {'lost':>4} {'p50 us':>8} {'p99 us':>8} {'max us':>8} "
                  f"{'p50/fl':>6} {'p99/fl':>6} {'cpu ms/1k client':>16} {'host':>6} {'/fl':>5} "
                  f"{'idle ms/s client':>16} {'host':>6} {'1kHz in/s':>9} {'out/s':>6} {'p99 us':>8}")
        lines += [f"scenario {scenario['scenario']}", header, "-" * len(header)]
        for r in scenario["peers"]:
            def side(prefix):
                client = r.get(f"{prefix}_client", r.get(f"{prefix}_local"))
                return fmt(client, "16.1f" if "cpu" in prefix and "idle" not in prefix else "16.2f"), \
                    fmt(r.get(f"{prefix}_host"), "6.1f" if "idle" not in prefix else "6.2f")
            cpu_client, cpu_host = side("cpu_ms_per_1k_events")
            idle_client, idle_host = side("idle_cpu_ms_per_s")
            stream = r.get("stream") or {}
            first = True
            for kind in ("axis", "tap"):
                figures = r.get(kind)
                if not figures:
                    continue
                lines.append(
                    f"{r['peer'] if first else '':<16} {kind:<4} {figures['probes']:>6} {figures['lost']:>4} "
                    f"{fmt(figures.get('p50_us'), '8.0f')} {fmt(figures.get('p99_us'), '8.0f')} "
                    f"{fmt(figures.get('max_us'), '8.0f')} {fmt(figures.get('p50_vs_floor'), '6.2f')} "
                    f"{fmt(figures.get('p99_vs_floor'), '6.2f')} "
                    + (f"{cpu_client} {cpu_host} {fmt(r.get('cpu_vs_floor'), '5.2f')} {idle_client} {idle_host} "
                       f"{fmt(stream.get('written_per_s'), '9.0f')} {fmt(stream.get('carried_per_s'), '6.0f')} "
                       f"{fmt(stream.get('p99_us'), '8.0f')}" if first else ""))
                first = False
            if r["note"]:
                lines.append(f"{'':<16} note: {r['note']}")
            shares = {side[len("cpu_user_share_"):]: value for side, value in r.items()
                      if side.startswith("cpu_user_share_")}
            if shares:
                lines.append(f"{'':<16} probe-phase CPU in user space: "
                             + ", ".join(f"{side} {share:.0%}" for side, share in sorted(shares.items())))
            for phase, figures in ((r.get("counts") or {}).items()):
                if not figures:
                    continue
                if phase == "idle_per_s":
                    for side, idle in figures.items():
                        lines.append(f"{'':<16} idle {side}: {idle['wakeups_per_s']} wake-ups/s, "
                                     f"{idle['datagrams_sent_per_s']} datagrams/s sent; {idle['calls_per_s']}")
                    continue
                for side in [key for key in figures if key != "frames"]:
                    f = figures[side]
                    lines.append(f"{'':<16} {phase} ({figures['frames']} frames) {side}: {f['total_per_frame']} calls/frame "
                                 f"(sent {f['datagrams_sent_per_frame']}, received {f['datagrams_received_per_frame']}, "
                                 f"waits {f['waits_per_frame']}): {f['calls_per_frame']}")
        lines.append("")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------------------


def run_soak(args) -> dict:
    """One padbridge client at 1 kHz for --soak-minutes over loopback (the other peers sit this one out)."""
    peer = Peer("padbridge", 0, os.path.join(args.log_dir, "soak"))
    os.makedirs(peer.log_dir, exist_ok=True)
    starter = PeerStarter(args, loopback_network(), "/tmp/padbridge-bench-forward-soak")
    try:
        peer.source = starter.source_for(peer)
        start_and_warm_up([peer], starter)
        if not peer.active:
            return {"scenario": "soak", "note": peer.note}
        return {"scenario": "soak", "soak": measure_soak(peer, args.soak_minutes, args.raw_udp_forwarder)}
    finally:
        starter.stop(peer)


def run_scenario(args, scenario: str) -> dict:
    if scenario == "soak":
        return run_soak(args)
    network = loopback_network() if scenario == "loopback" else lossy_network()
    names = [p for p in args.peers if not (scenario == "lossy" and p == "remap")]
    peers = [Peer(name, index, os.path.join(args.log_dir, scenario)) for index, name in enumerate(names)]
    os.makedirs(os.path.join(args.log_dir, scenario), exist_ok=True)
    starter = PeerStarter(args, network, f"/tmp/padbridge-bench-forward-{scenario}")
    try:
        for peer in peers:
            try:
                peer.source = starter.source_for(peer)
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
                peer.skip(f"no source: {error}")
        log(f"{scenario}: starting {', '.join(p.name for p in peers if p.active)}")
        start_and_warm_up([p for p in peers if p.active], starter)
        ready = [p for p in peers if p.active]
        if scenario == "loopback":
            kinds, rounds, per_round, deadline = ["axis"], args.rounds, args.probes_per_round, 2.0
        else:
            kinds, rounds, per_round, deadline = ["axis", "tap"], 1, args.lossy_probes, 2.0
        log(f"{scenario}: measuring {', '.join(p.name for p in ready)}: {rounds} x {per_round} probes, interleaved")
        callgrind_control(ready, "--zero", args.callgrind_window)
        measure(ready, rounds, per_round, kinds, deadline, args.probe_gap_ms / 1000)
        callgrind_control(ready, "--dump=probes", args.callgrind_window)
        ready = [p for p in ready if p.active]
        log(f"{scenario}: idle window {args.idle_seconds:.0f} s")
        measure_idle(ready, args.idle_seconds)
        for peer in ready:
            measure_stream(peer, args.stream_seconds, args.raw_udp_forwarder)
        if scenario == "loopback" and args.count_frames:
            for peer in ready:
                if peer.name != "usbip":  # its work is the kernel's, not a process's
                    measure_counts(peer, args.raw_udp_forwarder, args.count_frames, 1000, args.idle_seconds)
    finally:
        for peer in peers:
            starter.stop(peer)
        if scenario == "lossy":
            remove_namespaces()
    return results_for(peers, scenario)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers", default=None, help="default: all (padbridge-before with --padbridge-before)")
    parser.add_argument("--padbridge-before", default=None,
                        help="another padbridge binary measured as the peer padbridge-before (a baseline)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help=f"of {SCENARIOS + EXTRA_SCENARIOS}; soak only when named")
    parser.add_argument("--soak-minutes", type=int, default=10, help="the soak scenario's length")
    parser.add_argument("--padbridge", required=True)
    parser.add_argument("--raw-udp-forwarder", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--probes-per-round", type=int, default=300)
    parser.add_argument("--lossy-probes", type=int, default=400, help="probes per peer in the lossy scenario "
                        "(every other one a button edge: 400 probes are 100 taps' presses and releases + 200 axis)")
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--probe-gap-ms", type=float, default=2.0,
                        help="quiet after each probe, before the next peer's (its tail must not land on the next)")
    parser.add_argument("--stream-seconds", type=float, default=3.0)
    parser.add_argument("--count-frames", type=int, default=100,
                        help="isolated changes with system calls counted (loopback; 0: no counting)")
    parser.add_argument("--callgrind-window", action="store_true",
                        help="the peers run under callgrind: zero its counters before the probes, dump them after")
    parser.add_argument("--json")
    parser.add_argument("--log-dir", default="/tmp")
    args = parser.parse_args(argv)
    if args.peers is None:
        args.peers = ",".join(p for p in PEER_ORDER if p != "padbridge-before" or args.padbridge_before)
    args.peers = [p for p in args.peers.split(",") if p]
    if "padbridge-before" in args.peers and not args.padbridge_before:
        parser.error("the peer padbridge-before needs --padbridge-before PATH")
    args.scenarios = [s for s in args.scenarios.split(",") if s]
    bad = [p for p in args.peers if p not in PEER_ORDER] + [s for s in args.scenarios if s not in SCENARIOS + EXTRA_SCENARIOS]
    if bad or not args.peers or not args.scenarios:
        parser.error(f"unknown peers or scenarios {bad}; peers: {PEER_ORDER}, scenarios: {SCENARIOS + EXTRA_SCENARIOS}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    report = {"kernel": os.uname().release, "cpus": os.cpu_count(), "netem_each_way": " ".join(NETEM),
              "rounds": args.rounds, "probes_per_round": args.probes_per_round, "lossy_probes": args.lossy_probes,
              "idle_seconds": args.idle_seconds, "stream_seconds": args.stream_seconds,
              "soak_minutes": args.soak_minutes, "scenarios": []}
    for scenario in args.scenarios:
        report["scenarios"].append(run_scenario(args, scenario))
    print(table(report), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

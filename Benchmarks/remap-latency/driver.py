"""Side-by-side latency and CPU benchmark of gamepad forwarders (runs as root inside the benchmark VM).

Every peer gets its own uinput source pad (Xbox 360-like capabilities, sticks without fuzz, a distinct `phys`),
is started on it, and creates its own output device. The driver then measures, for all peers in one run with
their probes interleaved (A, B, C, D, A, B, ...), so every peer sees the same emulated-CPU conditions:

- added latency: one probe is an ABS_X value plus SYN_REPORT written to the peer's source in one write(2);
  CLOCK_MONOTONIC is read just before the write; the latency is the kernel timestamp of the matching ABS_X
  event on the peer's output node (the reader's clock set to CLOCK_MONOTONIC with EVIOCSCLOCKID) minus that.
  `padbridge-keys` (padbridge remap onto its virtual keyboard, `--as none`) is probed with a button instead: BTN_A
  pressed or released, timed to the KEY_SPACE press or release on the virtual keyboard; beside `padbridge`'s axis,
  the same path through remap to another device. One probe is in flight at a time. p50 and p99 (nearest rank) over all probes of the peer.
- CPU per 1,000 events: the peer process's utime+stime (/proc/PID/stat, all threads, clock ticks) and its
  on-CPU time (/proc/PID/task/*/schedstat, nanoseconds) over the probe phase, divided by probes / 1,000.
  One "event" is one probe: an axis change and its SYN_REPORT.
- idle CPU: the same counters over a quiet window with no probes, in ms of CPU per second.
- time to first event: from the peer's start to the kernel timestamp of the first event it forwarded. A peer is
  ready when its first event comes through, not when its device node appears (xboxdrv forwards nothing for about
  60 s after start): a warm-up loop sends a probe every 500 ms (every 50 ms in the first 2 s after the node
  appears) until one arrives, bounded at 120 s.

How a peer's output node is found: peers are started one at a time; after starting one, the driver waits for an
input device that did not exist before that start and has the name the peer is known to create ("Microsoft X-Box
360 pad" for xboxdrv and padbridge, which is why name alone is not enough and creation order decides). A peer
that exits, or makes no node within its deadline, is skipped with a note; the others are still measured.

Usage (see scripts/bench-remap, which boots the VM and passes these):
  driver.py --raw-forwarder PATH [--padbridge PATH] [--peers padbridge,padbridge-keys,xboxdrv,python,raw]
            [--rounds 3] [--probes-per-round 700] [--idle-seconds 5] [--json results.json]
Exit status: 0 when the benchmark ran (even if some peers were skipped), 1 when the harness itself failed.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import select
import signal
import struct
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

import evdev
from evdev import AbsInfo, ecodes as e

HERE = os.path.dirname(os.path.abspath(__file__))

XBOX360_NAME = "Microsoft X-Box 360 pad"
RAW_NAME = "padbridge-bench raw forwarder"
PYTHON_NAME = "padbridge-bench python forwarder"

# xboxdrv's command line for an evdev source, as docs/kernel-bench.md gives it.
XBOXDRV_ARGS = [
    "--evdev-absmap", "ABS_X=x1,ABS_Y=y1,ABS_RX=x2,ABS_RY=y2,ABS_Z=lt,ABS_RZ=rt,ABS_HAT0X=dpad_x,ABS_HAT0Y=dpad_y",
    "--evdev-keymap", "BTN_A=a,BTN_B=b,BTN_X=x,BTN_Y=y,BTN_TL=lb,BTN_TR=rb,BTN_SELECT=back,BTN_START=start,"
                      "BTN_MODE=guide,BTN_THUMBL=tl,BTN_THUMBR=tr",
    "--mimic-xpad", "--silent", "--dbus", "disabled",
]

PEER_ORDER = ["padbridge", "padbridge-keys", "xboxdrv", "python", "raw", "raw-keys"]
# Each peer starts once the peers before it are ready, so that no peer's start-up competes with another's. Idle
# peers use no CPU, except xboxdrv (about 45 ms/s, and its ~60 s of silence after start), which therefore comes last.
START_ORDER = ["padbridge", "padbridge-keys", "raw", "raw-keys", "python", "xboxdrv"]
RAW_KEYS_NAME = "padbridge-bench raw key forwarder"
# padbridge-keys: `padbridge remap --as none` with this profile; its probes are BTN_A, timed to KEY_SPACE.
KEYS_PROFILE = '[map]\na = "key:space"\n'

EVENT = struct.Struct("llHHi")  # struct input_event on 64-bit Linux: tv_sec, tv_usec, type, code, value
EVIOCSCLOCKID = 0x400445A0  # _IOW('E', 0xa0, int)
CLOCK_MONOTONIC = time.CLOCK_MONOTONIC
CLK_TCK = os.sysconf("SC_CLK_TCK")

NODE_DEADLINE = 60.0      # start -> output node (python-evdev alone can take 36 s to import under emulation)
READY_DEADLINE = 120.0    # start -> first event through
WARMUP_INTERVAL = 0.5     # one warm-up probe per not-yet-ready peer every 500 ms ...
WARMUP_EAGER = (0.05, 2.0)  # ... but every 50 ms in the first 2 s after its node appears, so that time to first
                            # event is known to 50 ms where it matters (padbridge's goal is under 1 s)
PROBE_DEADLINE = 2.0      # one probe's event must come through within this, else it counts as lost
MAX_LOST_IN_A_ROW = 20    # then the peer is dropped from the run with a note
# A stick value differs from the previous one by this much: > 32, so a reader-side fuzz of 16 (xpad's, which
# xboxdrv --mimic-xpad and padbridge declare) neither drops nor averages it.
PROBE_STEP = 97
PROBE_SPAN = 64000
VALUE_TOLERANCE = 4       # a peer that rescales the stick may round; probes are PROBE_STEP apart


def now_ns() -> int:
    return time.clock_gettime_ns(CLOCK_MONOTONIC)


def source_capabilities():
    """Xbox 360-like: xpad's keys and axes, sticks without fuzz or flat (so the source never filters a probe)."""
    stick = AbsInfo(value=0, min=-32768, max=32767, fuzz=0, flat=0, resolution=0)
    trigger = AbsInfo(value=0, min=0, max=255, fuzz=0, flat=0, resolution=0)
    hat = AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
    keys = [e.BTN_A, e.BTN_B, e.BTN_X, e.BTN_Y, e.BTN_TL, e.BTN_TR, e.BTN_SELECT, e.BTN_START, e.BTN_MODE,
            e.BTN_THUMBL, e.BTN_THUMBR]
    axes = [(e.ABS_X, stick), (e.ABS_Y, stick), (e.ABS_RX, stick), (e.ABS_RY, stick), (e.ABS_Z, trigger),
            (e.ABS_RZ, trigger), (e.ABS_HAT0X, hat), (e.ABS_HAT0Y, hat)]
    return {e.EV_KEY: keys, e.EV_ABS: axes}


# ----------------------------------------------------------------------------------------------------------------
# Input devices as sysfs shows them


def input_devices() -> dict[str, dict]:
    """event node path -> {name, phys} for every evdev node there is now."""
    devices = {}
    for entry in os.listdir("/sys/class/input"):
        if not entry.startswith("event"):
            continue
        base = f"/sys/class/input/{entry}/device"
        try:
            with open(f"{base}/name") as f:
                name = f.read().strip()
            with open(f"{base}/phys") as f:
                phys = f.read().strip()
        except OSError:
            continue  # vanished meanwhile
        devices[f"/dev/input/{entry}"] = {"name": name, "phys": phys}
    return devices


class NodeWatch:
    """Wakes up when /dev/input changes (inotify), so finding a new node costs no polling interval."""

    IN_CREATE, IN_ATTRIB = 0x100, 0x4

    def __init__(self):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0 or libc.inotify_add_watch(self.fd, b"/dev/input", self.IN_CREATE | self.IN_ATTRIB) < 0:
            raise OSError(ctypes.get_errno(), "inotify on /dev/input")

    def drain(self):
        try:
            while os.read(self.fd, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self):
        os.close(self.fd)


# ----------------------------------------------------------------------------------------------------------------
# Peers


@dataclass
class Peer:
    name: str
    argv_template: list[str]   # "{source}" is replaced by the source's event node
    output_name: str
    index: int
    log_path: str
    source: Optional[evdev.UInput] = None
    source_node: str = ""
    proc: Optional[subprocess.Popen] = None
    started_ns: int = 0
    output_node: str = ""
    output_fd: int = -1
    node_after_s: Optional[float] = None
    first_event_after_s: Optional[float] = None
    # The same two figures for a second start, once the peer's files are in the page cache (--restart).
    restart_node_after_s: Optional[float] = None
    restart_first_event_after_s: Optional[float] = None
    note: str = ""
    next_value_index: int = 0
    last_warmup_ns: int = 0
    latencies_ns: list[int] = field(default_factory=list)
    per_round: list[list[int]] = field(default_factory=list)
    lost: int = 0
    lost_in_a_row: int = 0
    cpu: dict = field(default_factory=dict)
    # "axis": ABS_X values in, ABS_X out; "key": BTN_A presses and releases in, KEY_SPACE out.
    probe: str = "axis"

    @property
    def active(self) -> bool:
        return not self.note

    @property
    def ready(self) -> bool:
        return self.first_event_after_s is not None

    def skip(self, note: str):
        if not self.note:
            self.note = note
            print(f"driver: {self.name}: skipped: {note}", flush=True)

    # -- source --------------------------------------------------------------------------------------------------

    def create_source(self):
        self.source = evdev.UInput(
            source_capabilities(), name=f"padbridge-bench source {self.index} ({self.name})",
            vendor=0x1209, product=0x0B00 + self.index, version=1, bustype=e.BUS_USB,
            phys=f"padbridge-bench/source-{self.index}")
        self.source_node = self.source.device.path

    def next_value(self) -> int:
        """Axis probes: consecutive values differ by PROBE_STEP (or by PROBE_SPAN - PROBE_STEP at the wrap), never by
        <= 32. Key probes: press, release, press, ..."""
        if self.probe == "key":
            value = 1 - self.next_value_index % 2
        else:
            value = -PROBE_SPAN // 2 + (self.next_value_index * PROBE_STEP) % PROBE_SPAN
        self.next_value_index += 1
        return value

    def is_probe_output(self, type_: int, code: int) -> bool:
        return (type_, code) == ((e.EV_KEY, e.KEY_SPACE) if self.probe == "key" else (e.EV_ABS, e.ABS_X))

    def matches_probe(self, type_: int, code: int, got: int, value: int) -> bool:
        if not self.is_probe_output(type_, code):
            return False
        return got == value if self.probe == "key" else abs(got - value) <= VALUE_TOLERANCE

    def write_probe(self, value: int) -> int:
        """Writes ABS_X=value (or BTN_A=value) + SYN_REPORT in one write(2); returns CLOCK_MONOTONIC (ns) just before
        it."""
        type_, code = (e.EV_KEY, e.BTN_A) if self.probe == "key" else (e.EV_ABS, e.ABS_X)
        data = EVENT.pack(0, 0, type_, code, value) + EVENT.pack(0, 0, e.EV_SYN, e.SYN_REPORT, 0)
        t0 = now_ns()
        os.write(self.source.fd, data)
        return t0

    # -- process -------------------------------------------------------------------------------------------------

    def start(self):
        argv = [arg.replace("{source}", self.source_node) for arg in self.argv_template]
        print(f"driver: {self.name}: starting {' '.join(argv)}", flush=True)
        self.started_ns = now_ns()
        try:
            with open(self.log_path, "wb") as log:  # a file, not a pipe: a chatty peer never blocks on it
                # stdin is a pipe held open for the peer's life: `padbridge remap` ends at end of input.
                self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                             start_new_session=True)
        except OSError as error:
            self.skip(f"could not start {argv[0]}: {error}")

    def exited(self) -> Optional[str]:
        if self.proc is None or self.proc.poll() is None:
            return None
        with open(self.log_path, "rb") as log:
            lines = log.read().decode(errors="replace").strip().splitlines()
        tail = " | ".join(lines[-3:]) if lines else "no output"
        return f"exited with status {self.proc.returncode}: {tail}"

    def open_output(self, node: str):
        self.output_node = node
        self.output_fd = os.open(node, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        fcntl.ioctl(self.output_fd, EVIOCSCLOCKID, struct.pack("i", CLOCK_MONOTONIC))
        self.node_after_s = (now_ns() - self.started_ns) / 1e9
        print(f"driver: {self.name}: output node {node} after {self.node_after_s:.2f} s", flush=True)

    def read_output(self) -> list[tuple[int, int, int, int]]:
        """Every event queued on the output node now: (timestamp ns, type, code, value)."""
        events = []
        while True:
            try:
                data = os.read(self.output_fd, EVENT.size * 64)
            except BlockingIOError:
                return events
            for sec, usec, type_, code, value in EVENT.iter_unpack(data):
                events.append((sec * 1_000_000_000 + usec * 1000, type_, code, value))

    def cpu_sample(self) -> dict:
        """utime+stime (all threads, ms at clock-tick resolution) and schedstat on-CPU time (ns) of the process."""
        pid = self.proc.pid
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after "pid (comm)"
        on_cpu_ns = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    on_cpu_ns += int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                pass  # thread gone meanwhile
        return {"stat_ms": ticks * 1000 / CLK_TCK, "schedstat_ns": on_cpu_ns, "at_ns": now_ns()}

    def stop_process(self):
        if self.output_fd >= 0:
            os.close(self.output_fd)
            self.output_fd = -1
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def restart(self):
        """Stops the peer and readies it for a second start: the first start's figures move to restart_*'s
        counterparts only after that start (see main)."""
        self.stop_process()
        self.output_node, self.node_after_s, self.first_event_after_s = "", None, None

    def stop(self):
        self.stop_process()
        if self.source:
            self.source.close()
            self.source = None


def build_peers(args) -> list[Peer]:
    commands = {
        "padbridge": ([args.padbridge, "remap", "{source}", "--as", "xbox360"], XBOX360_NAME),
        "padbridge-keys": ([args.padbridge, "remap", "{source}", "--as", "none", "--profile",
                            os.path.join(args.log_dir, "keys.toml")], "padbridge virtual keyboard"),
        "xboxdrv": ([args.xboxdrv, "--evdev", "{source}", *XBOXDRV_ARGS], XBOX360_NAME),
        "python": ([sys.executable, os.path.join(HERE, "python_forwarder.py"), "{source}", PYTHON_NAME], PYTHON_NAME),
        "raw": ([args.raw_forwarder, "{source}", RAW_NAME], RAW_NAME),
        # The floor of the key path: the same forwarder onto a keyboard (BTN_SOUTH as KEY_SPACE).
        "raw-keys": ([args.raw_forwarder, "{source}", RAW_KEYS_NAME, "--keys"], RAW_KEYS_NAME),
    }
    peers = []
    for index, name in enumerate(args.peers):
        argv, output_name = commands[name]
        peers.append(Peer(name, argv, output_name, index, os.path.join(args.log_dir, f"{name}.log"),
                          probe="key" if name in ("padbridge-keys", "raw-keys") else "axis"))
    if "padbridge-keys" in args.peers:
        with open(os.path.join(args.log_dir, "keys.toml"), "w") as profile:
            profile.write(KEYS_PROFILE)
    return peers


# ----------------------------------------------------------------------------------------------------------------
# Phases


def start_and_warm_up(peers: list[Peer]):
    """Starts the peers one at a time, each once those before it are ready (its output node found by creation
    order + name), and meanwhile sends warm-up probes
    every WARMUP_INTERVAL to every peer whose node is there but who has forwarded nothing yet. Returns when
    every peer is ready or skipped."""
    watch = NodeWatch()
    pending = sorted(peers, key=lambda p: START_ORDER.index(p.name))
    starting: Optional[Peer] = None
    known: set[str] = set()

    def interval_ns(peer: Peer) -> int:
        eager_interval, eager_window = WARMUP_EAGER
        found_ns = peer.started_ns + int(peer.node_after_s * 1e9)
        return int((eager_interval if now_ns() - found_ns < eager_window * 1e9 else WARMUP_INTERVAL) * 1e9)
    try:
        while True:
            started_not_ready = any(p.active and p.output_fd >= 0 and not p.ready for p in peers)
            if starting is None and pending and not started_not_ready:
                starting = pending.pop(0)
                udev_settle()
                known = set(input_devices())
                watch.drain()
                starting.start()
                if not starting.active:
                    starting = None
                    continue
            if starting is not None:
                new = [node for node, info in sorted(input_devices().items(), key=lambda kv: node_number(kv[0]))
                       if node not in known and info["name"] == starting.output_name]
                if new:
                    starting.open_output(new[0])
                    starting = None
                    continue
                reason = starting.exited()
                if reason:
                    starting.skip(f"{reason} (before its output device appeared)")
                    starting = None
                    continue
                if now_ns() - starting.started_ns > NODE_DEADLINE * 1e9:
                    starting.skip(f"no '{starting.output_name}' device within {NODE_DEADLINE:.0f} s of start")
                    starting = None
                    continue

            warming = [p for p in peers if p.active and p.output_fd >= 0 and not p.ready]
            for peer in warming:
                reason = peer.exited()
                if reason:
                    peer.skip(f"{reason} (before its first event came through)")
                elif now_ns() - peer.started_ns > READY_DEADLINE * 1e9:
                    peer.skip(f"nothing came through within {READY_DEADLINE:.0f} s of start")
                elif now_ns() - peer.last_warmup_ns >= interval_ns(peer):
                    peer.write_probe(peer.next_value())
                    peer.last_warmup_ns = now_ns()
            warming = [p for p in warming if p.active]
            if starting is None and not pending and not warming:
                return

            due = min((p.last_warmup_ns + interval_ns(p) for p in warming), default=now_ns() + 250_000_000)
            timeout_ms = max(0, min(250, (due - now_ns()) // 1_000_000 + 1))
            fds = [p.output_fd for p in warming] + ([watch.fd] if starting else [])
            readable, _, _ = select.select(fds, [], [], timeout_ms / 1000)
            if watch.fd in readable:
                watch.drain()
            for peer in warming:
                if peer.output_fd not in readable:
                    continue
                for stamp, type_, code, _ in peer.read_output():
                    if peer.is_probe_output(type_, code) and not peer.ready:
                        peer.first_event_after_s = (stamp - peer.started_ns) / 1e9
                        print(f"driver: {peer.name}: first event through {peer.first_event_after_s:.2f} s after "
                              f"start", flush=True)
    finally:
        watch.close()


def udev_settle():
    """Waits until udevd has handled every event so far (the previous peer's new device, the last one's removal),
    so that a peer's start-up does not share the CPUs with udev's rules. Nothing to wait for without udevd."""
    if shutil.which("udevadm"):
        subprocess.run(["udevadm", "settle", "--timeout=30"], check=False)


def node_number(path: str) -> int:
    return int(path.rsplit("event", 1)[1])


def settle(peers: list[Peer], quiet_s: float = 1.0):
    """Lets every peer forward what it still holds (xboxdrv flushes the warm-up probes it sat on), discarding it,
    until no output has come for quiet_s."""
    fds = [p.output_fd for p in peers]
    while fds:
        readable, _, _ = select.select(fds, [], [], quiet_s)
        if not readable:
            return
        for peer in peers:
            if peer.output_fd in readable:
                peer.read_output()


def probe_once(peer: Peer) -> Optional[int]:
    """One probe; returns its added latency in ns, or None when it did not come through within PROBE_DEADLINE."""
    value = peer.next_value()
    t0 = peer.write_probe(value)
    deadline = t0 + int(PROBE_DEADLINE * 1e9)
    while True:
        remaining = (deadline - now_ns()) / 1e9
        if remaining <= 0:
            return None
        readable, _, _ = select.select([peer.output_fd], [], [], remaining)
        if not readable:
            return None
        for stamp, type_, code, got in peer.read_output():
            if peer.matches_probe(type_, code, got, value):
                return stamp - t0


def measure(peers: list[Peer], rounds: int, per_round: int):
    for peer in peers:
        peer.cpu["probe_start"] = peer.cpu_sample()
    for round_index in range(rounds):
        for peer in peers:
            peer.per_round.append([])
        started = time.monotonic()
        for _ in range(per_round):
            for peer in peers:
                if not peer.active:
                    continue
                latency = probe_once(peer)
                if latency is None:
                    peer.lost += 1
                    peer.lost_in_a_row += 1
                    if peer.lost_in_a_row >= MAX_LOST_IN_A_ROW:
                        peer.skip(f"{MAX_LOST_IN_A_ROW} probes in a row did not come through "
                                  f"({peer.exited() or 'still running'})")
                    continue
                peer.lost_in_a_row = 0
                peer.latencies_ns.append(latency)
                peer.per_round[-1].append(latency)
        summary = ", ".join(f"{p.name} p50 {percentile(p.per_round[-1], 50) / 1000:.0f} us"
                            for p in peers if p.per_round[-1])
        print(f"driver: round {round_index + 1}/{rounds} ({time.monotonic() - started:.1f} s): {summary}", flush=True)
    for peer in peers:
        if peer.proc.poll() is None:
            peer.cpu["probe_end"] = peer.cpu_sample()


def measure_idle(peers: list[Peer], seconds: float):
    settle(peers, 0.5)
    for peer in peers:
        peer.cpu["idle_start"] = peer.cpu_sample()
    time.sleep(seconds)  # the quiet window itself: nothing is written, nothing is read
    for peer in peers:
        if peer.proc.poll() is None:
            peer.cpu["idle_end"] = peer.cpu_sample()


# ----------------------------------------------------------------------------------------------------------------
# Results


def percentile(values: list[int], p: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def cpu_delta(peer: Peer, start: str, end: str) -> Optional[dict]:
    a, b = peer.cpu.get(start), peer.cpu.get(end)
    if not a or not b:
        return None
    return {"stat_ms": b["stat_ms"] - a["stat_ms"], "schedstat_ms": (b["schedstat_ns"] - a["schedstat_ns"]) / 1e6,
            "seconds": (b["at_ns"] - a["at_ns"]) / 1e9}


def results(peers: list[Peer], args) -> dict:
    rows = []
    for peer in sorted(peers, key=lambda p: PEER_ORDER.index(p.name)):
        # Each probe kind against its own floor: key probes against raw-keys (the kernel's keyboard handling, the
        # console's included, is in both), axis probes against raw.
        floor = "raw-keys" if peer.probe == "key" else "raw"
        raw = next((p for p in peers if p.name == floor and p.latencies_ns), None)
        row = {"peer": peer.name, "command": [a.replace("{source}", peer.source_node) for a in peer.argv_template],
               "note": peer.note or None, "output_node": peer.output_node or None,
               "node_after_s": peer.node_after_s, "first_event_after_s": peer.first_event_after_s,
               "restart_node_after_s": peer.restart_node_after_s,
               "restart_first_event_after_s": peer.restart_first_event_after_s,
               "probes": len(peer.latencies_ns), "lost": peer.lost}
        if peer.latencies_ns:
            row["p50_us"] = percentile(peer.latencies_ns, 50) / 1000
            row["p99_us"] = percentile(peer.latencies_ns, 99) / 1000
            row["per_round_p50_us"] = [percentile(r, 50) / 1000 for r in peer.per_round if r]
            row["per_round_p99_us"] = [percentile(r, 99) / 1000 for r in peer.per_round if r]
            if raw:
                row["p50_vs_raw"] = row["p50_us"] / (percentile(raw.latencies_ns, 50) / 1000)
                row["p99_vs_raw"] = row["p99_us"] / (percentile(raw.latencies_ns, 99) / 1000)
        probe_cpu = cpu_delta(peer, "probe_start", "probe_end")
        if probe_cpu and peer.latencies_ns:
            per_k = 1000 / (len(peer.latencies_ns) + peer.lost)
            row["cpu_ms_per_1k_events"] = probe_cpu["stat_ms"] * per_k
            row["cpu_ms_per_1k_events_schedstat"] = probe_cpu["schedstat_ms"] * per_k
            row["probe_phase_s"] = probe_cpu["seconds"]
        idle_cpu = cpu_delta(peer, "idle_start", "idle_end")
        if idle_cpu:
            row["idle_cpu_ms_per_s"] = idle_cpu["stat_ms"] / idle_cpu["seconds"]
            row["idle_cpu_ms_per_s_schedstat"] = idle_cpu["schedstat_ms"] / idle_cpu["seconds"]
            if "cpu_ms_per_1k_events_schedstat" in row:
                # What forwarding itself costs: the probe phase's CPU less what the peer burns anyway when idle.
                row["cpu_ms_per_1k_events_net_of_idle_schedstat"] = (
                    probe_cpu["schedstat_ms"] - row["idle_cpu_ms_per_s_schedstat"] * probe_cpu["seconds"]) * per_k
        rows.append(row)
    return {
        "kernel": os.uname().release, "cpus": os.cpu_count(), "clk_tck": CLK_TCK,
        "rounds": args.rounds, "probes_per_round": args.probes_per_round, "idle_seconds": args.idle_seconds,
        "peers": rows,
    }


def table(report: dict) -> str:
    def fmt(value, spec):
        return format(value, spec) if value is not None else format("-", ">" + spec.split(".")[0])

    header = (f"{'peer':<10} {'probes':>6} {'lost':>4} {'p50 us':>8} {'p99 us':>8} {'p50/raw':>7} {'p99/raw':>7} "
              f"{'cpu ms/1k ev':>12} {'(schedstat)':>11} {'idle ms/s':>9} {'(schedstat)':>11} "
              f"{'node s':>6} {'1st ev s':>8} {'restart: node s':>15} {'1st ev s':>8}")
    lines = [header, "-" * len(header)]
    for r in report["peers"]:
        lines.append(
            f"{r['peer']:<10} {r['probes']:>6} {r['lost']:>4} {fmt(r.get('p50_us'), '8.0f')} "
            f"{fmt(r.get('p99_us'), '8.0f')} {fmt(r.get('p50_vs_raw'), '7.2f')} {fmt(r.get('p99_vs_raw'), '7.2f')} "
            f"{fmt(r.get('cpu_ms_per_1k_events'), '12.1f')} {fmt(r.get('cpu_ms_per_1k_events_schedstat'), '11.1f')} "
            f"{fmt(r.get('idle_cpu_ms_per_s'), '9.2f')} {fmt(r.get('idle_cpu_ms_per_s_schedstat'), '11.3f')} "
            f"{fmt(r.get('node_after_s'), '6.2f')} {fmt(r.get('first_event_after_s'), '8.2f')} "
            f"{fmt(r.get('restart_node_after_s'), '15.2f')} {fmt(r.get('restart_first_event_after_s'), '8.2f')}")
        if r["note"]:
            lines.append(f"{'':<10} note: {r['note']}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers", default=",".join(PEER_ORDER),
                        help=f"comma-separated subset of {','.join(PEER_ORDER)} (default: all)")
    parser.add_argument("--padbridge", default="padbridge", help="the padbridge binary (for `padbridge remap`)")
    parser.add_argument("--xboxdrv", default="xboxdrv", help="the xboxdrv binary")
    parser.add_argument("--raw-forwarder", default="raw-forwarder", help="raw_forwarder.c, compiled")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--probes-per-round", type=int, default=700,
                        help="probes per peer per round (default 700: 2,100 per peer over 3 rounds)")
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--no-restart", dest="restart", action="store_false",
                        help="skip the second start of each peer (its start-up time with a warm page cache)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--log-dir", default="/tmp", help="each peer's stdout and stderr go to PEER.log here")
    args = parser.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = [p for p in args.peers if p not in PEER_ORDER]
    if unknown or not args.peers:
        parser.error(f"--peers: unknown {unknown}; choose from {PEER_ORDER}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    peers = build_peers(args)
    try:
        for peer in peers:
            peer.create_source()
        print("driver: sources " + ", ".join(f"{p.name} {p.source_node}" for p in peers), flush=True)
        start_and_warm_up(peers)
        ready = [p for p in peers if p.active]
        if ready:
            settle(ready)
            print(f"driver: measuring {', '.join(p.name for p in ready)}: {args.rounds} rounds x "
                  f"{args.probes_per_round} probes each, interleaved", flush=True)
            measure(ready, args.rounds, args.probes_per_round)
            ready = [p for p in ready if p.proc.poll() is None]
            print(f"driver: idle window {args.idle_seconds:.0f} s", flush=True)
            measure_idle(ready, args.idle_seconds)
            if args.restart:
                # A second start of each peer, its files now in the guest's page cache: the first start reads
                # every shared library over the VM's 9p file system, which a machine's own disk does far faster.
                ready = [p for p in ready if p.proc.poll() is None]
                first = {p.name: (p.node_after_s, p.first_event_after_s) for p in ready}
                for peer in ready:
                    peer.restart()
                print(f"driver: restarting {', '.join(p.name for p in ready)} (warm page cache)", flush=True)
                start_and_warm_up(ready)
                for peer in ready:
                    peer.restart_node_after_s, peer.restart_first_event_after_s = (
                        peer.node_after_s, peer.first_event_after_s)
                    peer.node_after_s, peer.first_event_after_s = first[peer.name]
        report = results(peers, args)
    finally:
        for peer in peers:
            peer.stop()
    print(table(report), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Many pads into one host: 4 clients (4 keys, each paired through its own pairing window) forward 2 pads each into
one `padbridge serve`, all streaming at once. Every value each source wrote comes out of its own virtual pad, in
order, none crossed to another pad; a client that leaves and comes back meanwhile resumes its own virtual pads and
disturbs no one else.

Rate: 50 frames a second per pad (400 a second into the host). The issue's 1 kHz per pad (8,000 a second) is beyond
this emulated guest: the forwarding benchmark measures ~0.85 ms of CPU per event on the client side and ~1 ms on the
host's under TCG, so 8 kHz would need some 15 vCPUs. The correctness this test checks (no value lost, none crossed,
a returning client resumed) does not depend on the rate; the cost per event is the benchmark's to measure."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import evdev
from evdev import ecodes

from conftest import DEADLINE, padbridge_binary, read_available
from test_forward import xpad_like_source
from test_pairing import pairing_code

PORT = 48179
CLIENTS, PADS_PER_CLIENT = 4, 2
RATE_HZ = 50
STREAM_SECONDS = 12
VALUES_PER_PAD = 1 << 12  # pad k writes ABS_X values in (k * 4096 - 16384, (k + 1) * 4096 - 16384): crossing shows


def value_range(pad: int) -> range:
    """Pad `pad`'s values: never 0, the axis's resting value (writing the value an axis has is no event)."""
    return range(pad * VALUES_PER_PAD - 16384 + 1, (pad + 1) * VALUES_PER_PAD - 16384)


def pair_client(host_config, client_config, serve, since: int, first: bool) -> None:
    if first:
        code = pairing_code(serve)
    else:
        window = subprocess.run([padbridge_binary(), "pairing-window", "--config-dir", str(host_config)],
                                capture_output=True, text=True, timeout=DEADLINE)
        assert window.returncode == 0, window.stderr
        code = window.stderr.strip().rsplit(" ", 1)[1]
        serve.wait_stderr(lambda line: "asked for by padbridge pairing-window" in line, since=since,
                          what="the window opened on the running host")
    paired = subprocess.run([padbridge_binary(), "pair", f"127.0.0.1:{PORT}", code, "--config-dir", str(client_config),
                             "--name", f"load client {client_config.name}"],
                            capture_output=True, text=True, timeout=DEADLINE)
    assert paired.returncode == 0, paired.stderr


class PadReader(threading.Thread):
    """Reads one virtual pad's ABS_X values as they come (a reader that fell behind would lose events to its own
    buffer, which would say nothing about the link)."""

    def __init__(self, device: evdev.InputDevice):
        super().__init__(daemon=True)
        self.device = device
        self.values: list[int] = []
        self.dropped = False
        self.stop = threading.Event()
        self.changed = threading.Condition()

    def run(self):
        while not self.stop.is_set():
            for event in read_available(self.device, 0.2):
                if event.type == ecodes.EV_SYN and event.code == ecodes.SYN_DROPPED:
                    self.dropped = True
                elif event.type == ecodes.EV_ABS and event.code == ecodes.ABS_X:
                    with self.changed:
                        self.values.append(event.value)
                        self.changed.notify_all()

    def wait_for(self, value: int, timeout: float = DEADLINE) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: value in self.values, timeout)


def test_four_clients_with_two_pads_each_stream_at_once_and_one_comes_back(padbridge, tmp_path):
    host_config = tmp_path / "host"
    serve = padbridge("--listen", f"127.0.0.1:{PORT}", "--config-dir", str(host_config), "--pair", "--linger", "60",
                      command="serve")
    client_configs = [tmp_path / f"client{index}" for index in range(CLIENTS)]
    for index, config in enumerate(client_configs):
        pair_client(host_config, config, serve, len(serve.stderr), first=index == 0)

    sources = [xpad_like_source(f"load source {pad}") for pad in range(CLIENTS * PADS_PER_CLIENT)]
    try:
        def connect(client: int):
            nodes = [sources[client * PADS_PER_CLIENT + j].device.path for j in range(PADS_PER_CLIENT)]
            process = padbridge(f"127.0.0.1:{PORT}", *nodes, "--config-dir", str(client_configs[client]),
                                command="connect")
            process.wait_stderr(lambda line: "connected to" in line, what=f"client {client} connected")
            return process

        mark = len(serve.stderr)
        clients = [connect(index) for index in range(CLIENTS)]
        attached_lines = []
        while len(attached_lines) < CLIENTS * PADS_PER_CLIENT:
            index, line = serve.wait_stderr(lambda line: "pad attached" in line, since=mark,
                                            what=f"pad {len(attached_lines) + 1} of 8 attached")
            attached_lines.append(line)
            mark = index + 1
        virtual_nodes = [json.loads(line[line.index(" as {") + 4:])["eventNodes"][0] for line in attached_lines]
        readers = [PadReader(evdev.InputDevice(node)) for node in virtual_nodes]
        for reader in readers:
            reader.start()

        # Which virtual pad shows which source: each source writes the first value of its own range once.
        shown_by: dict[int, PadReader] = {}
        for pad, source in enumerate(sources):
            source.write(ecodes.EV_ABS, ecodes.ABS_X, value_range(pad)[0])
            source.syn()
        for pad in range(len(sources)):
            first = value_range(pad)[0]
            deadline = time.monotonic() + DEADLINE
            while pad not in shown_by and time.monotonic() < deadline:
                shown_by.update({pad: reader for reader in readers if first in reader.values})
                if pad not in shown_by:
                    time.sleep(0.05)  # polls readers that are themselves waiting on the pads' events
            assert pad in shown_by, f"source {pad}'s first value reached no virtual pad"
        assert len({id(reader) for reader in shown_by.values()}) == len(sources), "two sources share a virtual pad"

        # The stream: every pad a new value each 1/RATE_HZ s, on an absolute schedule; client 3 leaves a third of the
        # way in and comes back at two thirds.
        written: list[list[int]] = [[value_range(pad)[0]] for pad in range(len(sources))]
        leaving = CLIENTS - 1
        frames = RATE_HZ * STREAM_SECONDS
        start = time.monotonic()
        returned_at = None
        for frame in range(1, frames):
            if frame == frames // 3:
                clients[leaving].stop()
            if frame == 2 * frames // 3:
                clients[leaving] = connect(leaving)
                returned_at = frame
            for pad, source in enumerate(sources):
                if pad // PADS_PER_CLIENT == leaving and frames // 3 <= frame < 2 * frames // 3 + RATE_HZ:
                    continue  # its client is away (and reconnecting: a second to be back)
                value = value_range(pad)[frame % len(value_range(pad))]
                source.write(ecodes.EV_ABS, ecodes.ABS_X, value)
                source.syn()
                written[pad].append(value)
            pause = start + frame / RATE_HZ - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # the pace of the writer, not a wait for a result
        assert returned_at is not None

        for pad, reader in enumerate(shown_by[pad] for pad in range(len(sources))):
            assert reader.wait_for(written[pad][-1]), f"pad {pad}: its last value never came out"
        for reader in readers:
            reader.stop.set()
        for pad in range(len(sources)):
            reader = shown_by[pad]
            assert not reader.dropped, f"pad {pad}: its reader fell behind (SYN_DROPPED); nothing is said of the link"
            crossed = [value for value in reader.values if value not in value_range(pad) and value != 0]
            assert not crossed, f"pad {pad} showed another pad's values: {crossed[:5]}"
            own = [value for value in reader.values if value in value_range(pad)]
            missing = [value for value in written[pad] if value not in set(own)]
            if pad // PADS_PER_CLIENT == leaving:
                # What was written while its client was away or reconnecting is sent by the client that comes
                # back only as its current state; everything from then on comes out.
                after = written[pad][written[pad].index(value_range(pad)[(2 * frames // 3 + RATE_HZ) % len(value_range(pad))]):]
                missing = [value for value in after if value not in set(own)]
            assert not missing, f"pad {pad}: {len(missing)} of {len(written[pad])} values never came out: {missing[:5]}"
            in_order = [value for value in own if value in set(written[pad])]
            assert in_order == [value for value in written[pad] if value in set(in_order)], f"pad {pad}: out of order"
        # The client that came back has its own pads back: no new virtual pad was made for it.
        every_node = {json.loads(line[line.index(" as {") + 4:])["eventNodes"][0]
                      for _, line in serve.stderr if "pad attached" in line}
        assert every_node == set(virtual_nodes), f"new virtual pads were made: {every_node - set(virtual_nodes)}"
        print(f"{len(sources)} pads from {CLIENTS} clients at {RATE_HZ} Hz for {STREAM_SECONDS} s: "
              f"{sum(len(w) for w in written)} values written, all out in order, none crossed")
    finally:
        for source in sources:
            source.close()

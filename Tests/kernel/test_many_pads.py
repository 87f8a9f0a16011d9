"""Many pads into one host: 4 clients (4 keys, each paired through its own pairing window) forward 2 pads each into
one `padbridge serve`, all streaming at once. Every value each source wrote comes out of its own virtual pad, in
order, none crossed to another pad; meanwhile one client leaves (its `connect` is stopped) and comes back (a new
`connect`): the others lose nothing and none of them takes the link for lost (but while the machine stopped
running the guest's processes, which the stall witness of conftest.StallWitness shows), and it gets its own virtual pads
back, every value written once it is connected again coming out. The writer keeps its pace meanwhile (another thread
stops and starts the client): a writer that stalled and then caught up would send a burst, and a burst larger than
the host's socket buffer (~270 small datagrams) on this slow guest loses stick values to the kernel, which the link
does not send again (a stick is state: the next value supersedes it; docs/forwarding.md, "The link").

Rate: 20 frames a second per pad (160 a second into the host). The issue's 1 kHz per pad (8,000 a second) is beyond
this emulated guest: the forwarding benchmark measures ~0.85 ms of CPU per event on the client side and ~1 ms on the
host's under TCG, so 8 kHz would need some 15 vCPUs. The correctness this test checks (no value lost, none crossed)
does not depend on the rate; the cost per event is the benchmark's to measure."""

from __future__ import annotations

import signal
import subprocess
import threading
import time

import evdev
from evdev import ecodes

from conftest import DEADLINE, padbridge_binary, pairing_code, read_available, unexplained_link_losses
from forwarding import xpad_like_source

PORT = 48179
CLIENTS, PADS_PER_CLIENT = 4, 2
RATE_HZ = 20
STREAM_SECONDS = 15
# The virtual Xbox 360 pad's axes have xpad's fuzz (16): evdev drops or averages a change smaller than twice that.
# ABS_X carries each pad's own mark (a crossed frame shows another pad's mark); ABS_Y a sequence, 64 apart.
SEQUENCE_STEP = 64


def mark(pad: int) -> int:
    return -27_500 + pad * 7_000  # never 0, the resting value (writing the value an axis has is no event)


def sequence_value(frame: int) -> int:
    return -32_000 + (frame * SEQUENCE_STEP) % 64_000


def pair_client(host_config, client_config, serve, since: int, first: bool) -> None:
    if first:
        code = pairing_code(serve)
    else:
        window = subprocess.run([padbridge_binary(), "pairing-window", "--config-dir", str(host_config)],
                                capture_output=True, text=True, timeout=DEADLINE)
        assert window.returncode == 0, window.stderr
        code = window.stderr.strip().rsplit(" ", 1)[1]
        serve.wait_event("pairingWindowOpen", where=lambda e: e["by"] != "start", since=since,
                         what="the window opened on the running host")
    paired = subprocess.run([padbridge_binary(), "pair", f"127.0.0.1:{PORT}", code, "--config-dir", str(client_config),
                             "--name", f"load client {client_config.name}"],
                            capture_output=True, text=True, timeout=DEADLINE)
    assert paired.returncode == 0, paired.stderr


class PadReader(threading.Thread):
    """Reads one virtual pad as it goes: the marks (ABS_X) and the sequence values (ABS_Y) it showed, in order (a
    reader that fell behind would lose events to its own buffer, which would say nothing about the link)."""

    def __init__(self, device: evdev.InputDevice):
        super().__init__(daemon=True)
        self.device = device
        self.marks: list[int] = []
        self.sequence: list[int] = []
        self.dropped = False
        self.stop = threading.Event()
        self.changed = threading.Condition()

    def run(self):
        while not self.stop.is_set():
            for event in read_available(self.device, 0.2):
                if event.type == ecodes.EV_SYN and event.code == ecodes.SYN_DROPPED:
                    self.dropped = True
                elif event.type == ecodes.EV_ABS and event.code in (ecodes.ABS_X, ecodes.ABS_Y):
                    with self.changed:
                        (self.marks if event.code == ecodes.ABS_X else self.sequence).append(event.value)
                        self.changed.notify_all()

    def wait_for(self, predicate, timeout: float = DEADLINE) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)


def test_four_clients_with_two_pads_each_stream_at_once_and_one_comes_back(padbridge, tmp_path, stall_witness):
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
            process.wait_event("connected", what=f"client {client} connected")
            return process

        since = len(serve.stderr)
        clients = [connect(index) for index in range(CLIENTS)]
        attached_events = []
        while len(attached_events) < CLIENTS * PADS_PER_CLIENT:
            index, event = serve.wait_event("padAttached", since=since,
                                            what=f"pad {len(attached_events) + 1} of 8 attached")
            attached_events.append(event)
            since = index + 1
        virtual_nodes = [event["virtualPad"]["eventNodes"][0] for event in attached_events]
        readers = [PadReader(evdev.InputDevice(node)) for node in virtual_nodes]
        for reader in readers:
            reader.start()

        # Which virtual pad shows which source: each source shows its mark.
        for pad, source in enumerate(sources):
            source.write(ecodes.EV_ABS, ecodes.ABS_X, mark(pad))
            source.syn()
        shown_by: dict[int, PadReader] = {}
        for pad in range(len(sources)):
            for reader in readers:
                if reader.wait_for(lambda: mark(pad) in reader.marks, timeout=0 if pad in shown_by else 0.5):
                    shown_by[pad] = reader
                    break
            if pad not in shown_by:  # one more, longer look at every reader
                for reader in readers:
                    if reader.wait_for(lambda: mark(pad) in reader.marks, timeout=DEADLINE / len(readers)):
                        shown_by[pad] = reader
                        break
            assert pad in shown_by, f"source {pad}'s mark reached no virtual pad"
        assert len({id(reader) for reader in shown_by.values()}) == len(sources), "two sources share a virtual pad"

        # The stream: every pad a new sequence value each 1/RATE_HZ s, on an absolute schedule. A third of the way
        # in, the last client leaves (once its pads showed every value written so far) and comes back once the host
        # noticed it gone; the others stream on meanwhile.
        written: list[list[tuple[float, int]]] = [[] for _ in sources]  # (monotonic time written, value)
        leaving = CLIENTS - 1
        leaving_pads = range(leaving * PADS_PER_CLIENT, (leaving + 1) * PADS_PER_CLIENT)
        away: dict[str, float] = {}
        failures: list[BaseException] = []

        def leave_and_come_back(last_before: dict[int, int]):
            try:
                leave_and_come_back_now(last_before)
            except BaseException as failure:  # raised again by the test's own thread
                failures.append(failure)

        def leave_and_come_back_now(last_before: dict[int, int]):
            for pad, value in last_before.items():
                assert shown_by[pad].wait_for(lambda: value in shown_by[pad].sequence), \
                    f"pad {pad}: a value written before its client left never came out"
            since = len(serve.stderr)
            away["left"] = time.monotonic()
            clients[leaving].proc.send_signal(signal.SIGINT)
            assert clients[leaving].wait_exit() == 0, clients[leaving].describe()
            serve.wait_event("linkLost", where=lambda e: f"client{leaving}" in e["client"], since=since,
                             what=f"the host noticed client {leaving} gone")
            clients[leaving] = connect(leaving)
            away["back"] = next(when for when, _ in clients[leaving].timed_events("connected"))

        coming_back: threading.Thread | None = None
        frames = RATE_HZ * STREAM_SECONDS
        start = time.monotonic()
        stream_since = [len(process.stderr) for process in (serve, *clients)]
        for frame in range(frames):
            if frame == frames // 3:
                coming_back = threading.Thread(
                    target=leave_and_come_back, args=({pad: written[pad][-1][1] for pad in leaving_pads},))
                coming_back.start()
            for pad, source in enumerate(sources):
                source.write(ecodes.EV_ABS, ecodes.ABS_Y, sequence_value(frame))
                source.syn()
                written[pad].append((time.monotonic(), sequence_value(frame)))
            pause = start + (frame + 1) / RATE_HZ - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # the pace of the writer, not a wait for a result
        assert coming_back is not None
        coming_back.join(DEADLINE * 3)
        if failures:
            raise failures[0]
        assert "back" in away, f"client {leaving} did not come back within the stream ({STREAM_SECONDS} s)"

        for pad in range(len(sources)):
            reader = shown_by[pad]
            last = written[pad][-1][1]
            assert reader.wait_for(lambda: last in reader.sequence), f"pad {pad}: its last value never came out"
        for reader in readers:
            reader.stop.set()

        def when(moment: float) -> str:
            return f"{moment - away['left']:+.2f} s from the leaving"

        # Nobody else was disturbed: no other client took the link for lost (and handshook again), and the host lost
        # none of them.
        # (A loss while the machine kept the stall witness waiting too is the machine's doing: StallWitness.)
        for index, process in enumerate([serve, *clients]):
            if process is clients[leaving]:
                continue
            lost = unexplained_link_losses(process, stream_since[index], stall_witness, away["left"],
                                           ignore=lambda event: process is serve and f"client{leaving}" in event["client"])
            assert not lost, (f"{process!r} during the stream (times from the leaving): {lost}; "
                              f"{stall_witness.describe(away['left'])}")
        for pad in range(len(sources)):
            reader = shown_by[pad]
            assert not reader.dropped, f"pad {pad}: its reader fell behind (SYN_DROPPED); nothing is said of the link"
            crossed = [value for value in reader.marks if value not in (mark(pad), 0)]
            assert not crossed, f"pad {pad} showed another pad's marks: {crossed[:5]}"
            expected = written[pad]
            if pad in leaving_pads:
                # While its client is away nothing reads the source; the client that comes back starts from the
                # source's state then. Every value written before it left, and once it is connected again, comes out.
                expected = [(at, value) for at, value in expected if at < away["left"] or at > away["back"]]
            values = {value for _, value in expected}
            seen = [value for value in reader.sequence if value in values]
            missing = [(at, value) for at, value in expected if value not in set(seen)]
            assert not missing, (
                f"pad {pad}: {len(missing)} of {len(expected)} values never came out, written at "
                f"{', '.join(when(at) for at, _ in missing[:8])} (client {leaving} back at {when(away['back'])}); "
                f"{stall_witness.describe(away['left'])}")
            order = [[value for _, value in expected].index(value) for value in seen]
            assert order == sorted(order), f"pad {pad}: values came out of order"
        # The client that came back has its own virtual pads again: the host made no new one.
        every_node = {event["virtualPad"]["eventNodes"][0] for event in serve.events("padAttached")}
        assert every_node == set(virtual_nodes), f"new virtual pads were made: {every_node - set(virtual_nodes)}"
        print(f"{len(sources)} pads from {CLIENTS} clients at {RATE_HZ} Hz for {STREAM_SECONDS} s: "
              f"{sum(len(w) for w in written)} values written, all out in order, none crossed; client {leaving} "
              f"left and was back {away['back'] - away['left']:.1f} s later; {stall_witness.describe(away['left'])}")
    finally:
        for source in sources:
            source.close()

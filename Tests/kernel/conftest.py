"""Shared fixtures of the real-kernel suite.

These tests run as root inside the QEMU VM that scripts/kernel-suite boots (uinput, uhid and hid-playstation
loaded). They drive `padbridge virtual` through its JSON-lines contract and check what it produces with
independent readers: python-evdev, evtest, SDL2 and hid-playstation itself.

Rules: no sleeps. Every wait blocks on something (a pipe line, an evdev event, an SDL event) and has a deadline.
Every padbridge process a test starts is stopped by the fixture, whatever happens.
"""

from __future__ import annotations

import errno
import json
import os
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import evdev
import pytest
from evdev import ecodes

from waiting import wait_for_item

# Under software emulation Python and Swift start slowly; these deadlines are generous on purpose.
READY_DEADLINE = float(os.environ.get("KERNEL_SUITE_READY_DEADLINE", "60"))
DEADLINE = float(os.environ.get("KERNEL_SUITE_DEADLINE", "30"))

MODULE_ORDER = ["test_environment", "test_xbox360", "test_dualsense", "test_sdl"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sdl_reads_xbox_pads_itself: SDL reads an Xbox pad through its own HIDAPI driver (the hidraw node), as "
                   "it does by default, not through the kernel's event node (see `sdl_hints`)")
    config.addinivalue_line(
        "markers", "sdl_reads_switch_pads_itself: SDL reads a Switch pad through its own HIDAPI driver (the hidraw "
                   "node), as it does by default, not through hid-nintendo's event node (see the `sdl` fixture)")


def pytest_collection_modifyitems(items):
    """Environment checks first, SDL (which keeps one SDL_Init for the session) last."""

    def rank(item):
        name = Path(str(item.fspath)).stem
        return MODULE_ORDER.index(name) if name in MODULE_ORDER else len(MODULE_ORDER)

    items.sort(key=rank)  # stable: keeps the file order within a module


def padbridge_binary() -> str:
    path = os.environ.get("PADBRIDGE_BIN", ".build/debug/padbridge")
    if not os.access(path, os.X_OK):
        pytest.fail(f"PADBRIDGE_BIN={path!r} is not an executable; build padbridge and run scripts/kernel-suite")
    return os.path.abspath(path)


def kernel_suite_tool(name: str) -> str:
    """A helper program the tests need (Tests/kernel/*.c), built on the host by scripts/kernel-suite before the boot:
    a compiler in the emulated guest takes long enough to miss a test's deadline when the machine is busy."""
    path = os.path.join(os.environ.get("KERNEL_SUITE_TOOLS", "kernel-results/tools"), name)
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: scripts/kernel-suite builds it from Tests/kernel before booting the VM")
    return path


# --------------------------------------------------------------------------------------------------------------
# padbridge processes


def parse_event(line: str) -> dict | None:
    """The event a stderr line of padbridge run with `--events json` carries: a JSON object with a string "event"
    (and "message", the sentence the text mode writes). Anything else (ArgumentParser's error text at exit, a
    crash's report, a line of another program) is no event: None."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("event"), str):
        return obj
    return None


def holds(where, event: dict, process) -> bool:
    """where(event), for a wait; an event without a field that `where` reads fails the test, naming the event (the
    contract in docs/diagnostics.md broken, or the test reading a field the event never had)."""
    try:
        return bool(where(event))
    except KeyError as missing:
        raise AssertionError(f"{process!r}: {event['event']!r} event without the field {missing}: {event}") from None


def event_message(line: str) -> str:
    """The human sentence of a stderr line: its event's "message", or the line itself when it is no event."""
    event = parse_event(line)
    if event is not None and isinstance(event.get("message"), str):
        return event["message"]
    return line


class Padbridge:
    """One padbridge process, by default `padbridge virtual ...`: JSON lines in on stdin, feedback lines out on
    stdout, status on stderr as JSON events (`--events json`, see parse_event). Other commands (`list --watch`,
    `monitor`, `serve`, `connect` ...) use the same reader threads. Tests wait on events (wait_event, wait_ready),
    never on the wording of a sentence; messages() gives the sentences for assertions about what they say."""

    def __init__(self, *args: str, command: str = "virtual", wrapper: tuple[str, ...] = ()):
        """`wrapper` runs padbridge through another command (`ip netns exec NAME`)."""
        self.command = command
        self.argv = [*wrapper, padbridge_binary(), command, "--events", "json", *args]
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
        )
        self._cond = threading.Condition()
        self.stdout: list[tuple[float, str]] = []  # (monotonic receipt time, line)
        self.stderr: list[tuple[float, str]] = []  # every line as read; an index here is a `since` mark
        self.stderr_events: list[dict | None] = []  # parse_event of the stderr line at the same index
        self._eof = {"stdout": False, "stderr": False}
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout, "stdout"), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr, "stderr", self.stderr_events),
                             daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self.lines_sent = 0
        self.ready: dict | None = None

    def __repr__(self):
        return f"<padbridge {self.command} {' '.join(self.argv[self.argv.index(self.command) + 1:])} pid {self.proc.pid}>"

    def _pump(self, stream, sink, name, events=None):
        """Reads `stream` line by line into `sink`; for stderr, also each line's event (parsed once, here) into
        `events`, at the same index."""
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            event = parse_event(line) if events is not None else None
            with self._cond:
                sink.append((time.monotonic(), line))
                if events is not None:
                    events.append(event)
                self._cond.notify_all()
        with self._cond:
            self._eof[name] = True
            self._cond.notify_all()

    # -- waiting on output ---------------------------------------------------------------------------------------

    def _wait(self, name, sink, match, since, timeout, what, pump=None):
        """Blocks until `match(line)` returns something truthy for a line at index >= since; returns (index, value).

        `pump`, when given, is called between waits of at most 50 ms (for SDL, whose events need pumping)."""
        def fail(reason):
            raise AssertionError(f"{self!r}: no {what}: {reason}\n{self.describe()}")

        def closed():
            if self._eof[name]:
                return f"{name} closed (exit status {self.proc.poll()})"
            return None

        return wait_for_item(self._cond, sink, since, lambda item: match(item[1]), timeout, fail, closed, pump)

    def wait_event(self, name: str | tuple[str, ...], where=None, since: int = 0, timeout: float = DEADLINE,
                   what: str | None = None) -> tuple[int, dict]:
        """Waits for a stderr event called `name` (or any of several names, given as a tuple), at a stderr index
        >= since, for which `where(event)` holds (any such event when `where` is None); returns (its index, the
        event). A `where` that reads a field the event lacks fails the test: that is the contract broken, not an
        event to skip."""
        names = (name,) if isinstance(name, str) else tuple(name)

        def match(event):
            if event is None or event["event"] not in names:
                return None
            return event if where is None or holds(where, event, self) else None

        return self._wait_events(match, since, timeout, what or f"{name!r} event on stderr")

    def _wait_events(self, match, since, timeout, what):
        def fail(reason):
            raise AssertionError(f"{self!r}: no {what}: {reason}\n{self.describe()}")

        def closed():
            if self._eof["stderr"]:
                return f"stderr closed (exit status {self.proc.poll()})"
            return None

        return wait_for_item(self._cond, self.stderr_events, since, match, timeout, fail, closed)

    def wait_ready(self, timeout: float = READY_DEADLINE, since: int = 0) -> dict:
        """Waits for the "ready" event (the ready object's keys, plus "event" and "message") and returns it."""
        _, self.ready = self.wait_event("ready", since=since, timeout=timeout, what="'ready' event on stderr")
        return self.ready

    def events(self, name: str | None = None, since: int = 0) -> list[dict]:
        """The stderr events from index `since` on (only those called `name`, when given), for assertions after
        the fact."""
        with self._cond:
            return [event for event in self.stderr_events[since:]
                    if event is not None and (name is None or event["event"] == name)]

    def timed_events(self, name: str | None = None, since: int = 0) -> list[tuple[float, dict]]:
        """events(), each with the monotonic time its line was read."""
        with self._cond:
            return [(at, event) for (at, _), event in zip(self.stderr[since:], self.stderr_events[since:])
                    if event is not None and (name is None or event["event"] == name)]

    def messages(self, since: int = 0) -> list[str]:
        """The human sentences on stderr from index `since` on: each event's "message", or the line itself when it
        is no event. For assertions about wording (an error naming its fix); never wait on these."""
        with self._cond:
            return [event["message"] if event is not None and isinstance(event.get("message"), str) else line
                    for (_, line), event in zip(self.stderr[since:], self.stderr_events[since:])]

    def stderr_mark(self) -> int:
        """The index of the next stderr line; pass it as `since` to wait only for events that come later."""
        with self._cond:
            return len(self.stderr)

    def wait_stdout(self, predicate, timeout: float = DEADLINE, since: int = 0, what: str = "matching stdout line"):
        """Waits for a stdout line for which predicate(line) is truthy; returns (index, that value)."""
        return self._wait("stdout", self.stdout, lambda line: predicate(line) or None, since, timeout, what)

    def stdout_mark(self) -> int:
        with self._cond:
            return len(self.stdout)

    def feedback_mark(self) -> int:
        """The index of the next stdout line; pass it as `since` to wait only for feedback that comes later."""
        with self._cond:
            return len(self.stdout)

    def wait_feedback(self, predicate, timeout: float = DEADLINE, since: int = 0, what: str = "feedback line",
                      pump=None) -> tuple[int, dict]:
        """Waits for a stdout feedback object for which predicate(obj) holds. Every stdout line must be one JSON
        object with a "type"; anything else fails the test."""

        def match(line):
            try:
                obj = json.loads(line)
            except ValueError:
                raise AssertionError(f"{self!r}: stdout line is not JSON: {line!r}") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
                raise AssertionError(f"{self!r}: stdout line is not a JSON object with a type: {line!r}")
            return obj if predicate(obj) else None

        return self._wait("stdout", self.stdout, match, since, timeout, what, pump=pump)

    def feedback_objects(self) -> list[dict]:
        with self._cond:
            return [json.loads(line) for _, line in self.stdout]

    def describe(self) -> str:
        with self._cond:
            err = [line for _, line in self.stderr][-40:]
            out = [line for _, line in self.stdout][-20:]
        return "  stderr (last lines):\n" + "".join(f"    {l}\n" for l in err) + \
               "  stdout (last lines):\n" + "".join(f"    {l}\n" for l in out)

    # -- input -----------------------------------------------------------------------------------------------------

    def send_line(self, line: str):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        self.lines_sent += 1

    def send(self, **event):
        self.send_line(json.dumps(event, separators=(",", ":")))

    def send_frame(self, *events: dict):
        """Sends the events in one write: `virtual` reads them at once and shows them as one frame (between the
        same two SYN_REPORTs), as one report of a real pad carries several changes. Lines sent apart may or may
        not share a frame, depending on when the reader wakes."""
        self.proc.stdin.write("".join(json.dumps(event, separators=(",", ":")) + "\n" for event in events).encode())
        self.proc.stdin.flush()
        self.lines_sent += len(events)

    def button(self, name: str, pressed: bool = True):
        self.send(type="button", button=name, pressed=pressed)

    def axis(self, name: str, value: int):
        self.send(type="axis", axis=name, value=value)

    def close_stdin(self):
        if not self.proc.stdin.closed:
            self.proc.stdin.close()

    # -- ending ----------------------------------------------------------------------------------------------------

    def wait_exit(self, timeout: float = DEADLINE) -> int:
        try:
            status = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self!r} still running {timeout:.0f} s after being told to stop\n{self.describe()}")
        for thread in self._threads:
            thread.join(5)
        return status

    def stop(self) -> int:
        """End of input first (the normal way to stop `virtual`; SIGINT for the commands that read no input), then
        SIGTERM, then SIGKILL. Returns the exit status."""
        if self.proc.poll() is None:
            try:
                self.close_stdin()
            except BrokenPipeError:
                pass
            if self.command != "virtual":
                self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        for thread in self._threads:
            thread.join(5)
        return self.proc.returncode


@pytest.fixture
def padbridge():
    """Factory: padbridge("--type", "xbox360") starts a process; all are stopped when the test ends. A process
    that the test did not already stop must then exit with status 0 on end of input (the contract)."""
    started: list[Padbridge] = []

    def start(*args: str, command: str = "virtual", wrapper: tuple[str, ...] = ()) -> Padbridge:
        process = Padbridge(*args, command=command, wrapper=wrapper)
        started.append(process)
        return process

    yield start
    problems = []
    for process in started:
        already_ended = process.proc.poll() is not None
        status = process.stop()
        print(f"{process!r} exited with {status}\n{process.describe()}")
        if not already_ended and status != 0:
            problems.append(f"{process!r} exited with status {status} when told to stop")
    if problems:
        pytest.fail("; ".join(problems))


def attached(serve: Padbridge, since: int = 0) -> tuple[int, dict]:
    """Waits for a pad attached on the host (`serve`'s "padAttached" from stderr index `since` on); returns (its
    index, the virtual pad's ready object)."""
    index, event = serve.wait_event("padAttached", since=since, what="a pad attached on the host")
    return index, event["virtualPad"]


def pairing_code(serve: Padbridge) -> str:
    """The code of the pairing window `serve --pair` opened (its "pairingCode" event), checked for its form."""
    _, event = serve.wait_event("pairingCode", what="the pairing code")
    code = event["code"]
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}", code), event
    return code


class Feedback:
    """One `padbridge feedback ...` process (`--events json`); a thread collects its stderr lines, each parsed once
    (parse_event), for waits on events and for failure messages. Shared here: test_feedback, test_xpad,
    test_switch_pro and test_xbox_bluetooth use the `feedback` fixture."""

    def __init__(self, *args: str, stdin: bool = False):
        self.argv = [padbridge_binary(), "feedback", "--events", "json", *args]
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        self.stderr: list[str] = []
        self.stderr_events: list[dict | None] = []  # parse_event of the stderr line at the same index
        self._eof = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self):
        for raw in iter(self.proc.stderr.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            event = parse_event(line)
            with self._cond:
                self.stderr.append(line)
                self.stderr_events.append(event)
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def send(self, line: str):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def close_stdin(self):
        self.proc.stdin.close()

    def wait_event(self, name: str, where=None, timeout: float = DEADLINE, what: str | None = None) -> dict:
        """Waits for a stderr event called `name` for which `where(event)` holds (any, when None); returns it."""

        def match(event):
            if event is None or event["event"] != name:
                return None
            return event if where is None or holds(where, event, self.argv) else None

        def fail(reason):
            raise AssertionError(f"{self.argv}: no {what or repr(name) + ' event'}: {reason}; stderr: {self.stderr}")

        def closed():
            return f"stderr closed (exit status {self.proc.poll()})" if self._eof else None

        _, event = wait_for_item(self._cond, self.stderr_events, 0, match, timeout, fail, closed)
        return event

    def messages(self) -> list[str]:
        """The human sentences on stderr (each event's "message", or the line itself when it is no event), for
        assertions about wording; never wait on these."""
        with self._cond:
            return [event_message(line) for line in self.stderr]

    def wait(self, timeout: float = DEADLINE) -> int:
        try:
            status = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"{self.argv} still running after {timeout:.0f} s; stderr: {self.stderr}")
        self._thread.join(5)
        return status

    def expect_success(self, timeout: float = DEADLINE):
        status = self.wait(timeout)
        assert status == 0, f"{self.argv} exited with {status}; stderr: {self.stderr}"

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def feedback():
    """Factory: feedback(PAD, "--rumble", "1,1") starts a `padbridge feedback` process; all are killed when the
    test ends."""
    started: list[Feedback] = []

    def start(*args: str, stdin: bool = False) -> Feedback:
        process = Feedback(*args, stdin=stdin)
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()


def start_xbox(padbridge, *extra: str) -> tuple[Padbridge, dict, evdev.InputDevice]:
    pad = padbridge("--type", "xbox360", *extra)
    ready = pad.wait_ready()
    assert ready["kind"] == "xbox360", ready
    assert len(ready["eventNodes"]) == 1, ready
    return pad, ready, evdev.InputDevice(ready["eventNodes"][0])


def start_dualsense(padbridge, *extra: str, name: str = "padbridge test DualSense"):
    """Returns (process, ready object, {"gamepad": dev, "motion": dev, "touchpad": dev})."""
    pad = padbridge("--type", "dualsense", "--name", name, *extra)
    ready = pad.wait_ready()
    assert ready["kind"] == "dualsense", ready
    assert len(ready["eventNodes"]) == 3, f"expected gamepad, motion and touchpad nodes: {ready}"
    by_name = {}
    for path in ready["eventNodes"]:
        device = evdev.InputDevice(path)
        by_name[device.name] = device
    expected = {name: "gamepad", f"{name} Motion Sensors": "motion", f"{name} Touchpad": "touchpad"}
    assert set(by_name) == set(expected), f"node names {sorted(by_name)} from {ready['eventNodes']}"
    return pad, ready, {role: by_name[node_name] for node_name, role in expected.items()}


# --------------------------------------------------------------------------------------------------------------
# evdev readers with deadlines


class DeviceGone(Exception):
    pass


LINK_TIMEOUT_S = 0.4   # the link is counted lost after this long with nothing heard (LinkLiveness.timeoutMicroseconds)


class StallWitness:
    """Tests/kernel/stall_witness.c, running for one test: a process that asks to run every 10 ms and says when the
    machine kept it waiting 100 ms or more. An emulated guest on a busy machine (CI's machines are shared; a second
    VM beside this one takes half the cores) stops running its processes for that long now and then, which no real
    machine does: a client not run for 400 ms is counted lost by its host, rightly. A test takes a lost link for the
    machine's doing only when this witness, which does nothing else, was kept waiting at the same time."""

    PERIOD_MS, THRESHOLD_MS = 10, 100
    # A silence of 400 ms means the client did not run for most of it; the witness, asking every 10 ms, then waited
    # at least this long somewhere in the same stretch.
    EXPLAINS_MS = 150

    def __init__(self):
        self.proc = subprocess.Popen([kernel_suite_tool("stall-witness"), str(self.PERIOD_MS), str(self.THRESHOLD_MS)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready", "the stall witness did not start"
        self.started = time.monotonic()
        self.stalls: list[tuple[float, float]] = []   # (monotonic time it ran again, ms it waited)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self.proc.stdout:
            at, late = line.split()
            self.stalls.append((float(at), float(late)))

    def explains(self, lost_at: float) -> bool:
        """Whether the witness was kept waiting EXPLAINS_MS or more within the stretch before `lost_at` (when the
        test read the "linkLost" event) in which the silence that made it must have been: the timeout, and up to a
        second more for the line to be written and read on a starved machine."""
        start = lost_at - LINK_TIMEOUT_S - 1.0
        return any(late >= self.EXPLAINS_MS and at >= start and at - late / 1000 <= lost_at
                   for at, late in list(self.stalls))

    def describe(self, since: float | None = None) -> str:
        """Every wait from `since` on (default: its start), each with when it ended, from `since`."""
        since = self.started if since is None else since
        stalls = [f"{late:.0f} ms up to {at - since:+.2f} s" for at, late in list(self.stalls) if at >= since]
        return f"the stall witness waited {', '.join(stalls)}" if stalls else "the stall witness was never kept waiting"

    def close(self):
        self.proc.terminate()
        self.proc.wait(DEADLINE)
        self._thread.join(DEADLINE)


@pytest.fixture
def stall_witness():
    witness = StallWitness()
    yield witness
    witness.close()


def unexplained_link_losses(process, since: int, witness: StallWitness, origin: float, ignore=lambda event: False):
    """The "linkLost" events from stderr index `since` on in which `process` counted a link lost while the stall
    witness was not kept waiting (StallWitness.explains), each with its time from `origin`; `ignore(event)` leaves
    out the losses a test expects."""
    return [f"{at - origin:+.2f} s: {event['message']}" for at, event in process.timed_events("linkLost", since)
            if not ignore(event) and not witness.explains(at)]


def read_available(device: evdev.InputDevice, timeout: float) -> list:
    """Waits up to `timeout` for the device's fd to become readable and returns what is queued ([] on timeout).
    Raises DeviceGone when the node disappears."""
    poller = select.poll()
    poller.register(device.fd, select.POLLIN | select.POLLERR | select.POLLHUP)
    if not poller.poll(max(0, timeout) * 1000):
        return []
    try:
        return list(device.read())
    except BlockingIOError:
        return []
    except OSError as error:
        if error.errno == errno.ENODEV:
            raise DeviceGone(device.path) from None
        raise


def describe_events(events) -> str:
    def one(event):
        kind = ecodes.EV.get(event.type, event.type)
        names = ecodes.bytype.get(event.type, {})
        code = names.get(event.code, event.code)
        if isinstance(code, list):
            code = code[0]
        return f"{kind}/{code}={event.value}"

    return " ".join(one(event) for event in events if event.type != ecodes.EV_SYN) or "(none)"


def expect_events(device: evdev.InputDevice, wanted, timeout: float = DEADLINE) -> list:
    """Reads events until each (type, code, value) in `wanted` has been seen (any order); value may be a predicate.
    Returns every event read."""
    remaining = list(wanted)
    seen = []
    deadline = time.monotonic() + timeout
    while remaining:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(
                f"{device.path} ({device.name}): still waiting for {remaining_desc(remaining)} after {timeout:.0f} s; "
                f"events seen: {describe_events(seen)}"
            )
        for event in read_available(device, left):
            seen.append(event)
            item = next((item for item in remaining if event_matches(event, item)), None)
            if item is not None:
                remaining.remove(item)
    return seen


def event_matches(event, item) -> bool:
    """Whether `event` is `item`, a (type, code, value) whose value may be a predicate."""
    kind, code, value = item
    return (event.type == kind and event.code == code
            and (value(event.value) if callable(value) else event.value == value))


def expect_only(device: evdev.InputDevice, wanted, timeout: float = DEADLINE) -> list:
    """`expect_events`, and nothing else: every non-SYN event read on the way (including any read together with
    the last wanted one) must be one of `wanted`. To show that an input did NOT produce something, follow it with
    a fence (another input whose event is wanted here): the fence arriving alone proves nothing came before it."""
    seen = expect_events(device, wanted, timeout)
    remaining = list(wanted)
    unexpected = []
    for event in seen:
        if event.type == ecodes.EV_SYN:
            continue
        item = next((item for item in remaining if event_matches(event, item)), None)
        if item is None:
            unexpected.append(event)
        else:
            remaining.remove(item)
    assert not unexpected, (f"{device.path} ({device.name}): wanted only {remaining_desc(wanted)}; "
                            f"also saw {describe_events(unexpected)} (all: {describe_events(seen)})")
    return seen


def remaining_desc(items) -> str:
    out = []
    for kind, code, value in items:
        names = ecodes.bytype.get(kind, {})
        name = names.get(code, code)
        if isinstance(name, list):
            name = name[0]
        out.append(f"{ecodes.EV.get(kind, kind)}/{name}={'<predicate>' if callable(value) else value}")
    return ", ".join(out)


def drain(device: evdev.InputDevice):
    while read_available(device, 0):
        pass


def wait_abs(device: evdev.InputDevice, expected: dict, timeout: float = DEADLINE, tolerance: dict | None = None) -> dict:
    """Waits until the kernel's current value of each absolute axis in `expected` is within its tolerance
    (default exact), following the event stream from the current state. Returns the final values."""
    tolerance = tolerance or {}
    drain(device)
    values = {code: device.absinfo(code).value for code in expected}
    deadline = time.monotonic() + timeout

    def done():
        return all(abs(values[code] - want) <= tolerance.get(code, 0) for code, want in expected.items())

    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            names = {code: ecodes.ABS.get(code, code) for code in expected}
            raise AssertionError(
                f"{device.path} ({device.name}): axes "
                + ", ".join(f"{names[c]}={values[c]} (want {w}±{tolerance.get(c, 0)})" for c, w in expected.items())
                + f" after {timeout:.0f} s"
            )
        for event in read_available(device, left):
            if event.type == ecodes.EV_ABS and event.code in values:
                values[event.code] = event.value
    return values


def expect_dpad_on_hat0(pad, device: evdev.InputDevice):
    """Each d-pad button drives ABS_HAT0X/Y as xpad and hid-playstation report it, then the up-right diagonal
    (right still held, up added) reads as both hat axes at once."""
    steps = [("dpup", True, ecodes.ABS_HAT0Y, -1), ("dpup", False, ecodes.ABS_HAT0Y, 0),
             ("dpdown", True, ecodes.ABS_HAT0Y, 1), ("dpdown", False, ecodes.ABS_HAT0Y, 0),
             ("dpleft", True, ecodes.ABS_HAT0X, -1), ("dpleft", False, ecodes.ABS_HAT0X, 0),
             ("dpright", True, ecodes.ABS_HAT0X, 1)]
    for name, pressed, code, value in steps:
        pad.button(name, pressed)
        expect_events(device, [(ecodes.EV_ABS, code, value)])
    pad.button("dpup", True)
    wait_abs(device, {ecodes.ABS_HAT0X: 1, ecodes.ABS_HAT0Y: -1})


def read_until_gone(device: evdev.InputDevice, timeout: float = DEADLINE) -> list:
    """Reads every event until the node disappears; returns them. Fails if it is still there after `timeout`."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{device.path} still exists {timeout:.0f} s later; events: {describe_events(seen)}")
        try:
            seen.extend(read_available(device, left))
        except DeviceGone:
            return seen


def assert_released_before_gone(events, controls):
    """The last value each of `controls` ((type, code) pairs) had before the node vanished is 0 (released), and
    nothing pressed it again after its release."""
    last = {}
    for event in events:
        if (event.type, event.code) in controls:
            last[(event.type, event.code)] = event.value
    held = {control: value for control, value in last.items() if value != 0}
    assert not held, f"still held when the virtual pad went: {held}; events before it went: {describe_events(events)}"
    missing = [control for control in controls if control not in last]
    assert not missing, f"no release seen for {missing}; events before it went: {describe_events(events)}"


def input_sysfs_name(event_node: str) -> str:
    """'/dev/input/event5' -> 'input7' (the input device the event handler belongs to)."""
    return os.path.basename(os.path.realpath(f"/sys/class/input/{os.path.basename(event_node)}/device"))


# --------------------------------------------------------------------------------------------------------------
# force feedback client side (EVIOCSFF through python-evdev)


def rumble_effect(strong: int, weak: int, length_ms: int = 0):
    from evdev import ff

    return ff.Effect(
        ecodes.FF_RUMBLE, -1, 0,
        ff.Trigger(0, 0),
        ff.Replay(length_ms, 0),
        ff.EffectType(ff_rumble_effect=ff.Rumble(strong_magnitude=strong, weak_magnitude=weak)),
    )


def is_rumble(strong: float, weak: float, tolerance: float = 0.01):
    def check(obj):
        return (obj.get("type") == "rumble"
                and abs(obj.get("strong", -9) - strong) <= tolerance
                and abs(obj.get("weak", -9) - weak) <= tolerance)

    return check


# --------------------------------------------------------------------------------------------------------------
# fixtures that several test modules use. The helper modules they call (forwarding.py, hiding.py, ...) import
# conftest, so each fixture imports its helpers when it runs, not at the top.


@pytest.fixture(scope="session")
def sdl_library():
    import sdl2  # ~10 s under emulation; PYSDL2_DLL_PATH must be set or pysdl2 runs gcc for a minute
    return sdl2


def sdl_hints(request) -> dict[str, str]:
    """The hints every SDL of the suite is started with (the `sdl` and `sdl_reader` fixtures).

    SDL reads an Xbox pad through the kernel's xpad, as the tests compare, never through its own Xbox drivers
    (HIDAPI, which can open a USB pad beside xpad over libusb), unless the test is marked `sdl_reads_xbox_pads_itself`
    (SDL's default, as a game has it: an Xbox pad on Bluetooth read through its hidraw node). SDL_Quit clears hints: set before each SDL_Init.
    The same for a Switch pad through hid-nintendo, unless the test is marked `sdl_reads_switch_pads_itself` (SDL's
    default for a Switch pad on Bluetooth, whose database entry for the event node fits hid-generic's numbering of
    the buttons, not hid-nintendo's). Either way by position (Nintendo's B, the bottom button, is `a`, as padbridge
    and the kernel's gamepad convention name it; SDL 2 reads Nintendo pads by label unless told)."""
    hints = ["SDL_GAMECONTROLLER_USE_BUTTON_LABELS"]
    if request.node.get_closest_marker("sdl_reads_xbox_pads_itself") is None:
        hints += ["SDL_JOYSTICK_HIDAPI_XBOX", "SDL_JOYSTICK_HIDAPI_XBOX_360", "SDL_JOYSTICK_HIDAPI_XBOX_ONE"]
    if request.node.get_closest_marker("sdl_reads_switch_pads_itself") is None:
        hints.append("SDL_JOYSTICK_HIDAPI_SWITCH")
    return {hint: "0" for hint in hints}


@pytest.fixture
def sdl(sdl_library, request):
    """SDL started for the test and quit after it, as a game started then: its joystick list is what /dev/input
    holds now. (A session-long SDL read its inotify watch of /dev/input one 4 KB read a pump, 128 events: the
    backlog of earlier tests' nodes, applied late, took a new pad for one of theirs that had the same node name and
    removed it under the test's feet, twice in full runs.) Debian's SDL 2.26, in the test's own process; for either
    SDL (2.26 or 2.32) in a process of its own, see `sdl_reader`."""
    sdl2 = sdl_library
    for hint, value in sdl_hints(request).items():
        sdl2.SDL_SetHint(hint.encode(), value.encode())
    if sdl2.SDL_Init(sdl2.SDL_INIT_GAMECONTROLLER) != 0:
        pytest.fail(f"SDL_Init: {sdl2.SDL_GetError().decode()}")
    yield sdl2
    sdl2.SDL_Quit()


@pytest.fixture(scope="module")
def sdl_reader_processes():
    """The module's SDL reader processes (sdl_reader.SdlReader), one per SDL version, started when a test first asks
    for that version (Python and pysdl2 take 10-25 s to start in the emulated guest: once a module, not once a test)
    and stopped after the module; one that died is started again."""
    from sdl_reader import SdlReader

    started: dict[str, SdlReader] = {}

    def reader(version: str) -> SdlReader:
        if version not in started or not started[version].alive():
            started[version] = SdlReader(version)
        return started[version]

    yield reader
    for process in started.values():
        status = process.stop()
        print(f"{process!r} (started in {process.start_s:.1f} s, {process.sdl2_import_s:.1f} s of them importing "
              f"pysdl2) exited with {status}; stderr: {process.stderr[-20:]}")


@pytest.fixture(params=["2.26", "2.32"])
def sdl_reader(request, sdl_reader_processes):
    """Either SDL, in a process of its own (sdl_reader.SdlReader): the test runs once with Debian 12's SDL 2.26 and
    once with SDL 2.32 and its HIDAPI drivers (built by scripts/kernel-deps). SDL is initialised for the test (with
    sdl_hints) and quit after it, as the `sdl` fixture does, in a process that lives for the module. A test for one
    SDL only: @pytest.mark.parametrize("sdl_reader", ["2.32"], indirect=True)."""
    reader = sdl_reader_processes(request.param)
    reader.init(sdl_hints(request))
    yield reader
    if reader.alive():  # (one that died has failed the test already; the next test starts another)
        reader.quit()


@pytest.fixture
def namespaces():
    """Two network namespaces joined by a clean link (forwarding.joined_namespaces), to be taken down and up again."""
    from forwarding import joined_namespaces

    yield from joined_namespaces()


@pytest.fixture
def logged_in_nobody():
    """nobody is the active user of seat0, with padbridge's udev rule installed (/etc is the VM's own overlay)."""
    from hiding import ACL, settle, udevadm
    from other_users import NOBODY

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


@pytest.fixture(scope="module")
def joystick_interface():
    """joydev loaded, as on a desktop: each pad also gets a /dev/input/jsN node, which older games and Wine's
    joystick API read, and which must be hidden with the pad's other nodes. Loaded once for a test module whose
    tests all use it (`pytestmark = pytest.mark.usefixtures("joystick_interface")`: test_hiding, test_xpad,
    test_switch_pro) and removed after the module."""
    subprocess.run(["modprobe", "joydev"], check=True, timeout=DEADLINE)
    yield
    subprocess.run(["modprobe", "-r", "joydev"], timeout=DEADLINE)


@pytest.fixture
def padbridges_udev_rule():
    """udev/70-padbridge.rules installed in the VM's /etc (its own overlay) while the test runs."""
    rule = "/etc/udev/rules.d/70-padbridge.rules"
    os.makedirs(os.path.dirname(rule), exist_ok=True)
    shutil.copy("udev/70-padbridge.rules", rule)
    subprocess.run(["udevadm", "control", "--reload"], check=True, timeout=DEADLINE)
    try:
        yield
    finally:
        os.unlink(rule)
        subprocess.run(["udevadm", "control", "--reload"], check=True, timeout=DEADLINE)

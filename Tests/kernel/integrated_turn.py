"""A turn of 90 °/s for 1 s fed to `padbridge virtual`, and the angle readers padbridge did not write integrate from
it (issue 39: "motion 90 ° ± 3 ° for a 90 °/s turn of 1 s"): the kernel driver's motion node (python-evdev, on its
MSC_TIMESTAMP) and SDL (its sensor events, on their timestamp_us).

The source is a pad sampling every 4 ms (a Switch pad's every 8 ms: `step_us`): a still sample, 250 samples turning
at 90 °/s about the model's yaw (y) axis, each stamped 4000 µs after the one before on the source's sensor clock
(`"timestamp"`, µs), then a still sample. A sample's rate is the one over the interval it ends (as a pad's is), so
the angle is the sum, over the samples a reader shows, of each one's rate times its step from the one before; a
reader that shows fewer samples (frames merged, reports dropped) still sums to the turn's angle while the rate is
constant. The integration runs from the first still sample a reader shows to the first still one after the turn.

The samples go out at the source's pace by the wall clock (one line a step), but a DualShock 4's or a DualSense's
readers integrate on the report's sensor clock, which the virtual pad carries from the source: the pace does not
enter. A Switch pad's reports carry no sensor clock (hid-nintendo and SDL stamp its samples by their own clocks), so
its readers' angle is the turn's duration at the pad: their angle is checked against 90 °/s times the time between
the writes of the turn's first sample and the still one after it."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import evdev
from evdev import ecodes

from conftest import DEADLINE, StallWitness

TURN_DEGREES_PER_SECOND = 90.0
TURN_MICROSECONDS = 1_000_000
STEP_MICROSECONDS = 4_000             # a sample each 4 ms (250 Hz, a DualShock 4's or a DualSense's rate)
TURN_STEPS = TURN_MICROSECONDS // STEP_MICROSECONDS
TOLERANCE_DEGREES = 3.0
SOURCE_START_MICROSECONDS = 7_000_000  # the source's sensor clock at the still sample before the turn
GRAVITY = [0.0, 9.81, 0.0]            # the pad lying flat, face up (the model's y is up)
STILL_DEGREES_PER_SECOND = 0.5        # a sample slower than this on every axis is still


@dataclass
class Sample:
    """One motion sample as a reader shows it: its timestamp (µs, the reader's clock) and gyro (°/s, the model's
    pitch, yaw, roll)."""
    timestamp_us: int
    gyro_dps: tuple[float, float, float]

    @property
    def still(self) -> bool:
        return all(abs(value) < STILL_DEGREES_PER_SECOND for value in self.gyro_dps)


def motion_line(yaw_dps: float, timestamp_us: int, accel_x: float = 0.0) -> dict:
    return {"type": "motion", "gyro": [0.0, math.radians(yaw_dps), 0.0], "accel": [accel_x, *GRAVITY[1:]],
            "timestamp": timestamp_us}


class TurnFeed:
    """Feeds the turn to a `padbridge virtual` (conftest.Padbridge) on a thread of its own: first the still sample,
    then `shown_still()` is waited on (a reader shows it: the turn's first samples, sent 4 ms later, must not share
    its frame), then the 250 turning samples one each 4 ms by the wall clock, `shown_turn()` (if given) is waited on,
    then the still sample. `turn_seconds`: the wall-clock time between the writes of the first turning sample and the
    still one after the turn."""

    def __init__(self, pad, shown_still, shown_turn=None, source_start_us: int = SOURCE_START_MICROSECONDS,
                 accel_x: float = 0.0, step_us: int = STEP_MICROSECONDS):
        """`accel_x` (m/s²) marks the samples of this feed (a second feed's still sample must be told from the first
        one's end); `step_us`: the source's sampling interval (TURN_MICROSECONDS a whole multiple of it)."""
        assert TURN_MICROSECONDS % step_us == 0, step_us
        self.pad, self.shown_still, self.shown_turn = pad, shown_still, shown_turn
        self.step_us, self.steps = step_us, TURN_MICROSECONDS // step_us
        self.source_start_us, self.accel_x = source_start_us, accel_x
        self.done = threading.Event()
        self.turn_seconds: float | None = None
        self.turn_started: float | None = None   # time.monotonic() at the writes of the turn's first sample
        self.turn_ended: float | None = None     # and of the still one after it
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._feed, daemon=True)

    def start(self) -> TurnFeed:
        self._thread.start()
        return self

    def _feed(self):
        try:
            pace = threading.Event()  # never set: its wait is the source's pace
            self.pad.send(**motion_line(0.0, self.source_start_us, self.accel_x))
            self.shown_still()
            started = self.turn_started = time.monotonic()
            for step in range(1, self.steps + 1):
                pace.wait(max(0.0, started + (step - 1) * self.step_us / 1e6 - time.monotonic()))
                self.pad.send(**motion_line(TURN_DEGREES_PER_SECOND, self.source_start_us + step * self.step_us,
                                            self.accel_x))
            pace.wait(max(0.0, started + TURN_MICROSECONDS / 1e6 - time.monotonic()))
            if self.shown_turn is not None:
                self.shown_turn()
            self.pad.send(**motion_line(0.0, self.source_start_us + TURN_MICROSECONDS + self.step_us,
                                        self.accel_x))
            self.turn_ended = time.monotonic()
            self.turn_seconds = self.turn_ended - started
        except BaseException as error:  # noqa: BLE001 (handed to the test's thread by wait())
            self.error = error
        finally:
            self.done.set()

    def wait(self):
        if not self.done.wait(DEADLINE + TURN_MICROSECONDS / 1e6):
            raise AssertionError(f"the turn's feed did not finish within {DEADLINE:.0f} s")
        self._thread.join(DEADLINE)
        if self.error is not None:
            raise self.error


def turn_window(samples: list[Sample]) -> tuple[int, int] | None:
    """(first, last) indexes of the turn: from the first still sample, over the turn, to the first still one after
    it; None until a reader has shown all of that."""
    first = next((i for i, sample in enumerate(samples) if sample.still), None)
    if first is None:
        return None
    moving = next((i for i in range(first + 1, len(samples)) if not samples[i].still), None)
    if moving is None:
        return None
    last = next((i for i in range(moving + 1, len(samples)) if samples[i].still), None)
    return None if last is None else (first, last)


def integrated_degrees(samples: list[Sample], timestamp_bits: int = 64) -> tuple[float, float, float]:
    """The degrees turned about each axis over the turn's window: each sample's rate times its step from the one
    before on the reader's clock (`timestamp_bits`: the clock's width, 32 for MSC_TIMESTAMP, which wraps)."""
    window = turn_window(samples)
    assert window is not None, f"no still sample, turn and still sample in {describe(samples)}"
    first, last = window
    mask = (1 << timestamp_bits) - 1
    angles = [0.0, 0.0, 0.0]
    for before, after in zip(samples[first:last], samples[first + 1:last + 1]):
        step_s = ((after.timestamp_us - before.timestamp_us) & mask) / 1e6
        for axis in range(3):
            angles[axis] += after.gyro_dps[axis] * step_s
    return angles[0], angles[1], angles[2]


def describe_steps(samples: list[Sample], timestamp_bits: int = 64) -> str:
    """The turn's samples and their timestamp steps (µs: the commonest, the least and the most), for a message."""
    from collections import Counter

    window = turn_window(samples)
    if window is None:
        return describe(samples)
    first, last = window
    mask = (1 << timestamp_bits) - 1
    steps = [(after.timestamp_us - before.timestamp_us) & mask
             for before, after in zip(samples[first:last], samples[first + 1:last + 1])]
    turning = sum(1 for sample in samples[first:last + 1] if not sample.still)
    return (f"{last - first + 1} samples from the still one before the turn to the one after it, {turning} turning; "
            f"timestamp steps (µs): the commonest {Counter(steps).most_common(4)}, least {min(steps)}, "
            f"most {max(steps)}, sum {sum(steps)}")


def describe_event_times(samples: list[Sample], event_times: list[float]) -> str:
    """How long the turn's frames took to come by the kernel's clock of their events (from the still sample before
    the turn to the still one after it), how many distinct samples came, and the runs of the yaw rate (°/s, count)."""
    window = turn_window(samples)
    if window is None:
        return describe(samples)
    first, last = window
    moving = next(i for i in range(first, last + 1) if not samples[i].still)
    runs: list[list] = []
    for sample in samples[first:last + 1]:
        yaw = round(sample.gyro_dps[1], 1)
        if runs and runs[-1][0] == yaw:
            runs[-1][1] += 1
        else:
            runs.append([yaw, 1])
    gaps = [b - a for a, b in zip(event_times[first:last], event_times[first + 1:last + 1])]
    return (f"the turn's frames came over {event_times[last] - event_times[moving - 1]:.3f} s of event time "
            f"({last - moving + 1} frames from the first turning one to the still one after; the most between two "
            f"{max(gaps) * 1000:.1f} ms); yaw runs {runs}")


def describe(samples: list[Sample]) -> str:
    moving = [i for i, sample in enumerate(samples) if not sample.still]
    return (f"{len(samples)} samples ({len(moving)} moving; the first {samples[:3]}, the last {samples[-3:]})"
            if samples else "no samples")


class TurnTracker:
    """turn_window kept up to date one sample at a time (the waits below look at each new sample once, and must not
    keep the guest's CPUs from padbridge and the readers)."""

    def __init__(self):
        self.count = 0
        self.first = self.moving = self.last = None

    def add(self, sample: Sample) -> bool:
        """Takes the next sample; True once the still sample after the turn has come."""
        index, self.count = self.count, self.count + 1
        if self.first is None:
            self.first = index if sample.still else None
        elif self.moving is None:
            self.moving = None if sample.still else index
        elif self.last is None and sample.still:
            self.last = index
        return self.last is not None


class SdlSamples:
    """The samples SDL's sensor events show, one for each event after the first gyro event (a gyro and an accel
    event for each of the pad's samples, the same timestamp_us), with the gyro SDL holds then (an SDL that posted only
    changed values would still mark each sample's time with its accel event)."""

    def __init__(self):
        self.samples: list[Sample] = []
        self.tracker = TurnTracker()
        self._gyro = None

    def add(self, events: list[dict]):
        for event in events:
            if event["sensor"] == "gyro":
                self._gyro = tuple(math.degrees(value) for value in event["data"])
            if self._gyro is not None:
                self.samples.append(Sample(event["timestamp_us"], self._gyro))
                self.tracker.add(self.samples[-1])


def sdl_samples(events: list[dict]) -> list[Sample]:
    collected = SdlSamples()
    collected.add(events)
    return collected.samples


def sdl_turn(controller, feed: TurnFeed, still_shown: threading.Event | None = None) -> list[Sample]:
    """Collects SDL's sensor events (recording since before the feed began) until SDL shows the turn and the still
    sample after it, pumping SDL all the while (its HIDAPI driver reads the hidraw node only when pumped: each
    `sensor_events` pumps).
    `still_shown` is set once SDL shows a still sample (for a feed that waits on SDL before the turn)."""
    collected = SdlSamples()
    deadline = time.monotonic() + DEADLINE + TURN_MICROSECONDS / 1e6
    while True:
        # Every 50 ms (or at once when the feed is done): SDL holds what came meanwhile (the hidraw node queues 64
        # reports), and the guest's two CPUs are left to padbridge and the kernel, which keep the pad's pace.
        feed.done.wait(0.05)
        collected.add(controller.sensor_events())
        if still_shown is not None and collected.tracker.first is not None:
            still_shown.set()
        if feed.error is not None:
            feed.wait()
        if feed.done.is_set() and collected.tracker.last is not None:
            return collected.samples
        if time.monotonic() > deadline:
            raise AssertionError(f"SDL {controller.reader.sdl_version}: no turn and still sample after it within "
                                 f"{DEADLINE:.0f} s; {describe(collected.samples)}")


# --------------------------------------------------------------------------------------------------------------
# the kernel driver's motion node and SDL, reading the same turn


FEEDS = 3                             # turns fed at most, while the test's own node reader falls behind
FEED_ACCEL_X_STEP = 1.0               # m/s²: accel x of the n-th feed's samples is n times this


def node_sample(frame, gyro_dps) -> Sample:
    """A NodeReader frame (MSC_TIMESTAMP, accel x y z, gyro rx ry rz, raw) as a Sample; `gyro_dps(rx, ry, rz)`: the
    model's (pitch, yaw, roll) in °/s on the driver's axes and resolution."""
    return Sample(frame[0], gyro_dps(*frame[4:7]))


REPORT_MS = 15   # a Switch Pro Controller's pace in mode 0x30, as the virtual one keeps it
MISSED_REPORTS_ALLOWED = 1   # each costs the readers 1.35 ° of a 90 °/s turn: two would leave 0.3 ° of the 3


def report_pace(samples: list[Sample], event_times: list[float]) -> tuple[int, int, float, float]:
    """(reports, reports missed, the longest time between two in ms, the seconds from the first to the last) from the
    still sample before the turn to the one after it, by the frames' event times (frames more than 1 ms apart are two
    reports: a Switch pad's report makes three frames at once). Missed: the REPORT_MS periods in that time that have
    no report (a report late by less than a period is not missed: the virtual pad keeps its schedule); reports beyond
    the pace make up for missed ones in this count."""
    window = turn_window(samples)
    assert window is not None, describe(samples)
    first, last = window
    reports = [event_times[first]]
    for at in event_times[first + 1:last + 1]:
        if at - reports[-1] > 0.001:
            reports.append(at)
    periods = round((reports[-1] - reports[0]) * 1000 / REPORT_MS)
    longest_ms = max((b - a for a, b in zip(reports, reports[1:])), default=0.0) * 1000
    return len(reports), max(0, periods - (len(reports) - 1)), longest_ms, reports[-1] - reports[0]


class PaceWitness(StallWitness):
    """conftest.StallWitness saying when it was kept waiting 20 ms or more (its process asks to run every 10 ms): a
    late report of a pad that reports each 15 ms."""
    THRESHOLD_MS = 20


class NodeReader:
    """Reads a motion node on its own thread like motion_node.MotionNode, one (MSC_TIMESTAMP µs, accel x, y, z, gyro
    rx, ry, rz) per frame, and keeps where its reader fell behind (SYN_DROPPED: the frame count then, and how many
    events that read brought)."""

    CODES = [ecodes.ABS_X, ecodes.ABS_Y, ecodes.ABS_Z, ecodes.ABS_RX, ecodes.ABS_RY, ecodes.ABS_RZ]

    def __init__(self, path: str):
        self.device = evdev.InputDevice(path)
        self.frames: list[tuple[int, ...]] = []
        self.event_times: list[float] = []   # each frame's SYN_REPORT time (s, the kernel's clock of the event)
        self.drops: list[tuple[int, int]] = []
        self._cond = threading.Condition()
        self._done = threading.Event()
        self._values = {code: self.device.absinfo(code).value for code in self.CODES}
        self._timestamp = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        from conftest import read_available

        while not self._done.is_set():
            events = read_available(self.device, 0.2)
            for event in events:
                if event.type == ecodes.EV_ABS and event.code in self._values:
                    self._values[event.code] = event.value
                elif event.type == ecodes.EV_MSC and event.code == ecodes.MSC_TIMESTAMP:
                    self._timestamp = event.value & 0xFFFFFFFF
                elif event.type == ecodes.EV_SYN and event.code == ecodes.SYN_DROPPED:
                    with self._cond:
                        self.drops.append((len(self.frames), len(events)))
                elif event.type == ecodes.EV_SYN and event.code == ecodes.SYN_REPORT and self._timestamp is not None:
                    with self._cond:
                        self.frames.append((self._timestamp, *(self._values[code] for code in self.CODES)))
                        self.event_times.append(event.timestamp())
                        self._cond.notify_all()

    @property
    def dropped(self) -> bool:
        return bool(self.drops)

    def wait_for_frame(self, predicate, what: str, since: int = 0) -> int:
        from waiting import wait_for_item

        def fail(reason):
            raise AssertionError(f"{self.device.path}: no {what}: {reason}; {len(self.frames)} frames read, the "
                                 f"last {self.frames[-3:]}")
        return wait_for_item(self._cond, self.frames, since, predicate, DEADLINE, fail)[0]

    def stop(self) -> list[tuple[int, ...]]:
        self._done.set()
        self._thread.join(DEADLINE)
        self.device.close()
        with self._cond:
            return list(self.frames)


def read_turn(pad, motion_device=None, controller=None, gyro_dps=None, accel_x_mps2=None,
              sensor_clock: bool = True, step_us: int = STEP_MICROSECONDS):
    """Feeds the turn to `pad` with the kernel driver's motion node (`motion_device`, read by NodeReader) and/or the
    open SDL `controller` reading it: returns (the node's samples or None, SDL's samples or None, the feed's
    turn_seconds, a sentence on the pad's pace), each of one whole turn. For the node: `gyro_dps(rx, ry, rz)` as
    node_sample takes it and `accel_x_mps2(frame)`, a frame's model accel x in m/s².

    `sensor_clock`: the pad's reports carry the source's sensor clock, so the feed waits for the node to show the
    turn's last sample before the still one (a frame merging them would hide that sample). Without one (a Switch pad,
    whose `motion_device` must be given: its IMU node's event times are when the virtual pad wrote each report) the
    turn lasts as the wall clock paces it, and the readers count the pad's reports, one due each REPORT_MS; the virtual
    pad makes up none it was late for (a real pad's would come late, not be missing).

    Fed again, at most FEEDS times: a feed whose node reader fell behind (SYN_DROPPED: the guest's Python, not
    padbridge), and one of a pad without a sensor clock that missed more than MISSED_REPORTS_ALLOWED reports during
    the turn. The emulated guest on a busy machine keeps processes waiting a period or more now and then (the sentence
    says what a process asking to run every 10 ms, the PaceWitness, saw meanwhile), as a machine that runs padbridge
    does not; whether padbridge keeps its pace is not this check's to say."""
    if controller is not None:
        controller.enable_sensors("gyro", "accel")
    for number in range(FEEDS):
        accel_x = FEED_ACCEL_X_STEP * number
        node = None
        if motion_device is not None:
            # A handle of its own: what queued on the test's other handles to the node is not read here.
            node = NodeReader(motion_device.path)
        if controller is not None:
            controller.record_sensor_events(True)
            controller.sensor_events()
        still_at, sdl_still = [], threading.Event()

        def shown_still(node=node, accel_x=accel_x):
            if node is None:
                if not sdl_still.wait(DEADLINE):
                    raise AssertionError(f"SDL showed no still sample within {DEADLINE:.0f} s")
                return
            still_at.append(node.wait_for_frame(
                lambda f: node_sample(f, gyro_dps).still and abs(accel_x_mps2(f) - accel_x) < FEED_ACCEL_X_STEP / 4,
                f"still sample before the turn (accel x {accel_x} m/s²)"))

        def shown_turn(node=node):
            start_us = node.frames[still_at[0]][0]
            node.wait_for_frame(
                lambda f: not node_sample(f, gyro_dps).still
                and ((f[0] - start_us) & 0xFFFFFFFF) >= TURN_MICROSECONDS - 10,
                "the turn's last sample", since=still_at[0])

        witness = None if sensor_clock else PaceWitness()
        source_start_us = SOURCE_START_MICROSECONDS + number * 10_000_000
        feed = TurnFeed(pad, shown_still, shown_turn if sensor_clock and node is not None else None,
                        source_start_us=source_start_us, accel_x=accel_x, step_us=step_us).start()
        sdl = sdl_turn(controller, feed, sdl_still) if controller is not None else None
        feed.wait()
        samples = None
        if node is not None:
            tracker = TurnTracker()
            node.wait_for_frame(lambda f: tracker.add(node_sample(f, gyro_dps)), "the still sample after the turn")
            frames = node.stop()
            samples = [node_sample(frame, gyro_dps) for frame in frames]
            print(f"{motion_device.name!r}: {describe_event_times(samples, node.event_times)}")
        if controller is not None:
            controller.record_sensor_events(False)
        reasons = []
        if node is not None and node.dropped:
            reasons.append(f"the test's node reader fell behind (SYN_DROPPED at frames (count, events read) "
                           f"{node.drops} of {len(frames)}; {describe_steps(samples, 32)})")
        pace = ""
        if witness is not None:
            witness.close()
            stalls = [f"{late:.0f} ms up to {at - feed.turn_started:+.3f} s" for at, late in list(witness.stalls)
                      if at >= feed.turn_started and at - late / 1000 <= feed.turn_ended + 0.1]
            witnessed = (f"the pace witness was kept waiting {', '.join(stalls)} from the turn's start" if stalls else
                         f"the pace witness was never kept waiting {PaceWitness.THRESHOLD_MS} ms")
            reports, missed, longest_ms, seconds = report_pace(samples, node.event_times)
            pace = (f"from the still sample before the turn to the one after it the virtual pad sent {reports} "
                    f"reports in {seconds:.3f} s (its {REPORT_MS} ms pace: {round(seconds * 1000 / REPORT_MS) + 1}), "
                    f"missing {missed} periods, at most {longest_ms:.1f} ms apart; {witnessed}")
            if missed > MISSED_REPORTS_ALLOWED:
                reasons.append(pace)
        if not reasons:
            return samples, sdl, feed.turn_seconds, pace
        print(f"feed {number + 1}: {'; '.join(reasons)}; feeding the turn again")
    raise AssertionError(f"in each of {FEEDS} feeds of the turn: {'; '.join(reasons)}")

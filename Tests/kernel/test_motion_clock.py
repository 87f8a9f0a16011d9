"""Motion that integrates the same over the network as on the desk (issue 19).

Games and Steam integrate gyro by the sensor's own clock: hid-playstation turns the DualSense report's sensor
timestamp into MSC_TIMESTAMP on the motion node, SDL reads the same field from hidraw. A forwarded DualSense's
virtual pad must therefore carry its source's sensor clock, not the time each frame reached the host, or network
jitter goes into every integration step.

An independent uhid DualSense stand-in (Tests/kernel/standins.py, bound by hid-playstation on the client side)
turns at a known, constant yaw rate at 250 Hz, each report stamped by its own sensor clock (exactly 4 ms of 1/3 µs
ticks a report, starting 1 s before the 32-bit field wraps), its accelerometer X carrying the sample's number so
every frame on the far side can be matched to the sample it shows. It is forwarded `connect` -> `serve` across two
network namespaces whose client -> host direction has netem delay 5 ms ± 4 ms. python-evdev reads the host's
virtual pad's motion node.
"""

from __future__ import annotations

import subprocess
import threading
import time

import evdev
import pytest

from conftest import DEADLINE, attached
from forwarding import HOST_ADDRESS, PORT, joined_namespaces, paired_across_namespaces, run
from motion_node import MotionNode
from standins import PhysicalDualSense

SAMPLES = 501                       # samples 0...500: 500 steps, 2 s of the stand-in's clock
STEP_MICROSECONDS = 4_000           # 250 Hz
TICKS_PER_MICROSECOND = 3           # the DualSense's sensor clock counts 1/3 µs
YAW_RAW = 1440                      # 90 °/s at 1/16 °/s per unit (the stand-in's identity calibration)
YAW_DEGREES_PER_SECOND = 90.0
GYRO_UNITS_PER_DEGREE_PER_SECOND = 1024   # hid-playstation's ABS_RX/RY/RZ resolution
TAG_STEP = 64                       # accel X of sample k: TAG_STEP * (k + 1); 2 x the motion axes' fuzz (16) and
                                    # more, so the input core never smooths it; never 0, the value at rest


@pytest.fixture
def jittery_uplink():
    """pbclient and pbhost joined by a veth pair; the client's sending (client -> host) has netem delay 5 ms with
    4 ms of jitter (uniform 1...9 ms; netem reorders what the jitter overtakes); the host's is clean."""
    namespaces = joined_namespaces()
    next(namespaces)
    run("ip", "netns", "exec", "pbclient", "tc", "qdisc", "add", "dev", "pbc", "root", "netem", "delay", "5ms", "4ms")
    yield
    next(namespaces, None)


def stream_yaw(stand_in: PhysicalDualSense, first_ticks: int):
    """Sample k at the stand-in's own pace (k x 4 ms after the first), stamped k x 4 ms on its own sensor clock
    whenever the write happens to go out."""
    pace = threading.Event()
    start = time.monotonic()
    for k in range(SAMPLES):
        pace.wait(max(0.0, start + k * STEP_MICROSECONDS / 1e6 - time.monotonic()))  # the source's pace
        stand_in.send_input(gyro=(0, YAW_RAW, 0), accel=(TAG_STEP * (k + 1), 0, 0),
                            sensor_ticks=first_ticks + k * STEP_MICROSECONDS * TICKS_PER_MICROSECOND)


ROUNDS = 3


def stream_one_round(padbridge, directory) -> tuple[list[tuple[int, int, int]], list[tuple[float, str]], bool]:
    """A paired `serve` and `connect` of a new stand-in in `directory`, the stand-in's 2 s of yaw streamed: the
    frames the host's virtual pad showed, the lines in which either side counted the link lost (with when), and
    whether the test's own reader fell behind (SYN_DROPPED: its frames then say nothing about padbridge)."""
    serve, client_config = paired_across_namespaces(padbridge, directory)
    stand_in = PhysicalDualSense("usb")
    try:
        hidraw = stand_in.wait_bound()
        client = padbridge(f"{HOST_ADDRESS}:{PORT}", hidraw, "--config-dir", str(client_config),
                           command="connect", wrapper=("ip", "netns", "exec", "pbclient"))
        client.wait_event("connected", what="the client connected over the jittery link")
        _, ready = attached(serve)
        assert ready["kind"] == "dualsense" and len(ready["eventNodes"]) == 3, ready
        motion = evdev.InputDevice(ready["eventNodes"][1])
        assert motion.name.endswith("Motion Sensors"), motion.name
        reader = MotionNode(motion)
        # The stream starts once udev has handled the virtual pad's new devices (the rules, the nodes' links): with a
        # second VM beside this one, that work starved the client of the stream's first samples (first shown: 8).
        subprocess.run(["udevadm", "settle", f"--timeout={int(DEADLINE)}"], check=True, timeout=DEADLINE + 5)

        # 1 s of the stand-in's clock before its 32-bit field wraps: hid-playstation on the client carries the wrap.
        stream_yaw(stand_in, first_ticks=(1 << 32) - 1_000_000 * TICKS_PER_MICROSECOND)
        reader.wait_for_frame(lambda frame: frame[1] == TAG_STEP * SAMPLES, "frame showing the stand-in's last sample")
        # (MSC_TIMESTAMP, accel X, gyro yaw) of each frame
        frames = [(frame[0], frame[1], frame[5]) for frame in reader.stop()]
    finally:
        stand_in.close()
    lost = [(at, f"{name}: {event['message']}") for name, process in (("serve", serve), ("connect", client))
            for at, event in process.timed_events("linkLost")]
    for process in (client, serve):
        assert process.stop() == 0, f"{process!r} did not exit with status 0 when told to stop\n{process.describe()}"
    return frames, lost, reader.dropped


def test_forwarded_motion_keeps_its_sensor_clock_through_a_jittery_link(padbridge, tmp_path, jittery_uplink,
                                                                         stall_witness):
    # A lost link would reconnect mid-stream (the host's pad neutral meanwhile): not what this test is about to pass.
    # What it checks is the clock of the frames. A round in which either side counted the link lost runs again with
    # a new host, client and stand-in, at most ROUNDS times. (With a second VM busy beside this one, the host at
    # 250 reports a second, each through uhid and hid-playstation, went 400 ms without answering now and then while
    # the stall witness ran on time: the guest's CPUs are too few for it, not its scheduler stalled. Whether a link
    # stays up under load is test_many_pads' and test_flood's to check.) (Samples the client fell behind reading are
    # missing, which the checks below allow: they check the clock of those that came.)
    # A round in which the test's own reader fell behind (SYN_DROPPED: the guest's Python, reading 250 frames a
    # second beside a second VM, seen once) says nothing about padbridge either, and runs again the same way.
    started = time.monotonic()
    stalled_rounds = []
    for round_number in range(ROUNDS):
        frames, lost, dropped = stream_one_round(padbridge, tmp_path / f"round{round_number}")
        if not lost and not dropped:
            break
        reasons = [f"{at - started:+.2f} s: {line}" for at, line in lost]
        if dropped:
            reasons.append("the test's own reader fell behind (SYN_DROPPED)")
        stalled_rounds.append(f"round {round_number + 1}: " + ", ".join(reasons))
    else:
        raise AssertionError(f"in each of {ROUNDS} rounds the link was counted lost or the test's reader fell "
                             f"behind: {stalled_rounds}; {stall_witness.describe(started)}")
    if stalled_rounds:
        print(f"rounds run again: {stalled_rounds}; {stall_witness.describe(started)}")

    # The frames that show a sample (frames before the stream show accel X 0), with the sample's number.
    shown = [(timestamp, accel_x // TAG_STEP - 1, yaw) for timestamp, accel_x, yaw in frames
             if accel_x > 0 and accel_x % TAG_STEP == 0 and accel_x // TAG_STEP <= SAMPLES]
    first = next(index for index, frame in enumerate(frames) if frame[1] > 0)
    assert len(shown) == len(frames) - first, f"frames after the stream began that show no sample: {frames[first:]}"
    samples = [k for _, k, _ in shown]
    assert samples == sorted(samples), f"a frame showed an older sample than the one before it: {samples}"

    # Each step between two frames: the virtual pad's MSC_TIMESTAMP step against the stand-in's own clock.
    errors, angle, path_deviation = [], 0.0, 0.0
    first_sample = shown[0][1]
    for (before, k_before, _), (after, k_after, yaw) in zip(shown, shown[1:]):
        step = (after - before) & 0xFFFFFFFF
        errors.append(step - (k_after - k_before) * STEP_MICROSECONDS)
        angle += yaw / GYRO_UNITS_PER_DEGREE_PER_SECOND * step / 1e6
        expected = YAW_DEGREES_PER_SECOND * (k_after - first_sample) * STEP_MICROSECONDS / 1e6
        path_deviation = max(path_deviation, abs(angle - expected))
    stand_in_angle = YAW_DEGREES_PER_SECOND * (shown[-1][1] - first_sample) * STEP_MICROSECONDS / 1e6
    off = [error for error in errors if error != 0]
    print(f"motion clock over a link with 5 ms ± 4 ms of jitter: {len(set(samples))} of {SAMPLES} samples shown in "
          f"{len(shown)} frames; MSC_TIMESTAMP steps differing from the stand-in's: {len(off)} of {len(errors)} "
          f"(error min {min(errors)} µs, max {max(errors)} µs, mean |error| "
          f"{sum(abs(e) for e in errors) / len(errors):.0f} µs); yaw integrated from MSC_TIMESTAMP over samples "
          f"{first_sample}...{shown[-1][1]}: {angle:.3f}° against the stand-in's {stand_in_angle:.3f}° "
          f"({(angle - stand_in_angle) / stand_in_angle * 100:+.3f} %); the integrated path strays at most "
          f"{path_deviation:.3f}° from the stand-in's")

    assert first_sample <= 5 and shown[-1][1] == SAMPLES - 1, f"the stream's start or end is missing: {samples}"
    assert all(yaw == YAW_DEGREES_PER_SECOND * GYRO_UNITS_PER_DEGREE_PER_SECOND for _, _, yaw in shown), \
        f"the yaw rate changed on the way: {sorted(set(yaw for _, _, yaw in shown))}"
    assert off == [], f"MSC_TIMESTAMP steps differ from the stand-in's sensor clock by {off} µs"
    assert abs(angle - stand_in_angle) <= 0.01 * stand_in_angle, (angle, stand_in_angle)

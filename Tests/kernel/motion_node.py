"""A reader of a motion node (a virtual DualSense's, as hid-playstation makes it) for the motion tests, and the
degrees its frames turned (yaw_integrated)."""

from __future__ import annotations

import threading

import evdev
from evdev import ecodes

from conftest import DEADLINE, read_available
from waiting import wait_for_item


class MotionNode:
    """Reads a motion node on its own thread, one (MSC_TIMESTAMP µs, accel x, y, z, gyro pitch, yaw, roll) per
    frame (a reader that fell behind would lose events to SYN_DROPPED, which would say nothing about padbridge)."""

    CODES = [ecodes.ABS_X, ecodes.ABS_Y, ecodes.ABS_Z, ecodes.ABS_RX, ecodes.ABS_RY, ecodes.ABS_RZ]

    def __init__(self, device: evdev.InputDevice):
        self.device = device
        self.frames: list[tuple[int, ...]] = []
        self.dropped = False
        self._cond = threading.Condition()
        self._done = threading.Event()
        self._values = {code: device.absinfo(code).value for code in self.CODES}
        self._timestamp = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        while not self._done.is_set():
            for event in read_available(self.device, 0.2):
                if event.type == ecodes.EV_ABS and event.code in self._values:
                    self._values[event.code] = event.value
                elif event.type == ecodes.EV_MSC and event.code == ecodes.MSC_TIMESTAMP:
                    self._timestamp = event.value & 0xFFFFFFFF
                elif event.type == ecodes.EV_SYN and event.code == ecodes.SYN_DROPPED:
                    self.dropped = True
                elif event.type == ecodes.EV_SYN and event.code == ecodes.SYN_REPORT and self._timestamp is not None:
                    with self._cond:
                        self.frames.append((self._timestamp, *(self._values[code] for code in self.CODES)))
                        self._cond.notify_all()

    def wait_for_frame(self, predicate, what: str, since: int = 0) -> int:
        def fail(reason):
            raise AssertionError(f"{self.device.path}: no {what}: {reason}; {len(self.frames)} frames read, the "
                                 f"last {self.frames[-3:]}")
        return wait_for_item(self._cond, self.frames, since, predicate, DEADLINE, fail)[0]

    def stop(self) -> list[tuple[int, ...]]:
        self._done.set()
        self._thread.join(DEADLINE)
        with self._cond:
            return list(self.frames)


GYRO_UNITS_PER_DEGREE_PER_SECOND = 1024   # hid-playstation's resolution on the virtual pad's motion node


def yaw_integrated(frames: list[tuple[int, ...]]) -> float:
    """Degrees turned between the first and the last frame: each frame's yaw rate over the time since the frame
    before it (the rate a sample reports is the one over the interval it ends), on the node's own MSC_TIMESTAMP."""
    return sum(after[5] / GYRO_UNITS_PER_DEGREE_PER_SECOND * ((after[0] - before[0]) & 0xFFFFFFFF) / 1e6
               for before, after in zip(frames, frames[1:]))

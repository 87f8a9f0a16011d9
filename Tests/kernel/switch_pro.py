"""A Nintendo Switch Pro Controller (057e:2009) that the kernel's hid-nintendo binds, over USB or Bluetooth (uhid).

Written from the guest kernel's drivers/hid/hid-nintendo.c (Linux 6.1) and the community's published protocol notes
(dekuNukem's Nintendo_Switch_Reverse_Engineering: the subcommand replies, the SPI flash map, the rumble encoding),
sharing no code with padbridge. What the driver asks, the stand-in answers as a pad does:

- USB commands (output 0x80): the handshake (0x02) and the baud rate (0x03) are acknowledged with `81 CMD`; "no
  timeout" (0x04) is not (a pad does not either). Over Bluetooth none is answered: the driver then knows it is not
  on USB (after its 2 × 1 s wait, as with a real pad).
- Subcommands (output 0x01: packet number, 8 rumble bytes, subcommand, data) are answered with input report 0x21
  (the pad's state, then ACK and the subcommand's id and reply data): device info (0x02: firmware, type 3 = Pro
  Controller, the pad's MAC), SPI flash reads (0x10: no user calibration, factory stick calibration centred at 2048
  with 1500 either way, IMU calibration offset 0 with the driver's default scales), report mode (0x03, 0x30: the pad
  then streams report 0x30 every 15 ms, as a wired pad does), IMU (0x40) and vibration (0x48) enable, the player
  lights (0x30) and the home light (0x38). Every subcommand is logged; so is every rumble block, from 0x01 and 0x10.
- Report 0x30 carries the buttons (24 bits), both sticks (12 bits an axis), the vibrator byte the driver resends
  rumble on, and three IMU samples (accel then gyro, x y z, s16).

The report descriptor is a vendor-defined one declaring the report ids the pad uses (hid-nintendo binds with
HID_CONNECT_HIDRAW only and never reads the descriptor's fields; the kernel needs the ids to deliver the reports).
"""

from __future__ import annotations

import os
import random
import struct
import threading
import time
from dataclasses import dataclass

from standins import (BUS_BLUETOOTH, BUS_USB, DEADLINE, UHID_DESTROY, UHID_EVENT_SIZE, UHID_INPUT2, UHID_OUTPUT,
                      UHID_OUTPUT_REPORT, uhid_create2, uhid_events)
from waiting import wait_for_item

VENDOR, PRODUCT = 0x057E, 0x2009
NAME = "Nintendo Switch Pro Controller"


def _vendor_descriptor(inputs: list[int], outputs: list[int]) -> bytes:
    body = bytearray.fromhex("0600ff 0901 a101")
    for usage, report_id in enumerate(inputs, 1):
        body += bytes([0x85, report_id, 0x09, usage]) + bytes.fromhex("1500 26ff00 7508 953f 8102")
    for usage, report_id in enumerate(outputs, 0x10):
        body += bytes([0x85, report_id, 0x09, usage]) + bytes.fromhex("7508 953f 9102")
    return bytes(body + b"\xc0")


# Inputs: subcommand reply, full report, NFC/IR report, simple HID report, USB reply; outputs: rumble and
# subcommand, rumble only, NFC/IR request, USB command.
DESCRIPTOR = _vendor_descriptor([0x21, 0x30, 0x31, 0x3F, 0x81], [0x01, 0x10, 0x11, 0x80])

# The buttons' bits in the report's 24-bit button field (hid-nintendo's JC_BTN_*), by SDL's positional name for the
# control hid-nintendo reports: B is BTN_SOUTH (`a`), A BTN_EAST (`b`), Y BTN_WEST (`x`), X BTN_NORTH (`y`), minus
# `back`, plus `start`, home `guide`, capture (BTN_Z) `misc1`; ZL and ZR (BTN_TL2/BTN_TR2) the triggers.
BUTTON_BITS = {
    "x": 0, "y": 1, "a": 2, "b": 3, "rightshoulder": 6, "righttrigger": 7, "back": 8, "start": 9,
    "rightstick": 10, "leftstick": 11, "guide": 12, "misc1": 13, "dpdown": 16, "dpup": 17, "dpright": 18,
    "dpleft": 19, "leftshoulder": 22, "lefttrigger": 23,
}

# The stick calibration the stand-in's flash holds: centre 2048, 1500 either way, on both axes of both sticks.
STICK_CENTER, STICK_RANGE = 2048, 1500

# The low band's amplitude (0-1003) for each of its encodings (the published rumble table; hid-nintendo's
# joycon_rumble_amplitudes), indexed by 2 × (byte 3 − 0x40) + (byte 2 >> 7) of a motor's four bytes.
RUMBLE_AMPLITUDES = [
    0, 10, 12, 14, 17, 20, 24, 28, 33, 40, 47, 56, 67, 80, 95, 112, 117, 123, 128, 134, 140, 146, 152, 159, 166,
    173, 181, 189, 198, 206, 215, 225, 230, 235, 240, 245, 251, 256, 262, 268, 273, 279, 286, 292, 298, 305, 311,
    318, 325, 332, 340, 347, 355, 362, 370, 378, 387, 395, 404, 413, 422, 431, 440, 450, 460, 470, 480, 491, 501,
    512, 524, 535, 547, 559, 571, 584, 596, 609, 623, 636, 650, 665, 679, 694, 709, 725, 741, 757, 773, 790, 808,
    825, 843, 862, 881, 900, 920, 940, 960, 981, 1003,
]
RUMBLE_AMPLITUDE_MAX = 1003


def rumble_amplitude(block: bytes) -> int:
    """The amplitude (0-1003) of one motor's four rumble bytes, from its low band's encoding."""
    index = 2 * (block[3] - 0x40) + (block[2] >> 7)
    return RUMBLE_AMPLITUDES[index] if 0 <= index < len(RUMBLE_AMPLITUDES) else -1


@dataclass
class Rumble:
    """One rumble block the driver sent (in output 0x10, or with a subcommand in 0x01): the left motor (the strong
    one: hid-nintendo puts FF_RUMBLE's strong magnitude there) and the right (weak), each 0-1003."""
    raw: bytes
    received: float

    @property
    def strong(self) -> int: return rumble_amplitude(self.raw[0:4])

    @property
    def weak(self) -> int: return rumble_amplitude(self.raw[4:8])

    def describe(self) -> str:
        return f"<rumble {self.raw.hex()} strong={self.strong} weak={self.weak}>"


@dataclass
class Subcommand:
    """One subcommand the driver sent: its id and data (player lights 0x30: `flash << 4 | on`)."""
    id: int
    data: bytes
    received: float

    def describe(self) -> str:
        return f"<subcommand {self.id:02x} {self.data[:8].hex()}>"


def _pack_stick(x: int, y: int) -> bytes:
    return bytes([x & 0xFF, ((x >> 8) & 0x0F) | ((y & 0x0F) << 4), (y >> 4) & 0xFF])


def _stick_calibration(left: bool) -> bytes:
    """Nine bytes of factory stick calibration, in the order the driver reads the left (max above, centre, min
    below) or the right stick (centre, min below, max above), two 12-bit values per three bytes."""
    centre = _pack_stick(STICK_CENTER, STICK_CENTER)
    span = _pack_stick(STICK_RANGE, STICK_RANGE)
    return span + centre + span if left else centre + span + span


def _imu_calibration() -> bytes:
    """24 bytes at 0x6020: accel offsets and scales, gyro offsets and scales (the driver's defaults: offset 0,
    accel scale 16384, gyro scale 13371; the driver's result is then 4096 per g and 14.247 per °/s per raw unit
    times 1000)."""
    return struct.pack("<12h", 0, 0, 0, 16384, 16384, 16384, 0, 0, 0, 13371, 13371, 13371)


class PhysicalSwitchPro:
    """A uhid Switch Pro Controller over `bus` ("usb" or "bluetooth") that hid-nintendo binds."""

    STREAM_PERIOD = 0.015   # a wired pad's report period in mode 0x30 (the driver's comment: 15 ms)

    def __init__(self, bus: str = "usb", mac_octets: bytes | None = None, stream: bool = True):
        """`mac_octets`: the pad's MAC (a new one by default; the same one is the same pad plugged in again).
        `stream`: whether the pad streams report 0x30 once asked (False: only the test's reports are sent)."""
        self.bus = BUS_USB if bus == "usb" else BUS_BLUETOOTH
        rng = random.Random()
        self.mac_octets = mac_octets or bytes([0x98, 0xB6, 0xE9] + [rng.randrange(256) for _ in range(3)])
        self.mac = ":".join(f"{o:02X}" for o in self.mac_octets)   # as hid-nintendo prints it (its uniq)
        self.phys = f"padbridge-switch-{rng.randrange(1 << 32):08x}"
        self.subcommands: list[Subcommand] = []
        self.rumbles: list[Rumble] = []
        self.usb_commands: list[int] = []
        self.bad_reports: list[bytes] = []
        self._cond = threading.Condition()
        self._timer = 0
        self._buttons = 0
        self._left = (STICK_CENTER, STICK_CENTER)
        self._right = (STICK_CENTER, STICK_CENTER)
        self._imu = (0, 0, 4096, 0, 0, 0)   # flat, at rest: gravity on z (up, out of the face), 4096 per g
        self._streaming = False
        self._stream_paused = not stream
        self._stop = threading.Event()
        self._send_lock = threading.Lock()
        self._unplugged = False
        self.fd = os.open("/dev/uhid", os.O_RDWR | os.O_CLOEXEC)
        self._reader = threading.Thread(target=self._serve, daemon=True)
        self._reader.start()
        self._streamer = threading.Thread(target=self._stream, daemon=True)
        self._streamer.start()
        os.write(self.fd, uhid_create2(NAME.encode(), self.phys, self.mac.lower().encode(), DESCRIPTOR, self.bus,
                                       VENDOR, PRODUCT, 0x0200))

    # -- the pad's side ------------------------------------------------------------------------------------------

    def _send(self, report: bytes):
        event = bytearray(UHID_EVENT_SIZE)
        struct.pack_into("<IH", event, 0, UHID_INPUT2, len(report))
        event[6:6 + len(report)] = report
        with self._send_lock:
            if not self._unplugged:
                os.write(self.fd, bytes(event))

    def _state_bytes(self, report_id: int) -> bytearray:
        report = bytearray(64)
        report[0] = report_id
        self._timer = (self._timer + 1) & 0xFF
        report[1] = self._timer
        report[2] = 0x91 if self.bus == BUS_USB else 0x90   # battery full; on USB, powered by the host
        report[3:6] = self._buttons.to_bytes(3, "little")
        report[6:9] = _pack_stick(*self._left)
        report[9:12] = _pack_stick(*self._right)
        report[12] = 0x0B   # the vibrator byte: non-zero, so the driver resends rumble on reports
        return report

    def _full_report(self) -> bytes:
        report = self._state_bytes(0x30)
        for sample in range(3):
            struct.pack_into("<6h", report, 13 + 12 * sample, *self._imu)
        return bytes(report)

    def _reply(self, subcommand: int, data: bytes = b"", ack: int = 0x80):
        report = self._state_bytes(0x21)
        report[13] = ack
        report[14] = subcommand
        report[15:15 + len(data)] = data
        self._send(bytes(report))

    # The SPI flash the pad's calibration lives in, as far as anyone reads it: factory stick calibration (left at
    # 0x603D, right at 0x6046: hid-nintendo reads each, SDL both at once), factory IMU calibration at 0x6020; the rest
    # (the user calibration's magic at 0x8010, 0x801B, 0x8026: none) reads as erased flash.
    FLASH = {0x603D: _stick_calibration(left=True), 0x6046: _stick_calibration(left=False), 0x6020: _imu_calibration()}

    def _flash(self, address: int, size: int) -> bytes:
        image = {start + k: value for start, data in self.FLASH.items() for k, value in enumerate(data)}
        return bytes(image.get(address + k, 0xFF) for k in range(size))

    def _answer(self, data: bytes):
        if data[0] == 0x80 and len(data) >= 2:
            with self._cond:
                self.usb_commands.append(data[1])
                self._cond.notify_all()
            if self.bus == BUS_USB and data[1] in (0x01, 0x02, 0x03):
                reply = bytearray(64)
                reply[0:2] = bytes([0x81, data[1]])
                self._send(bytes(reply))
            return
        if data[0] not in (0x01, 0x10) or len(data) < 10:
            with self._cond:
                self.bad_reports.append(data)
            return
        now = time.monotonic()
        with self._cond:
            self.rumbles.append(Rumble(raw=bytes(data[2:10]), received=now))
            self._cond.notify_all()
        if data[0] != 0x01 or len(data) < 11:
            return
        subcommand, payload = data[10], bytes(data[11:])
        with self._cond:
            self.subcommands.append(Subcommand(id=subcommand, data=payload, received=now))
            self._cond.notify_all()
        if subcommand == 0x02:
            info = bytes([0x03, 0x48, 0x03, 0x02]) + self.mac_octets + bytes([0x01, 0x01])
            self._reply(0x02, info, ack=0x82)
        elif subcommand == 0x10:
            address, size = struct.unpack_from("<IB", payload, 0)
            self._reply(0x10, payload[:5] + self._flash(address, size), ack=0x90)
        else:
            self._reply(subcommand)
            if subcommand == 0x03 and payload[:1] == b"\x30":
                with self._cond:
                    self._streaming = True
                    self._cond.notify_all()

    def _serve(self):
        for event in uhid_events(self.fd, self._stop.is_set):
            if struct.unpack_from("<I", event, 0)[0] == UHID_OUTPUT:
                size, rtype = struct.unpack_from("<HB", event, 4100)
                if rtype == UHID_OUTPUT_REPORT and size > 0:
                    self._answer(bytes(event[4:4 + size]))

    def _stream(self):
        """Report 0x30 every 15 ms once the driver asked for it, as the pad does (the driver's subcommand pacing and
        its periodic rumble resend run on these reports); paused while a test sends reports itself."""
        next_at = time.monotonic()
        while not self._stop.is_set():
            with self._cond:
                if not self._streaming or self._stream_paused:
                    self._cond.wait(0.1)
                    next_at = time.monotonic()
                    continue
            self._send(self._full_report())
            next_at += self.STREAM_PERIOD
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    # -- what a test does --------------------------------------------------------------------------------------------

    def send_state(self, buttons=(), left=(0, 0), right=(0, 0)):
        """The pad's controls now (sent at once, then in every streamed report): buttons by SDL name, sticks as raw
        offsets from the calibrated centre (−1500...1500, y up positive, as the pad's sticks count)."""
        bits = 0
        for name in buttons:
            bits |= 1 << BUTTON_BITS[name]
        with self._cond:
            self._buttons = bits
            self._left = (STICK_CENTER + left[0], STICK_CENTER + left[1])
            self._right = (STICK_CENTER + right[0], STICK_CENTER + right[1])
        self._send(self._full_report())

    def send_motion(self, gyro=(0, 0, 0), accel=(0, 0, 4096)):
        """One report 0x30 whose three IMU samples are all (accel, gyro): raw units, the pad's axes (x toward the
        triggers, y to the left, z up out of the face); this stand-in's calibration makes accel 4096 per g and gyro
        14.247 per °/s in the driver's result."""
        with self._cond:
            self._imu = (*accel, *gyro)
        self._send(self._full_report())

    # -- waiting ---------------------------------------------------------------------------------------------------

    def mark(self) -> tuple[int, int]:
        with self._cond:
            return len(self.subcommands), len(self.rumbles)

    def wait_subcommand(self, predicate, since: int = 0, timeout: float = DEADLINE, what: str = "subcommand"):
        def fail(reason):
            with self._cond:
                seen = " ".join(s.describe() for s in self.subcommands[since:]) or "(none)"
            raise AssertionError(f"Switch stand-in {self.mac}: no {what}: {reason}; subcommands since #{since}: {seen}")
        return wait_for_item(self._cond, self.subcommands, since, lambda s: s if predicate(s) else None, timeout, fail)

    def wait_rumble(self, predicate, since: int = 0, timeout: float = DEADLINE, what: str = "rumble"):
        def fail(reason):
            with self._cond:
                seen = " ".join(r.describe() for r in self.rumbles[since:][-12:]) or "(none)"
            raise AssertionError(f"Switch stand-in {self.mac}: no {what}: {reason}; the last rumble blocks: {seen}")
        return wait_for_item(self._cond, self.rumbles, since, lambda r: r if predicate(r) else None, timeout, fail)

    def player_lights(self, since: int = 0) -> list[int]:
        """The `on` nibble of every player-lights subcommand since `since`."""
        with self._cond:
            return [s.data[0] & 0x0F for s in self.subcommands[since:] if s.id == 0x30]

    def hid_directory(self) -> str | None:
        """The HID device's sysfs directory (`/sys/bus/hid/devices/0003:057E:2009.NNNN`), by its phys."""
        root = "/sys/bus/hid/devices"
        for name in sorted(os.listdir(root)):
            try:
                with open(f"{root}/{name}/uevent") as uevent:
                    if f"HID_PHYS={self.phys}" in uevent.read().splitlines():
                        return f"{root}/{name}"
            except OSError:
                continue
        return None

    def nodes(self) -> dict[str, str]:
        """The event nodes hid-nintendo made, by role: "pad" and "imu"."""
        found = {}
        for name in sorted(os.listdir("/sys/class/input")):
            if not name.startswith("event"):
                continue
            try:
                with open(f"/sys/class/input/{name}/device/phys") as phys, \
                        open(f"/sys/class/input/{name}/device/name") as title:
                    if phys.read().strip() != self.phys:
                        continue
                    found["imu" if title.read().strip().endswith("IMU") else "pad"] = f"/dev/input/{name}"
            except OSError:
                continue
        return found

    def wait_bound(self, timeout: float = DEADLINE) -> dict[str, str]:
        """Waits until hid-nintendo has finished its probe (the pad streams: the driver asked for mode 0x30 and
        enabled the IMU) and made both event nodes; returns them ("pad", "imu")."""
        self.wait_subcommand(lambda s: s.id == 0x40, 0, timeout, "IMU enable (0x40), the probe's last subcommand")
        deadline = time.monotonic() + timeout
        while True:
            nodes = self.nodes()
            if len(nodes) == 2 and all(os.path.exists(path) for path in nodes.values()):
                return nodes
            assert time.monotonic() < deadline, f"hid-nintendo made no event nodes for {self.phys}: {nodes}"
            with self._cond:   # the stream's reports, every 15 ms, pace this check
                self._cond.wait(0.05)

    def close(self):
        """Unplugs the pad (idempotent)."""
        with self._send_lock:
            if self._unplugged:
                return
            self._unplugged = True
        self._stop.set()
        try:
            destroy = bytearray(UHID_EVENT_SIZE)
            struct.pack_into("<I", destroy, 0, UHID_DESTROY)
            os.write(self.fd, bytes(destroy))
        except OSError:
            pass
        self._reader.join(5)
        self._streamer.join(5)
        os.close(self.fd)

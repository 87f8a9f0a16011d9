"""Independent stand-ins for physical pads, for the kernel suite's feedback tests.

`PhysicalDualSense` is a uhid DualSense on the USB or Bluetooth bus that hid-playstation binds like real hardware
(it answers the probe's feature reports 0x09, 0x20 and 0x05, with CRCs on Bluetooth). It records every output report
the kernel hands it (UHID_OUTPUT), checks the Bluetooth CRC itself, and lets a test wait for the next report matching
a predicate. Written from the protocol notes, independently of padbridge's Swift codecs: the descriptors are the
only data copied (from Sources/PadCore/Virtual/DualSenseDescriptor.swift).

`RumbleOnlyPad` is a python-evdev uinput pad with FF_RUMBLE standing in for a non-Sony controller; it answers the
force-feedback upload/erase handshake itself and records uploads and play/stop events.

No sleeps: waits block on a condition variable fed by reader threads, with deadlines.
"""

from __future__ import annotations

import errno
import fcntl
import os
import random
import select
import struct
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Iterator

from waiting import wait_for_item

DEADLINE = float(os.environ.get("KERNEL_SUITE_DEADLINE", "30"))

# 273-byte USB and 279-byte Bluetooth DualSense report descriptors (data, copied from DualSenseDescriptor.swift).
USB_DESCRIPTOR = bytes.fromhex(
    "05010905a1018501093009310932093509330934150026ff007508950681020600ff0920950181020501093915002507"
    "3500463b016514750495018142650005091901290f150025017501950f81020600ff0921950d81020600ff0922150026"
    "ff0075089534810285020923952f9102850509339528b10285080934952fb102850909249513b102850a0925951ab102"
    "85200926953fb102852109279504b10285220940953fb10285800928953fb10285810929953fb1028582092a9509b102"
    "8583092b953fb1028584092c953fb1028585092d9502b10285a0092e9501b10285e0092f953fb10285f00930953fb102"
    "85f10931953fb10285f20932950fb10285f40935953fb10285f509369503b102c0"
)
BLUETOOTH_DESCRIPTOR = bytes.fromhex(
    "05010905a10185010930093109320935150026ff007508950481020939150025073500463b0165147504950181426500"
    "05091901290e150025017501950e8102750695018101050109330934150026ff007508950281020600ff150026ff0075"
    "08954d853109319102093b810285320932958d91028533093395cd910285340934960d01910285350935964d01910285"
    "360936968d0191028537093796cd01910285380938960d0291028539093996220291020680ff850509339528b1028508"
    "0934952fb102850909249513b10285200926953fb10285220940953fb10285800928953fb10285810929953fb1028582"
    "092a9509b1028583092b953fb10285f10931953fb10285f20932950fb10285f00930953fb102c0"
)
assert len(USB_DESCRIPTOR) == 273 and len(BLUETOOTH_DESCRIPTOR) == 279

# struct uhid_event (linux/uhid.h), packed; sizeof 4380.
UHID_EVENT_SIZE = 4380
UHID_DESTROY, UHID_START, UHID_STOP, UHID_OPEN, UHID_CLOSE, UHID_OUTPUT = 1, 2, 3, 4, 5, 6
UHID_GET_REPORT, UHID_GET_REPORT_REPLY, UHID_CREATE2, UHID_INPUT2, UHID_SET_REPORT, UHID_SET_REPORT_REPLY = \
    9, 10, 11, 12, 13, 14
UHID_OUTPUT_REPORT = 1  # rtype
BUS_USB, BUS_BLUETOOTH = 0x03, 0x05


def crc32_with_seed(seed: int, data: bytes) -> int:
    return zlib.crc32(bytes([seed]) + data) & 0xFFFFFFFF


@dataclass
class OutputReport:
    """One UHID_OUTPUT output report as the stand-in received it, with the common block decoded (doc §2.2)."""

    raw: bytes
    received: float
    bus: int
    crc_ok: bool | None = None  # Bluetooth only
    sequence: int | None = None  # Bluetooth kernel layout: byte 1 >> 4
    c: int = 1  # offset of the common block

    def byte(self, offset: int) -> int:
        return self.raw[self.c + offset]

    @property
    def valid_flag0(self): return self.byte(0)
    @property
    def valid_flag1(self): return self.byte(1)
    @property
    def valid_flag2(self): return self.byte(38)
    @property
    def motor_weak(self): return self.byte(2)
    @property
    def motor_strong(self): return self.byte(3)
    @property
    def mic_led(self): return self.byte(8)
    @property
    def power_save(self): return self.byte(9)
    @property
    def right_trigger(self): return self.raw[self.c + 10:self.c + 21]
    @property
    def left_trigger(self): return self.raw[self.c + 21:self.c + 32]
    @property
    def player_leds(self): return self.byte(43)
    @property
    def lightbar(self): return tuple(self.raw[self.c + 44:self.c + 47])

    @property
    def rumble_flagged(self) -> bool:
        return bool(self.valid_flag0 & 0x01 or self.valid_flag2 & 0x04)

    def describe(self) -> str:
        head = f"{self.raw[0]:02x} vf0={self.valid_flag0:02x} vf1={self.valid_flag1:02x} vf2={self.valid_flag2:02x}"
        extra = ""
        if self.bus == BUS_BLUETOOTH:
            extra = f" seq={self.sequence} crc_ok={self.crc_ok}"
        return (f"<{head} motors={self.motor_strong}/{self.motor_weak} rgb={self.lightbar} "
                f"players={self.player_leds:02x} mic={self.mic_led} R={self.right_trigger.hex()} "
                f"L={self.left_trigger.hex()}{extra}>")


def uhid_create2(name: bytes, phys: str, uniq: bytes, descriptor: bytes, bus: int, vendor: int, product: int,
                 version: int) -> bytes:
    """The UHID_CREATE2 event of a device: name, phys and uniq strings, the report descriptor and its ids."""
    event = bytearray(UHID_EVENT_SIZE)
    struct.pack_into("<I", event, 0, UHID_CREATE2)
    event[4:4 + len(name)] = name
    event[132:132 + len(phys)] = phys.encode()
    event[196:196 + len(uniq)] = uniq
    struct.pack_into("<HHIIII", event, 260, len(descriptor), bus, vendor, product, version, 0)
    event[280:280 + len(descriptor)] = descriptor
    return bytes(event)


def uhid_events(fd: int, stopped) -> "Iterator[bytes]":
    """Each event the kernel hands a uhid device (UHID_START, UHID_OUTPUT, UHID_GET_REPORT...), until `stopped()`
    or the device's descriptor fails (it was destroyed)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not stopped():
        if not poller.poll(100):
            continue
        try:
            event = os.read(fd, UHID_EVENT_SIZE)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EINTR):
                continue
            return
        if len(event) >= 4:
            yield event


class PhysicalDualSense:
    """A uhid DualSense that hid-playstation binds as if it were plugged in over `bus` ("usb" or "bluetooth")."""

    def __init__(self, bus: str = "usb", update_version: int = 0x0224, mac: str | None = None,
                 product: int = 0x0CE6):
        """`mac`: the pad's address (a new one by default; the same one is the same pad connected again).
        `product`: 0x0CE6 a DualSense, 0x0DF2 a DualSense Edge (the same reports, its back buttons in byte 10)."""
        self.bus = BUS_USB if bus == "usb" else BUS_BLUETOOTH
        self.product = product
        rng = random.Random()
        # A locally administered unicast MAC, different on every run (hid-playstation rejects duplicates).
        octets = [rng.randrange(256) for _ in range(6)]
        octets[0] = (octets[0] & 0xFC) | 0x02
        self.mac = mac or ":".join(f"{o:02x}" for o in octets)  # as the kernel prints it: octets[0] is the MSB
        self.phys = f"padbridge-standin-{rng.randrange(1 << 32):08x}"
        self.update_version = update_version
        self.outputs: list[OutputReport] = []
        self.bad_reports: list[bytes] = []
        self.events: list[int] = []
        self.feature_requests: list[int] = []
        # Seconds before each feature report is answered, as a pad over a slow or failing link (0: at once).
        self.feature_delay = 0.0
        self._input_sequence = 0
        self._cond = threading.Condition()
        self._stop = False
        self.fd = os.open("/dev/uhid", os.O_RDWR | os.O_CLOEXEC)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._write(self._create2())

    # -- uhid ------------------------------------------------------------------------------------------------------

    def _create2(self) -> bytes:
        descriptor = USB_DESCRIPTOR if self.bus == BUS_USB else BLUETOOTH_DESCRIPTOR
        return uhid_create2(b"Sony Interactive Entertainment DualSense Wireless Controller (padbridge stand-in)",
                            self.phys, b"", descriptor, self.bus, 0x054C, self.product,
                            0x0111 if self.bus == BUS_USB else 0x0100)

    def _write(self, event: bytes):
        os.write(self.fd, event)

    def _send_report(self, report: bytes):
        """One input report, as the device sends it (UHID_INPUT2)."""
        event = bytearray(UHID_EVENT_SIZE)
        struct.pack_into("<IH", event, 0, UHID_INPUT2, len(report))
        event[6:6 + len(report)] = report
        self._write(bytes(event))

    def _seal(self, report: bytearray) -> bytes:
        """Feature replies carry a CRC (seed 0xA3) on Bluetooth only."""
        if self.bus == BUS_BLUETOOTH:
            struct.pack_into("<I", report, len(report) - 4, crc32_with_seed(0xA3, bytes(report[:-4])))
        return bytes(report)

    def feature(self, rnum: int) -> bytes | None:
        if rnum == 0x09:
            report = bytearray(20)
            report[0] = 0x09
            octets = bytes.fromhex(self.mac.replace(":", ""))
            report[1:7] = octets[::-1]  # least-significant byte first
            return self._seal(report)
        if rnum == 0x20:
            report = bytearray(64)
            report[0] = 0x20
            report[1:12] = b"Nov 22 2026"
            report[12:20] = b"01:23:45"
            struct.pack_into("<II", report, 24, 0x00000617, 0x0110002A)
            struct.pack_into("<H", report, 44, self.update_version)
            return self._seal(report)
        if rnum == 0x05:
            report = bytearray(41)
            report[0] = 0x05
            # Identity calibration: bias 0; pitch/yaw/roll ±8640; speed 540/540; accel ±8192 on each axis.
            struct.pack_into("<hhh", report, 1, 0, 0, 0)
            struct.pack_into("<14h", report, 7, 8640, -8640, 8640, -8640, 8640, -8640, 540, 540,
                             8192, -8192, 8192, -8192, 8192, -8192)
            return self._seal(report)
        return None

    def _serve(self):
        for event in uhid_events(self.fd, lambda: self._stop):
            kind = struct.unpack_from("<I", event, 0)[0]
            if kind == UHID_GET_REPORT:
                request_id, rnum = struct.unpack_from("<IB", event, 4)
                self.feature_requests.append(rnum)
                data = self.feature(rnum)
                reply = bytearray(UHID_EVENT_SIZE)
                struct.pack_into("<IIHH", reply, 0, UHID_GET_REPORT_REPLY, request_id, 0 if data else errno.EIO,
                                 len(data or b""))
                if data:
                    reply[12:12 + len(data)] = data
                if self.feature_delay > 0:
                    threading.Timer(self.feature_delay, self._write, args=(bytes(reply),)).start()
                else:
                    self._write(bytes(reply))
            elif kind == UHID_SET_REPORT:
                request_id = struct.unpack_from("<I", event, 4)[0]
                reply = bytearray(UHID_EVENT_SIZE)
                struct.pack_into("<IIH", reply, 0, UHID_SET_REPORT_REPLY, request_id, errno.EIO)
                self._write(bytes(reply))
            elif kind == UHID_OUTPUT:
                size, rtype = struct.unpack_from("<HB", event, 4100)
                if rtype == UHID_OUTPUT_REPORT:
                    self._record(bytes(event[4:4 + size]))
            with self._cond:
                self.events.append(kind)
                self._cond.notify_all()

    def send_input(self, cross: bool = False, gyro: tuple[int, int, int] = (0, 0, 0),
                   accel: tuple[int, int, int] = (0, 0, 0), sensor_ticks: int = 0, back_buttons: int = 0):
        """One USB input report (0x01, 64 bytes, hid-playstation's layout): sticks centred, no touch, the cross
        button (BTN_SOUTH) as given; raw gyro (pitch, yaw, roll: 1/16 °/s under the identity calibration this
        stand-in reports) and accel (x, y, z: 8192 per g), and the sensor clock (u32, 1/3 µs ticks: common block
        bytes 15-20, 21-26 and 27-30). `back_buttons`: an Edge's byte 10 (0x80 right paddle, 0x40 left paddle, 0x20
        right Fn, 0x10 left Fn)."""
        assert self.bus == BUS_USB, "input reports are sent on the USB bus only"
        report = bytearray(64)
        report[0] = 0x01
        report[1:5] = b"\x80\x80\x80\x80"  # sticks centred
        self._input_sequence = (self._input_sequence + 1) & 0xFF
        report[7] = self._input_sequence
        report[8] = 0x08 | (0x20 if cross else 0)  # hat released, cross
        report[10] = back_buttons
        struct.pack_into("<hhhhhhI", report, 1 + 15, *gyro, *accel, sensor_ticks & 0xFFFFFFFF)
        report[33] = report[37] = 0x80  # both touch points up
        self._send_report(bytes(report))

    def _record(self, data: bytes):
        report = OutputReport(raw=data, received=time.monotonic(), bus=self.bus)
        if self.bus == BUS_USB:
            if data[0] != 0x02 or len(data) < 48:
                self.bad_reports.append(data)
                return
            report.c = 1
        else:
            if data[0] != 0x31 or len(data) < 78:
                self.bad_reports.append(data)
                return
            report.crc_ok = struct.unpack_from("<I", data, 74)[0] == crc32_with_seed(0xA2, data[:74])
            if data[1] & 0x02:  # SDL2 layout
                report.c = 2
            else:
                report.c = 3
                report.sequence = data[1] >> 4
        with self._cond:
            self.outputs.append(report)
            self._cond.notify_all()

    # -- waiting ---------------------------------------------------------------------------------------------------

    def mark(self) -> int:
        with self._cond:
            return len(self.outputs)

    def wait_report(self, predicate, since: int = 0, timeout: float = DEADLINE, what: str = "output report",
                    pump=None):
        """Returns (index, report) of the first report at index >= since for which predicate holds. `pump`, when
        given, is called between waits of at most 50 ms (SDL needs its events pumped to send anything)."""
        def fail(reason):
            raise AssertionError(f"stand-in {self.mac}: no {what}: {reason}; received since #{since}: "
                                 f"{self.describe(since)}")

        return wait_for_item(self._cond, self.outputs, since, lambda report: report if predicate(report) else None,
                             timeout, fail, pump=pump)

    def reports_since(self, since: int) -> list[OutputReport]:
        with self._cond:
            return list(self.outputs[since:])

    def describe(self, since: int = 0) -> str:
        with self._cond:
            return "\n  " + "\n  ".join(r.describe() for r in self.outputs[since:]) if self.outputs[since:] else "(none)"

    def wait_bound(self, timeout: float = DEADLINE) -> str:
        """Waits until hid-playstation has bound the pad and finished its probe-time LED reports (lightbar and
        player LEDs); returns the hidraw node."""
        seen = {"lightbar": False, "players": False}

        def probe_done(report):
            seen["lightbar"] |= bool(report.valid_flag1 & 0x04)
            seen["players"] |= bool(report.valid_flag1 & 0x10)
            return all(seen.values())

        self.wait_report(probe_done, 0, timeout, "probe-time lightbar and player-LED reports from hid-playstation")
        node = self.hidraw_node()
        assert node, f"no hidraw node with HID_PHYS={self.phys}"
        return node

    def hidraw_node(self) -> str | None:
        root = "/sys/class/hidraw"
        for name in sorted(os.listdir(root)):
            try:
                with open(f"{root}/{name}/device/uevent") as uevent:
                    lines = uevent.read().splitlines()
            except OSError:
                continue
            if f"HID_PHYS={self.phys}" in lines:
                return f"/dev/{name}"
        return None

    def leds_directory(self) -> str:
        node = os.path.basename(self.hidraw_node())
        return f"/sys/class/hidraw/{node}/device/leds"

    def close(self):
        try:
            destroy = bytearray(UHID_EVENT_SIZE)
            struct.pack_into("<I", destroy, 0, UHID_DESTROY)
            self._write(bytes(destroy))
        except OSError:
            pass
        self._stop = True
        self._thread.join(5)
        os.close(self.fd)


# --------------------------------------------------------------------------------------------------------------
# An Xbox Series pad over Bluetooth (045e:0b13, model 1914), for hid-microsoft

# Its HID report descriptor, 283 bytes, as the pad presents it over Bluetooth (read from a real pad's
# /sys/.../report_descriptor and published in xpadneo's docs/descriptors/xbxs.md). Report 0x01 in: X, Y, Z, Rz
# (u16 0-65535: left stick, right stick), Brake and Accelerator (10 bits, 0-1023: left and right trigger), a hat
# (1-8, 0 released), 15 buttons, the share button (Consumer Record). Report 0x03 out: hid-microsoft's rumble.
XBOX_BLUETOOTH_DESCRIPTOR = bytes.fromhex(
    "05 01 09 05 a1 01 85 01 09 01 a1 00 09 30 09 31 15 00 27 ff"
    "ff 00 00 95 02 75 10 81 02 c0 09 01 a1 00 09 32 09 35 15 00"
    "27 ff ff 00 00 95 02 75 10 81 02 c0 05 02 09 c5 15 00 26 ff"
    "03 95 01 75 0a 81 02 15 00 25 00 75 06 95 01 81 03 05 02 09"
    "c4 15 00 26 ff 03 95 01 75 0a 81 02 15 00 25 00 75 06 95 01"
    "81 03 05 01 09 39 15 01 25 08 35 00 46 3b 01 66 14 00 75 04"
    "95 01 81 42 75 04 95 01 15 00 25 00 35 00 45 00 65 00 81 03"
    "05 09 19 01 29 0f 15 00 25 01 75 01 95 0f 81 02 15 00 25 00"
    "75 01 95 01 81 03 05 0c 0a b2 00 15 00 25 01 95 01 75 01 81"
    "02 15 00 25 00 75 07 95 01 81 03 05 0f 09 21 85 03 a1 02 09"
    "97 15 00 25 01 75 04 95 01 91 02 15 00 25 00 75 04 95 01 91"
    "03 09 70 15 00 25 64 75 08 95 04 91 02 09 50 66 01 10 55 0e"
    "15 00 26 ff 00 75 08 95 01 91 02 09 a7 15 00 26 ff 00 75 08"
    "95 01 91 02 65 00 55 00 09 7c 15 00 26 ff 00 75 08 95 01 91"
    "02 c0 c0"
)
assert len(XBOX_BLUETOOTH_DESCRIPTOR) == 283, len(XBOX_BLUETOOTH_DESCRIPTOR)

# Buttons by their HID button number (1-15) as the pad reports them; SDL's database and hid-generic agree.
XBOX_BLUETOOTH_BUTTONS = {
    "a": 1, "b": 2, "x": 4, "y": 5, "leftshoulder": 7, "rightshoulder": 8, "back": 11, "start": 12, "guide": 13,
    "leftstick": 14, "rightstick": 15,
}
XBOX_BLUETOOTH_HAT = {"dpup": 1, "dpright": 3, "dpdown": 5, "dpleft": 7}


@dataclass
class XboxRumbleReport:
    """hid-microsoft's output report 0x03: enable bits, four magnitudes 0-100 (left trigger, right trigger, strong,
    weak), duration and start delay in 10 ms, loop count."""
    raw: bytes
    received: float

    @property
    def strong(self) -> int: return self.raw[4]

    @property
    def weak(self) -> int: return self.raw[5]

    def describe(self) -> str:
        return f"0x03 triggers {self.raw[2]}/{self.raw[3]} grips {self.strong}/{self.weak} ({self.raw.hex()})"

    @property
    def left_trigger(self) -> int: return self.raw[2]

    @property
    def right_trigger(self) -> int: return self.raw[3]


class PhysicalXboxBluetooth(PhysicalDualSense):
    """A uhid Xbox Series pad on Bluetooth (bus 0x05, 045e:0b13) that hid-microsoft binds (rumble through its
    force feedback) over hid-generic's mapping of the descriptor; records every output report."""

    VERSION = 0x0511   # the firmware version field SDL's database has a mapping for (050000005e040000130b000011050000)

    def __init__(self, mac: str | None = None):
        super().__init__("bluetooth", mac=mac)

    def _create2(self) -> bytes:
        # uniq: the pad's Bluetooth address
        return uhid_create2(b"Xbox Wireless Controller", self.phys, self.mac.encode(), XBOX_BLUETOOTH_DESCRIPTOR,
                            BUS_BLUETOOTH, 0x045E, 0x0B13, self.VERSION)

    def feature(self, rnum: int) -> bytes | None:
        return None

    def _record(self, data: bytes):
        with self._cond:
            if data[:1] == b"\x03" and len(data) == 9:
                self.outputs.append(XboxRumbleReport(raw=data, received=time.monotonic()))
            else:
                self.bad_reports.append(data)
            self._cond.notify_all()

    def send_state(self, buttons=(), left=(0, 0), right=(0, 0), left_trigger=0, right_trigger=0, share=False):
        """One input report 0x01: sticks as signed offsets from the centre (-32768...32767, y down positive, as the
        pad's HID axes run), triggers 0-1023, buttons and the d-pad by SDL name, the share button."""
        report = bytearray(17)
        report[0] = 0x01
        struct.pack_into("<HHHHHH", report, 1, left[0] + 32768, left[1] + 32768, right[0] + 32768,
                         right[1] + 32768, left_trigger, right_trigger)
        hat = [XBOX_BLUETOOTH_HAT[name] for name in buttons if name in XBOX_BLUETOOTH_HAT]
        report[13] = hat[0] if hat else 0
        bits = 0
        for name in buttons:
            if name in XBOX_BLUETOOTH_BUTTONS:
                bits |= 1 << (XBOX_BLUETOOTH_BUTTONS[name] - 1)
        struct.pack_into("<H", report, 14, bits)
        report[16] = 0x01 if share else 0x00
        self._send_report(bytes(report))

    def wait_bound(self, timeout: float = DEADLINE) -> str:
        """Waits (on kernel uevents) until the pad's event node exists; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            node = self.event_node()
            if node and os.path.exists(node):
                return node
            assert time.monotonic() < deadline, f"no event node for the Xbox stand-in {self.phys} within {timeout} s"
            with self._cond:
                self._cond.wait(0.05)

    def event_node(self) -> str | None:
        root = "/sys/class/input"
        for name in sorted(os.listdir(root)):
            if not name.startswith("event"):
                continue
            try:
                with open(f"{root}/{name}/device/phys") as phys:
                    if phys.read().strip() == self.phys:
                        return f"/dev/input/{name}"
            except OSError:
                continue
        return None


# --------------------------------------------------------------------------------------------------------------
# A uinput pad with FF_RUMBLE (a non-Sony controller)

EV_UINPUT, UI_FF_UPLOAD, UI_FF_ERASE = 0x0101, 1, 2
UI_BEGIN_FF_UPLOAD, UI_END_FF_UPLOAD = 0xC06855C8, 0x406855C9
UI_BEGIN_FF_ERASE, UI_END_FF_ERASE = 0xC00C55CA, 0x400C55CB
EV_FF, FF_RUMBLE = 0x15, 0x50


@dataclass
class FFRecord:
    kind: str  # "upload", "play", "stop", "erase"
    effect_id: int
    strong: int = 0
    weak: int = 0
    length: int = 0
    received: float = field(default_factory=time.monotonic)


class RumbleOnlyPad:
    """python-evdev UInput with EV_FF/FF_RUMBLE and BTN_A; answers uploads and erases, records them and EV_FF
    play/stop."""

    def __init__(self, name: str = "padbridge stand-in rumble pad"):
        import evdev
        from evdev import ecodes

        self.ui = evdev.UInput(
            events={ecodes.EV_FF: [ecodes.FF_RUMBLE], ecodes.EV_KEY: [ecodes.BTN_A]},
            name=name, vendor=0x1234, product=0x5678, max_effects=4)
        self.records: list[FFRecord] = []
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def path(self) -> str:
        return self.ui.device.path

    def _serve(self):
        poller = select.poll()
        poller.register(self.ui.fd, select.POLLIN)
        size = struct.calcsize("llHHi")
        while not self._stop:
            if not poller.poll(100):
                continue
            try:
                data = os.read(self.ui.fd, size * 16)
            except BlockingIOError:
                continue
            except OSError:
                return
            for offset in range(0, len(data) - size + 1, size):
                _, _, kind, code, value = struct.unpack_from("llHHi", data, offset)
                if kind == EV_UINPUT and code == UI_FF_UPLOAD:
                    self._upload(value)
                elif kind == EV_UINPUT and code == UI_FF_ERASE:
                    self._erase(value)
                elif kind == EV_FF and code < 0x50:
                    self._add(FFRecord("play" if value else "stop", code))

    def _upload(self, request_id: int):
        buffer = bytearray(104)
        struct.pack_into("<I", buffer, 0, request_id)  # python-evdev's begin_upload does not set it
        fcntl.ioctl(self.ui.fd, UI_BEGIN_FF_UPLOAD, buffer, True)
        kind, effect_id = struct.unpack_from("<Hh", buffer, 8)
        length = struct.unpack_from("<H", buffer, 8 + 10)[0]
        strong, weak = struct.unpack_from("<HH", buffer, 8 + 16)
        struct.pack_into("<i", buffer, 4, 0 if kind == FF_RUMBLE else -errno.EINVAL)
        fcntl.ioctl(self.ui.fd, UI_END_FF_UPLOAD, buffer)
        self._add(FFRecord("upload", effect_id, strong, weak, length))

    def _erase(self, request_id: int):
        buffer = bytearray(12)
        struct.pack_into("<I", buffer, 0, request_id)
        fcntl.ioctl(self.ui.fd, UI_BEGIN_FF_ERASE, buffer, True)
        effect_id = struct.unpack_from("<I", buffer, 8)[0]
        struct.pack_into("<i", buffer, 4, 0)
        fcntl.ioctl(self.ui.fd, UI_END_FF_ERASE, buffer)
        self._add(FFRecord("erase", effect_id))

    def _add(self, record: FFRecord):
        with self._cond:
            self.records.append(record)
            self._cond.notify_all()

    def wait_record(self, predicate, since: int = 0, timeout: float = DEADLINE, what: str = "force-feedback request"):
        deadline = time.monotonic() + timeout
        index = since
        with self._cond:
            while True:
                while index < len(self.records):
                    if predicate(self.records[index]):
                        return index, self.records[index]
                    index += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"rumble pad: no {what} within {timeout:.0f} s; records: {self.records}")
                self._cond.wait(remaining)

    def close(self):
        self._stop = True
        self._thread.join(5)
        self.ui.close()


# --------------------------------------------------------------------------------------------------------------
# A uhid DualShock 4 (v2, 054c:09cc) on the USB bus
#
# On Debian's 6.1 kernel hid-sony owns the DualShock 4 (hid-playstation took it over in 6.2); the stand-in answers
# the probe-time feature reports of both: 0x81 (hid-sony, MAC, 7 B), 0x12 (hid-playstation, pairing info/MAC,
# 16 B), 0xA3 (firmware info, 49 B) and 0x02 (USB calibration, 37 B); anything else gets EIO at once. Neither driver
# needs input reports to bind.

# The real 507-byte DualShock 4 USB report descriptor (data only), transcribed from hid-tools'
# hidtools/device/sony_gamepad.py, class PS4ControllerUSB (the descriptor the kernel's HID selftests use too).
DS4_USB_DESCRIPTOR = bytes.fromhex(
    "05010905a10185010930093109320935150026ff007508950481020939150025073500463b0165147504950181426500"
    "05091901290e150025017501950e81020600ff0920750695011500257f8102050109330934150026ff00750895028102"
    "0600ff09219536810285050922951f9102850409239524b102850209249524b102850809259503b102851009269504b1"
    "02851109279502b10285120602ff0921950fb102851309229516b10285140605ff09209510b10285150921952cb10206"
    "80ff858009209506b102858109219506b102858209229505b102858309239501b102858409249504b102858509259506"
    "b102858609269506b102858709279523b10285880928953fb102858909299502b102859009309505b102859109319503"
    "b102859209329503b10285930933950cb10285940934953fb10285a009409506b10285a109419501b10285a209429501"
    "b10285a309439530b10285a40944950db10285f00947953fb10285f10948953fb10285f20949950fb10285a7094a9501"
    "b10285a8094b9501b10285a9094c9508b10285aa094e9501b10285ab094f9539b10285ac09509539b10285ad0951950b"
    "b10285ae09529501b10285af09539502b10285b00954953fb10285e009579502b10285b30955953fb10285b40955953f"
    "b10285b50956953fb10285d00958953fb10285d40959953fb102c0"
)
assert len(DS4_USB_DESCRIPTOR) == 507


@dataclass
class DualShock4Output:
    """One USB 0x05 output report (doc §8.2) as the DualShock 4 stand-in received it."""

    raw: bytes
    received: float

    @property
    def valid_flag0(self): return self.raw[1]
    @property
    def valid_flag1(self): return self.raw[2]
    @property
    def motor_weak(self): return self.raw[4]  # motor_right
    @property
    def motor_strong(self): return self.raw[5]  # motor_left
    @property
    def lightbar(self): return tuple(self.raw[6:9])
    @property
    def blink(self): return tuple(self.raw[9:11])

    def describe(self) -> str:
        return (f"<{self.raw[0]:02x} len={len(self.raw)} vf0={self.valid_flag0:02x} vf1={self.valid_flag1:02x} "
                f"motors strong/weak={self.motor_strong}/{self.motor_weak} rgb={self.lightbar} blink={self.blink} "
                f"rest={self.raw[11:].hex() if any(self.raw[11:]) else '0'}>")


class PhysicalDualShock4(PhysicalDualSense):
    """A uhid DualShock 4 v2 over USB that the kernel's Sony driver binds as if it were plugged in; records every
    output report (anything that is not a 32-byte 0x05 report goes to `bad_reports`)."""

    PRODUCT = 0x09CC

    def __init__(self):
        # hid-sony sends its probe-time LED report before the hidraw node exists (hid_connect adds hidraw after
        # the input devices): kernel uevents, listened to from before UHID_CREATE2, tell when the node appears.
        import socket
        netlink_kobject_uevent = 15
        self._uevents = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC,
                                      netlink_kobject_uevent)
        self._uevents.bind((0, 1))
        super().__init__("usb")

    def _create2(self) -> bytes:
        return uhid_create2(b"Sony Interactive Entertainment Wireless Controller (padbridge stand-in)", self.phys,
                            b"", DS4_USB_DESCRIPTOR, BUS_USB, 0x054C, self.PRODUCT, 0x0100)

    def feature(self, rnum: int) -> bytes | None:
        mac_lsb_first = bytes.fromhex(self.mac.replace(":", ""))[::-1]
        if rnum == 0x81:  # hid-sony (≤ 6.1): MAC at bytes 1-6, least-significant byte first
            return bytes([0x81]) + mac_lsb_first
        if rnum == 0x12:  # hid-playstation (≥ 6.2): pairing info, MAC at bytes 1-6
            return bytes([0x12]) + mac_lsb_first + bytes(9)
        if rnum == 0xA3:  # firmware info: build date and time strings, hw_version u16 @35, fw_version u16 @41
            report = bytearray(49)
            report[0] = 0xA3
            report[1:12] = b"Nov 22 2026"
            report[17:25] = b"01:23:45"
            struct.pack_into("<H", report, 35, 0x0100)
            struct.pack_into("<H", report, 41, 0x0001)
            return bytes(report)
        if rnum == 0x02:  # USB calibration, same layout as the DualSense's 0x05 (doc §8.3)
            report = bytearray(37)
            report[0] = 0x02
            struct.pack_into("<hhh", report, 1, 0, 0, 0)
            struct.pack_into("<14h", report, 7, 8640, -8640, 8640, -8640, 8640, -8640, 540, 540,
                             8192, -8192, 8192, -8192, 8192, -8192)
            return bytes(report)
        return None

    def send_motion(self, gyro: tuple[int, int, int], accel: tuple[int, int, int], timestamp: int):
        """One USB input report (0x01, 64 bytes, the DualShock 4's layout as hid-sony reads it): sticks centred, no
        button, the d-pad released, no touch; raw gyro (pitch, yaw, roll: 1/16 °/s under this stand-in's
        calibration) and accel (x, y, z: 8192 per g) at bytes 13-24, and the sensor clock (u16 in units of 16/3 µs)
        at bytes 10-11. The battery byte says: on the cable, full."""
        report = bytearray(64)
        report[0] = 0x01
        report[1:5] = b"\x80\x80\x80\x80"
        report[5] = 0x08  # d-pad released
        self._input_sequence = (self._input_sequence + 1) & 0x3F
        report[7] = self._input_sequence << 2
        struct.pack_into("<H", report, 10, timestamp & 0xFFFF)
        struct.pack_into("<hhhhhh", report, 13, *gyro, *accel)
        report[30] = 0x1B  # cable, level 11
        report[35] = report[39] = 0x80  # both touch points up
        self._send_report(bytes(report))

    def _record(self, data: bytes):
        if data[0] != 0x05 or len(data) != 32:
            with self._cond:
                self.bad_reports.append(data)
                self._cond.notify_all()
            return
        with self._cond:
            self.outputs.append(DualShock4Output(raw=data, received=time.monotonic()))
            self._cond.notify_all()

    def wait_bound(self, timeout: float = DEADLINE) -> str:
        """Waits for the driver's probe-time LED report (lightbar flagged: hid-sony sends valid_flag0 0x07, its
        player colour) and returns the hidraw node."""
        self.wait_report(lambda r: r.valid_flag0 & 0x02, 0, timeout,
                         f"probe-time lightbar report from the kernel (feature requests so far: "
                         f"{[hex(n) for n in self.feature_requests]}; bad reports: {self.bad_reports})")
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(self._uevents, select.POLLIN)
        while not (node := self.hidraw_node()):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no hidraw node with HID_PHYS={self.phys} within {timeout:.0f} s"
            if poller.poll(remaining * 1000):
                self._uevents.recv(65536)
        return node

    def close(self):
        super().close()
        self._uevents.close()

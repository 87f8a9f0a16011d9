"""A wired Xbox 360 pad as a real USB device, for the real xpad driver: a configfs gadget with one FunctionFS
(usb_f_fs) function on dummy_hcd. Written from xpad.c (Linux 6.1) and the pad's published protocol notes; it
shares no code with padbridge.

- The device: any vendor/product (045e:028e by default; a third-party pad from xpad's table, such as the Logitech
  F310 046d:c21d, is the same device with other ids), one vendor-class interface ff/5d/01 with an interrupt IN and
  an interrupt OUT endpoint of 32 bytes (xpad takes any ff/5d/01 interface of a vendor in its table).
- IN: 20-byte reports as xpad360_process_packet reads them: byte 0 type 0x00, byte 1 length 0x14; byte 2 d-pad up
  0x01, down 0x02, left 0x04, right 0x08, start 0x10, back 0x20, left stick 0x40, right stick 0x80; byte 3 LB 0x01,
  RB 0x02, guide 0x04, A 0x10, B 0x20, X 0x40, Y 0x80; bytes 4 and 5 the left and right trigger (0-255); bytes
  6-13 the sticks as little-endian s16 (left x, left y, right x, right y; y up is positive, xpad inverts it).
  xpad reads them only while its input device is open (xpad_open submits the IN URB).
- OUT: every packet xpad sends, recorded: the LED `01 03 NN` (NN 2-5 at probe for pad 1-4, or what its LED class
  device `xpadN` is set to) and rumble `00 08 00 STRONG WEAK 00 00 00` (bytes = magnitude / 256).

The same gadget is an Xbox One / Series pad (`protocol="gip"`, 045e:0b12 by default), as xpad's XTYPE_XBOXONE
code reads it:
- one vendor-class interface ff/47/d0 (interface 0, which xpad requires of GIP pads), interrupt IN and OUT of 64
  bytes; xpad sends its GIP init packets (power on `05 20 SEQ 01 00` first) when its input device is opened, and
  only then reads input.
- IN: GIP input `20 00 SEQ 24` then 36 bytes: byte 4 menu 0x04, view 0x08, A 0x10, B 0x20, X 0x40, Y 0x80; byte 5
  d-pad up 0x01, down 0x02, left 0x04, right 0x08, LB 0x10, RB 0x20, left stick 0x40, right stick 0x80; bytes 6-9
  the triggers as little-endian u16 (0-1023); bytes 10-17 the sticks as s16 (y up positive, xpad inverts it); byte
  22 the Series pad's share button 0x01 (xpad's KEY_RECORD). The guide button comes alone: `07 20 SEQ 02 PRESSED
  5b`.
- OUT: rumble `09 00 SEQ 09 00 0f 00 00 STRONG WEAK ff 00 ff` (bytes = magnitude / 512).

The endpoint files block in the kernel, so the FunctionFS side runs in its own process (this file run as a
program), which a SIGKILL always ends, however a test fails; `XboxGadget.close` then unbinds the UDC, unmounts and
removes the configfs directories. The host side waits on that process's lines with deadlines, never sleeps.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

CONFIGFS = "/sys/kernel/config"
GADGETS = f"{CONFIGFS}/usb_gadget"
MODULES = ["dummy_hcd", "libcomposite", "usb_f_fs", "xpad"]

# struct usb_functionfs_event (12 bytes): the 8-byte control request, then the type.
FFS_EVENT_NAMES = {0: "BIND", 1: "UNBIND", 2: "ENABLE", 3: "DISABLE", 4: "SETUP", 5: "SUSPEND", 6: "RESUME"}
FFS_SETUP = 4
FUNCTIONFS_DESCRIPTORS_MAGIC_V2, FUNCTIONFS_STRINGS_MAGIC = 3, 2
FUNCTIONFS_HAS_FS_DESC, FUNCTIONFS_HAS_HS_DESC = 1, 2

# Buttons as xpad reads them: (byte, mask).
BUTTON_BITS = {
    "dpup": (2, 0x01), "dpdown": (2, 0x02), "dpleft": (2, 0x04), "dpright": (2, 0x08),
    "start": (2, 0x10), "back": (2, 0x20), "leftstick": (2, 0x40), "rightstick": (2, 0x80),
    "leftshoulder": (3, 0x01), "rightshoulder": (3, 0x02), "guide": (3, 0x04),
    "a": (3, 0x10), "b": (3, 0x20), "x": (3, 0x40), "y": (3, 0x80),
}


# The GIP pad's buttons as xpad reads them (byte, mask); the guide button comes in its own packet.
GIP_BUTTON_BITS = {
    "start": (4, 0x04), "back": (4, 0x08), "a": (4, 0x10), "b": (4, 0x20), "x": (4, 0x40), "y": (4, 0x80),
    "dpup": (5, 0x01), "dpdown": (5, 0x02), "dpleft": (5, 0x04), "dpright": (5, 0x08),
    "leftshoulder": (5, 0x10), "rightshoulder": (5, 0x20), "leftstick": (5, 0x40), "rightstick": (5, 0x80),
}

# (interface subclass, protocol, endpoint size, OUT interval) of each kind of pad
INTERFACES = {"xbox360": (0x5D, 0x01, 32, 8), "gip": (0x47, 0xD0, 64, 4)}


def descriptors(protocol: str = "xbox360") -> bytes:
    """The FunctionFS v2 descriptor blob: one interface (ff/5d/01, or ff/47/d0 for GIP), interrupt IN 0x81
    (interval 4) and OUT 0x02 (32 bytes each, interval 8; GIP: 64 bytes, interval 4), for full and high speed. (A
    real Xbox 360 pad also carries a class descriptor 0x21 that FunctionFS refuses under a vendor-class interface;
    xpad does not read it.)"""
    subclass, interface_protocol, size, out_interval = INTERFACES[protocol]
    interface = bytes([9, 4, 0, 0, 2, 0xFF, subclass, interface_protocol, 0])
    endpoint_in = bytes([7, 5, 0x81, 0x03]) + struct.pack("<H", size) + bytes([4])
    endpoint_out = bytes([7, 5, 0x02, 0x03]) + struct.pack("<H", size) + bytes([out_interval])
    one_speed = interface + endpoint_in + endpoint_out
    body = struct.pack("<II", 3, 3) + one_speed + one_speed
    header_size = 12
    return struct.pack("<III", FUNCTIONFS_DESCRIPTORS_MAGIC_V2, header_size + len(body),
                       FUNCTIONFS_HAS_FS_DESC | FUNCTIONFS_HAS_HS_DESC) + body


def strings() -> bytes:
    return struct.pack("<IIII", FUNCTIONFS_STRINGS_MAGIC, 16, 0, 0)


def input_report(buttons=(), left_trigger=0, right_trigger=0, left=(0, 0), right=(0, 0)) -> bytes:
    """One 20-byte report; sticks as the pad sends them (s16, y up positive), triggers 0-255."""
    report = bytearray(20)
    report[1] = 0x14
    for name in buttons:
        offset, mask = BUTTON_BITS[name]
        report[offset] |= mask
    report[4], report[5] = left_trigger, right_trigger
    struct.pack_into("<hhhh", report, 6, *left, *right)
    return bytes(report)


def gip_input_report(sequence: int, buttons=(), left_trigger=0, right_trigger=0, left=(0, 0), right=(0, 0),
                     share=False) -> bytes:
    """One GIP input packet of an Xbox Series pad (40 bytes: the Xbox One pad's 14 bytes of state, more of the
    pad's, and the share button in bit 0 of byte 22); triggers 0-1023, sticks as the pad sends them (s16, y up
    positive)."""
    report = bytearray(40)
    report[0:4] = bytes([0x20, 0x00, sequence & 0xFF, len(report) - 4])
    report[22] = 0x01 if share else 0x00
    for name in buttons:
        offset, mask = GIP_BUTTON_BITS[name]
        report[offset] |= mask
    struct.pack_into("<HHhhhh", report, 6, left_trigger, right_trigger, *left, *right)
    return bytes(report)


def gip_guide_report(sequence: int, pressed: bool) -> bytes:
    """The GIP packet of the guide (Xbox) button, sent alone when it changes."""
    return bytes([0x07, 0x20, sequence & 0xFF, 0x02, 0x01 if pressed else 0x00, 0x5B])


# ----------------------------------------------------------------------------------------------------------------
# The FunctionFS process (this file run as a program)


def serve(mountpoint: str, protocol: str = "xbox360"):
    """Writes the descriptors to ep0 and prints "ready"; then reports ep0 events ("ep0 NAME"), stalls every control
    request ("setup RT REQ VALUE INDEX LENGTH"), prints every OUT packet ("out HEX") and writes each "in HEX" line
    of standard input to the IN endpoint, in order."""
    out = sys.stdout
    lock = threading.Lock()

    def say(line: str):
        with lock:
            out.write(line + "\n")
            out.flush()

    ep0 = os.open(f"{mountpoint}/ep0", os.O_RDWR)
    os.write(ep0, descriptors(protocol))
    os.write(ep0, strings())
    say("ready")

    def control():
        while True:
            try:
                event = os.read(ep0, 12 * 4)
            except OSError as error:
                say(f"ep0 error {error.errno}")
                return
            for offset in range(0, len(event) - 11, 12):
                request_type, request, value, index, length, kind = struct.unpack_from("<BBHHHB", event, offset)
                if kind == FFS_SETUP:
                    say(f"setup {request_type:02x} {request:02x} {value:04x} {index:04x} {length}")
                    try:  # the wrong direction stalls the request
                        if request_type & 0x80:
                            os.read(ep0, 0)
                        else:
                            os.write(ep0, b"")
                    except OSError:
                        pass
                else:
                    say(f"ep0 {FFS_EVENT_NAMES.get(kind, kind)}")

    def receive():
        endpoint = os.open(f"{mountpoint}/ep2", os.O_RDWR)
        errors_in_a_row = 0
        while errors_in_a_row < 100:  # an endpoint that keeps failing is gone (the UDC unbound)
            try:
                packet = os.read(endpoint, 64)
            except OSError as error:
                errors_in_a_row += 1
                say(f"out-error {error.errno}")
                continue
            errors_in_a_row = 0
            say(f"out {packet.hex()}")

    threading.Thread(target=control, daemon=True).start()
    threading.Thread(target=receive, daemon=True).start()
    endpoint_in = os.open(f"{mountpoint}/ep1", os.O_RDWR)
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "in":
            try:
                os.write(endpoint_in, bytes.fromhex(argument))
                say(f"sent {argument}")
            except OSError as error:
                say(f"in-error {error.errno}")


# ----------------------------------------------------------------------------------------------------------------
# The host side


def load_modules():
    """dummy_hcd at full speed (as a real Xbox 360 pad enumerates), the gadget framework, FunctionFS and xpad."""
    subprocess.run(["modprobe", "dummy_hcd", "is_high_speed=0"], check=True)
    subprocess.run(["modprobe", "-a", "libcomposite", "usb_f_fs", "xpad"], check=True)
    if not os.path.isdir(GADGETS):
        subprocess.run(["mount", "-t", "configfs", "none", CONFIGFS], check=True)


class OutPacket:
    """One OUT packet xpad sent, as the FunctionFS process read it (`received`: monotonic time on this side). (A
    plain class: dataclasses would cost the FunctionFS process, which imports this file, 0.4-2 s of start-up under
    emulation.)"""

    def __init__(self, data: bytes, received: float, protocol: str = "xbox360"):
        self.data, self.received, self.protocol = data, received, protocol

    def __repr__(self):
        return f"OutPacket({self.data.hex()}, {self.received:.3f}, {self.protocol})"

    @property
    def is_rumble(self) -> bool:
        if self.protocol == "gip":
            return len(self.data) == 13 and self.data[0] == 0x09 and self.data[3:6] == b"\x09\x00\x0f"
        return len(self.data) == 8 and self.data[:3] == b"\x00\x08\x00"

    @property
    def is_led(self) -> bool:
        return self.protocol == "xbox360" and len(self.data) == 3 and self.data[:2] == b"\x01\x03"

    @property
    def strong(self) -> int:
        return self.data[8] if self.protocol == "gip" else self.data[3]

    @property
    def weak(self) -> int:
        return self.data[9] if self.protocol == "gip" else self.data[4]


class XboxGadget:
    """One Xbox 360 pad plugged into dummy_hcd's port. Use as a context manager, or call close()."""

    def __init__(self, vendor: int = 0x045E, product: int = 0x028E, name: str = "padbridge_xpad",
                 manufacturer: str = "\u00a9Microsoft Corporation", product_string: str = "Controller",
                 serial: str = "", deadline: float = 30, protocol: str = "xbox360"):
        assert protocol in INTERFACES, protocol
        self.vendor, self.product, self.deadline, self.protocol = vendor, product, deadline, protocol
        self.sequence = 0
        self.name = name
        self.root = f"{GADGETS}/{name}"
        self.function = f"{self.root}/functions/ffs.{name}"
        self.link = f"{self.root}/configs/c.1/ffs.{name}"
        self.mountpoint = f"/tmp/ffs-{name}"
        self.lines: list[str] = []
        self.out: list[OutPacket] = []
        self._cond = threading.Condition()
        self._eof = False
        self.process = None
        self._made: list[str] = []
        self._mounted = False
        self._bound = False
        try:
            self._make(manufacturer, product_string, serial)
        except BaseException:
            self.close()
            raise

    # -- setting up ------------------------------------------------------------------------------------------------

    def _mkdir(self, path: str):
        os.mkdir(path)
        self._made.append(path)

    def _write(self, path: str, value: str):
        with open(path, "w") as f:
            f.write(value)

    def _make(self, manufacturer: str, product_string: str, serial: str):
        self._mkdir(self.root)
        self._write(f"{self.root}/idVendor", f"0x{self.vendor:04x}")
        self._write(f"{self.root}/idProduct", f"0x{self.product:04x}")
        self._write(f"{self.root}/bcdDevice", "0x0114")
        self._write(f"{self.root}/bcdUSB", "0x0200")
        self._mkdir(f"{self.root}/strings/0x409")
        self._write(f"{self.root}/strings/0x409/manufacturer", manufacturer)
        self._write(f"{self.root}/strings/0x409/product", product_string)
        self._write(f"{self.root}/strings/0x409/serialnumber", serial)
        self._mkdir(f"{self.root}/configs/c.1")
        self._write(f"{self.root}/configs/c.1/MaxPower", "500")
        self._mkdir(self.function)
        os.symlink(self.function, self.link)
        self._made.append(self.link)
        os.makedirs(self.mountpoint, exist_ok=True)
        subprocess.run(["mount", "-t", "functionfs", self.name, self.mountpoint], check=True)
        self._mounted = True
        # -S: no site module (nor the .pth files it reads): the process needs only the standard library, and every
        # file Python opens at start-up comes from the host through 9p under emulation.
        self.process = subprocess.Popen([sys.executable, "-S", "-u", os.path.abspath(__file__), "serve",
                                         self.mountpoint, self.protocol],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        threading.Thread(target=self._pump, daemon=True).start()
        # Python starts slowly in the emulated guest (5-14 s): this wait gets twice the others' deadline.
        self.wait_line(lambda line: line == "ready", "descriptors written ('ready' from the FunctionFS process)",
                       timeout=2 * self.deadline)
        self._uevents = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, 15)
        self._uevents.bind((0, 1))
        (udc,) = os.listdir("/sys/class/udc")[:1] or [None]
        assert udc, "no UDC in /sys/class/udc: is dummy_hcd loaded?"
        self._write(f"{self.root}/UDC", udc)
        self._bound = True

    def _pump(self):
        for raw in iter(self.process.stdout.readline, ""):
            line = raw.rstrip("\n")
            with self._cond:
                self.lines.append(line)
                if line.startswith("out "):
                    self.out.append(OutPacket(bytes.fromhex(line[4:]), time.monotonic(), self.protocol))
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    # -- waiting ---------------------------------------------------------------------------------------------------

    def _wait(self, items, since, predicate, what, timeout):
        deadline = time.monotonic() + (timeout or self.deadline)
        index = since
        with self._cond:
            while True:
                while index < len(items):
                    if predicate(items[index]):
                        return index, items[index]
                    index += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._eof:
                    raise AssertionError(
                        f"Xbox gadget {self.vendor:04x}:{self.product:04x}: no {what} "
                        f"({'its FunctionFS process ended' if self._eof else 'timed out'}); its lines: {self.lines}")
                self._cond.wait(remaining)

    def wait_line(self, predicate, what: str, since: int = 0, timeout: float | None = None):
        return self._wait(self.lines, since, predicate, what, timeout)

    def mark(self) -> int:
        with self._cond:
            return len(self.out)

    def wait_out(self, predicate, what: str, since: int = 0, timeout: float | None = None) -> tuple[int, OutPacket]:
        """The first OUT packet at index >= since for which predicate holds: (index, packet)."""
        return self._wait(self.out, since, predicate, what, timeout)

    def packets_since(self, since: int) -> list[OutPacket]:
        with self._cond:
            return list(self.out[since:])

    def describe_out(self, since: int = 0) -> str:
        return " ".join(p.data.hex() for p in self.packets_since(since)) or "(none)"

    # -- what the kernel made of it --------------------------------------------------------------------------------

    def interface_path(self) -> str | None:
        """The sysfs path of the pad's USB interface (dummy_hcd's bus, our vendor and product), if enumerated."""
        root = "/sys/bus/usb/devices"
        for name in sorted(os.listdir(root)):
            device = os.path.realpath(f"{root}/{name}")
            if ":" in name or "dummy_hcd" not in device:
                continue
            try:
                with open(f"{device}/idVendor") as v, open(f"{device}/idProduct") as p:
                    ids = (int(v.read(), 16), int(p.read(), 16))
            except OSError:
                continue
            if ids == (self.vendor, self.product) and os.path.isdir(f"{device}/{name}:1.0"):
                return f"{device}/{name}:1.0"
        return None

    def driver(self) -> str | None:
        interface = self.interface_path()
        if interface and os.path.islink(f"{interface}/driver"):
            return os.path.basename(os.readlink(f"{interface}/driver"))
        return None

    def event_node(self) -> str | None:
        interface = self.interface_path()
        if not interface or not os.path.isdir(f"{interface}/input"):
            return None
        for input_name in os.listdir(f"{interface}/input"):
            for entry in os.listdir(f"{interface}/input/{input_name}"):
                if entry.startswith("event"):
                    return f"/dev/input/{entry}"
        return None

    def wait_bound(self, timeout: float | None = None) -> str:
        """Waits (on kernel uevents) until xpad has bound the interface and its event node exists; returns the node."""
        deadline = time.monotonic() + (timeout or self.deadline)
        poller = select.poll()
        poller.register(self._uevents, select.POLLIN)
        while True:
            node = self.event_node()
            if node and os.path.exists(node) and self.driver() == "xpad":
                return node
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"xpad did not bind the gadget {self.vendor:04x}:{self.product:04x} within "
                    f"{timeout or self.deadline:.0f} s: interface {self.interface_path()}, driver {self.driver()}, "
                    f"node {node}; FunctionFS lines: {self.lines}")
            if poller.poll(remaining * 1000):
                self._uevents.recv(65536)

    # -- input -----------------------------------------------------------------------------------------------------

    def next_sequence(self) -> int:
        """The GIP sequence number for the next packet the pad sends (1-255, as a pad counts)."""
        self.sequence = self.sequence % 255 + 1
        return self.sequence

    def send(self, report: bytes):
        """Queues one IN report; xpad reads it once its input device is open."""
        self.process.stdin.write(f"in {report.hex()}\n")
        self.process.stdin.flush()

    # -- tearing down ----------------------------------------------------------------------------------------------

    def close(self):
        """Unbinds the UDC, ends the FunctionFS process, unmounts and removes the configfs directories; each step
        runs whatever happened before."""
        problems = []
        if self._bound:
            try:
                self._write(f"{self.root}/UDC", "")
            except OSError as error:
                if error.errno != 19:  # ENODEV: already unbound (FunctionFS unbinds when ep0 closes)
                    problems.append(f"unbinding the UDC: {error}")
            self._bound = False
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)
            self.process = None
        if getattr(self, "_uevents", None) is not None:
            self._uevents.close()
            self._uevents = None
        if self._mounted:
            result = subprocess.run(["umount", self.mountpoint], capture_output=True, text=True)
            if result.returncode != 0:
                problems.append(f"umount {self.mountpoint}: {result.stderr.strip()}")
            self._mounted = False
        for path in reversed(self._made):
            try:
                os.unlink(path) if os.path.islink(path) else os.rmdir(path)
            except OSError as error:
                problems.append(f"removing {path}: {error}")
        self._made = []
        if problems:
            raise AssertionError("tearing the Xbox gadget down: " + "; ".join(problems))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "serve":
    serve(sys.argv[2], sys.argv[3])

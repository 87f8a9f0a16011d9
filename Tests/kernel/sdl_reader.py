"""Either SDL as a reader, from a test: the client of sdl_reader_process.py (one process per SDL, since pysdl2 binds
one libSDL2 per Python process). conftest's `sdl_reader` fixture gives a test an SdlReader for "2.26" (Debian 12's
libSDL2, the library PYSDL2_DLL_PATH names) and for "2.32" (built by scripts/kernel-deps with libudev and HIDAPI; its
directory is KERNEL_SUITE_SDL_2_32_DIR, which scripts/kernel-suite sets); the same test body runs under both.

Every wait is on the reader's answer to a command, with a deadline; waits for a state poll SDL (each `state` pumps
SDL's events for up to 20 ms first), never sleep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import DEADLINE, READY_DEADLINE
from waiting import wait_for_item

PROGRAM = Path(__file__).with_name("sdl_reader_process.py")
# Python's start and pysdl2's import (it binds every SDL function: 10-14 s of it) took 23-40 s in the emulated guest
# on a busy machine: twice padbridge's READY_DEADLINE, once a module and SDL.
START_DEADLINE = 2 * READY_DEADLINE
VERSIONS = ("2.26", "2.32")


def library_directory(version: str) -> str:
    """The directory of the libSDL2-2.0.so.0 that is SDL `version` (for PYSDL2_DLL_PATH)."""
    if version == "2.26":
        directory = os.environ.get("PYSDL2_DLL_PATH")
        fix = "scripts/kernel-suite sets PYSDL2_DLL_PATH to Debian's libSDL2 (apt-get install libsdl2-2.0-0)"
    elif version == "2.32":
        directory = os.environ.get("KERNEL_SUITE_SDL_2_32_DIR")
        fix = "scripts/kernel-suite sets KERNEL_SUITE_SDL_2_32_DIR to the SDL 2.32 that scripts/kernel-deps builds"
    else:
        raise AssertionError(f"no SDL {version!r} here; the suite has {VERSIONS}")
    if not directory or not any(Path(directory, name).exists() for name in ("libSDL2-2.0.so.0", "libSDL2.so")):
        raise AssertionError(f"SDL {version}: no libSDL2 in {directory!r}; {fix}")
    return directory


class SdlReader:
    """One sdl_reader_process.py running SDL `version`: commands in, answers out (see its docstring)."""

    def __init__(self, version: str):
        self.version = version
        # Hot-plug without udevd (the guest runs none): SDL_JOYSTICK_DISABLE_UDEV=1 (scripts/kernel-suite) makes SDL's
        # evdev driver watch /dev/input with inotify. SDL's HIDAPI layer has its own switch, and without it listens
        # to udevd's netlink messages, which never come: it then learns of a new hidraw node only when the evdev
        # driver sees an input node of a pad HIDAPI supports and asks it to look (HIDAPI_IsDevicePresent). That is
        # how the `sdl` fixture's SDL finds a DualSense, whose hid-playstation nodes come with it; a pad the kernel
        # gives no joystick node (a Steam Deck before Linux 6.3's hid-steam) would never show. With
        # SDL_HIDAPI_JOYSTICK_DISABLE_UDEV (an environment variable, not a hint; read by 2.26 and 2.32 alike) HIDAPI
        # watches /dev with inotify for hidraw nodes itself, as a game on a desktop learns of them from udev. Both
        # ways opened the virtual DualSense in the VM under both SDLs (their debug logs: "udev disabled by
        # SDL_HIDAPI_JOYSTICK_DISABLE_UDEV" with it, "Using udev for HIDAPI joystick device discovery" without).
        env = dict(os.environ, PYSDL2_DLL_PATH=library_directory(version), SDL_HIDAPI_JOYSTICK_DISABLE_UDEV="1")
        started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, str(PROGRAM)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, bufsize=0)
        self._cond = threading.Condition()
        self.answers: list[dict] = []
        self.stderr: list[str] = []
        self._eof = False
        self._next_id = 0
        self._threads = [threading.Thread(target=self._read_answers, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()
        _, ready = self._wait(lambda answer: answer.get("ready") and answer, START_DEADLINE, "its ready line")
        self.sdl_version, self.library = ready["version"], ready["library"]
        self.start_s, self.sdl2_import_s = time.monotonic() - started, ready["sdl2_import_s"]
        if not (self.sdl_version + ".").startswith(version + "."):
            self.stop()
            raise AssertionError(f"SDL reader for {version} loaded SDL {self.sdl_version} from {self.library}")

    def __repr__(self):
        return f"<SDL {getattr(self, 'sdl_version', self.version)} reader pid {self.proc.pid}>"

    def _read_answers(self):
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.decode("utf-8", errors="replace").strip()
            try:
                answer = json.loads(line)
            except ValueError:
                answer = {"unparsed": line}
            with self._cond:
                self.answers.append(answer)
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_stderr(self):
        for raw in iter(self.proc.stderr.readline, b""):
            with self._cond:
                self.stderr.append(raw.decode("utf-8", errors="replace").rstrip("\n"))

    def _wait(self, match, timeout, what):
        def fail(reason):
            with self._cond:
                stderr = self.stderr[-20:]
            raise AssertionError(f"{self!r}: no {what}: {reason}; its stderr (last lines): {stderr}")

        def closed():
            return f"it exited (status {self.proc.poll()})" if self._eof else None

        return wait_for_item(self._cond, self.answers, 0, match, timeout, fail, closed)

    def alive(self) -> bool:
        return self.proc.poll() is None and not self._eof

    def call(self, command: str, timeout: float = DEADLINE, **arguments) -> dict:
        """Sends one command and waits for its answer; a refusal (ok: false) fails the test with SDL's sentence."""
        with self._cond:
            self._next_id += 1
            ident = self._next_id
        line = json.dumps({"id": ident, "command": command, **arguments}, separators=(",", ":"))
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise AssertionError(f"{self!r} is gone (status {self.proc.poll()}); stderr: {self.stderr[-20:]}") from None
        _, answer = self._wait(lambda a: a.get("id") == ident and a, timeout, f"answer to {command}")
        if not answer.get("ok"):
            raise AssertionError(f"SDL {self.sdl_version}: {answer.get('error', answer)}")
        return answer

    # -- SDL as a whole ------------------------------------------------------------------------------------------

    def init(self, hints: dict[str, str], input_debug_log: bool = False):
        """SDL_Init for a test, with `hints`; input_debug_log: SDL says on stderr (self.stderr) how it found or
        dropped each device."""
        self.call("init", hints=hints, input_debug_log=input_debug_log)

    def quit(self):
        self.call("quit")

    def joysticks(self) -> list[dict]:
        return self.call("list")["joysticks"]

    def instances(self) -> set[int]:
        """The instance ids of the joysticks SDL lists now: pass as `exclude` to open() to take only a new pad."""
        return {joystick["instance"] for joystick in self.joysticks()}

    def open(self, paths, exclude=(), timeout: float = DEADLINE) -> SdlController:
        """Opens the game controller SDL lists at one of `paths` (evdev or hidraw nodes) whose instance is not in
        `exclude`, waiting for SDL to see it."""
        answer = self.call("open", timeout=timeout + DEADLINE, paths=list(paths), exclude=sorted(exclude),
                           timeout_s=timeout)
        return SdlController(self, answer)

    def pump(self, wait_ms: int = 0):
        self.call("pump", wait_ms=wait_ms)

    # -- the process ---------------------------------------------------------------------------------------------

    def stop(self) -> int:
        """End of input (the reader quits SDL and exits), then SIGKILL if it has not exited within DEADLINE."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for thread in self._threads:
            thread.join(5)
        return self.proc.returncode


class SdlController:
    """A game controller open in an SdlReader: `type` ("PS5", "XBOX360", ...), `path`, `name`, `vendor`, `product`."""

    def __init__(self, reader: SdlReader, opened: dict):
        self.reader = reader
        self.instance = opened["controller"]
        self.path, self.name, self.type = opened["path"], opened["name"], opened["type"]
        self.vendor, self.product = opened["vendor"], opened["product"]

    def __repr__(self):
        return f"<{self.type} controller {self.name!r} at {self.path} in {self.reader!r}>"

    def call(self, command: str, **arguments) -> dict:
        return self.reader.call(command, controller=self.instance, **arguments)

    def state(self, wait_ms: int = 20) -> dict:
        """Buttons, axes, touchpads, sensors and what the controller has (sdl_reader_process.py's `state`)."""
        return self.call("state", wait_ms=wait_ms)

    def wait(self, condition, what: str, timeout: float = DEADLINE) -> dict:
        """Reads the state until condition(state) holds; returns that state. Each read waits up to 20 ms for SDL's
        next event first (as sdl_reading.sdl_wait pumps). Fails naming `what` and showing the last state read."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state()
            if condition(state):
                return state
            if time.monotonic() > deadline:
                raise AssertionError(f"SDL {self.reader.sdl_version}: no {what} at {self.path} within {timeout:.0f} s; "
                                     f"last state: {describe_state(state)}")

    def wait_for_enhanced_mode(self):
        """SDL's PS5 driver shows the touchpad and sensors over Bluetooth only once its enhanced mode is on (after
        the first full 0x31 input report, or a game's call for sensors or effects): wait for the touchpad."""
        self.wait(lambda s: s["has"]["touchpads"] >= 1, "touchpad, i.e. the PS5 driver's enhanced mode")

    def enable_sensors(self, *sensors: str):
        self.call("enable_sensors", sensors=list(sensors or ("gyro", "accel")))

    def record_sensor_events(self, on: bool = True):
        self.call("record_sensor_events", on=on)

    def sensor_events(self) -> list[dict]:
        return self.call("sensor_events")["events"]

    def rumble(self, low: int, high: int, duration_ms: int):
        self.call("rumble", low=low, high=high, duration_ms=duration_ms)

    def rumble_triggers(self, left: int, right: int, duration_ms: int):
        self.call("rumble_triggers", left=left, right=right, duration_ms=duration_ms)

    def led(self, red: int, green: int, blue: int):
        self.call("led", red=red, green=green, blue=blue)

    def send_effect(self, block: bytes):
        self.call("send_effect", hex=block.hex())

    def pump(self):
        """For Padbridge.wait_feedback(pump=...): lets SDL run between waits for a feedback line."""
        self.reader.pump(0)

    def close(self):
        self.call("close")


def describe_state(state: dict) -> str:
    """The pressed buttons, moved axes, touching fingers and sensors of a state, briefly."""
    if not state:
        return "(none read)"
    pressed = [name for name, value in state["buttons"].items() if value]
    moved = {name: value for name, value in state["axes"].items() if value}
    fingers = [(pad, index, round(f["x"], 3), round(f["y"], 3)) for pad, touchpad in enumerate(state["touchpads"])
               for index, f in enumerate(touchpad) if f["down"]]
    return (f"pressed {pressed}, axes {moved}, fingers (touchpad, finger, x, y) {fingers}, sensors {state['sensors']}, "
            f"has {state['has']}")

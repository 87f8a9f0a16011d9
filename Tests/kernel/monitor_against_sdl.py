"""`padbridge monitor --json` and SDL reading the same pad, side by side: the monitor tests of every family
(test_xpad.py, test_xbox_bluetooth.py, test_switch_pro.py) press each control on a stand-in and check that monitor
names it as SDL's game-controller API reads it."""

from __future__ import annotations

import json
import os
from typing import Callable, Iterable

import evdev
from evdev import ecodes

from sdl_reading import SDL_AXES, SDL_BUTTONS, sdl_wait


class MonitorAgainstSDL:
    """A running `monitor --json` of a pad and SDL's game controller of the same pad."""

    def __init__(self, sdl, controller, monitor, node: str):
        self.sdl, self.controller, self.monitor, self.node = sdl, controller, monitor, node

    def line(self, predicate, what: str, since: int) -> dict:
        """The first JSON line from `since` on for which predicate holds."""
        return self.monitor.wait_stdout(lambda line: (lambda o: o if predicate(o) else None)(json.loads(line)),
                                        since=since, what=what)[1]

    def button(self, name: str) -> int:
        return self.sdl.SDL_GameControllerGetButton(self.controller, getattr(self.sdl, SDL_BUTTONS[name]))

    def axis(self, name: str) -> int:
        return self.sdl.SDL_GameControllerGetAxis(self.controller, getattr(self.sdl, SDL_AXES[name]))

    def pressed_in_sdl(self) -> list[str]:
        return [name for name in SDL_BUTTONS if self.button(name)]

    def until(self, condition, what: str):
        """sdl_wait; when SDL never reads it, the error says what SDL and the kernel hold for the pad."""
        try:
            return sdl_wait(self.sdl, condition, what)
        except AssertionError as error:
            raise AssertionError(f"{error}; {self.sdl_view()}") from None

    def each_button_alone(self, names: Iterable[str], send: Callable[[list[str]], None]) -> str | None:
        """For each button: a report with only it pressed (`send([name])`); monitor says it pressed (and the one before
        released), and SDL reads that very button pressed, no other. Returns the last button."""
        previous = None
        for name in names:
            mark = self.monitor.stdout_mark()
            send([name])
            self.line(lambda o, n=name: o == {"type": "button", "button": n, "pressed": True}, f"{name} pressed", mark)
            if previous:
                self.line(lambda o, n=previous: o == {"type": "button", "button": n, "pressed": False},
                          f"{previous} released", mark)
            self.until(lambda n=name: self.button(n) == 1, f"SDL reading {name} pressed")
            pressed = self.pressed_in_sdl()
            assert pressed == [name], f"report with only {name}: SDL reads {pressed} pressed"
            previous = name
        return previous

    def axis_reads(self, send: Callable[[], None], axis: str, expected: int, tolerance: int) -> tuple[int, int]:
        """`send()` moves `axis` to about `expected`: monitor and SDL both read it within `tolerance` of it and of
        each other. Returns (monitor's value, SDL's)."""
        mark = self.monitor.stdout_mark()
        send()
        got = self.line(lambda o: o.get("type") == "axis" and o["axis"] == axis
                        and abs(o["value"] - expected) <= tolerance, f"{axis} ≈ {expected}", mark)["value"]
        value = self.until(lambda: (lambda v: [v] if abs(v - expected) <= tolerance else None)(self.axis(axis)),
                           f"SDL reading {axis} ≈ {expected}")[0]
        assert abs(got - value) <= tolerance, f"{axis}: monitor reads {got}, SDL {value}"
        return got, value

    def sdl_view(self) -> str:
        """SDL's state of the pad (attached? its mapping, its raw hat, buttons and axes), what SDL lists, which
        processes hold the pad's node open, and the kernel's own state of it."""
        sdl, controller = self.sdl, self.controller
        joystick = sdl.SDL_GameControllerGetJoystick(controller)
        raw = (f"hat {sdl.SDL_JoystickGetHat(joystick, 0)}, buttons "
               f"{[i for i in range(sdl.SDL_JoystickNumButtons(joystick)) if sdl.SDL_JoystickGetButton(joystick, i)]}, "
               f"axes {[sdl.SDL_JoystickGetAxis(joystick, i) for i in range(sdl.SDL_JoystickNumAxes(joystick))]}")
        listed = [(sdl.SDL_JoystickPathForIndex(i), sdl.SDL_JoystickGetDeviceInstanceID(i))
                  for i in range(sdl.SDL_NumJoysticks())]
        holders = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
                if any(os.readlink(f"/proc/{pid}/fd/{fd}") == self.node for fd in fds):
                    with open(f"/proc/{pid}/comm") as comm:
                        holders.append(f"{pid} {comm.read().strip()}")
            except OSError:
                continue
        try:
            device = evdev.InputDevice(self.node)
            try:
                hat = device.absinfo(ecodes.ABS_HAT0Y).value if ecodes.ABS_HAT0Y in dict(
                    device.capabilities().get(ecodes.EV_ABS, [])) else None
                kernel = f"keys {device.active_keys()}, hat0y {hat}"
            finally:
                device.close()
        except OSError as error:
            kernel = f"unreadable ({error})"
        return (f"SDL's controller attached {sdl.SDL_GameControllerGetAttached(controller)}, instance "
                f"{sdl.SDL_JoystickInstanceID(joystick)}, mapping {sdl.SDL_GameControllerMapping(controller)}, {raw}; "
                f"SDL lists {listed}; {self.node} held open by {holders}; the kernel's state: {kernel}")

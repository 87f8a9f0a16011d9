"""An Xbox Series pad over Bluetooth (045e:0b13), bound by the real hid-microsoft (its rumble) over hid-generic's
mapping of the pad's own HID descriptor: a uhid stand-in (standins.PhysicalXboxBluetooth) with the descriptor a
real pad presents. list names it an Xbox One pad on Bluetooth; monitor names every control as SDL reads the same
pad (SDL's database has this pad's mapping); feedback's rumble arrives in hid-microsoft's report 0x03 with
magnitudes 0-100, and stops at the duration."""

from __future__ import annotations

import json
import subprocess

import pytest

from standins import XBOX_BLUETOOTH_BUTTONS, XBOX_BLUETOOTH_HAT, PhysicalXboxBluetooth
from test_discovery import controller_with_node, list_json
from test_feedback import feedback  # noqa: F401  (fixture)
from test_sdl import (SDL_AXES, SDL_BUTTONS, joystick_ids, open_controller, pump, sdl,  # noqa: F401
                      sdl_library, sdl_wait)  # (sdl*: fixtures)


@pytest.fixture(scope="module", autouse=True)
def hid_microsoft():
    """hid-microsoft loaded before the pad comes: otherwise hid-generic binds it first, and udev's autoload of
    hid-microsoft then rebinds it under a new input device."""
    subprocess.run(["modprobe", "hid-microsoft"], check=True)


def test_an_xbox_series_pad_on_bluetooth_is_listed_monitored_as_sdl_reads_it_and_rumbles(sdl, padbridge, feedback):
    known = joystick_ids(sdl)
    pad = PhysicalXboxBluetooth()
    try:
        node = pad.wait_bound()
        controller = controller_with_node(list_json(), node)
        assert controller["kind"] == "xbox-one" and controller["bus"] == "bluetooth", controller
        assert controller["driver"] == "microsoft", controller   # hid-microsoft, not hid-generic
        assert (controller["vendor"], controller["product"]) == ("045e", "0b13"), controller
        assert controller["capabilities"]["rumble"] is True, controller["capabilities"]

        sdl_controller = open_controller(sdl, [node], known)
        monitor = padbridge(node, "--json", command="monitor")
        monitor.wait_stderr(lambda line: "monitoring" in line, what="'monitoring' status line")
        try:
            def monitor_line(predicate, what, since):
                return monitor.wait_stdout(lambda line: (lambda o: o if predicate(o) else None)(json.loads(line)),
                                           since=since, what=what)[1]

            def sdl_button(name):
                return sdl.SDL_GameControllerGetButton(sdl_controller, getattr(sdl, SDL_BUTTONS[name]))

            previous = None
            for name in [*XBOX_BLUETOOTH_BUTTONS, *XBOX_BLUETOOTH_HAT, "misc1"]:
                mark = monitor.stdout_mark()
                pad.send_state(buttons=[name], share=name == "misc1")
                monitor_line(lambda o, n=name: o == {"type": "button", "button": n, "pressed": True},
                             f"{name} pressed", mark)
                if previous:
                    monitor_line(lambda o, n=previous: o == {"type": "button", "button": n, "pressed": False},
                                 f"{previous} released", mark)
                sdl_wait(sdl, lambda n=name: sdl_button(n) == 1, f"SDL reading {name} pressed")
                pressed_in_sdl = [other for other in SDL_BUTTONS if sdl_button(other)]
                assert pressed_in_sdl == [name], f"report with only {name}: SDL reads {pressed_in_sdl} pressed"
                previous = name

            # Sticks (the pad's HID axes run y down positive, as SDL and padbridge read) and triggers (0-1023).
            steps = [
                (dict(left=(-12000, 0)), "leftx", -12000),
                (dict(left=(0, 20000)), "lefty", 20000),
                (dict(right=(30000, 0)), "rightx", 30000),
                (dict(right=(0, -25000)), "righty", -25000),
                (dict(left_trigger=1023), "lefttrigger", 32767),
                (dict(right_trigger=512), "righttrigger", 512 * 32767 // 1023),
            ]
            for report, axis, expected in steps:
                tolerance = 2 if "trigger" not in axis else 200
                mark = monitor.stdout_mark()
                pad.send_state(**report)
                got = monitor_line(lambda o, a=axis: o.get("type") == "axis" and o["axis"] == a
                                   and abs(o["value"] - expected) <= tolerance, f"{axis} ≈ {expected}", mark)
                value = sdl_wait(sdl, lambda a=axis: (lambda v: [v] if abs(v - expected) <= tolerance else None)(
                    sdl.SDL_GameControllerGetAxis(sdl_controller, getattr(sdl, SDL_AXES[a]))),
                    f"SDL reading {axis} ≈ {expected}")[0]
                assert abs(got["value"] - value) <= tolerance, (axis, got, value)
        finally:
            sdl.SDL_GameControllerClose(sdl_controller)
            pump(sdl, 0)
        assert monitor.stop() == 0

        # Rumble: hid-microsoft's report 0x03, magnitudes 0-100 (strong, weak), then zeros at the duration.
        since = pad.mark()
        process = feedback(node, "--rumble", "0.5,0.25", "--duration", "1000")
        index, on = pad.wait_report(lambda r: abs(r.strong - 50) <= 1 and abs(r.weak - 25) <= 1, since,
                                    what="rumble report 0x03 with magnitudes 50 and 25")
        _, off = pad.wait_report(lambda r: r.strong == 0 and r.weak == 0, index + 1, what="the rumble stopped")
        assert off.received - on.received >= 0.5, f"rumble stopped after {off.received - on.received:.3f} s"
        process.expect_success()
        assert not pad.bad_reports, [r.hex() for r in pad.bad_reports]
    finally:
        pad.close()

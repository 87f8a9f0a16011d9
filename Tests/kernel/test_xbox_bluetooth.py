"""An Xbox Series pad over Bluetooth (045e:0b13), bound by the real hid-microsoft (its rumble) over hid-generic's
mapping of the pad's own HID descriptor: a uhid stand-in (standins.PhysicalXboxBluetooth) with the descriptor a
real pad presents. list names it an Xbox One pad on Bluetooth; monitor names every control as SDL reads the same
pad (SDL's database has this pad's mapping); feedback's rumble arrives in hid-microsoft's report 0x03 with
magnitudes 0-100, and stops at the duration. A game's rumble through a remapped or forwarded pad is padbridge's own
report 0x03 at the pad's hidraw node, so the trigger motors a game sets on the virtual Xbox Series pad reach it too."""

from __future__ import annotations

import subprocess

import evdev
import pytest
from evdev import ecodes

from conftest import attached, expect_events, rumble_effect
from discovery import controller_with_node, list_json
from forwarding import connect, paired_host
from monitor_against_sdl import MonitorAgainstSDL
from sdl_reading import joystick_ids, open_controller, pump
from standins import XBOX_BLUETOOTH_BUTTONS, XBOX_BLUETOOTH_HAT, PhysicalXboxBluetooth


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
        monitor.wait_event("monitoring", what="monitor under way")
        both = MonitorAgainstSDL(sdl, sdl_controller, monitor, node)
        try:
            both.each_button_alone([*XBOX_BLUETOOTH_BUTTONS, *XBOX_BLUETOOTH_HAT, "misc1"],
                                   lambda buttons: pad.send_state(buttons=buttons, share=buttons == ["misc1"]))

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
                both.axis_reads(lambda r=report: pad.send_state(**r), axis, expected,
                                2 if "trigger" not in axis else 200)
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


def test_a_bluetooth_xbox_pad_remapped_and_forwarded_gets_a_games_rumble(padbridge, tmp_path):
    """Remapped as a DualSense, then forwarded to a host: its presses on the virtual pad, and a game's rumble there
    (0x8000 strong, 0x4000 weak) back in hid-microsoft's report 0x03 (50 and 25 of 100), then stopped."""
    pad = PhysicalXboxBluetooth()
    try:
        node = pad.wait_bound()

        def press_then_rumble(ready: dict):
            # X: the DualSense's square (BTN_WEST), an Xbox 360 pad's X (BTN_X, which is BTN_NORTH)
            virtual = evdev.InputDevice(ready["eventNodes"][0])
            code = ecodes.BTN_WEST if ready["kind"] == "dualsense" else ecodes.BTN_NORTH
            pad.send_state(buttons=["x"])
            expect_events(virtual, [(ecodes.EV_KEY, code, 1)])
            pad.send_state()
            expect_events(virtual, [(ecodes.EV_KEY, code, 0)])
            since = pad.mark()
            effect = virtual.upload_effect(rumble_effect(0x8000, 0x4000))
            virtual.write(ecodes.EV_FF, effect, 1)
            index, _ = pad.wait_report(lambda r: abs(r.strong - 50) <= 1 and abs(r.weak - 25) <= 1, since,
                                       what="the game's rumble in report 0x03 (50 and 25)")
            virtual.write(ecodes.EV_FF, effect, 0)
            pad.wait_report(lambda r: r.strong == 0 and r.weak == 0, index + 1, what="the game's rumble stopped")

        remap = padbridge(node, "--as", "dualsense", command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "dualsense", ready
        press_then_rumble(ready)
        assert remap.stop() == 0

        serve, client = paired_host(padbridge, tmp_path)
        connect(padbridge, client, node)
        _, ready = attached(serve)
        press_then_rumble(ready)
        assert not pad.bad_reports, [r.hex() for r in pad.bad_reports]
    finally:
        pad.close()


@pytest.mark.sdl_reads_xbox_pads_itself
@pytest.mark.parametrize("sdl_reader", ["2.32"], indirect=True)
def test_a_games_trigger_rumble_reaches_a_remapped_bluetooth_xbox_pads_trigger_motors(sdl_reader, padbridge):
    """remap keeps the pad an Xbox Series pad (its own kind); SDL 2.32's trigger rumble there (its HIDAPI Xbox
    driver's report 0x03 at the virtual pad's hidraw) reaches the physical pad's trigger motors in its report 0x03
    (0x8000 and 0x4000: 50 and 25 of 100), with its grip rumble beside, then stops."""
    known = sdl_reader.instances()
    pad = PhysicalXboxBluetooth()
    try:
        remap = padbridge(pad.wait_bound(), command="remap")
        ready = remap.wait_ready()
        assert ready["kind"] == "xbox-one", ready
        controller = sdl_reader.open([ready["hidraw"]], exclude=known)
        try:
            since = pad.mark()
            # SDL sends the second while the first is "busy" (50 ms on Bluetooth) at a later pump.
            controller.rumble(0x4000, 0, 10000)
            controller.rumble_triggers(0x8000, 0x4000, 10000)
            index, _ = pad.wait_report(
                lambda r: abs(r.left_trigger - 50) <= 1 and abs(r.right_trigger - 25) <= 1 and abs(r.strong - 25) <= 1,
                since, what="trigger motors 50 and 25, the strong motor 25, in report 0x03", pump=controller.pump)
            controller.rumble_triggers(0, 0, 0)
            controller.rumble(0, 0, 0)
            pad.wait_report(lambda r: r.left_trigger == 0 and r.right_trigger == 0 and r.strong == 0, index + 1,
                            what="every motor stopped", pump=controller.pump)
        finally:
            controller.close()
        assert remap.stop() == 0
        assert not pad.bad_reports, [r.hex() for r in pad.bad_reports]
    finally:
        pad.close()


def test_the_same_bluetooth_xbox_pad_connected_again_keeps_its_id():
    first = PhysicalXboxBluetooth()
    try:
        known = controller_with_node(list_json(), first.wait_bound())["id"]
    finally:
        first.close()
    again = PhysicalXboxBluetooth(mac=first.mac)
    try:
        assert controller_with_node(list_json(), again.wait_bound())["id"] == known
    finally:
        again.close()

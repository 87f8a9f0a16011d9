"""A wired Xbox 360 pad bound by the real xpad driver: a USB gadget on dummy_hcd (configfs + FunctionFS,
`xpad_gadget.XboxGadget`) that xpad binds as it binds the pad, whose OUT packets (LED, rumble) the gadget records.

- list: one controller with its event node, kind xbox360, xpad's name; the same ID after an unplug and a replug.
- monitor: every button, stick and trigger under its SDL name, checked against SDL's own reading of the same pad.
- feedback: rumble arrives as xpad's `00 08 00 STRONG WEAK` packets with the magnitudes asked, and stops at the
  duration; `--player N` lights quadrant N of the LED ring (xpad's `01 03 CMD`, through its LED class device); a
  lightbar is refused, naming the pad and what it has.
- recognition by driver: the same gadget with the Logitech F310's ids (046d:c21d), which padbridge's id table does
  not know, is an Xbox 360 pad because xpad drives it; remap shows it as a DualSense, and a game's rumble and player
  LEDs on that DualSense reach the pad's motors and ring.

No sleeps: every wait is on a kernel uevent, a FunctionFS line, an evdev event, a padbridge line or SDL's state, with
a deadline.
"""

from __future__ import annotations

import grp
import json
import os
import subprocess

import evdev
import pytest
from evdev import ecodes

from conftest import DEADLINE, expect_events, padbridge_binary, rumble_effect
from test_discovery import controller_with_node, list_json, run_padbridge
from test_feedback import feedback  # noqa: F401  (fixture)
from test_sdl import joystick_ids, open_controller, pump, sdl, sdl_wait  # noqa: F401  (sdl: fixture)
from xpad_gadget import BUTTON_BITS, XboxGadget, input_report, load_modules

F310 = (0x046D, 0xC21D)


@pytest.fixture(scope="module", autouse=True)
def xpad_modules():
    load_modules()


@pytest.fixture
def gadget_factory():
    """Makes gadgets (one at a time: dummy_hcd has one port); every one is torn down when the test ends."""
    made: list[XboxGadget] = []

    def make(vendor: int = 0x045E, product: int = 0x028E) -> XboxGadget:
        gadget = XboxGadget(vendor, product, name=f"padbridge_xpad_{len(made)}", deadline=DEADLINE)
        made.append(gadget)
        gadget.node = gadget.wait_bound()
        return gadget

    yield make
    problems = []
    for gadget in made:
        print(f"gadget {gadget.vendor:04x}:{gadget.product:04x} FunctionFS lines: {gadget.lines}")
        try:
            gadget.close()
        except AssertionError as error:
            problems.append(str(error))
    assert not problems, problems


@pytest.fixture
def xbox(gadget_factory):
    return gadget_factory()


def test_xpad_binds_the_gadget_and_list_shows_one_xbox_360_pad(xbox):
    device = evdev.InputDevice(xbox.node)
    assert device.name == "Microsoft X-Box 360 pad"
    assert (device.info.vendor, device.info.product) == (0x045E, 0x028E)
    # xpad lights the ring for the first pad at probe: LED command 2 ("1 flashes, then on")
    xbox.wait_out(lambda p: p.data == bytes([0x01, 0x03, 0x02]), "probe-time LED packet 01 03 02")

    controllers = list_json()
    controller = controller_with_node(controllers, xbox.node)
    assert [c["id"] for c in controllers].count(controller["id"]) == 1
    assert controller["kind"] == "xbox360", controller
    assert controller["name"] == "Microsoft X-Box 360 pad", controller
    assert (controller["vendor"], controller["product"], controller["bus"]) == ("045e", "028e", "usb"), controller
    assert [node["path"] for node in controller["nodes"]["evdev"]] == [xbox.node], controller
    assert controller["nodes"]["hidraw"] is None
    caps = controller["capabilities"]
    assert caps["rumble"] is True and caps["lightbar"] is False and caps["playerLeds"] is True, caps
    assert set(caps["buttons"]) == set(BUTTON_BITS), caps
    assert set(caps["axes"]) == {"leftx", "lefty", "rightx", "righty", "lefttrigger", "righttrigger"}, caps
    # doctor says what padbridge can do with it, and what not
    doctor = run_padbridge("doctor", check=False).stdout.splitlines()
    said = [line for line in doctor if controller["id"] in line and "can use" in line]
    assert len(said) == 1 and "rumble, player LEDs through xpad" in said[0] and "no lightbar" in said[0], doctor
    table = run_padbridge("list").stdout.splitlines()
    row = next((line for line in table if controller["id"] in line), None)
    assert row is not None and "Microsoft X-Box 360 pad" in row and "Xbox 360" in row, table


def test_the_same_pad_unplugged_and_plugged_again_keeps_its_id(gadget_factory):
    first = gadget_factory()
    first_id = controller_with_node(list_json(), first.node)["id"]
    first.close()
    second = gadget_factory()
    assert controller_with_node(list_json(), second.node)["id"] == first_id


SDL_BUTTONS = {
    "a": "SDL_CONTROLLER_BUTTON_A", "b": "SDL_CONTROLLER_BUTTON_B", "x": "SDL_CONTROLLER_BUTTON_X",
    "y": "SDL_CONTROLLER_BUTTON_Y", "back": "SDL_CONTROLLER_BUTTON_BACK", "guide": "SDL_CONTROLLER_BUTTON_GUIDE",
    "start": "SDL_CONTROLLER_BUTTON_START", "leftstick": "SDL_CONTROLLER_BUTTON_LEFTSTICK",
    "rightstick": "SDL_CONTROLLER_BUTTON_RIGHTSTICK", "leftshoulder": "SDL_CONTROLLER_BUTTON_LEFTSHOULDER",
    "rightshoulder": "SDL_CONTROLLER_BUTTON_RIGHTSHOULDER", "dpup": "SDL_CONTROLLER_BUTTON_DPAD_UP",
    "dpdown": "SDL_CONTROLLER_BUTTON_DPAD_DOWN", "dpleft": "SDL_CONTROLLER_BUTTON_DPAD_LEFT",
    "dpright": "SDL_CONTROLLER_BUTTON_DPAD_RIGHT",
}
SDL_AXES = {
    "leftx": "SDL_CONTROLLER_AXIS_LEFTX", "lefty": "SDL_CONTROLLER_AXIS_LEFTY",
    "rightx": "SDL_CONTROLLER_AXIS_RIGHTX", "righty": "SDL_CONTROLLER_AXIS_RIGHTY",
    "lefttrigger": "SDL_CONTROLLER_AXIS_TRIGGERLEFT", "righttrigger": "SDL_CONTROLLER_AXIS_TRIGGERRIGHT",
}


def test_monitor_names_every_control_as_sdl_reads_it(sdl, gadget_factory, padbridge):
    known = joystick_ids(sdl)   # before the pad is plugged in: SDL's new joystick is the pad
    xbox = gadget_factory()
    controller = open_controller(sdl, [xbox.node], known)
    monitor = padbridge(xbox.node, "--json", command="monitor")
    monitor.wait_stderr(lambda line: "monitoring" in line, what="'monitoring' status line")
    try:
        assert sdl.SDL_GameControllerGetType(controller) == sdl.SDL_CONTROLLER_TYPE_XBOX360

        def monitor_line(predicate, what, since):
            def match(line):
                obj = json.loads(line)
                return obj if predicate(obj) else None
            return monitor.wait_stdout(match, since=since, what=what)[1]

        def sdl_button(name):
            return sdl.SDL_GameControllerGetButton(controller, getattr(sdl, SDL_BUTTONS[name]))

        def sdl_axis(name):
            return sdl.SDL_GameControllerGetAxis(controller, getattr(sdl, SDL_AXES[name]))

        def sdl_reads(axis, expected, tolerance):
            """[SDL's value] once it is within tolerance of expected (a list: 0 is a value too), else None."""
            value = sdl_axis(axis)
            return [value] if abs(value - expected) <= tolerance else None

        # Each button alone, one report each: monitor names it pressed, SDL reads that very button pressed.
        previous = None
        for name in BUTTON_BITS:
            mark = monitor.stdout_mark()
            xbox.send(input_report(buttons=[name]))
            monitor_line(lambda o, n=name: o == {"type": "button", "button": n, "pressed": True},
                         f"{name} pressed", mark)
            if previous:
                monitor_line(lambda o, n=previous: o == {"type": "button", "button": n, "pressed": False},
                             f"{previous} released", mark)
            sdl_wait(sdl, lambda n=name: sdl_button(n) == 1, f"SDL reading {name} pressed")
            pressed_in_sdl = [other for other in SDL_BUTTONS if sdl_button(other)]
            assert pressed_in_sdl == [name], f"report with only {name}: SDL reads {pressed_in_sdl} pressed"
            previous = name
        mark = monitor.stdout_mark()
        xbox.send(input_report())
        monitor_line(lambda o: o == {"type": "button", "button": previous, "pressed": False}, "all released", mark)
        sdl_wait(sdl, lambda: not any(sdl_button(n) for n in SDL_BUTTONS), "SDL reading every button released")

        # Sticks (the pad sends y up positive; xpad turns it, SDL and padbridge read up negative) and triggers.
        steps = [
            (dict(left=(-12000, 0)), "leftx", -12000),
            (dict(left=(0, 20000)), "lefty", -20001),
            (dict(right=(30000, 0)), "rightx", 30000),
            (dict(right=(0, -25000)), "righty", 24999),
            (dict(left_trigger=255), "lefttrigger", 32767),
            (dict(right_trigger=128), "righttrigger", 128 * 32767 // 255),
        ]
        for report, axis, expected in steps:
            tolerance = 2 if "trigger" not in axis else 200
            mark = monitor.stdout_mark()
            xbox.send(input_report(**report))
            got = monitor_line(lambda o, a=axis: o.get("type") == "axis" and o["axis"] == a
                               and abs(o["value"] - expected) <= tolerance, f"{axis} ≈ {expected}", mark)
            sdl_value = sdl_wait(sdl, lambda a=axis: sdl_reads(a, expected, tolerance),
                                 f"SDL reading {axis} ≈ {expected}")[0]
            assert abs(got["value"] - sdl_value) <= tolerance, (axis, got, sdl_value)
    finally:
        sdl.SDL_GameControllerClose(controller)
        pump(sdl, 0)


def rumble_packet(strong: int, weak: int):
    return lambda p: p.is_rumble and (p.strong, p.weak) == (strong, weak)


def check_rumble_on_then_off(pad: XboxGadget, feedback, target: str, strong: float, weak: float,
                             expected: tuple[int, int]):
    """`feedback TARGET --rumble STRONG,WEAK --duration 1000`: xpad's packet with the bytes asked, then a stop."""
    since = pad.mark()
    process = feedback(target, "--rumble", f"{strong},{weak}", "--duration", "1000")
    index, on = pad.wait_out(rumble_packet(*expected),
                             f"rumble packet 00 08 00 {expected[0]:02x} {expected[1]:02x} (received: "
                             f"{pad.describe_out(since)})", since)
    assert on.data == bytes([0x00, 0x08, 0x00, *expected, 0, 0, 0]), on.data.hex()
    _, off = pad.wait_out(rumble_packet(0, 0), f"rumble stop after the duration (received: "
                          f"{pad.describe_out(since)})", index + 1)
    # Stamped when the gadget's process reads a packet: a late read of the first shortens what it sees.
    assert off.received - on.received >= 0.5, f"rumble stopped after {off.received - on.received:.3f} s"
    between = [p for p in pad.packets_since(index + 1) if p.received < off.received and p.is_rumble]
    assert all((p.strong, p.weak) == expected for p in between), [p.data.hex() for p in between]
    process.expect_success()


def test_feedback_rumble_arrives_in_xpads_packets_and_stops_at_the_duration(xbox, feedback):
    check_rumble_on_then_off(xbox, feedback, xbox.node, 0.5, 0.25, (128, 64))
    check_rumble_on_then_off(xbox, feedback, xbox.node, 1, 0.125, (255, 32))


def test_feedback_lightbar_is_refused_naming_the_pad(xbox, feedback):
    controller = controller_with_node(list_json(), xbox.node)
    since = xbox.mark()
    process = feedback(controller["id"][:6], "--lightbar", "ff0040", "--rumble", "1,1", "--duration", "100")
    assert process.wait() == 64, process.stderr
    message = " ".join(process.stderr)
    assert "Microsoft X-Box 360 pad" in message and "no lightbar" in message and "rumble" in message, message
    process = feedback(xbox.node, "--lightbar", "ff0040")
    assert process.wait() == 64, process.stderr
    message = " ".join(process.stderr)
    assert "Microsoft X-Box 360 pad" in message and "no lightbar" in message, message
    # nothing was sent, not even the rumble it can do: a fence (a rumble asked afterwards) arrives alone
    check_rumble_on_then_off(xbox, feedback, xbox.node, 0.5, 0.5, (128, 128))
    assert not any(p.is_rumble and p.strong == 255 for p in xbox.packets_since(since)), xbox.describe_out(since)


def ring_packet(command: int):
    return lambda packet: packet.data == bytes([0x01, 0x03, command])


def test_feedback_player_lights_its_quadrant_of_xpads_led_ring(xbox, feedback):
    """`--player N` goes to the LED class device xpad makes for the pad (xpadK, under its USB device): xpad sends the
    ring's command `01 03 CMD`, quadrant N steadily on (commands 6...9), as SDL does for player N."""
    controller = controller_with_node(list_json(), xbox.node)
    for target, player, command in ((xbox.node, 2, 7), (controller["id"][:6], 4, 9), (xbox.node, 1, 6)):
        since = xbox.mark()
        feedback(target, "--player", str(player)).expect_success()
        xbox.wait_out(ring_packet(command), f"LED ring packet 01 03 {command:02x} for player {player} (received: "
                                            f"{xbox.describe_out(since)})", since)


def test_a_user_who_cannot_write_the_ring_still_rumbles_the_pad_and_player_says_why(xbox, feedback):
    """xpad's LED class attribute is root's (0644, sysfs): a user given the pad's event node (here nobody in the group
    `input`, which owns it; padbridge's udev rule gives the seat's user the same) rumbles the pad all the same, and
    `--player` is refused saying why, sending nothing."""
    as_nobody = ("setpriv", "--reuid=65534", "--regid=65534", f"--groups={grp.getgrnam('input').gr_gid}",
                 padbridge_binary(), "feedback")
    since = xbox.mark()
    rumbled = subprocess.run([*as_nobody, xbox.node, "--rumble", "0.5,0.25", "--duration", "300"],
                             capture_output=True, text=True, timeout=DEADLINE)
    assert rumbled.returncode == 0, rumbled.stderr
    xbox.wait_out(rumble_packet(128, 64), f"nobody's rumble (received: {xbox.describe_out(since)})", since)
    refused = subprocess.run([*as_nobody, xbox.node, "--player", "2"], capture_output=True, text=True,
                             timeout=DEADLINE)
    assert refused.returncode == 64, refused.stderr
    assert "no player LEDs" in refused.stderr and "LED ring" in refused.stderr \
        and "permission denied" in refused.stderr, refused.stderr
    # nothing was sent: a fence (root's --player 3, command 8) arrives with no player 2 (command 7) before it
    feedback(xbox.node, "--player", "3").expect_success()
    index, _ = xbox.wait_out(ring_packet(8), f"root's LED ring packet 01 03 08 (received: {xbox.describe_out(since)})",
                             since)
    assert not any(ring_packet(7)(packet) for packet in xbox.packets_since(since)[:index - since]), \
        xbox.describe_out(since)


def led_class_devices_of(event_node: str) -> str:
    """The LED class devices' directory of the HID device behind `event_node` (a virtual DualSense's)."""
    return os.path.realpath(f"/sys/class/input/{os.path.basename(event_node)}/device/device/leds")


def test_a_third_party_pad_that_xpad_drives_is_an_xbox_360_pad(gadget_factory, padbridge, feedback):
    """The Logitech F310 (046d:c21d): not in padbridge's id table; xpad drives it, so it is an Xbox 360 pad."""
    pad = gadget_factory(*F310)
    device = evdev.InputDevice(pad.node)
    assert device.name == "Logitech Gamepad F310", device.name
    controller = controller_with_node(list_json(), pad.node)
    assert controller["kind"] == "xbox360", controller
    assert controller["name"] == "Logitech Gamepad F310", controller
    assert (controller["vendor"], controller["product"]) == ("046d", "c21d"), controller
    assert set(controller["capabilities"]["buttons"]) == set(BUTTON_BITS), controller["capabilities"]

    check_rumble_on_then_off(pad, feedback, controller["id"][:6], 0.5, 0.25, (128, 64))

    remap = padbridge(pad.node, "--as", "dualsense", command="remap")
    ready = remap.wait_ready()
    assert ready["kind"] == "dualsense", ready
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    pad.send(input_report(buttons=["y"], left=(-32768, 0)))
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_NORTH, 1), (ecodes.EV_ABS, ecodes.ABS_X, 0)])
    pad.send(input_report())
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_NORTH, 0)])

    # A game's rumble on the virtual DualSense (evdev force feedback, through hid-playstation) reaches the pad in
    # xpad's packets: 0x8000 and 0x4000 are hid-playstation's motor bytes 0x80 and 0x40, and so xpad's.
    since = pad.mark()
    effect = virtual.upload_effect(rumble_effect(0x8000, 0x4000))
    virtual.write(ecodes.EV_FF, effect, 1)
    pad.wait_out(lambda p: p.is_rumble and abs(p.strong - 0x80) <= 1 and abs(p.weak - 0x40) <= 1,
                 f"the game's rumble in xpad's packet (received: {pad.describe_out(since)})", since)
    virtual.write(ecodes.EV_FF, effect, 0)
    pad.wait_out(rumble_packet(0, 0), f"the game's rumble stopped (received: {pad.describe_out(since)})", since)

    # A game's player LEDs on the virtual DualSense (its LED class devices, hid-playstation's) light the F310's ring:
    # LEDs 1, 3 and 5 on and 2 and 4 off are player 3's pattern, quadrant 3 (command 8).
    leds = led_class_devices_of(virtual.path)
    for k in range(1, 6):
        (name,) = [n for n in os.listdir(leds) if n.endswith(f":white:player-{k}")]
        with open(f"{leds}/{name}/brightness", "w") as f:
            f.write("1" if k % 2 else "0")
    pad.wait_out(ring_packet(8), f"LED ring packet 01 03 08 for player 3's pattern (received: "
                                 f"{pad.describe_out(since)})", since)

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
import signal
import subprocess

import evdev
import pytest
from evdev import ecodes

from conftest import DEADLINE, attached, expect_events, padbridge_binary, rumble_effect
from discovery import controller_with_node, list_json, run_padbridge
from forwarding import connect, paired_host
from hiding import check_remap_hides_and_gives_back, joystick_nodes, settle
from monitor_against_sdl import MonitorAgainstSDL
from other_users import AS_NOBODY_IN_INPUT
from sdl_reading import joystick_ids, open_controller, pump
from xpad_gadget import BUTTON_BITS, GIP_BUTTON_BITS, XboxGadget, gip_guide_report, gip_input_report, input_report, \
    load_modules

F310 = (0x046D, 0xC21D)

pytestmark = pytest.mark.usefixtures("joystick_interface")   # conftest's: joydev loaded, as on a desktop


@pytest.fixture(scope="module", autouse=True)
def xpad_modules():
    load_modules()


@pytest.fixture
def gadget_factory():
    """Makes gadgets (one at a time: dummy_hcd has one port); every one is torn down when the test ends."""
    made: list[XboxGadget] = []

    def make(vendor: int = 0x045E, product: int = 0x028E, protocol: str = "xbox360") -> XboxGadget:
        gadget = XboxGadget(vendor, product, name=f"padbridge_xpad_{len(made)}", deadline=DEADLINE, protocol=protocol)
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
    assert controller["nodes"]["leds"] == [f"/sys/class/leds/{os.path.basename(led_ring_of(xbox))}"], \
        controller["nodes"]   # xpad's LED class device for the ring, under the pad's USB device
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




class PadReports:
    """How one kind of xpad pad sends a state: the Xbox 360 pad in one 20-byte report; the GIP pad in an input
    packet and, for the guide button, a packet of its own (sent only when the guide button changes)."""

    def __init__(self, pad: XboxGadget):
        self.pad = pad
        self.gip = pad.protocol == "gip"
        self.buttons = list(GIP_BUTTON_BITS) + ["guide"] if self.gip else list(BUTTON_BITS)
        self.trigger_max = 1023 if self.gip else 255
        self.guide_down = False

    def send(self, buttons=(), left_trigger=0, right_trigger=0, left=(0, 0), right=(0, 0)):
        if not self.gip:
            self.pad.send(input_report(buttons, left_trigger, right_trigger, left, right))
            return
        self.pad.send(gip_input_report(self.pad.next_sequence(), [b for b in buttons if b != "guide"],
                                       left_trigger, right_trigger, left, right))
        if ("guide" in buttons) != self.guide_down:
            self.guide_down = "guide" in buttons
            self.pad.send(gip_guide_report(self.pad.next_sequence(), self.guide_down))


def udevd_processes() -> list[int]:
    """systemd-udevd and its workers."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    name = comm.read().strip()
            except OSError:
                continue
            if name in ("systemd-udevd", "(udev-worker)"):
                pids.append(int(entry))
    assert pids, "no systemd-udevd runs in the VM"
    return pids


def test_a_pad_listed_before_udevd_is_done_with_it_gets_the_id_it_keeps(gadget_factory, padbridge):
    """A pad without a serial (this one) takes its ID from the port it hangs off: udevd's ID_PATH once udevd has
    processed its nodes. `list` run between the kernel making the nodes and udevd processing them waits for udevd,
    saying so, and shows the ID the pad keeps. Here udevd is stopped (SIGSTOP) while the pad comes, and let go once
    `list` says it waits; without the wait, `list` showed an ID made from the sysfs path, which changed a moment
    later (seen in CI: `feedback ID-PREFIX` right after `list` found no pad).

    udevd's queue is settled first: the previous test's pad (the same event node number) is removed at its
    teardown, and a udevd stopped before it processed that removal leaves the old pad's database entry for the node
    number, which makes the new pad look processed already (seen once: `list` did not wait)."""
    settle()
    udevd = udevd_processes()
    for pid in udevd:
        os.kill(pid, signal.SIGSTOP)
    try:
        xbox = gadget_factory()
        listing = padbridge("--json", command="list")
        listing.wait_event("waitingForUdevd", where=lambda e: xbox.node in e["nodes"],
                           what="list saying it waits for udevd to finish with the pad's node")
    finally:
        for pid in udevd:
            os.kill(pid, signal.SIGCONT)
    assert listing.wait_exit() == 0, listing.stderr
    listed = controller_with_node(json.loads("\n".join(line for _, line in listing.stdout)), xbox.node)
    settle()
    properties = subprocess.run(["udevadm", "info", "--query=property", xbox.node], capture_output=True, text=True,
                                timeout=DEADLINE).stdout
    after = controller_with_node(list_json(), xbox.node)
    # what the ID is made from, now that udevd is done: no serial, udevd's ID_PATH
    assert after["serial"] is None and f"ID_PATH={after['portPath']}" in properties.splitlines(), (after, properties)
    assert (listed["id"], listed["portPath"]) == (after["id"], after["portPath"]), (listed, after)


@pytest.mark.parametrize("protocol", ["xbox360", "gip"])
def test_monitor_names_every_control_as_sdl_reads_it(sdl, gadget_factory, padbridge, protocol):
    """Each button alone, each stick and trigger: monitor names it as SDL reads the same pad. The Xbox 360 pad
    (045e:028e), and the Xbox Series pad (045e:0b12, GIP), whose triggers go to 1023 and whose guide button comes in
    a packet of its own."""
    known = joystick_ids(sdl)   # before the pad is plugged in: SDL's new joystick is the pad
    xbox = gadget_factory(0x045E, 0x0B12, protocol) if protocol == "gip" else gadget_factory()
    reports = PadReports(xbox)
    controller = open_controller(sdl, [xbox.node], known)
    monitor = padbridge(xbox.node, "--json", command="monitor")
    monitor.wait_event("monitoring", what="monitor under way")
    both = MonitorAgainstSDL(sdl, controller, monitor, xbox.node)
    try:
        if protocol == "xbox360":
            assert sdl.SDL_GameControllerGetType(controller) == sdl.SDL_CONTROLLER_TYPE_XBOX360
        else:
            assert sdl.SDL_GameControllerGetType(controller) == sdl.SDL_CONTROLLER_TYPE_XBOXONE

        # Each button alone, one report each: monitor names it pressed, SDL reads that very button pressed.
        last = both.each_button_alone(reports.buttons, lambda buttons: reports.send(buttons=buttons))
        mark = monitor.stdout_mark()
        reports.send()
        both.line(lambda o: o == {"type": "button", "button": last, "pressed": False}, "all released", mark)
        both.until(lambda: not both.pressed_in_sdl(), "SDL reading every button released")

        # Sticks (the pad sends y up positive; xpad turns it, SDL and padbridge read up negative) and triggers.
        half = (reports.trigger_max + 1) // 2
        steps = [
            (dict(left=(-12000, 0)), "leftx", -12000),
            (dict(left=(0, 20000)), "lefty", -20001),
            (dict(right=(30000, 0)), "rightx", 30000),
            (dict(right=(0, -25000)), "righty", 24999),
            (dict(left_trigger=reports.trigger_max), "lefttrigger", 32767),
            (dict(right_trigger=half), "righttrigger", half * 32767 // reports.trigger_max),
        ]
        for report, axis, expected in steps:
            both.axis_reads(lambda r=report: reports.send(**r), axis, expected, 2 if "trigger" not in axis else 200)
    finally:
        sdl.SDL_GameControllerClose(controller)
        pump(sdl, 0)


def rumble_packet(strong: int, weak: int):
    return lambda p: p.is_rumble and (p.strong, p.weak) == (strong, weak)


def check_rumble_on_then_off(pad: XboxGadget, feedback, target: str, strong: float, weak: float,
                             expected: tuple[int, int]):
    """`feedback TARGET --rumble STRONG,WEAK --duration 1000`: xpad's packet with the bytes asked, then a stop.
    The Xbox 360 pad's is `00 08 00 STRONG WEAK 00 00 00`; the GIP pad's `09 00 SEQ 09 00 0f 00 00 STRONG WEAK ff 00
    ff` (all motors, on for 255 periods, repeated 255 times: xpad renews it while the effect plays)."""
    since = pad.mark()
    process = feedback(target, "--rumble", f"{strong},{weak}", "--duration", "1000")
    index, on = pad.wait_out(rumble_packet(*expected),
                             f"rumble packet with {expected[0]:02x} {expected[1]:02x} (received: "
                             f"{pad.describe_out(since)})", since)
    if pad.protocol == "gip":
        assert on.data[:2] + on.data[3:] == bytes([0x09, 0x00, 0x09, 0x00, 0x0F, 0, 0, *expected, 0xFF, 0, 0xFF]), \
            on.data.hex()
    else:
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
    message = " ".join(process.messages())
    assert "Microsoft X-Box 360 pad" in message and "no lightbar" in message and "rumble" in message, message
    process = feedback(xbox.node, "--lightbar", "ff0040")
    assert process.wait() == 64, process.stderr
    message = " ".join(process.messages())
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
    """Without padbridge's udev rule, xpad's LED class attribute is root's (0644, sysfs): a user given the pad's event
    node (here nobody in the group `input`, which owns it; systemd's uaccess gives the seat's user the same) rumbles
    the pad all the same, and `--player` is refused saying why, sending nothing."""
    as_nobody = (*AS_NOBODY_IN_INPUT, padbridge_binary(), "feedback")
    since = xbox.mark()
    rumbled = subprocess.run([*as_nobody, xbox.node, "--rumble", "0.5,0.25", "--duration", "300"],
                             capture_output=True, text=True, timeout=DEADLINE)
    assert rumbled.returncode == 0, rumbled.stderr
    xbox.wait_out(rumble_packet(128, 64), f"nobody's rumble (received: {xbox.describe_out(since)})", since)
    refused = subprocess.run([*as_nobody, xbox.node, "--player", "2"], capture_output=True, text=True,
                             timeout=DEADLINE)
    assert refused.returncode == 64, refused.stderr
    assert "no player LEDs" in refused.stderr and "LED ring" in refused.stderr \
        and "permission denied" in refused.stderr and "sudo usermod -aG input $USER" in refused.stderr, refused.stderr
    # nothing was sent: a fence (root's --player 3, command 8) arrives with no player 2 (command 7) before it
    feedback(xbox.node, "--player", "3").expect_success()
    index, _ = xbox.wait_out(ring_packet(8), f"root's LED ring packet 01 03 08 (received: {xbox.describe_out(since)})",
                             since)
    assert not any(ring_packet(7)(packet) for packet in xbox.packets_since(since)[:index - since]), \
        xbox.describe_out(since)


def test_with_padbridges_udev_rule_the_group_input_lights_the_ring(padbridges_udev_rule, gadget_factory):
    """The rule hands the ring's brightness attribute to the group input (sysfs takes no ACL): nobody in that group
    lights quadrant 2 with `--player 2`, which xpad sends as `01 03 07`."""
    xbox = gadget_factory()
    brightness = f"{led_ring_of(xbox)}/brightness"
    subprocess.run(["udevadm", "settle", f"--timeout={int(DEADLINE)}"], check=True, timeout=DEADLINE + 5)
    status = os.stat(brightness)
    assert (status.st_gid, status.st_mode & 0o020) == (grp.getgrnam("input").gr_gid, 0o020), \
        f"{brightness}: group {status.st_gid}, mode {status.st_mode & 0o777:o} after udev's rule"
    since = xbox.mark()
    lit = subprocess.run([*AS_NOBODY_IN_INPUT, padbridge_binary(), "feedback", xbox.node, "--player", "2"],
                         capture_output=True, text=True, timeout=DEADLINE)
    assert lit.returncode == 0, lit.stderr
    xbox.wait_out(ring_packet(7), f"nobody's LED ring packet 01 03 07 (received: {xbox.describe_out(since)})", since)


def led_ring_of(pad: XboxGadget) -> str:
    """xpad's LED class device of the pad (xpadN, under its USB device)."""
    leds = f"{os.path.dirname(pad.interface_path())}/leds"
    (name,) = [entry for entry in os.listdir(leds) if entry.startswith("xpad")]
    return f"{leds}/{name}"


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
    check_games_rumble_reaches(pad, virtual)
    since = pad.mark()

    # A game's player LEDs on the virtual DualSense (its LED class devices, hid-playstation's) light the F310's ring:
    # LEDs 1, 3 and 5 on and 2 and 4 off are player 3's pattern, quadrant 3 (command 8).
    leds = led_class_devices_of(virtual.path)
    for k in range(1, 6):
        (name,) = [n for n in os.listdir(leds) if n.endswith(f":white:player-{k}")]
        with open(f"{leds}/{name}/brightness", "w") as f:
            f.write("1" if k % 2 else "0")
    pad.wait_out(ring_packet(8), f"LED ring packet 01 03 08 for player 3's pattern (received: "
                                 f"{pad.describe_out(since)})", since)


def test_remap_as_xbox360_passes_taps_and_a_games_rumble_reaches_the_pad(xbox, padbridge):
    """`remap --as xbox360` of the real xpad pad: a virtual Xbox 360 pad (uinput) with the pad's taps, the pad's own
    node grabbed (nobody else reads it meanwhile), and a game's rumble on the virtual pad in xpad's packets."""
    remap = padbridge(xbox.node, "--as", "xbox360", command="remap")
    ready = remap.wait_ready()
    assert ready["kind"] == "xbox360", ready
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    other_reader = evdev.InputDevice(xbox.node)
    try:
        xbox.send(input_report(buttons=["b"], right_trigger=255))
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_EAST, 1), (ecodes.EV_ABS, ecodes.ABS_RZ, 255)])
        xbox.send(input_report())
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_EAST, 0), (ecodes.EV_ABS, ecodes.ABS_RZ, 0)])
        assert other_reader.read_one() is None, "remap did not grab the pad's node: another reader got its events"
    finally:
        other_reader.close()
    check_games_rumble_reaches(xbox, virtual)
    assert remap.stop() == 0


def test_remap_hides_the_xpad_pad_from_sdl_and_gives_it_back(xbox, padbridge, logged_in_nobody, joystick_interface):
    """As for a DualSense (test_hiding.py): the pad's event and joystick nodes are taken from everyone else while
    remap runs, and given back after. (xpad's pads have no hidraw node; SDL's HIDAPI drivers could reach a USB pad
    through libusb, but Debian's SDL 2 is built without it.)"""
    settle()
    check_remap_hides_and_gives_back(padbridge, xbox.node, [xbox.node, *joystick_nodes([xbox.node])])


def check_games_rumble_reaches(pad: XboxGadget, virtual: evdev.InputDevice):
    """A game's rumble on `virtual` (evdev force feedback, 0x8000 strong and 0x4000 weak) arrives in xpad's
    packet with those magnitudes' top bytes (the GIP pad's: magnitude / 512), and its stop arrives as zeros."""
    since = pad.mark()
    strong, weak = (0x40, 0x20) if pad.protocol == "gip" else (0x80, 0x40)
    effect = virtual.upload_effect(rumble_effect(0x8000, 0x4000))
    virtual.write(ecodes.EV_FF, effect, 1)
    pad.wait_out(lambda p: p.is_rumble and abs(p.strong - strong) <= 1 and abs(p.weak - weak) <= 1,
                 f"the game's rumble in xpad's packet (received: {pad.describe_out(since)})", since)
    virtual.write(ecodes.EV_FF, effect, 0)
    pad.wait_out(rumble_packet(0, 0), f"the game's rumble stopped (received: {pad.describe_out(since)})", since)


def test_the_pad_forwarded_to_a_host_taps_there_and_the_hosts_game_rumbles_it(gadget_factory, padbridge, tmp_path):
    """`connect` forwards the real xpad pad (here the F310's ids) to `serve` over loopback: the host's virtual Xbox
    360 pad gets its taps, and a game's rumble there comes back across the link into xpad's packets."""
    pad = gadget_factory(*F310)
    serve, client = paired_host(padbridge, tmp_path)
    connect(padbridge, client, pad.node)
    _, ready = attached(serve)
    assert ready["kind"] == "xbox360", ready
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    pad.send(input_report(buttons=["x", "dpleft"]))
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_X, 1), (ecodes.EV_ABS, ecodes.ABS_HAT0X, -1)])
    pad.send(input_report())
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_X, 0), (ecodes.EV_ABS, ecodes.ABS_HAT0X, 0)])
    check_games_rumble_reaches(pad, virtual)


def test_an_xbox_series_pad_is_xbox_one_its_share_button_is_misc1_it_rumbles_and_has_no_ring(gadget_factory, padbridge,
                                                                                            feedback):
    """The Xbox Series pad (045e:0b12) on xpad's GIP code: listed as an Xbox One pad by its interface (ff/47/d0),
    with the share button (KEY_RECORD from xpad, SDL's misc1); rumble in GIP packets (magnitude / 512); no LED ring
    (xpad makes no LED class device for GIP pads), so `--player` is refused naming the pad."""
    pad = gadget_factory(0x045E, 0x0B12, "gip")
    controller = controller_with_node(list_json(), pad.node)
    assert controller["kind"] == "xbox-one", controller
    assert controller["name"] == "Microsoft Xbox Series S|X Controller", controller
    assert (controller["vendor"], controller["product"], controller["bus"]) == ("045e", "0b12", "usb"), controller
    caps = controller["capabilities"]
    assert caps["rumble"] is True and caps["playerLeds"] is False and caps["lightbar"] is False, caps
    assert set(caps["buttons"]) == set(GIP_BUTTON_BITS) | {"guide", "misc1"}, caps

    # xpad reads input only once its node is open, and then first sends the pad GIP's power-on
    monitor = padbridge(pad.node, "--json", command="monitor")
    monitor.wait_event("monitoring", what="monitor under way")
    pad.wait_out(lambda p: p.data[:2] == b"\x05\x20" and p.data[3:] == b"\x01\x00", "GIP power-on 05 20 SEQ 01 00")
    mark = monitor.stdout_mark()
    pad.send(gip_input_report(pad.next_sequence(), share=True))
    monitor.wait_stdout(lambda line: json.loads(line) == {"type": "button", "button": "misc1", "pressed": True},
                        since=mark, what="share pressed (misc1)")
    pad.send(gip_input_report(pad.next_sequence()))
    monitor.wait_stdout(lambda line: json.loads(line) == {"type": "button", "button": "misc1", "pressed": False},
                        since=mark, what="share released")
    assert monitor.stop() == 0

    check_rumble_on_then_off(pad, feedback, controller["id"][:6], 0.5, 0.25, (64, 32))
    refused = feedback(pad.node, "--player", "2")
    assert refused.wait() == 64, refused.stderr
    message = " ".join(refused.messages())
    assert "Microsoft Xbox Series S|X Controller" in message and "no player LEDs" in message, message


def test_an_xbox_series_pad_remapped_and_forwarded_gets_a_games_rumble(gadget_factory, padbridge, tmp_path):
    """The GIP pad (045e:0b12) remapped as a DualSense and forwarded to a host: its presses on the virtual pad, and
    a game's rumble there back in GIP's rumble packets."""
    pad = gadget_factory(0x045E, 0x0B12, "gip")

    def press_then_rumble(virtual: evdev.InputDevice):
        # (xpad reads the pad's input while its node is open: remap and connect hold it open from their ready line)
        pad.send(gip_input_report(pad.next_sequence(), buttons=["b"]))
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_EAST, 1)])
        pad.send(gip_input_report(pad.next_sequence()))
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_EAST, 0)])
        check_games_rumble_reaches(pad, virtual)

    remap = padbridge(pad.node, "--as", "dualsense", command="remap")
    ready = remap.wait_ready()
    assert ready["kind"] == "dualsense", ready
    press_then_rumble(evdev.InputDevice(ready["eventNodes"][0]))
    assert remap.stop() == 0

    serve, client = paired_host(padbridge, tmp_path)
    connect(padbridge, client, pad.node)
    _, ready = attached(serve)
    press_then_rumble(evdev.InputDevice(ready["eventNodes"][0]))

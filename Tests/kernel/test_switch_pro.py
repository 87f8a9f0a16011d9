"""A Nintendo Switch Pro Controller (057e:2009) bound by the kernel's real hid-nintendo, over USB and Bluetooth: a
uhid stand-in (switch_pro.PhysicalSwitchPro) that answers the driver's handshake, calibration reads and setup as the
pad does, streams its reports, and logs every rumble block and subcommand the driver sends.

- list: one controller with its gamepad node, its IMU node and its hidraw node; kind switch-pro, the driver's name,
  rumble, player LEDs and motion; the same ID after the pad is unplugged and plugged in again.
- monitor: every button, stick and trigger under its SDL name, checked against SDL's own reading of the same pad
  through hid-nintendo's node (face buttons by position: Nintendo's B is `a`).
- feedback: rumble arrives in the driver's rumble blocks with the amplitudes asked, and stops at the duration;
  `--player N` lights the pad's first N player lights (hid-nintendo's LED class devices, which padbridge's udev rule
  gives the group input; without it, rumble still works and `--player` says why not); a lightbar is refused,
  naming the pad and what it has.
- remap --as xbox360 and --as dualsense: the pad's presses on the virtual pad; a game's rumble there in the pad's
  rumble blocks; a game's player LEDs on the virtual DualSense on the pad's lights; the pad's motion turned on hid-
  nintendo's axes (x toward the triggers, y left, z up) arrives on the virtual DualSense's (90 °/s for 1 s is 90 °).
- forwarding: the pad forwarded to a host: its presses there, and the host's game's rumble back in its blocks.
- hiding: while remap runs, the pad's nodes, its hidraw node included, are hidden from SDL; given back after.

No sleeps: waits are on the stand-in's log of what the driver sent, evdev events, padbridge's lines or SDL's state,
with deadlines; the stand-in's own 15 ms report stream is the pad's behaviour, which the driver paces itself on.
"""

from __future__ import annotations

import grp
import os
import select
import subprocess
import threading
import time

import evdev
import pytest
from evdev import ecodes

from conftest import DEADLINE, attached, expect_events, padbridge_binary, rumble_effect
from discovery import controller_with_node, list_json, run_padbridge
from forwarding import connect, paired_host
from hiding import check_remap_hides_and_gives_back, joystick_nodes, settle
from monitor_against_sdl import MonitorAgainstSDL
from motion_node import MotionNode, yaw_integrated
from other_users import AS_NOBODY_IN_INPUT
from sdl_reading import joystick_ids, open_controller, pump
from switch_pro import BUTTON_BITS, NAME, RUMBLE_AMPLITUDE_MAX, PhysicalSwitchPro

BUSES = ["usb", "bluetooth"]
TRIGGERS = ("lefttrigger", "righttrigger")   # ZL and ZR: digital, BTN_TL2/BTN_TR2

pytestmark = pytest.mark.usefixtures("joystick_interface")   # conftest's: joydev loaded, as on a desktop


@pytest.fixture(scope="module", autouse=True)
def hid_nintendo():
    """hid-nintendo loaded before a pad comes (else hid-generic binds it first and udev's autoload rebinds it)."""
    subprocess.run(["modprobe", "hid-nintendo"], check=True, timeout=DEADLINE)


@pytest.fixture
def switch_pad():
    """Makes stand-ins (bound before they are returned) and unplugs those still plugged in at the end."""
    made: list[PhysicalSwitchPro] = []

    def make(bus: str = "usb", **options) -> PhysicalSwitchPro:
        pad = PhysicalSwitchPro(bus, **options)
        made.append(pad)
        pad.nodes_bound = pad.wait_bound()
        return pad

    yield make
    for pad in made:
        pad.close()


def amplitude_of(fraction: float) -> int:
    """The amplitude hid-nintendo encodes for a magnitude `fraction` of full (0-1003), before its table's rounding."""
    return int(round(fraction * 65535)) * RUMBLE_AMPLITUDE_MAX // 65535


def near(amplitude: int, fraction: float) -> bool:
    """Within the table's step (at most 15 between entries above 112) of what was asked."""
    return abs(amplitude - amplitude_of(fraction)) <= 15


def check_rumble_on_then_off(pad: PhysicalSwitchPro, start, strong: float, weak: float, stop=None):
    """`start()` asks for a rumble of strong/weak (fractions); the driver's blocks carry those amplitudes, then, after
    `stop()` (or the duration), zeros. Returns the seconds between the first block on and the first off."""
    _, since = pad.mark()
    start()
    index, on = pad.wait_rumble(lambda r: near(r.strong, strong) and near(r.weak, weak), since,
                                what=f"rumble blocks with amplitudes ≈ {amplitude_of(strong)} and {amplitude_of(weak)}")
    if stop:
        stop()
    _, off = pad.wait_rumble(lambda r: r.strong == 0 and r.weak == 0, index + 1, what="the rumble stopped")
    return off.received - on.received


@pytest.mark.parametrize("bus", BUSES)
def test_list_shows_one_switch_pro_controller_with_its_imu_and_keeps_its_id_on_replug(switch_pad, bus):
    pad = switch_pad(bus)
    nodes = pad.nodes_bound
    assert evdev.InputDevice(nodes["pad"]).name == NAME
    controllers = list_json()
    controller = controller_with_node(controllers, nodes["pad"])
    assert [c["id"] for c in controllers].count(controller["id"]) == 1
    assert controller["kind"] == "switch-pro" and controller["driver"] == "nintendo", controller
    assert controller["name"] == NAME and controller["bus"] == bus, controller
    assert (controller["vendor"], controller["product"]) == ("057e", "2009"), controller
    assert [(n["role"], n["path"]) for n in controller["nodes"]["evdev"]] == \
        [("pad", nodes["pad"]), ("motion", nodes["imu"])], controller["nodes"]
    assert controller["nodes"]["hidraw"] == f"/dev/{os.listdir(pad.hid_directory() + '/hidraw')[0]}"
    hid = os.path.basename(pad.hid_directory())
    assert controller["nodes"]["leds"] == [f"/sys/class/leds/{hid}:{light}" for light in
                                           ["blue:player-5", *(f"green:player-{n}" for n in range(1, 5))]], \
        controller["nodes"]   # the home light and the four player lights, hid-nintendo's LED class devices
    assert all(os.path.isdir(path) for path in controller["nodes"]["leds"])
    assert controller["serial"] == pad.mac.lower(), controller
    caps = controller["capabilities"]
    assert caps["rumble"] and caps["playerLeds"] and caps["motion"], caps
    assert not caps["lightbar"] and not caps["touchpad"] and not caps["adaptiveTriggers"], caps
    assert set(caps["buttons"]) == set(BUTTON_BITS) - set(TRIGGERS), caps
    assert set(caps["axes"]) == {"leftx", "lefty", "rightx", "righty", *TRIGGERS}, caps
    row = next((line for line in run_padbridge("list").stdout.splitlines() if controller["id"] in line), None)
    assert row is not None and NAME in row and "Switch Pro" in row, row

    mac = pad.mac_octets
    pad.close()
    again = switch_pad(bus, mac_octets=mac)
    assert controller_with_node(list_json(), again.nodes_bound["pad"])["id"] == controller["id"]


@pytest.mark.parametrize("bus", [
    "usb", pytest.param("bluetooth", marks=pytest.mark.sdl_reads_switch_pads_itself)])
def test_monitor_names_every_control_as_sdl_reads_it(sdl, switch_pad, padbridge, bus):
    """Each button alone, then ZL and ZR, then each stick axis: monitor names it as SDL reads the same pad, by
    position. On USB SDL reads hid-nintendo's event node; on Bluetooth its own Switch driver reads the pad's reports
    from the hidraw node, as it does by default (its database's entry for hid-nintendo's Bluetooth node, in SDL 2.26,
    numbers the buttons as hid-generic does: the shoulders would be capture and L)."""
    known = joystick_ids(sdl)
    pad = switch_pad(bus)
    node = pad.nodes_bound["pad"]
    hidraw = f"/dev/{os.listdir(pad.hid_directory() + '/hidraw')[0]}"
    controller = open_controller(sdl, [hidraw if bus == "bluetooth" else node], known)
    monitor = padbridge(node, "--json", command="monitor")
    monitor.wait_event("monitoring", what="monitor under way")
    both = MonitorAgainstSDL(sdl, controller, monitor, node)
    try:
        both.each_button_alone([n for n in BUTTON_BITS if n not in TRIGGERS],
                               lambda buttons: pad.send_state(buttons=buttons))
        for trigger in TRIGGERS:
            both.axis_reads(lambda t=trigger: pad.send_state(buttons=[t]), trigger, 32767, 0)
            assert both.pressed_in_sdl() == [], f"{trigger} alone: SDL reads {both.pressed_in_sdl()} pressed"

        # Sticks: raw offsets from the calibrated centre (±1500 is full); hid-nintendo scales them onto ±32767 and
        # turns y (the pad counts up positive; the node, SDL and padbridge count down positive). SDL's own driver
        # (Bluetooth here) takes 70 % of the calibrated range for full and widens it as the stick goes further, so
        # only full deflections read the same there.
        if bus == "usb":
            steps = [
                (dict(left=(-600, 0)), "leftx", -600 * 32767 // 1500),
                (dict(left=(0, 1000)), "lefty", -(1000 * 32767 // 1500)),
                (dict(right=(1500, 0)), "rightx", 32767),
                (dict(right=(0, -750)), "righty", 750 * 32767 // 1500),
            ]
        else:
            steps = [
                (dict(left=(-1500, 0)), "leftx", -32768),
                (dict(left=(0, 1500)), "lefty", -32768),
                (dict(right=(1500, 0)), "rightx", 32767),
                (dict(right=(0, -1500)), "righty", 32767),
            ]
        for state, axis, expected in steps:
            both.axis_reads(lambda s=state: pad.send_state(**s), axis, expected, 2)
    finally:
        sdl.SDL_GameControllerClose(controller)
        pump(sdl, 0)
    assert monitor.stop() == 0


def lights_of(pad: PhysicalSwitchPro) -> list[int]:
    """The four player lights' brightness in sysfs (hid-nintendo's LED class devices)."""
    leds = pad.hid_directory() + "/leds"
    values = []
    for number in range(1, 5):
        (name,) = [n for n in os.listdir(leds) if n.endswith(f":green:player-{number}")]
        with open(f"{leds}/{name}/brightness") as f:
            values.append(int(f.read()))
    return values


def lights_off(pad: PhysicalSwitchPro):
    """Turns the player lights off through hid-nintendo's LED class devices (root writes them here), so that what a
    test asks for next is a change: the driver lights 1 to 4 of them at probe, counting the pads it has bound."""
    if lights_of(pad) == [0, 0, 0, 0]:
        return
    since, _ = pad.mark()
    leds = pad.hid_directory() + "/leds"
    for name in sorted(n for n in os.listdir(leds) if ":green:player-" in n):
        with open(f"{leds}/{name}/brightness", "w") as f:
            f.write("0")
    wait_lights(pad, 0, since, "the lights turned off")


def wait_lights(pad: PhysicalSwitchPro, on: int, since: int, what: str):
    """Waits for the driver's player-lights subcommand whose `on` nibble is `on` (bit 0 the first light)."""
    pad.wait_subcommand(lambda s: s.id == 0x30 and s.data[0] & 0x0F == on, since,
                        what=f"player-lights subcommand with lights {on:04b} (first light last) for {what}")


@pytest.mark.parametrize("bus", BUSES)
def test_feedback_rumbles_the_pad_and_lights_its_players_and_refuses_a_lightbar(switch_pad, feedback, bus):
    pad = switch_pad(bus)
    node = pad.nodes_bound["pad"]
    seconds = check_rumble_on_then_off(
        pad, lambda: feedback(node, "--rumble", "0.5,0.25", "--duration", "1000").expect_success(), 0.5, 0.25)
    assert seconds >= 0.5, f"the rumble stopped after {seconds:.3f} s of the 1 s asked"

    controller = controller_with_node(list_json(), node)
    lights_off(pad)
    for target, player, lights in ((node, 2, 0b0011), (controller["id"][:6], 4, 0b1111), (node, 1, 0b0001)):
        since, _ = pad.mark()
        feedback(target, "--player", str(player)).expect_success()
        wait_lights(pad, lights, since, f"--player {player}")
        assert lights_of(pad) == [(lights >> k) & 1 for k in range(4)]

    since, _ = pad.mark()
    process = feedback(node, "--lightbar", "ff0040")
    assert process.wait() == 64, process.stderr
    message = " ".join(process.messages())
    assert NAME in message and "no lightbar" in message and "rumble" in message, message
    assert pad.player_lights(since) == [], "a refused request sent nothing"


def check_games_rumble_reaches(pad: PhysicalSwitchPro, virtual: evdev.InputDevice):
    """A game's rumble on `virtual` (evdev force feedback: 0x8000 strong, 0x4000 weak) arrives in the pad's rumble
    blocks, and its stop as zeros."""
    effect = virtual.upload_effect(rumble_effect(0x8000, 0x4000))
    check_rumble_on_then_off(pad, lambda: virtual.write(ecodes.EV_FF, effect, 1), 0x8000 / 65535, 0x4000 / 65535,
                             stop=lambda: virtual.write(ecodes.EV_FF, effect, 0))


def test_remap_as_xbox360_passes_presses_and_a_games_rumble_reaches_the_pad(switch_pad, padbridge):
    pad = switch_pad("usb")
    remap = padbridge(pad.nodes_bound["pad"], "--as", "xbox360", command="remap")
    ready = remap.wait_ready()
    assert ready["kind"] == "xbox360", ready
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    # Nintendo's B (the bottom face button) is the Xbox pad's A; ZR is its right trigger, full.
    pad.send_state(buttons=["a", "righttrigger"])
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_ABS, ecodes.ABS_RZ, 255)])
    pad.send_state()
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 0), (ecodes.EV_ABS, ecodes.ABS_RZ, 0)])
    check_games_rumble_reaches(pad, virtual)
    assert remap.stop() == 0


def test_remap_as_dualsense_a_games_player_leds_and_rumble_reach_the_pad(switch_pad, padbridge):
    pad = switch_pad("bluetooth")
    remap = padbridge(pad.nodes_bound["pad"], "--as", "dualsense", command="remap")
    ready = remap.wait_ready()
    assert ready["kind"] == "dualsense", ready
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    pad.send_state(buttons=["y", "misc1"])   # Nintendo's X (the top face button) and capture
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_NORTH, 1)])
    pad.send_state()
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_NORTH, 0)])
    check_games_rumble_reaches(pad, virtual)

    # A game's player LEDs on the virtual DualSense (hid-playstation's LED class devices): player 3's pattern (LEDs
    # 1, 3 and 5 of five) lights the pad's first three lights.
    lights_off(pad)
    since, _ = pad.mark()
    leds = os.path.realpath(f"/sys/class/input/{os.path.basename(virtual.path)}/device/device/leds")
    for k in range(1, 6):
        (name,) = [n for n in os.listdir(leds) if n.endswith(f":white:player-{k}")]
        with open(f"{leds}/{name}/brightness", "w") as f:
            f.write("1" if k % 2 else "0")
    wait_lights(pad, 0b0111, since, "the game's player 3 on the virtual DualSense")
    assert remap.stop() == 0


def test_the_pad_forwarded_to_a_host_presses_there_and_the_hosts_game_rumbles_it(switch_pad, padbridge, tmp_path):
    """Forwarded with no --as on either side, the pad stays what it is: a virtual Switch Pro Controller on the host,
    which hid-nintendo binds (gamepad and IMU nodes), its presses, its turn (the IMU node reads the stand-in's 89.98
    °/s at its resolution of 14 247 a °/s: 1 282 000, ± 3 %) and the host's game's rumble back."""
    pad = switch_pad("usb")
    serve, client = paired_host(padbridge, tmp_path)
    connect(padbridge, client, pad.nodes_bound["pad"])
    _, ready = attached(serve)
    assert ready["kind"] == "switch-pro" and len(ready["eventNodes"]) == 2, ready
    imu = evdev.InputDevice(ready["eventNodes"][1])
    assert imu.name.endswith("IMU"), imu.name
    pad.send_motion(gyro=(0, 0, YAW_RAW), accel=(0, 0, GRAVITY_RAW))
    deadline = time.monotonic() + DEADLINE
    turning, seen = None, {}
    while turning is None and time.monotonic() < deadline:
        if imu.fd in select.select([imu.fd], [], [], 0.1)[0]:
            for event in imu.read():
                if event.type == ecodes.EV_ABS and event.code in (ecodes.ABS_RX, ecodes.ABS_RY, ecodes.ABS_RZ):
                    seen[ecodes.ABS[event.code]] = event.value
                    if abs(abs(event.value) - YAW_RAW * 1000) <= YAW_RAW * 30:   # 14 247 a °/s: 1 282 000, ± 3 %
                        turning = event.value
    pad.send_motion(gyro=(0, 0, 0), accel=(0, 0, GRAVITY_RAW))
    assert turning is not None, f"the host's virtual Switch Pro's IMU never read the stand-in's 89.98 °/s turn: {seen}"
    virtual = evdev.InputDevice(ready["eventNodes"][0])
    pad.send_state(buttons=["b", "dpleft"])   # Nintendo's A (the right face button), the d-pad's left
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_EAST, 1), (ecodes.EV_ABS, ecodes.ABS_HAT0X, -1)])
    pad.send_state()
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_EAST, 0), (ecodes.EV_ABS, ecodes.ABS_HAT0X, 0)])
    check_games_rumble_reaches(pad, virtual)


REPORT_SECONDS = 0.015            # the pad's report period; hid-nintendo stamps each report's 3 samples 5 ms apart
TURN_REPORTS = 67                 # 201 turning samples after one at rest: 201 intervals of 5 ms, 1.005 s
YAW_RAW = 1282                    # 1282 × 1000 / 14247 = 89.98 °/s under the stand-in's calibration
GRAVITY_RAW = 4096                # 1 g
TURN_DEGREES = YAW_RAW * 1000 / 14247 * TURN_REPORTS * 3 * 0.005   # 90.43 °


def test_motion_turned_on_nintendos_axes_reaches_the_virtual_dualsense_on_its_own(switch_pad, padbridge):
    """The pad lying flat turns left at 90 °/s about its up axis (hid-nintendo's z) for 1.005 s of the driver's
    clock (90.43 °): `remap --as dualsense` shows it as the DualSense's yaw (ABS_RY) turning that much ± 3 °, gravity
    on the DualSense's up axis (ABS_Y) at 1 g ± 3 %, nothing on its other axes. The stand-in does not stream here: the test sends each report at the pad's pace, and the driver keeps
    its default report period (15 ms, 5 ms a sample; it would measure its own only after 300 reports)."""
    pad = switch_pad("usb", stream=False)
    remap = padbridge(pad.nodes_bound["pad"], "--as", "dualsense", command="remap")
    ready = remap.wait_ready()
    motion = evdev.InputDevice(ready["eventNodes"][1])
    assert motion.name.endswith("Motion Sensors"), motion.name
    node = MotionNode(motion)
    try:
        pad.send_motion(gyro=(0, 0, 0), accel=(0, 0, GRAVITY_RAW))
        rest = node.wait_for_frame(lambda f: f[2] > 0 and f[5] == 0, "the pad at rest, gravity on the DualSense's Y")
        pace = threading.Event()
        started = time.monotonic()
        for k in range(TURN_REPORTS):
            pace.wait(max(0.0, started + k * REPORT_SECONDS - time.monotonic()))
            pad.send_motion(gyro=(0, 0, YAW_RAW), accel=(0, 0, GRAVITY_RAW))
        turning = node.wait_for_frame(lambda f: f[5] > 0, "the pad turning", rest)
        pace.wait(max(0.0, started + TURN_REPORTS * REPORT_SECONDS - time.monotonic()))
        pad.send_motion(gyro=(0, 0, 0), accel=(0, 0, GRAVITY_RAW))
        stopped = node.wait_for_frame(lambda f: f[5] == 0, "the pad at rest again", turning)
    finally:
        frames = node.stop()
    assert not node.dropped, "the test's own reader fell behind (SYN_DROPPED): the check says nothing"
    assert remap.stop() == 0

    turn = frames[turning - 1:stopped]
    degrees = yaw_integrated(turn)
    gravity = [f[2] / 8192 for f in frames[rest:stopped + 1]]
    others = [f for f in frames[rest:stopped + 1] if abs(f[1]) > 82 or abs(f[3]) > 82 or f[4] != 0 or f[6] != 0]
    span_us = (turn[-1][0] - turn[0][0]) & 0xFFFFFFFF
    print(f"Switch Pro turned {YAW_RAW * 1000 / 14247:.2f} °/s for 201 samples of 5 ms ({TURN_DEGREES:.2f} °): the "
          f"virtual DualSense turned {degrees:.3f} ° over {span_us} µs in {len(turn)} frames; gravity "
          f"{min(gravity):.4f}...{max(gravity):.4f} g")
    assert abs(degrees - TURN_DEGREES) <= 3, f"turned {degrees:.3f} °, not {TURN_DEGREES:.2f} ° ± 3 °, over {span_us} µs"
    assert all(abs(g - 1) <= 0.03 for g in gravity), f"gravity read as {min(gravity)}...{max(gravity)} g on Y"
    assert not others, f"motion on other axes than yaw and gravity: {others[:3]}"


def test_remap_hides_the_switch_pad_and_its_hidraw_node_from_sdl_and_gives_them_back(switch_pad, padbridge,
                                                                                     logged_in_nobody,
                                                                                     joystick_interface):
    """As for a DualSense (test_hiding.py): every node of the pad (gamepad, IMU, hidraw, which SDL's own Switch
    driver reads, and joystick) is taken from everyone else while remap runs, and given back after."""
    pad = switch_pad("bluetooth")
    settle()
    nodes = [pad.nodes_bound["pad"], pad.nodes_bound["imu"]]
    hidraw = f"/dev/{os.listdir(pad.hid_directory() + '/hidraw')[0]}"
    check_remap_hides_and_gives_back(padbridge, nodes[0], [*nodes, hidraw, *joystick_nodes(nodes)])


def test_a_user_who_cannot_write_the_lights_still_rumbles_the_pad_and_player_says_why(switch_pad):
    """Without padbridge's udev rule the lights' brightness attributes are root's (sysfs takes no ACL): a user given
    the pad's event node (nobody in the group `input`, which owns it) rumbles the pad all the same, and `--player` is
    refused saying why and what to do, sending nothing."""
    pad = switch_pad("usb")
    node = pad.nodes_bound["pad"]
    # The node is root's until udev has given it to the group input (its default rule): wait for udev (a busy
    # machine's CI run once ran nobody's feedback before that, and was refused).
    settle()
    as_nobody = (*AS_NOBODY_IN_INPUT, padbridge_binary(), "feedback", node)
    _, since = pad.mark()
    rumbled = subprocess.run([*as_nobody, "--rumble", "0.5,0.25", "--duration", "300"], capture_output=True,
                             text=True, timeout=DEADLINE)
    assert rumbled.returncode == 0, rumbled.stderr
    pad.wait_rumble(lambda r: near(r.strong, 0.5) and near(r.weak, 0.25), since, what="nobody's rumble")
    lights_before, _ = pad.mark()
    refused = subprocess.run([*as_nobody, "--player", "2"], capture_output=True, text=True, timeout=DEADLINE)
    assert refused.returncode == 64, refused.stderr
    assert "no player LEDs" in refused.stderr and "permission denied" in refused.stderr \
        and "sudo usermod -aG input $USER" in refused.stderr, refused.stderr
    assert pad.player_lights(lights_before) == [], "a refused request sent nothing"


def test_with_padbridges_udev_rule_the_group_input_lights_the_players(padbridges_udev_rule, switch_pad):
    """The rule hands the four lights' brightness attributes to the group input: nobody in that group lights the
    first two with `--player 2`."""
    pad = switch_pad("bluetooth")
    settle()
    leds = pad.hid_directory() + "/leds"
    for name in sorted(n for n in os.listdir(leds) if ":green:player-" in n):
        status = os.stat(f"{leds}/{name}/brightness")
        assert (status.st_gid, status.st_mode & 0o020) == (grp.getgrnam("input").gr_gid, 0o020), \
            f"{name}/brightness: group {status.st_gid}, mode {status.st_mode & 0o777:o} after udev's rule"
    lights_off(pad)
    since, _ = pad.mark()
    lit = subprocess.run([*AS_NOBODY_IN_INPUT, padbridge_binary(), "feedback", pad.nodes_bound["pad"], "--player", "2"],
                         capture_output=True, text=True, timeout=DEADLINE)
    assert lit.returncode == 0, lit.stderr
    wait_lights(pad, 0b0011, since, "nobody's --player 2")

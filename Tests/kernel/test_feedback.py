"""`padbridge feedback` against stand-ins for physical pads: a uhid DualSense that hid-playstation binds (USB and
Bluetooth bus), whose received output reports are checked byte by byte, and a uinput pad with FF_RUMBLE.

No sleeps: every wait blocks on a recorded report or force-feedback request, or on the process, with a deadline."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from conftest import DEADLINE, padbridge_binary, parse_event
from standins import BUS_BLUETOOTH, PhysicalDualSense, RumbleOnlyPad
from waiting import wait_for_item



@pytest.fixture(params=["usb", "bluetooth"])
def dualsense(request):
    pad = PhysicalDualSense(request.param)
    try:
        pad.hidraw = pad.wait_bound()
        yield pad
    finally:
        print(f"stand-in {pad.mac} ({request.param}) received:{pad.describe()}")
        pad.close()


def check_framing(pad: PhysicalDualSense, report):
    """Kernel layout on both buses; on Bluetooth a valid CRC (seed 0xA2) and tag 0x10."""
    if pad.bus == BUS_BLUETOOTH:
        assert report.raw[0] == 0x31 and len(report.raw) == 78, report.describe()
        assert report.crc_ok, f"bad CRC: {report.describe()}"
        assert report.c == 3 and report.raw[2] == 0x10 and report.raw[1] & 0x0F == 0, report.describe()
    else:
        assert report.raw[0] == 0x02 and len(report.raw) == 63, report.describe()


def is_rumble_off(report) -> bool:
    return (report.rumble_flagged and report.motor_strong == 0 and report.motor_weak == 0) or (
        report.valid_flag0 == 0 and report.valid_flag1 == 0 and report.valid_flag2 == 0)


def test_feedback_lightbar(dualsense, feedback):
    since = dualsense.mark()
    feedback(dualsense.hidraw, "--lightbar", "ff0040").expect_success()
    _, report = dualsense.wait_report(lambda r: r.valid_flag1 & 0x04 and r.lightbar == (0xFF, 0x00, 0x40), since,
                                      what="lightbar ff0040 report")
    check_framing(dualsense, report)
    assert (report.valid_flag0, report.valid_flag1, report.valid_flag2) == (0, 0x04, 0), report.describe()


def test_feedback_rumble_stops_after_duration(dualsense, feedback):
    since = dualsense.mark()
    process = feedback(dualsense.hidraw, "--rumble", "0.5,0.25", "--duration", "1000")
    index, on = dualsense.wait_report(lambda r: r.rumble_flagged and r.motor_strong == 128 and r.motor_weak == 64,
                                      since, what="rumble 128/64 report")
    check_framing(dualsense, on)
    assert on.valid_flag0 & 0x02, f"haptics-select bit missing: {on.describe()}"
    _, off = dualsense.wait_report(is_rumble_off, index + 1, what="rumble-off report")
    check_framing(dualsense, off)
    # The stand-in stamps a report when Python reads it: a late read of the first report shortens the interval it
    # sees, so the bound leaves half the duration for that (one CI run saw less than 250 ms of a 300 ms rumble).
    assert off.received - on.received >= 0.5, f"rumble stopped after {off.received - on.received:.3f} s"
    process.expect_success()
    if dualsense.bus == BUS_BLUETOOTH:
        assert off.sequence == (on.sequence + 1) % 16, f"sequence {on.sequence} then {off.sequence}"


@pytest.mark.parametrize("ending", ["SIGINT", "SIGHUP"])
def test_feedback_rumble_until_signal(dualsense, feedback, ending):
    """Rumble never outlives the command: a signal ends it, SIGHUP (the terminal closed) included."""
    import signal

    since = dualsense.mark()
    process = feedback(dualsense.hidraw, "--rumble", "1,1")
    index, _ = dualsense.wait_report(lambda r: r.rumble_flagged and r.motor_strong == 255, since, what="rumble 255")
    process.proc.send_signal(getattr(signal, ending))
    dualsense.wait_report(is_rumble_off, index + 1, what=f"rumble-off report after {ending}")
    process.expect_success()


def test_feedback_right_trigger_weapon(dualsense, feedback):
    since = dualsense.mark()
    feedback(dualsense.hidraw, "--trigger", "right:weapon:2:6:8").expect_success()
    _, report = dualsense.wait_report(lambda r: r.valid_flag0 & 0x04, since, what="right-trigger report")
    check_framing(dualsense, report)
    # Weapon 0x25: zones (1<<2)|(1<<6) = 0x0044 little-endian, strength 8 - 1 = 7 (doc §3).
    assert report.right_trigger.hex() == "2544000700000000000000", report.describe()
    assert not report.valid_flag0 & 0x08, f"left trigger flagged too: {report.describe()}"


def test_feedback_player_leds_and_mic_led(dualsense, feedback):
    since = dualsense.mark()
    feedback(dualsense.hidraw, "--player-leds", "5", "--mic-led", "on").expect_success()
    _, report = dualsense.wait_report(lambda r: r.valid_flag1 & 0x10 and r.player_leds & 0x1F == 5, since,
                                      what="player-LED mask 5 report")
    check_framing(dualsense, report)
    assert report.valid_flag1 & 0x01 and report.mic_led == 1, f"mic LED not on: {report.describe()}"
    since = dualsense.mark()
    feedback(dualsense.hidraw, "--player", "3").expect_success()
    dualsense.wait_report(lambda r: r.valid_flag1 & 0x10 and r.player_leds & 0x1F == 0x15, since,
                          what="player 3 pattern 0x15")


def set_kernel_lightbar(pad: PhysicalDualSense, rgb) -> None:
    """Sets the lightbar through hid-playstation's LED class device and waits for the kernel's report."""
    leds = pad.leds_directory()
    (name,) = [n for n in os.listdir(leds) if n.endswith(":rgb:indicator")]
    since = pad.mark()
    with open(f"{leds}/{name}/brightness") as f:
        assert f.read().strip() == "255", "hid-playstation registers the lightbar at full brightness"
    # One write, one kernel report (writing brightness as well would send a second one later).
    with open(f"{leds}/{name}/multi_intensity", "w") as f:
        f.write(" ".join(str(v) for v in rgb))
    pad.wait_report(lambda r: r.valid_flag1 & 0x04 and r.lightbar == tuple(rgb), since,
                    what=f"kernel lightbar report {rgb}")


def kernel_player_mask(pad: PhysicalDualSense) -> int:
    leds = pad.leds_directory()
    mask = 0
    for k in range(1, 6):
        (name,) = [n for n in os.listdir(leds) if n.endswith(f":white:player-{k}")]
        with open(f"{leds}/{name}/brightness") as f:
            if int(f.read().strip()):
                mask |= 1 << (k - 1)
    return mask


def test_feedback_stdin_sends_only_changes_and_restores(dualsense, feedback):
    set_kernel_lightbar(dualsense, (10, 20, 30))
    players = kernel_player_mask(dualsense)
    since = dualsense.mark()
    process = feedback(dualsense.hidraw, "--stdin", stdin=True)

    process.send('{"type":"lightbar","red":1,"green":2,"blue":3}')
    index, first = dualsense.wait_report(lambda r: r.valid_flag1 & 0x04 and r.lightbar == (1, 2, 3), since,
                                         what="lightbar 1/2/3 report")
    check_framing(dualsense, first)
    assert first.valid_flag0 == 0 and first.valid_flag2 == 0, first.describe()

    process.send('{"type":"rumble","strong":0.5,"weak":0.25}')
    index, second = dualsense.wait_report(lambda r: r.rumble_flagged, index + 1, what="rumble report")
    check_framing(dualsense, second)
    assert (second.motor_strong, second.motor_weak) == (128, 64), second.describe()
    assert second.valid_flag1 == 0, f"the lightbar was re-sent or cleared: {second.describe()}"

    process.send("this is not json")
    process.send('{"type":"trigger","trigger":"left","raw":"21ff03ffffff3f00000000"}')
    process.send('{"type":"playerLeds","mask":31}')
    # Two lines in quick succession may share a report or go out one pacing interval apart: both are right.
    seen = {}

    def both_seen(report):
        if report.valid_flag0 & 0x08:
            seen["trigger"] = report
        if report.valid_flag1 & 0x10:
            seen["players"] = report
        return len(seen) == 2

    index, _ = dualsense.wait_report(both_seen, index + 1, what="left-trigger and player-LED reports")
    for report in {id(r): r for r in seen.values()}.values():
        check_framing(dualsense, report)
        assert not report.rumble_flagged and not report.valid_flag1 & 0x04, report.describe()
    assert seen["trigger"].left_trigger.hex() == "21ff03ffffff3f00000000", seen["trigger"].describe()
    assert seen["players"].player_leds & 0x1F == 31, seen["players"].describe()
    process.wait_event("lineIgnored", where=lambda e: e["line"] == 3, what="line 3 reported and ignored")

    process.close_stdin()
    _, closing = dualsense.wait_report(lambda r: is_rumble_off(r) and r.valid_flag0 & 0x08, index + 1,
                                       what="closing report")
    check_framing(dualsense, closing)
    assert closing.left_trigger[0] == 0x05, f"left trigger not off: {closing.describe()}"
    assert not closing.valid_flag0 & 0x04, f"right trigger was never set: {closing.describe()}"
    assert closing.valid_flag1 & 0x04 and closing.lightbar == (10, 20, 30), f"lightbar not restored: {closing.describe()}"
    assert closing.valid_flag1 & 0x10 and closing.player_leds & 0x1F == players, \
        f"player LEDs not restored to {players:#x}: {closing.describe()}"
    process.expect_success()


def test_feedback_pad_unplugged_ends_cleanly(feedback):
    pad = PhysicalDualSense("usb")
    try:
        node = pad.wait_bound()
        process = feedback(node, "--stdin", stdin=True)
        since = pad.mark()
        process.send('{"type":"lightbar","red":9,"green":9,"blue":9}')
        pad.wait_report(lambda r: r.lightbar == (9, 9, 9), since, what="lightbar report")
    finally:
        pad.close()
    process.send('{"type":"lightbar","red":8,"green":8,"blue":8}')
    process.wait_event("padWentAway", what="feedback saying the pad went away")
    try:
        process.close_stdin()
    except BrokenPipeError:
        pass
    process.expect_success()


def test_feedback_evdev_rumble_pad(feedback):
    pad = RumbleOnlyPad()
    try:
        process = feedback(pad.path, "--rumble", "0.5,0.25", "--duration", "1000")
        index, upload = pad.wait_record(lambda r: r.kind == "upload", what="effect upload")
        assert (upload.strong, upload.weak) == (32768, 16384), upload
        assert upload.effect_id >= 0, upload
        index, play = pad.wait_record(lambda r: r.kind == "play", index + 1, what="play")
        assert play.effect_id == upload.effect_id
        index, stop = pad.wait_record(lambda r: r.kind == "stop", index + 1, what="stop")
        assert stop.effect_id == upload.effect_id
        # Stamped when Python reads the request: room for a late read of the first one (as for the DualSense).
        assert stop.received - play.received >= 0.5, f"stopped after {stop.received - play.received:.3f} s"
        process.expect_success()
        pad.wait_record(lambda r: r.kind == "erase" and r.effect_id == upload.effect_id, index + 1, what="erase")
        uploads = [r for r in pad.records if r.kind == "upload"]
        assert len(uploads) == 1, f"the effect was re-uploaded: {pad.records}"
    finally:
        pad.close()


def test_feedback_finds_a_pad_by_its_list_id(dualsense, feedback):
    """PAD as `padbridge list` names it: the ID (a prefix of it) leads to the pad's hidraw node."""
    from discovery import controller_with_node, list_json

    controller = controller_with_node(list_json(), dualsense.hidraw)
    since = dualsense.mark()
    feedback(controller["id"][:5], "--lightbar", "00ff80").expect_success()
    dualsense.wait_report(lambda r: r.valid_flag1 & 0x04 and r.lightbar == (0x00, 0xFF, 0x80), since,
                          what="lightbar 00ff80 report, the pad chosen by its ID")


def test_feedback_rejects_other_pad_names(feedback):
    process = feedback("99", "--rumble", "1,1")
    assert process.wait() == 64
    assert any("padbridge list" in line for line in process.messages()), process.stderr
    process = feedback("/dev/null", "--rumble", "1,1")
    assert process.wait() == 64
    assert any("neither a hidraw node" in line for line in process.messages()), process.stderr
    process = feedback("/dev/hidraw0", "--player", "9")
    assert process.wait() == 64
    assert any("--player must be 1...5" in line for line in process.messages()), process.stderr


def test_feedback_loop_from_a_virtual_dualsense_through_sdl(feedback):
    """`padbridge virtual --type dualsense | padbridge feedback HIDRAW --stdin`: a game (SDL2) sets the virtual
    pad's lightbar and rumble; the physical stand-in receives the same through a real pipe."""
    import sdl2
    from sdl_reading import joystick_ids, open_controller, pump, sdl_ps5_motor_bytes, wait_for_enhanced_mode

    if sdl2.SDL_Init(sdl2.SDL_INIT_GAMECONTROLLER) != 0:
        pytest.fail(f"SDL_Init: {sdl2.SDL_GetError().decode()}")
    physical = PhysicalDualSense("usb")
    virtual = None
    bridge = None
    controller = None
    try:
        hidraw = physical.wait_bound()
        known = joystick_ids(sdl2)
        virtual = subprocess.Popen([padbridge_binary(), "virtual", "--events", "json", "--type", "dualsense", "--name",
                                    "loop pad"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        bridge = subprocess.Popen([padbridge_binary(), "feedback", "--events", "json", hidraw, "--stdin"],
                                  stdin=virtual.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        virtual.stdout.close()  # the bridge holds the pipe's read end now
        ready_event = []

        def read_ready():
            for raw in iter(virtual.stderr.readline, b""):
                event = parse_event(raw.decode(errors="replace"))
                if event is not None and event["event"] == "ready":
                    ready_event.append(event)
                    physical._cond.acquire()
                    physical._cond.notify_all()
                    physical._cond.release()

        threading.Thread(target=read_ready, daemon=True).start()
        deadline = time.monotonic() + 60
        with physical._cond:
            while not ready_event:
                remaining = deadline - time.monotonic()
                assert remaining > 0, "padbridge virtual never said it was ready"
                physical._cond.wait(remaining)
        ready = ready_event[0]
        controller = open_controller(sdl2, [ready["hidraw"], *ready["eventNodes"]], known)
        wait_for_enhanced_mode(sdl2, controller)

        since = physical.mark()
        assert sdl2.SDL_GameControllerSetLED(controller, 255, 0, 64) == 0, sdl2.SDL_GetError()
        pump(sdl2, 0)
        physical.wait_report(lambda r: r.valid_flag1 & 0x04 and r.lightbar == (255, 0, 64), since,
                             what="lightbar 255/0/64 relayed from SDL", pump=lambda: pump(sdl2, 0))
        since = physical.mark()
        assert sdl2.SDL_GameControllerRumble(controller, 0x8000, 0x4000, 10000) == 0, sdl2.SDL_GetError()
        pump(sdl2, 0)
        physical.wait_report(lambda r: r.rumble_flagged and any(
                                 abs(r.motor_strong - strong) <= 1 and abs(r.motor_weak - weak) <= 1
                                 for strong, weak in sdl_ps5_motor_bytes(0x8000, 0x4000)),
                             since, what="rumble ≈128/64 (or SDL's halved 64/32) relayed from SDL",
                             pump=lambda: pump(sdl2, 0))
    finally:
        if controller:
            sdl2.SDL_GameControllerClose(controller)
        if virtual:
            virtual.stdin.close()
            virtual.wait(DEADLINE)
        if bridge:
            bridge.wait(DEADLINE)
        print(f"stand-in received:{physical.describe()}")
        physical.close()


# ---- DualShock 4 over USB (hid-sony on 6.1, hid-playstation from 6.2) ----

from standins import PhysicalDualShock4  # noqa: E402


@pytest.fixture
def dualshock4():
    pad = PhysicalDualShock4()
    try:
        pad.hidraw = pad.wait_bound()
        yield pad
    finally:
        print(f"DualShock 4 stand-in {pad.mac} feature requests {[hex(n) for n in pad.feature_requests]}; "
              f"received:{pad.describe()}; bad reports: {pad.bad_reports}")
        pad.close()


def check_ds4_report(pad, report):
    """USB 0x05, exactly 32 bytes; nothing but flags, motors, lightbar and blink set; no malformed reports at all."""
    assert report.raw[0] == 0x05 and len(report.raw) == 32, report.describe()
    assert not any(report.raw[11:]), f"reserved bytes 11-31 set: {report.describe()}"
    assert not pad.bad_reports, f"reports that are not 32-byte 0x05 ones: {pad.bad_reports}"


def test_feedback_dualshock4_rumble_stops_after_duration(dualshock4, feedback):
    since = dualshock4.mark()
    process = feedback(dualshock4.hidraw, "--rumble", "0.5,0.25", "--duration", "1000")
    index, on = dualshock4.wait_report(lambda r: r.valid_flag0 & 0x01 and r.motor_weak == 64
                                       and r.motor_strong == 128, since,
                                       what="rumble report (weak byte 4 = 64, strong byte 5 = 128)")
    check_ds4_report(dualshock4, on)
    # padbridge flags only what it changes: a rumble report must not also (re)write the lightbar.
    assert on.valid_flag0 == 0x01, f"expected only the rumble flag: {on.describe()}"
    _, off = dualshock4.wait_report(lambda r: r.valid_flag0 & 0x01 and r.motor_weak == 0 and r.motor_strong == 0,
                                    index + 1, what="rumble-off report")
    check_ds4_report(dualshock4, off)
    assert not off.valid_flag0 & 0x02, f"the rumble-off report touched the lightbar: {off.describe()}"
    # The stand-in stamps a report when Python reads it: a late read of the first report shortens the interval it
    # sees, so the bound leaves half the duration for that (one CI run saw less than 250 ms of a 300 ms rumble).
    assert off.received - on.received >= 0.5, f"rumble stopped after {off.received - on.received:.3f} s"
    process.expect_success()
    assert any("DualShock 4 over USB" in line for line in process.messages()), \
        f"not identified as a USB DualShock 4: {process.stderr}"


def test_feedback_dualshock4_lightbar(dualshock4, feedback):
    since = dualshock4.mark()
    feedback(dualshock4.hidraw, "--lightbar", "ff0040").expect_success()
    _, report = dualshock4.wait_report(lambda r: r.valid_flag0 & 0x02 and r.lightbar == (0xFF, 0x00, 0x40), since,
                                       what="lightbar ff0040 report (R,G,B at bytes 6-8)")
    check_ds4_report(dualshock4, report)
    assert report.valid_flag0 == 0x02, f"expected only the lightbar flag (no rumble change): {report.describe()}"
    assert (report.motor_weak, report.motor_strong) == (0, 0), report.describe()


# ---- Xbox 360 loop: a game's FF_RUMBLE on the virtual pad reaches the physical DualSense through a real pipe ----

from conftest import READY_DEADLINE, rumble_effect  # noqa: E402


class LineCollector:
    """Collects a padbridge process's stderr lines on a thread, each parsed once (parse_event); waits for an event
    with a deadline."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self.events: list[dict | None] = []  # parse_event of the line at the same index
        self.eof = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream):
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            event = parse_event(line)
            with self._cond:
                self.lines.append(line)
                self.events.append(event)
                self._cond.notify_all()
        with self._cond:
            self.eof = True
            self._cond.notify_all()

    def wait_event(self, name: str, timeout: float, what: str) -> dict:
        def fail(reason):
            raise AssertionError(f"no {what} ({reason}); lines: {self.lines}")

        _, event = wait_for_item(self._cond, self.events, 0,
                                 lambda event: event if event is not None and event["event"] == name else None,
                                 timeout, fail, lambda: "stream closed" if self.eof else None)
        return event


def test_feedback_xbox_loop_rumble_reaches_the_physical_dualsense():
    """`padbridge virtual --type xbox360 | padbridge feedback HIDRAW --stdin`: a client (python-evdev) uploads and
    plays FF_RUMBLE strong 0x8000 / weak 0x4000 on the virtual Xbox pad; the physical stand-in DualSense receives
    motors 128/64, then a rumble-off report once the effect stops."""
    import evdev
    from evdev import ecodes

    physical = PhysicalDualSense("usb")
    virtual = bridge = device = None
    virtual_err = bridge_err = None
    try:
        hidraw = physical.wait_bound()
        virtual = subprocess.Popen([padbridge_binary(), "virtual", "--events", "json", "--type", "xbox360", "--name",
                                    "loop xbox pad"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        bridge = subprocess.Popen([padbridge_binary(), "feedback", "--events", "json", hidraw, "--stdin"],
                                  stdin=virtual.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        virtual.stdout.close()  # the bridge holds the pipe's read end now
        virtual_err = LineCollector(virtual.stderr)
        bridge_err = LineCollector(bridge.stderr)
        ready = virtual_err.wait_event("ready", READY_DEADLINE, "'ready' event from padbridge virtual")
        assert ready["kind"] == "xbox360" and len(ready["eventNodes"]) == 1, ready
        device = evdev.InputDevice(ready["eventNodes"][0])

        since = physical.mark()
        effect_id = device.upload_effect(rumble_effect(0x8000, 0x4000))  # blocks until padbridge virtual answers
        device.write(ecodes.EV_FF, effect_id, 1)
        index, on = physical.wait_report(lambda r: r.rumble_flagged and r.motor_strong == 128 and r.motor_weak == 64,
                                         since, what="rumble 128/64 relayed from the virtual Xbox pad")
        check_framing(physical, on)
        device.write(ecodes.EV_FF, effect_id, 0)
        _, off = physical.wait_report(is_rumble_off, index + 1, what="rumble-off report after the effect stopped")
        check_framing(physical, off)
        device.erase_effect(effect_id)
        assert bridge.poll() is None, f"the bridge ended early; stderr: {bridge_err.lines}"
    finally:
        if device:
            device.close()
        if virtual:
            virtual.stdin.close()
            try:
                virtual.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                virtual.kill()
                virtual.wait()
        if bridge:
            try:
                bridge.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                bridge.kill()
                bridge.wait()
        print(f"virtual stderr: {virtual_err.lines if virtual_err else None}")
        print(f"bridge stderr: {bridge_err.lines if bridge_err else None}")
        print(f"stand-in received:{physical.describe()}")
        physical.close()
    assert virtual.returncode == 0, f"padbridge virtual exited with {virtual.returncode}: {virtual_err.lines}"
    assert bridge.returncode == 0, f"padbridge feedback exited with {bridge.returncode}: {bridge_err.lines}"

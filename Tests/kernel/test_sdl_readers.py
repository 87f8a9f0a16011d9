"""Both SDLs as readers of what padbridge makes: Debian 12's SDL 2.26 and SDL 2.32 with its HIDAPI drivers (built by
scripts/kernel-deps from Debian 13's source package), each in a process of its own (the `sdl_reader` fixture,
sdl_reader.py). Every test here runs once under each SDL: the same checks, two independent readers.

The virtual DualSense is presented on Bluetooth (padbridge's default), where both SDLs read it through its hidraw node
with their HIDAPI PS5 driver, not through hid-playstation's event nodes."""

import pytest

from conftest import is_rumble, start_dualsense
from sdl_reading import sdl_ps5_motor_bytes

SONY, DUALSENSE = 0x054C, 0x0CE6
# Every button and axis of SDL 2's game controller, by SDL's names: the reader reports all of them, whichever SDL.
SDL_BUTTONS = {"a", "b", "x", "y", "back", "guide", "start", "leftstick", "rightstick", "leftshoulder",
               "rightshoulder", "dpup", "dpdown", "dpleft", "dpright", "misc1", "paddle1", "paddle2", "paddle3",
               "paddle4", "touchpad"}
SDL_AXES = {"leftx", "lefty", "rightx", "righty", "lefttrigger", "righttrigger"}


def test_the_reader_runs_the_sdl_it_is_named_for(sdl_reader):
    version = sdl_reader.call("version")
    assert version["version"].split(".")[:2] == sdl_reader.version.split("."), version
    assert version["library"] == sdl_reader.library, version


def test_sdl_reads_the_virtual_dualsense_through_hidraw_and_its_feedback_comes_back(sdl_reader, padbridge):
    known = sdl_reader.instances()
    pad, ready, _ = start_dualsense(padbridge, name="padbridge SDL readers DualSense")
    controller = sdl_reader.open([ready["hidraw"], *ready["eventNodes"]], exclude=known)
    try:
        assert controller.type == "PS5", controller
        assert controller.path == ready["hidraw"], (f"SDL {sdl_reader.sdl_version} reads the pad through "
                                                    f"{controller.path}, not its HIDAPI driver on {ready['hidraw']}")
        assert (controller.vendor, controller.product) == (SONY, DUALSENSE), controller
        controller.wait_for_enhanced_mode()
        state = controller.state()
        assert (set(state["buttons"]), set(state["axes"])) == (SDL_BUTTONS, SDL_AXES), state
        has = state["has"]
        assert has["gyro"] and has["accel"] and has["rumble"] and has["led"], has
        assert not has["trigger_rumble"], f"a DualSense has no trigger motors, yet SDL offers trigger rumble: {has}"
        assert {"a", "misc1", "touchpad", "guide"} <= set(has["buttons"]), has

        # buttons (the cross, Mute as misc1, the touchpad's click) and a stick
        pad.send_frame({"type": "button", "button": "a", "pressed": True},
                       {"type": "button", "button": "misc1", "pressed": True},
                       {"type": "button", "button": "touchpad", "pressed": True},
                       {"type": "axis", "axis": "leftx", "value": -32768},
                       {"type": "axis", "axis": "righty", "value": 20000})
        controller.wait(lambda s: s["buttons"]["a"] == s["buttons"]["misc1"] == s["buttons"]["touchpad"] == 1
                        and s["axes"]["leftx"] < -32000 and abs(s["axes"]["righty"] - 20000) <= 300,
                        "a, misc1 and touchpad pressed, leftx fully left, righty ≈ 20000")
        pad.button("misc1", False)
        controller.wait(lambda s: s["buttons"]["misc1"] == 0 and s["buttons"]["a"] == 1, "misc1 released, a held")

        # a finger on the touchpad
        pad.send(type="touch", contact=0, active=True, x=0.25, y=0.75)
        def finger_at(state, x, y):
            finger = state["touchpads"][0][0] if state["touchpads"] else None
            return finger is not None and finger["down"] and abs(finger["x"] - x) < 0.01 and abs(finger["y"] - y) < 0.01

        controller.wait(lambda s: finger_at(s, 0.25, 0.75), "finger 0 of touchpad 0 at (0.25, 0.75)")

        # motion, read as a game does: sensors enabled, then their values (and their timestamped updates)
        controller.enable_sensors("gyro", "accel")
        controller.record_sensor_events()
        gyro, accel = [0.0, 0.0, 0.5], [0.0, 9.81, 0.0]
        pad.send(type="motion", gyro=gyro, accel=accel)

        def near(values, want, tolerance):
            return values is not None and all(abs(a - b) <= tolerance for a, b in zip(values, want))

        controller.wait(lambda s: near(s["sensors"]["gyro"], gyro, 0.01) and near(s["sensors"]["accel"], accel, 0.05),
                        f"gyro ≈ {gyro} rad/s and accel ≈ {accel} m/s²")
        updates = controller.sensor_events()
        assert any(u["sensor"] == "gyro" and near(u["data"], gyro, 0.01) and u["timestamp_us"] > 0 for u in updates), \
            f"no timestamped gyro update ≈ {gyro} among {len(updates)} kept: {updates[-4:]}"

        # what SDL sends comes back as feedback lines: the lightbar, rumble on and off
        mark = pad.feedback_mark()
        controller.led(255, 0, 64)
        pad.wait_feedback(lambda o: o["type"] == "lightbar" and (o["red"], o["green"], o["blue"]) == (255, 0, 64),
                          since=mark, what=f"SDL {sdl_reader.sdl_version}'s lightbar 255/0/64", pump=controller.pump)
        mark = pad.feedback_mark()
        # Long enough that SDL's expiry cannot overtake the request on a slow machine; switched off below.
        controller.rumble(0x8000, 0x4000, 10000)
        pad.wait_feedback(lambda o: any(is_rumble(strong / 255, weak / 255, tolerance=1 / 255 + 0.005)(o)
                                        for strong, weak in sdl_ps5_motor_bytes(0x8000, 0x4000)),
                          since=mark, what=f"SDL {sdl_reader.sdl_version}'s rumble ≈ 0.5/0.25 (or halved)",
                          pump=controller.pump)
        mark = pad.feedback_mark()
        controller.rumble(0, 0, 0)
        pad.wait_feedback(is_rumble(0, 0), since=mark, what=f"SDL {sdl_reader.sdl_version}'s rumble off",
                          pump=controller.pump)
    finally:
        controller.close()


@pytest.mark.parametrize("sdl_reader", ["2.32"], indirect=True)
def test_sdl_2_32_refuses_trigger_rumble_on_a_dualsense_with_its_reason(sdl_reader, padbridge):
    """A refused call answers with SDL's sentence (here SDL's own: the PS5 driver has no trigger motors), and the
    reader goes on answering."""
    known = sdl_reader.instances()
    _, ready, _ = start_dualsense(padbridge, name="padbridge SDL readers refusal")
    controller = sdl_reader.open([ready["hidraw"]], exclude=known)
    try:
        with pytest.raises(AssertionError, match=r"SDL 2\.32\.\d+: SDL_GameControllerRumbleTriggers: \S"):
            controller.rumble_triggers(0x8000, 0x8000, 100)
        assert controller.state()["has"]["trigger_rumble"] is False
    finally:
        controller.close()

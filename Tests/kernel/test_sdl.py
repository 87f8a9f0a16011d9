"""SDL2 (Debian's libSDL2 2.26 through pysdl2) as an independent reader: what a game sees.

One SDL_Init per test (conftest's `sdl` fixture), every SDL call on the test thread, events pumped in every wait. SDL
runs without udev here: SDL_JOYSTICK_DISABLE_UDEV=1 (set by scripts/kernel-suite) makes it scan /dev itself and
see hot-plug through inotify."""

import ctypes

from conftest import is_rumble, start_dualsense, start_xbox
from sdl_reading import joystick_ids, open_controller, pump, sdl_ps5_motor_bytes, sdl_wait, wait_for_enhanced_mode


def test_sdl_sees_the_xbox_pad_as_an_x360_controller(sdl, padbridge):
    known = joystick_ids(sdl)
    pad, ready, _ = start_xbox(padbridge)
    controller = open_controller(sdl, ready["eventNodes"], known)
    try:
        assert sdl.SDL_GameControllerGetType(controller) == sdl.SDL_CONTROLLER_TYPE_XBOX360, \
            f"type {sdl.SDL_GameControllerGetType(controller)}, name {sdl.SDL_GameControllerName(controller)}"
        pad.button("a", True)
        sdl_wait(sdl, lambda: sdl.SDL_GameControllerGetButton(controller, sdl.SDL_CONTROLLER_BUTTON_A) == 1,
                 "button A pressed")
        pad.axis("leftx", -12000)
        sdl_wait(sdl, lambda: abs(sdl.SDL_GameControllerGetAxis(controller, sdl.SDL_CONTROLLER_AXIS_LEFTX) + 12000) <= 2,
                 "leftx ≈ -12000")
        pad.axis("righttrigger", 32767)
        sdl_wait(sdl, lambda: sdl.SDL_GameControllerGetAxis(controller, sdl.SDL_CONTROLLER_AXIS_TRIGGERRIGHT) >= 32000,
                 "right trigger fully pressed")
        pad.button("dpleft", True)
        sdl_wait(sdl, lambda: sdl.SDL_GameControllerGetButton(controller, sdl.SDL_CONTROLLER_BUTTON_DPAD_LEFT) == 1,
                 "d-pad left")
        # rumble the way games do: SDL uploads an FF_RUMBLE effect to the evdev node, padbridge must answer
        mark = pad.feedback_mark()
        assert sdl.SDL_GameControllerRumble(controller, 0x8000, 0x4000, 10000) == 0, sdl.SDL_GetError()
        pad.wait_feedback(is_rumble(0.5, 0.25), since=mark, what="rumble ≈ 0.5/0.25 from SDL", pump=lambda: pump(sdl, 0))
    finally:
        sdl.SDL_GameControllerClose(controller)


def ds5_effects_block(valid_flag0=0, right=b"", left=b""):
    """SDL's DS5EffectsState_t (47 bytes): valid_flag0, valid_flag1, motors, audio, ... then the right trigger
    block at offset 10 and the left one at offset 21, 11 bytes each."""
    block = bytearray(47)
    block[0] = valid_flag0
    block[10:10 + len(right)] = right
    block[21:21 + len(left)] = left
    return bytes(block)


def feedback_trigger(position, strength):
    """Mode 0x21: zones position..9 at `strength` (1..8): 16-bit zone mask, then 3 bits per zone."""
    mask = sum(1 << zone for zone in range(position, 10))
    values = sum((strength - 1) << (3 * zone) for zone in range(position, 10))
    return bytes([0x21]) + mask.to_bytes(2, "little") + values.to_bytes(4, "little") + bytes(4)


def weapon_trigger(start, end, strength):
    """Mode 0x25: start and end zone bits, strength - 1."""
    return bytes([0x25]) + ((1 << start) | (1 << end)).to_bytes(2, "little") + bytes([strength - 1]) + bytes(7)


def assert_sdl_reads_touch_and_motion(sdl, controller, pad, where: str):
    """The stand-in `pad` touches the touchpad at (0.25, 0.75) and reports a motion sample; SDL reads both."""
    pad.send(type="touch", contact=0, active=True, x=0.25, y=0.75)
    state, x, y, pressure = ctypes.c_uint8(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()

    def finger():
        sdl.SDL_GameControllerGetTouchpadFinger(controller, 0, 0, ctypes.byref(state), ctypes.byref(x),
                                                ctypes.byref(y), ctypes.byref(pressure))
        return state.value == 1 and abs(x.value - 0.25) < 0.01 and abs(y.value - 0.75) < 0.01

    sdl_wait(sdl, finger, f"{where}touchpad finger 0 at (0.25, 0.75)")

    assert sdl.SDL_GameControllerSetSensorEnabled(controller, sdl.SDL_SENSOR_ACCEL, sdl.SDL_TRUE) == 0
    assert sdl.SDL_GameControllerSetSensorEnabled(controller, sdl.SDL_SENSOR_GYRO, sdl.SDL_TRUE) == 0
    accel, gyro = [0.0, 9.81, 0.0], [0.0, 0.0, 0.5]
    pad.send(type="motion", gyro=gyro, accel=accel)
    data = (ctypes.c_float * 3)()

    def sensor(kind, want, tolerance):
        def check():
            sdl.SDL_GameControllerGetSensorData(controller, kind, data, 3)
            return all(abs(a - b) <= tolerance for a, b in zip(data, want))
        return check

    sdl_wait(sdl, sensor(sdl.SDL_SENSOR_ACCEL, accel, 0.05), f"{where}accel ≈ {accel} m/s²")
    sdl_wait(sdl, sensor(sdl.SDL_SENSOR_GYRO, gyro, 0.01), f"{where}gyro ≈ {gyro} rad/s")


def assert_sdl_feedback_reaches(sdl, controller, pad, where: str, left_trigger: bool) -> dict:
    """SDL's lightbar, rumble (on, then off) and trigger effects (the right one, and the left one when
    `left_trigger`) reach the stand-in `pad` as feedback lines. Returns the right trigger's line."""
    pump_sdl = lambda: pump(sdl, 0)  # noqa: E731
    mark = pad.feedback_mark()
    assert sdl.SDL_GameControllerSetLED(controller, 255, 0, 64) == 0, sdl.SDL_GetError()
    pad.wait_feedback(lambda o: o["type"] == "lightbar" and (o["red"], o["green"], o["blue"]) == (255, 0, 64),
                      since=mark, what=f"SDL's lightbar 255/0/64 {where}", pump=pump_sdl)

    mark = pad.feedback_mark()
    # Long enough that SDL's expiry (which replaces a request its rumble thread has not sent yet with "off")
    # cannot overtake the request on a slow, emulated machine; switched off explicitly below.
    assert sdl.SDL_GameControllerRumble(controller, 0x8000, 0x4000, 10000) == 0, sdl.SDL_GetError()
    pad.wait_feedback(lambda o: any(is_rumble(strong / 255, weak / 255, tolerance=1 / 255 + 0.005)(o)
                                    for strong, weak in sdl_ps5_motor_bytes(0x8000, 0x4000)),
                      since=mark, what=f"SDL's rumble ≈ 0.5/0.25 (or its halved 0.25/0.125) {where}", pump=pump_sdl)
    mark = pad.feedback_mark()
    assert sdl.SDL_GameControllerRumble(controller, 0, 0, 0) == 0, sdl.SDL_GetError()
    pad.wait_feedback(is_rumble(0, 0), since=mark, what=f"SDL's rumble off {where}", pump=pump_sdl)

    right = feedback_trigger(position=3, strength=5)
    left = weapon_trigger(start=2, end=6, strength=7)
    assert len(right) == len(left) == 11
    block = (ds5_effects_block(valid_flag0=0x04 | 0x08, right=right, left=left) if left_trigger
             else ds5_effects_block(valid_flag0=0x04, right=right))
    mark = pad.feedback_mark()
    assert sdl.SDL_GameControllerSendEffect(controller, block, len(block)) == 0, sdl.SDL_GetError()
    lines = {}
    for side, raw in (("right", right), ("left", left))[:2 if left_trigger else 1]:
        _, lines[side] = pad.wait_feedback(
            lambda o, side=side, raw=raw: o["type"] == "trigger" and o.get("trigger") == side
            and str(o.get("raw", "")).lower() == raw.hex(),
            since=mark, what=f"SDL's {side} trigger effect {raw.hex()} {where}", pump=pump_sdl)
    return lines["right"]


def test_sdl_sees_a_full_ps5_controller(sdl, padbridge):
    known = joystick_ids(sdl)
    pad, ready, nodes = start_dualsense(padbridge)  # Bluetooth, the bus SDL's HIDAPI driver takes
    controller = open_controller(sdl, [ready["hidraw"], *ready["eventNodes"]], known)
    try:
        path = sdl.SDL_GameControllerPath(controller).decode()
        kind = sdl.SDL_GameControllerGetType(controller)
        assert kind == sdl.SDL_CONTROLLER_TYPE_PS5, f"type {kind} at {path}"
        assert path == ready["hidraw"], f"SDL reads the pad through {path}, not its HIDAPI driver on {ready['hidraw']}"
        wait_for_enhanced_mode(sdl, controller)
        assert sdl.SDL_GameControllerHasSensor(controller, sdl.SDL_SENSOR_ACCEL)
        assert sdl.SDL_GameControllerHasSensor(controller, sdl.SDL_SENSOR_GYRO)

        pad.button("a", True)
        sdl_wait(sdl, lambda: sdl.SDL_GameControllerGetButton(controller, sdl.SDL_CONTROLLER_BUTTON_A) == 1,
                 "button A (cross) pressed")
        right = assert_sdl_feedback_reaches(sdl, controller, pad, "at the pad", left_trigger=True)
        assert right["effect"]["mode"] == "feedback", right
        assert_sdl_reads_touch_and_motion(sdl, controller, pad, "")
    finally:
        sdl.SDL_GameControllerClose(controller)


# --------------------------------------------------------------------------------------------------------------
# SDL as the game on a forwarding host: a stand-in pad -> `padbridge connect` -> `padbridge serve` -> virtual pad,
# read by SDL; what SDL sends to the virtual pad comes back to the stand-in.

def test_sdl_reads_a_forwarded_dualsense_and_its_feedback_reaches_the_physical_pad(sdl, padbridge, tmp_path):
    from conftest import attached
    from forwarding import connect, paired_host

    known = joystick_ids(sdl)
    serve, client = paired_host(padbridge, tmp_path)
    physical, physical_ready, _ = start_dualsense(padbridge, "--seed", "sdl-forward-physical")
    connect(padbridge, client, physical_ready["hidraw"])
    _, ready = attached(serve)
    assert ready["kind"] == "dualsense", ready
    controller = open_controller(sdl, [ready["hidraw"]], known)
    try:
        assert sdl.SDL_GameControllerGetType(controller) == sdl.SDL_CONTROLLER_TYPE_PS5
        wait_for_enhanced_mode(sdl, controller)

        physical.button("a", True)
        physical.axis("leftx", -32768)
        sdl_wait(sdl, lambda: sdl.SDL_GameControllerGetButton(controller, sdl.SDL_CONTROLLER_BUTTON_A) == 1
                 and sdl.SDL_GameControllerGetAxis(controller, sdl.SDL_CONTROLLER_AXIS_LEFTX) < -32000,
                 "A pressed and the left stick fully left, forwarded")
        assert_sdl_reads_touch_and_motion(sdl, controller, physical, "forwarded ")
        # What SDL writes to the host's virtual DualSense reaches the stand-in on the client.
        assert_sdl_feedback_reaches(sdl, controller, physical, "at the physical pad", left_trigger=False)
    finally:
        sdl.SDL_GameControllerClose(controller)


def test_sdl_reads_a_forwarded_xbox_pad_and_its_rumble_reaches_the_physical_pad(sdl, padbridge, tmp_path):
    from conftest import attached
    from forwarding import connect, paired_host

    known = joystick_ids(sdl)
    serve, client = paired_host(padbridge, tmp_path)
    physical, _, device = start_xbox(padbridge, "--name", "sdl forward physical xbox")
    connect(padbridge, client, device.path)
    _, ready = attached(serve)
    assert ready["kind"] == "xbox360", ready
    controller = open_controller(sdl, ready["eventNodes"], known)
    try:
        assert sdl.SDL_GameControllerGetType(controller) == sdl.SDL_CONTROLLER_TYPE_XBOX360
        physical.button("y", True)
        physical.axis("righttrigger", 32767)
        sdl_wait(sdl, lambda: sdl.SDL_GameControllerGetButton(controller, sdl.SDL_CONTROLLER_BUTTON_Y) == 1
                 and sdl.SDL_GameControllerGetAxis(controller, sdl.SDL_CONTROLLER_AXIS_TRIGGERRIGHT) > 32000,
                 "Y pressed and the right trigger fully in, forwarded")
        mark = physical.feedback_mark()
        assert sdl.SDL_GameControllerRumble(controller, 0x8000, 0x4000, 10000) == 0, sdl.SDL_GetError()
        physical.wait_feedback(lambda o: o.get("type") == "rumble" and o.get("strong", 0) > 0.3,
                               since=mark, what="SDL's rumble at the physical Xbox pad", pump=lambda: pump(sdl, 0))
        mark = physical.feedback_mark()
        assert sdl.SDL_GameControllerRumble(controller, 0, 0, 0) == 0, sdl.SDL_GetError()
        physical.wait_feedback(is_rumble(0, 0), since=mark, what="SDL's rumble off at the physical Xbox pad",
                               pump=lambda: pump(sdl, 0))
    finally:
        sdl.SDL_GameControllerClose(controller)

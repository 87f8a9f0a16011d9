"""Reading a pad through SDL2 (pysdl2), as a game does: SDL's names for the controls (SDL_BUTTONS, SDL_AXES), pumping
its events (pump), waiting on what it reads (sdl_wait), opening the game controller at a node (joystick_ids,
open_controller), its PS5 driver's enhanced mode and motor bytes (wait_for_enhanced_mode, sdl_ps5_motor_bytes).
Every call on the test thread, with the `sdl` fixture's SDL (conftest's)."""

import time

from conftest import DEADLINE

# SDL's names for the controls, as padbridge names them (SDL's GameController vocabulary).
SDL_BUTTONS = {
    "a": "SDL_CONTROLLER_BUTTON_A", "b": "SDL_CONTROLLER_BUTTON_B", "x": "SDL_CONTROLLER_BUTTON_X",
    "y": "SDL_CONTROLLER_BUTTON_Y", "back": "SDL_CONTROLLER_BUTTON_BACK", "guide": "SDL_CONTROLLER_BUTTON_GUIDE",
    "start": "SDL_CONTROLLER_BUTTON_START", "leftstick": "SDL_CONTROLLER_BUTTON_LEFTSTICK",
    "rightstick": "SDL_CONTROLLER_BUTTON_RIGHTSTICK", "leftshoulder": "SDL_CONTROLLER_BUTTON_LEFTSHOULDER",
    "rightshoulder": "SDL_CONTROLLER_BUTTON_RIGHTSHOULDER", "dpup": "SDL_CONTROLLER_BUTTON_DPAD_UP",
    "dpdown": "SDL_CONTROLLER_BUTTON_DPAD_DOWN", "dpleft": "SDL_CONTROLLER_BUTTON_DPAD_LEFT",
    "dpright": "SDL_CONTROLLER_BUTTON_DPAD_RIGHT", "misc1": "SDL_CONTROLLER_BUTTON_MISC1",
}
SDL_AXES = {
    "leftx": "SDL_CONTROLLER_AXIS_LEFTX", "lefty": "SDL_CONTROLLER_AXIS_LEFTY",
    "rightx": "SDL_CONTROLLER_AXIS_RIGHTX", "righty": "SDL_CONTROLLER_AXIS_RIGHTY",
    "lefttrigger": "SDL_CONTROLLER_AXIS_TRIGGERLEFT", "righttrigger": "SDL_CONTROLLER_AXIS_TRIGGERRIGHT",
}


def pump(sdl2, wait_ms=20):
    """Lets SDL notice hot-plug and read input: waits up to wait_ms for an event, then drops the queue (the tests
    read state, not events)."""
    sdl2.SDL_WaitEventTimeout(None, wait_ms)
    sdl2.SDL_GameControllerUpdate()
    sdl2.SDL_FlushEvents(sdl2.SDL_FIRSTEVENT, sdl2.SDL_LASTEVENT)


def sdl_wait(sdl2, condition, what, timeout=DEADLINE):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"SDL: no {what} within {timeout:.0f} s")
        pump(sdl2)


def joystick_ids(sdl2):
    pump(sdl2, 0)
    return {sdl2.SDL_JoystickGetDeviceInstanceID(i) for i in range(sdl2.SDL_NumJoysticks())}


def open_controller(sdl2, paths, known_ids, timeout=DEADLINE):
    """Opens the game controller SDL lists at one of `paths` (evdev or hidraw node) that was not in known_ids."""

    def find():
        for index in range(sdl2.SDL_NumJoysticks()):
            path = sdl2.SDL_JoystickPathForIndex(index)
            instance = sdl2.SDL_JoystickGetDeviceInstanceID(index)
            if path and path.decode() in paths and instance not in known_ids:
                return index + 1
        return None

    try:
        index = sdl_wait(sdl2, find, f"joystick at {paths}", timeout) - 1
    except AssertionError:
        listed = [(sdl2.SDL_JoystickPathForIndex(i), sdl2.SDL_JoystickNameForIndex(i))
                  for i in range(sdl2.SDL_NumJoysticks())]
        raise AssertionError(f"SDL never listed a new joystick at {paths}; it lists {listed}") from None
    assert sdl2.SDL_IsGameController(index), \
        f"SDL lists {sdl2.SDL_JoystickNameForIndex(index)} but has no game-controller mapping for it"
    controller = sdl2.SDL_GameControllerOpen(index)
    assert controller, f"SDL_GameControllerOpen: {sdl2.SDL_GetError().decode()}"
    return controller


def wait_for_enhanced_mode(sdl2, controller):
    """Over Bluetooth SDL's PS5 driver turns on "enhanced mode" (touchpad, sensors, and the LED, rumble and effect
    calls) only once it has read a full 0x31 input report, on an update after the open: wait for it, pumping."""
    sdl_wait(sdl2, lambda: sdl2.SDL_GameControllerGetNumTouchpads(controller) >= 1,
             "touchpad, i.e. enhanced mode after the first 0x31 input report")


def sdl_ps5_motor_bytes(low_frequency: int, high_frequency: int):
    """The motor bytes SDL 2.26's PS5 driver may write for SDL_GameControllerRumble(low, high): the full values
    (firmware 2.24 and newer, the "improved rumble emulation" bit) or halved ("to match Xbox controllers") when
    the firmware version it read at init is older, or when that read of feature report 0x20 did not complete (seen
    on an overloaded emulated machine). Either is a correct relay of what SDL asked for."""
    strong, weak = low_frequency >> 8, high_frequency >> 8
    return [(strong, weak), (strong >> 1, weak >> 1)]

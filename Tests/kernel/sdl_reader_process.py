"""One SDL 2 as a game would use it, in a process of its own, driven by JSON lines: the kernel suite's way to read a
pad through either of its two SDLs (Debian 12's 2.26 and the 2.32 that scripts/kernel-deps builds). pysdl2 binds one
libSDL2 per Python process, chosen by PYSDL2_DLL_PATH when `sdl2` is imported; so each SDL runs here, in a process
started with PYSDL2_DLL_PATH set to its directory (the client is sdl_reader.py, the fixture `sdl_reader` in
conftest.py).

Protocol: one JSON object a line on stdin, {"id": N, "command": NAME, ...arguments}; one JSON object a line on
stdout answers it, {"id": N, "ok": true, ...results} or {"id": N, "ok": false, "error": SENTENCE}, in order. The first
line on stdout, before any command, is {"ready": true, "version": "2.32.4", "library": PATH, "sdl2_import_s": S}.
End of input ends the process (after SDL_Quit). Commands:

  version                      {"version", "library"}
  init {"hints": {NAME: VALUE}, "input_debug_log": BOOL}
                               SDL_SetHint each, then SDL_Init(SDL_INIT_GAMECONTROLLER): SDL enumerates the pads
                               present now (SDL_Quit clears hints: a test sets them with each init). With
                               input_debug_log, SDL's input category logs at debug level on stderr (how it found
                               or dropped a device; SdlReader.stderr keeps the lines)
  quit                         closes every controller, SDL_Quit
  list                         {"joysticks": [{"index", "instance", "path", "name", "gamecontroller", "type",
                               "vendor", "product"}]} after a pump (hot-plug seen so far)
  open {"paths": [...], "exclude": [INSTANCE...], "timeout_s"}
                               waits (pumping) for a joystick listed at one of `paths` (evdev or hidraw node)
                               whose instance is not in `exclude`, opens it as a game controller: {"controller":
                               INSTANCE, "path", "name", "type", "vendor", "product"}. Fails, listing what SDL
                               lists, when none comes within timeout_s, or when SDL has no game-controller mapping
  close {"controller"}
  pump {"wait_ms"}             lets SDL run (hot-plug, its drivers' updates, rumble expiry), waiting up to wait_ms
                               (default 0) for an event
  state {"controller", "wait_ms"}
                               pumps (waiting up to wait_ms for an event, default 20), then every button by SDL's
                               name (a b x y back guide start leftstick rightstick leftshoulder rightshoulder dpup
                               dpdown dpleft dpright misc1 paddle1..paddle4 touchpad: 0/1), every axis (leftx lefty
                               rightx righty lefttrigger righttrigger), "touchpads": one list per touchpad of its
                               fingers {"down", "x", "y", "pressure"}, "sensors": {"gyro", "accel"} ([x, y, z] once
                               enabled, else null), and "has": what the controller offers now (SDL's PS5 driver adds
                               the touchpad and sensors over Bluetooth only once its enhanced mode is on):
                               {"buttons": [...], "axes": [...], "touchpads", "gyro", "accel", "gyro_rate_hz",
                               "accel_rate_hz", "rumble", "trigger_rumble", "led"}
  enable_sensors {"controller", "sensors": ["gyro", "accel"]}
                               SDL_GameControllerSetSensorEnabled for each (a game's call; SDL's PS4 and PS5
                               drivers may turn on their enhanced mode for it)
  record_sensor_events {"controller", "on"}
                               keeps (or stops keeping) every SDL_CONTROLLERSENSORUPDATE of the controller
  sensor_events {"controller"} {"events": [{"sensor", "data", "timestamp_us"}]} kept since the last call (emptied)
  rumble {"controller", "low", "high", "duration_ms"}           SDL_GameControllerRumble (0..65535 each)
  rumble_triggers {"controller", "left", "right", "duration_ms"} SDL_GameControllerRumbleTriggers
  led {"controller", "red", "green", "blue"}                     SDL_GameControllerSetLED
  send_effect {"controller", "hex"}                              SDL_GameControllerSendEffect (a driver's raw
                               effect block, e.g. the PS5 driver's trigger effects)

A call SDL refuses answers ok: false with SDL_GetError's sentence. Every SDL call is on this process's one thread.
"""

import ctypes
import ctypes.util
import json
import os
import sys
import time

# pysdl2 loads the library in PYSDL2_DLL_PATH, but also asks ctypes.util.find_library for six names as fallbacks,
# and find_library runs gcc (and ld) for each name ldconfig does not know: most of this program's start in the
# emulated guest. The reader must read with the SDL it was started for and no other, so there is no fallback.
if not os.environ.get("PYSDL2_DLL_PATH"):
    sys.exit("sdl_reader_process.py: set PYSDL2_DLL_PATH to the directory of the libSDL2-2.0.so.0 to read with")
ctypes.util.find_library = lambda name: None

IMPORT_STARTED = time.monotonic()
import sdl2  # noqa: E402  (after the line above)
SDL2_IMPORT_S = time.monotonic() - IMPORT_STARTED

SENSORS = {"gyro": sdl2.SDL_SENSOR_GYRO, "accel": sdl2.SDL_SENSOR_ACCEL}
SENSOR_NAMES = {value: name for name, value in SENSORS.items()}
KEPT_SENSOR_EVENTS_MAX = 100_000  # about 6 min at the DualSense's 250 Hz, gyro and accel


def type_name(value: int) -> str:
    """SDL_GameControllerType as its constant's name without the prefix: "PS5", "XBOX360", "NINTENDO_SWITCH_PRO";
    a value this pysdl2 has no name for as "unknown type N" (a newer SDL's)."""
    for name in dir(sdl2):
        prefix = "SDL_CONTROLLER_TYPE_"
        if name.startswith(prefix) and name != f"{prefix}MAX" and getattr(sdl2, name) == value:
            return name[len(prefix):]
    return f"unknown type {value}"


def text(raw) -> str | None:
    return raw.decode("utf-8", errors="replace") if raw else None


class Failure(Exception):
    """A command that cannot be done; its sentence is the answer's "error"."""


def sdl_error(call: str) -> Failure:
    return Failure(f"{call}: {text(sdl2.SDL_GetError()) or 'failed (SDL gave no reason)'}")


class Reader:
    """The commands: do_NAME answers the command NAME."""

    def __init__(self):
        self.initialised = False
        self.controllers: dict[int, ctypes.c_void_p] = {}  # instance id -> SDL_GameController*
        self.recording: set[int] = set()
        self.sensor_events: dict[int, list] = {}
        self.buttons = [(text(sdl2.SDL_GameControllerGetStringForButton(b)), b)
                        for b in range(sdl2.SDL_CONTROLLER_BUTTON_MAX)]
        self.axes = [(text(sdl2.SDL_GameControllerGetStringForAxis(a)), a) for a in range(sdl2.SDL_CONTROLLER_AXIS_MAX)]

    # -- SDL's events ------------------------------------------------------------------------------------------

    def pump(self, wait_ms: int):
        """Lets SDL notice hot-plug and read input: waits up to wait_ms for an event, then takes every queued one
        (sensor updates kept for a recording controller, the rest dropped: the tests read state)."""
        event = sdl2.SDL_Event()
        if wait_ms > 0 and sdl2.SDL_WaitEventTimeout(ctypes.byref(event), wait_ms):
            self.take(event)
        sdl2.SDL_GameControllerUpdate()
        while sdl2.SDL_PollEvent(ctypes.byref(event)):
            self.take(event)

    def take(self, event):
        if event.type == sdl2.SDL_CONTROLLERSENSORUPDATE and event.csensor.which in self.recording:
            kept = self.sensor_events.setdefault(event.csensor.which, [])
            if len(kept) < KEPT_SENSOR_EVENTS_MAX:
                kept.append({"sensor": SENSOR_NAMES.get(event.csensor.sensor, event.csensor.sensor),
                             "data": list(event.csensor.data), "timestamp_us": event.csensor.timestamp_us})

    # -- commands ----------------------------------------------------------------------------------------------

    def do_version(self, _):
        version = sdl2.SDL_version()
        sdl2.SDL_GetVersion(ctypes.byref(version))
        return {"version": f"{version.major}.{version.minor}.{version.patch}", "library": sdl2.dll.get_dll_file()}

    def do_init(self, command):
        if self.initialised:
            raise Failure("init: SDL is already initialised (quit first)")
        for name, value in command.get("hints", {}).items():
            sdl2.SDL_SetHint(name.encode(), str(value).encode())
        if command.get("input_debug_log"):
            sdl2.SDL_LogSetPriority(sdl2.SDL_LOG_CATEGORY_INPUT, sdl2.SDL_LOG_PRIORITY_DEBUG)
        if sdl2.SDL_Init(sdl2.SDL_INIT_GAMECONTROLLER) != 0:
            raise sdl_error("SDL_Init(SDL_INIT_GAMECONTROLLER)")
        self.initialised = True
        return {}

    def do_quit(self, _):
        for controller in self.controllers.values():
            sdl2.SDL_GameControllerClose(controller)
        self.controllers.clear()
        self.recording.clear()
        self.sensor_events.clear()
        if self.initialised:
            sdl2.SDL_Quit()
            self.initialised = False
        return {}

    def joysticks(self) -> list[dict]:
        listed = []
        for index in range(sdl2.SDL_NumJoysticks()):
            listed.append({
                "index": index, "instance": sdl2.SDL_JoystickGetDeviceInstanceID(index),
                "path": text(sdl2.SDL_JoystickPathForIndex(index)), "name": text(sdl2.SDL_JoystickNameForIndex(index)),
                "gamecontroller": bool(sdl2.SDL_IsGameController(index)),
                "type": type_name(sdl2.SDL_GameControllerTypeForIndex(index)),
                "vendor": sdl2.SDL_JoystickGetDeviceVendor(index), "product": sdl2.SDL_JoystickGetDeviceProduct(index),
            })
        return listed

    def do_list(self, _):
        self.need_init("list")
        self.pump(0)
        return {"joysticks": self.joysticks()}

    def do_open(self, command):
        self.need_init("open")
        paths, exclude = set(command["paths"]), set(command.get("exclude", []))
        deadline = time.monotonic() + float(command["timeout_s"])
        while True:
            self.pump(20)
            found = [j for j in self.joysticks() if j["path"] in paths and j["instance"] not in exclude]
            if found:
                break
            if time.monotonic() > deadline:
                raise Failure(f"SDL never listed a new joystick at {sorted(paths)} within {command['timeout_s']} s; "
                              f"it lists {[(j['path'], j['name']) for j in self.joysticks()]}")
        joystick = found[0]
        if not joystick["gamecontroller"]:
            raise Failure(f"SDL lists {joystick['name']!r} at {joystick['path']} but has no game-controller mapping "
                          f"for it")
        controller = sdl2.SDL_GameControllerOpen(joystick["index"])
        if not controller:
            raise sdl_error(f"SDL_GameControllerOpen({joystick['path']})")
        instance = sdl2.SDL_JoystickInstanceID(sdl2.SDL_GameControllerGetJoystick(controller))
        self.controllers[instance] = controller
        return {"controller": instance, "path": text(sdl2.SDL_GameControllerPath(controller)),
                "name": text(sdl2.SDL_GameControllerName(controller)),
                "type": type_name(sdl2.SDL_GameControllerGetType(controller)),
                "vendor": sdl2.SDL_GameControllerGetVendor(controller),
                "product": sdl2.SDL_GameControllerGetProduct(controller)}

    def do_pump(self, command):
        self.need_init("pump")
        self.pump(int(command.get("wait_ms", 0)))
        return {}

    def do_close(self, command):
        controller = self.controller(command)
        instance = command["controller"]
        sdl2.SDL_GameControllerClose(controller)
        del self.controllers[instance]
        self.recording.discard(instance)
        self.sensor_events.pop(instance, None)
        return {}

    def do_state(self, command):
        controller = self.controller(command)
        self.pump(int(command.get("wait_ms", 20)))
        if not sdl2.SDL_GameControllerGetAttached(controller):
            raise Failure(f"controller {command['controller']} is no longer attached")
        touchpads = []
        down, x, y, pressure = ctypes.c_uint8(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
        for touchpad in range(sdl2.SDL_GameControllerGetNumTouchpads(controller)):
            fingers = []
            for finger in range(sdl2.SDL_GameControllerGetNumTouchpadFingers(controller, touchpad)):
                sdl2.SDL_GameControllerGetTouchpadFinger(controller, touchpad, finger, ctypes.byref(down),
                                                         ctypes.byref(x), ctypes.byref(y), ctypes.byref(pressure))
                fingers.append({"down": bool(down.value), "x": x.value, "y": y.value, "pressure": pressure.value})
            touchpads.append(fingers)
        sensors, has = {}, {}
        data = (ctypes.c_float * 3)()
        for name, kind in SENSORS.items():
            has[name] = bool(sdl2.SDL_GameControllerHasSensor(controller, kind))
            has[f"{name}_rate_hz"] = sdl2.SDL_GameControllerGetSensorDataRate(controller, kind) if has[name] else 0.0
            enabled = has[name] and sdl2.SDL_GameControllerIsSensorEnabled(controller, kind)
            read = enabled and sdl2.SDL_GameControllerGetSensorData(controller, kind, data, 3) == 0
            sensors[name] = list(data) if read else None
        has.update({
            "buttons": [name for name, button in self.buttons if sdl2.SDL_GameControllerHasButton(controller, button)],
            "axes": [name for name, axis in self.axes if sdl2.SDL_GameControllerHasAxis(controller, axis)],
            "touchpads": len(touchpads),
            "rumble": bool(sdl2.SDL_GameControllerHasRumble(controller)),
            "trigger_rumble": bool(sdl2.SDL_GameControllerHasRumbleTriggers(controller)),
            "led": bool(sdl2.SDL_GameControllerHasLED(controller)),
        })
        return {
            "buttons": {name: sdl2.SDL_GameControllerGetButton(controller, button) for name, button in self.buttons},
            "axes": {name: sdl2.SDL_GameControllerGetAxis(controller, axis) for name, axis in self.axes},
            "touchpads": touchpads, "sensors": sensors, "has": has,
        }

    def do_enable_sensors(self, command):
        controller = self.controller(command)
        for name in command.get("sensors", list(SENSORS)):
            if name not in SENSORS:
                raise Failure(f"enable_sensors: unknown sensor {name!r}; SDL's are {sorted(SENSORS)}")
            if sdl2.SDL_GameControllerSetSensorEnabled(controller, SENSORS[name], sdl2.SDL_TRUE) != 0:
                raise sdl_error(f"SDL_GameControllerSetSensorEnabled({name})")
        return {}

    def do_record_sensor_events(self, command):
        self.controller(command)
        if command.get("on", True):
            self.recording.add(command["controller"])
        else:
            self.recording.discard(command["controller"])
        return {}

    def do_sensor_events(self, command):
        self.controller(command)
        self.pump(0)
        return {"events": self.sensor_events.pop(command["controller"], [])}

    def do_rumble(self, command):
        if sdl2.SDL_GameControllerRumble(self.controller(command), int(command["low"]), int(command["high"]),
                                         int(command["duration_ms"])) != 0:
            raise sdl_error("SDL_GameControllerRumble")
        return {}

    def do_rumble_triggers(self, command):
        if sdl2.SDL_GameControllerRumbleTriggers(self.controller(command), int(command["left"]), int(command["right"]),
                                                 int(command["duration_ms"])) != 0:
            raise sdl_error("SDL_GameControllerRumbleTriggers")
        return {}

    def do_led(self, command):
        if sdl2.SDL_GameControllerSetLED(self.controller(command), int(command["red"]), int(command["green"]),
                                         int(command["blue"])) != 0:
            raise sdl_error("SDL_GameControllerSetLED")
        return {}

    def do_send_effect(self, command):
        block = bytes.fromhex(command["hex"])
        if sdl2.SDL_GameControllerSendEffect(self.controller(command), block, len(block)) != 0:
            raise sdl_error("SDL_GameControllerSendEffect")
        return {}

    # -- helpers -----------------------------------------------------------------------------------------------

    def need_init(self, name: str):
        if not self.initialised:
            raise Failure(f"{name}: SDL is not initialised (send init first)")

    def controller(self, command):
        self.need_init(command["command"])
        controller = self.controllers.get(command.get("controller"))
        if controller is None:
            raise Failure(f"{command['command']}: no open controller {command.get('controller')!r} (open one first; "
                          f"open: {sorted(self.controllers)})")
        return controller


COMMANDS = {name[len("do_"):] for name in dir(Reader) if name.startswith("do_")}


def answer(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    reader = Reader()
    answer({"ready": True, **reader.do_version(None), "sdl2_import_s": round(SDL2_IMPORT_S, 2)})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            command = json.loads(line)
            name = command["command"]
        except (ValueError, KeyError, TypeError):
            answer({"id": None, "ok": False, "error": f"not a command object with a \"command\": {line.strip()!r}"})
            continue
        if name not in COMMANDS:
            answer({"id": command.get("id"), "ok": False,
                    "error": f"unknown command {name!r}; the commands are {sorted(COMMANDS)}"})
            continue
        try:
            result = getattr(reader, f"do_{name}")(command)
            answer({"id": command.get("id"), "ok": True, **result})
        except Failure as failure:
            answer({"id": command.get("id"), "ok": False, "error": str(failure)})
        except KeyError as missing:
            answer({"id": command.get("id"), "ok": False, "error": f"{name}: missing argument {missing}"})
    reader.do_quit(None)


if __name__ == "__main__":
    main()

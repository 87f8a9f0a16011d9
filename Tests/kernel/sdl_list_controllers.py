"""What a game started now sees: SDL2 (Debian's libSDL2, through ctypes: this runs as an unprivileged user with the
system's python3, without pysdl2) is initialised afresh and its joysticks are printed as one JSON list of
{"name", "path", "gamecontroller"}. SDL enumerates the pads present at SDL_Init (evdev nodes and, through its HIDAPI
drivers, hidraw nodes) before it returns; the nodes it cannot open are not listed. Exit status 2 if SDL fails."""

import ctypes
import json
import sys

sdl = ctypes.CDLL("libSDL2-2.0.so.0")
sdl.SDL_Init.argtypes = [ctypes.c_uint32]
sdl.SDL_GetError.restype = ctypes.c_char_p
sdl.SDL_JoystickNameForIndex.restype = ctypes.c_char_p
sdl.SDL_JoystickNameForIndex.argtypes = [ctypes.c_int]
sdl.SDL_JoystickPathForIndex.restype = ctypes.c_char_p
sdl.SDL_JoystickPathForIndex.argtypes = [ctypes.c_int]
sdl.SDL_IsGameController.argtypes = [ctypes.c_int]

SDL_INIT_GAMECONTROLLER = 0x00002000
if sdl.SDL_Init(SDL_INIT_GAMECONTROLLER) != 0:
    print(f"SDL_Init: {sdl.SDL_GetError().decode()}", file=sys.stderr)
    sys.exit(2)
sdl.SDL_PumpEvents()
listed = []
for index in range(sdl.SDL_NumJoysticks()):
    name = sdl.SDL_JoystickNameForIndex(index)
    path = sdl.SDL_JoystickPathForIndex(index)
    listed.append({"name": name.decode() if name else None, "path": path.decode() if path else None,
                   "gamecontroller": bool(sdl.SDL_IsGameController(index))})
print(json.dumps(listed))
sdl.SDL_Quit()

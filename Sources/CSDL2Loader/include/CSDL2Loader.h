// CSDL2Loader: libSDL2 loaded at run time, for the few SDL2 functions PadSDL calls.
//
// Linking libSDL2 would make every run of padbridge load it and the ~45 libraries it needs (PulseAudio, X11,
// Wayland, ...), which takes seconds in a VM that reads them over 9p; yet only generic pads need SDL (for its
// game-controller database). So this shim dlopen()s SDL2 when PadSDL first asks and resolves exactly the
// functions PadSDL calls (with CRuntimeLoader). Types and prototypes still come from SDL's own header (libsdl2-dev):
// each pointer is declared as `__typeof__(SDL_Function) *`, so its signature cannot drift from SDL's. This target
// does not link SDL2; Swift code that called an SDL function directly instead of through `CSDL2_Functions` would
// fail to link.
#ifndef C_SDL2_LOADER_H
#define C_SDL2_LOADER_H

#if !__has_include(<SDL2/SDL.h>)
#error "SDL2's header is missing: install libsdl2-dev (scripts/deps does)"
#endif
#include <SDL2/SDL.h>
#include <stddef.h>

/// The SDL2 functions PadSDL calls, resolved from the loaded library. Every member is non-null after a successful
/// `CSDL2_load`.
typedef struct CSDL2_Functions {
    __typeof__(SDL_SetHint) *SDL_SetHint;
    __typeof__(SDL_InitSubSystem) *SDL_InitSubSystem;
    __typeof__(SDL_QuitSubSystem) *SDL_QuitSubSystem;
    __typeof__(SDL_GetError) *SDL_GetError;
    __typeof__(SDL_JoystickUpdate) *SDL_JoystickUpdate;
    __typeof__(SDL_NumJoysticks) *SDL_NumJoysticks;
    __typeof__(SDL_JoystickPathForIndex) *SDL_JoystickPathForIndex;
    __typeof__(SDL_JoystickGetDeviceGUID) *SDL_JoystickGetDeviceGUID;
    __typeof__(SDL_JoystickGetGUIDString) *SDL_JoystickGetGUIDString;
    __typeof__(SDL_IsGameController) *SDL_IsGameController;
    __typeof__(SDL_GameControllerNameForIndex) *SDL_GameControllerNameForIndex;
    __typeof__(SDL_GameControllerMappingForDeviceIndex) *SDL_GameControllerMappingForDeviceIndex;
    __typeof__(SDL_free) *SDL_free;
} CSDL2_Functions;

/// `dlopen(libraryName, RTLD_NOW | RTLD_LOCAL)`, then `dlsym` for every member of `*functions` (CRuntimeLoader_load).
///
/// Returns 0 on success; the library then stays loaded for the rest of the process (it is never closed). Returns
/// -1 if the library cannot be loaded or lacks one of the functions: `error` then holds dlerror()'s text, which
/// names the library and the missing function (NUL-terminated, cut to `errorCapacity` bytes), the library is closed
/// again, and `*functions` is all null.
/// Loads nothing once by itself: callers keep the result (PadSDL holds it in a `static let`).
int CSDL2_load(const char *libraryName, CSDL2_Functions *functions, char *error, size_t errorCapacity);

#endif

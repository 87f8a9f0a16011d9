#include <dlfcn.h>
#include <string.h>
#include "CSDL2Loader.h"

static void copyError(const char *message, char *error, size_t errorCapacity) {
    if (errorCapacity == 0) return;
    strncpy(error, message ? message : "unknown dynamic loader error", errorCapacity - 1);
    error[errorCapacity - 1] = '\0';
}

int CSDL2_load(const char *libraryName, CSDL2_Functions *functions, char *error, size_t errorCapacity) {
    memset(functions, 0, sizeof *functions);
    void *library = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        copyError(dlerror(), error, errorCapacity);
        return -1;
    }
    // The member, the symbol and the prototype all come from one name, so none can be misspelt apart.
#define CSDL2_RESOLVE(name)                                                                                   \
    do {                                                                                                      \
        dlerror();                                                                                            \
        functions->name = (__typeof__(name) *)dlsym(library, #name);                                          \
        if (!functions->name) goto missing;                                                                   \
    } while (0)
    CSDL2_RESOLVE(SDL_SetHint);
    CSDL2_RESOLVE(SDL_InitSubSystem);
    CSDL2_RESOLVE(SDL_QuitSubSystem);
    CSDL2_RESOLVE(SDL_GetError);
    CSDL2_RESOLVE(SDL_JoystickUpdate);
    CSDL2_RESOLVE(SDL_NumJoysticks);
    CSDL2_RESOLVE(SDL_JoystickPathForIndex);
    CSDL2_RESOLVE(SDL_JoystickGetDeviceGUID);
    CSDL2_RESOLVE(SDL_JoystickGetGUIDString);
    CSDL2_RESOLVE(SDL_IsGameController);
    CSDL2_RESOLVE(SDL_GameControllerNameForIndex);
    CSDL2_RESOLVE(SDL_GameControllerMappingForDeviceIndex);
    CSDL2_RESOLVE(SDL_free);
#undef CSDL2_RESOLVE
    return 0;

missing:
    copyError(dlerror(), error, errorCapacity);
    memset(functions, 0, sizeof *functions);
    dlclose(library);
    return -1;
}

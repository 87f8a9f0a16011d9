#include "CSDL2Loader.h"
#include "CRuntimeLoader.h"

// One entry a member of CSDL2_Functions, in its order.
static const CRuntimeLoader_Symbol symbols[] = {
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_SetHint),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_InitSubSystem),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_QuitSubSystem),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_GetError),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_JoystickUpdate),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_NumJoysticks),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_JoystickPathForIndex),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_JoystickGetDeviceGUID),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_JoystickGetGUIDString),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_IsGameController),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_GameControllerNameForIndex),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_GameControllerMappingForDeviceIndex),
    CRUNTIME_LOADER_SYMBOL(CSDL2_Functions, 0, SDL_free),
};
_Static_assert(CRUNTIME_LOADER_COUNT(symbols) * sizeof(void *) == sizeof(CSDL2_Functions),
               "one symbol a member of CSDL2_Functions");

int CSDL2_load(const char *libraryName, CSDL2_Functions *functions, char *error, size_t errorCapacity) {
    const char *const libraries[] = {libraryName};
    return CRuntimeLoader_load(libraries, 1, symbols, CRUNTIME_LOADER_COUNT(symbols), functions, sizeof *functions,
                               error, errorCapacity);
}

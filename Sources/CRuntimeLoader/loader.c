#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "CRuntimeLoader.h"

// A function pointer is stored through its bytes as dlsym's `void *`: POSIX has them the same size and form.
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function and object pointers differ in size");

__attribute__((format(printf, 3, 4))) static void report(char *error, size_t errorCapacity, const char *format, ...) {
    if (errorCapacity == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, errorCapacity, format, arguments);
    va_end(arguments);
}

static void closeAll(void **handles, size_t count) {
    while (count > 0) dlclose(handles[--count]);
}

int CRuntimeLoader_load(const char *const *libraries, size_t libraryCount, const CRuntimeLoader_Symbol *symbols,
                        size_t symbolCount, void *functions, size_t functionsSize, char *error, size_t errorCapacity) {
    enum { maximumLibraries = 8 };
    void *handles[maximumLibraries];
    memset(functions, 0, functionsSize);
    if (libraryCount > maximumLibraries) {
        report(error, errorCapacity, "%zu libraries to load; at most %d", libraryCount, (int)maximumLibraries);
        return -1;
    }
    for (size_t index = 0; index < libraryCount; index++) {
        handles[index] = dlopen(libraries[index], RTLD_NOW | RTLD_LOCAL);
        if (!handles[index]) {
            const char *message = dlerror();
            if (message) {
                report(error, errorCapacity, "%s", message);
            } else {
                report(error, errorCapacity, "%s: cannot be loaded", libraries[index]);
            }
            closeAll(handles, index);
            return -1;
        }
    }
    for (size_t index = 0; index < symbolCount; index++) {
        const CRuntimeLoader_Symbol *symbol = &symbols[index];
        if (symbol->library >= libraryCount || symbol->offset + sizeof(void *) > functionsSize) {
            report(error, errorCapacity, "%s: no such library or member in the function table", symbol->name);
            goto failed;
        }
        dlerror();
        void *pointer = dlsym(handles[symbol->library], symbol->name);
        if (!pointer) {
            const char *message = dlerror();
            if (message) {
                report(error, errorCapacity, "%s", message);
            } else {
                report(error, errorCapacity, "%s: %s is null", libraries[symbol->library], symbol->name);
            }
            goto failed;
        }
        memcpy((char *)functions + symbol->offset, &pointer, sizeof pointer);
    }
    // Every member resolved: a table that left one out (or named one twice) fails here, not at its first call.
    for (size_t offset = 0; offset + sizeof(void *) <= functionsSize; offset += sizeof(void *)) {
        void *pointer;
        memcpy(&pointer, (const char *)functions + offset, sizeof pointer);
        if (!pointer) {
            report(error, errorCapacity, "member %zu of the function table has no symbol", offset / sizeof(void *));
            goto failed;
        }
    }
    return 0;

failed:
    memset(functions, 0, functionsSize);
    closeAll(handles, libraryCount);
    return -1;
}

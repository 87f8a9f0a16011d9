// CRuntimeLoader: a C library loaded at run time (dlopen) and a table of its functions resolved (dlsym), for the
// shims that keep padbridge from linking a library only some commands need (CSDL2Loader, CAvahiLoader).
//
// A shim declares a struct of function pointers, each member named after its function and declared
// `__typeof__(function) *` (so its prototype comes from the library's own header), and a table of
// `CRUNTIME_LOADER_SYMBOL(Struct, library, function)` entries, one a member; `CRuntimeLoader_load` fills the struct.
#ifndef C_RUNTIME_LOADER_H
#define C_RUNTIME_LOADER_H

#include <stddef.h>

/// One function to resolve: its symbol, which of the loaded libraries holds it (an index into `libraries`), and
/// where its pointer goes (the offset of its member in the struct of function pointers).
typedef struct CRuntimeLoader_Symbol {
    const char *name;
    size_t library;
    size_t offset;
} CRuntimeLoader_Symbol;

/// The table entry for member `function` of struct `Functions`, found in library number `library`. The member and
/// the symbol come from one name, so they cannot be misspelt apart; a name that is no member does not compile.
#define CRUNTIME_LOADER_SYMBOL(Functions, library, function) {#function, (library), offsetof(Functions, function)}

/// How many entries a table (an array, not a pointer) has.
#define CRUNTIME_LOADER_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/// `dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL)` for each library in order (at most 8), then `dlsym` for every entry
/// of `symbols` into `functions`, a struct of `functionsSize / sizeof(void *)` function pointers.
///
/// Returns 0 when every library loaded and every member of `*functions` is non-null; the libraries then stay loaded
/// for the rest of the process. Returns -1 otherwise: `error` then holds what went wrong, NUL-terminated and cut to
/// `errorCapacity` bytes: dlerror()'s text when a library does not load ("libX.so.1: cannot open shared object
/// file: No such file or directory") or lacks a function ("libX.so.1: undefined symbol: f"), or which member the
/// table left unresolved. The libraries loaded so far are closed again and `*functions` is all null.
int CRuntimeLoader_load(const char *const *libraries, size_t libraryCount, const CRuntimeLoader_Symbol *symbols,
                        size_t symbolCount, void *functions, size_t functionsSize, char *error, size_t errorCapacity);

#endif

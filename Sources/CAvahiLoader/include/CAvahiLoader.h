// CAvahiLoader: Avahi's client library loaded at run time, for DNS-SD (announcing `serve`, browsing for hosts).
//
// padbridge must run where Avahi is not installed (a server without avahi-daemon, a minimal container), so it does
// not link libavahi-client: this shim dlopen()s libavahi-client.so.3 and libavahi-common.so.3 (Debian's
// libavahi-client3 and libavahi-common3) when DNS-SD is first wanted and resolves exactly the functions PadDNSSD
// calls (with CRuntimeLoader). Types and prototypes come from Avahi's own headers (libavahi-client-dev, which
// scripts/deps installs): each pointer is declared as `__typeof__(avahi_function) *`, so its signature cannot drift
// from Avahi's. This target does not link Avahi; Swift code that called an Avahi function directly would fail to
// link.
#ifndef C_AVAHI_LOADER_H
#define C_AVAHI_LOADER_H

#if !__has_include(<avahi-client/client.h>)
#error "Avahi's client headers are missing: install libavahi-client-dev (scripts/deps does)"
#endif
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/watch.h>
#include <stddef.h>
#include <stdint.h>

/// The Avahi functions PadDNSSD calls, resolved from the loaded libraries. Every member is non-null after a
/// successful `CAvahi_load`.
typedef struct CAvahi_Functions {
    // libavahi-client
    __typeof__(avahi_client_new) *avahi_client_new;
    __typeof__(avahi_client_free) *avahi_client_free;
    __typeof__(avahi_client_get_state) *avahi_client_get_state;
    __typeof__(avahi_client_errno) *avahi_client_errno;
    __typeof__(avahi_entry_group_new) *avahi_entry_group_new;
    __typeof__(avahi_entry_group_free) *avahi_entry_group_free;
    __typeof__(avahi_entry_group_commit) *avahi_entry_group_commit;
    __typeof__(avahi_entry_group_reset) *avahi_entry_group_reset;
    __typeof__(avahi_entry_group_add_service_strlst) *avahi_entry_group_add_service_strlst;
    __typeof__(avahi_entry_group_update_service_txt_strlst) *avahi_entry_group_update_service_txt_strlst;
    __typeof__(avahi_service_browser_new) *avahi_service_browser_new;
    __typeof__(avahi_service_browser_free) *avahi_service_browser_free;
    __typeof__(avahi_service_resolver_new) *avahi_service_resolver_new;
    __typeof__(avahi_service_resolver_free) *avahi_service_resolver_free;
    // libavahi-common
    __typeof__(avahi_strerror) *avahi_strerror;
    __typeof__(avahi_free) *avahi_free;
    __typeof__(avahi_alternative_service_name) *avahi_alternative_service_name;
    __typeof__(avahi_string_list_add_arbitrary) *avahi_string_list_add_arbitrary;
    __typeof__(avahi_string_list_free) *avahi_string_list_free;
    __typeof__(avahi_address_snprint) *avahi_address_snprint;
} CAvahi_Functions;

/// `dlopen(commonLibrary)` and `dlopen(clientLibrary)` (RTLD_NOW | RTLD_LOCAL), then `dlsym` for every member of
/// `*functions` (CRuntimeLoader_load).
///
/// Returns 0 on success; the libraries then stay loaded for the rest of the process. Returns -1 if a library cannot
/// be loaded or lacks one of the functions: `error` then holds dlerror()'s text, which names the library and the
/// missing function (NUL-terminated, cut to `errorCapacity` bytes), the libraries are closed again, and
/// `*functions` is all null.
int CAvahi_load(const char *clientLibrary, const char *commonLibrary, CAvahi_Functions *functions, char *error,
                size_t errorCapacity);

/// The bytes of `address` (4 for IPv4, 16 for IPv6) into `bytes`; returns how many, or 0 for another protocol.
/// (AvahiAddress holds them in a union, which Swift cannot read by name.)
int CAvahi_addressBytes(const AvahiAddress *address, uint8_t bytes[16]);

/// The next element of a TXT string list and its bytes (AvahiStringList's fields, read without calling Avahi).
const AvahiStringList *CAvahi_stringListNext(const AvahiStringList *list);
const uint8_t *CAvahi_stringListText(const AvahiStringList *list);
size_t CAvahi_stringListSize(const AvahiStringList *list);

#endif

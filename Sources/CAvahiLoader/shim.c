#include <dlfcn.h>
#include <string.h>
#include "CAvahiLoader.h"

static void copyError(const char *message, char *error, size_t errorCapacity) {
    if (errorCapacity == 0) return;
    strncpy(error, message ? message : "unknown dynamic loader error", errorCapacity - 1);
    error[errorCapacity - 1] = '\0';
}

int CAvahi_load(const char *clientLibrary, const char *commonLibrary, CAvahi_Functions *functions, char *error,
                size_t errorCapacity) {
    memset(functions, 0, sizeof *functions);
    void *common = dlopen(commonLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!common) {
        copyError(dlerror(), error, errorCapacity);
        return -1;
    }
    void *client = dlopen(clientLibrary, RTLD_NOW | RTLD_LOCAL);
    if (!client) {
        copyError(dlerror(), error, errorCapacity);
        dlclose(common);
        return -1;
    }
    // The member, the symbol and the prototype all come from one name, so none can be misspelt apart.
#define CAVAHI_RESOLVE(library, name)                                                                          \
    do {                                                                                                       \
        dlerror();                                                                                             \
        functions->name = (__typeof__(name) *)dlsym(library, #name);                                           \
        if (!functions->name) goto missing;                                                                    \
    } while (0)
    CAVAHI_RESOLVE(client, avahi_client_new);
    CAVAHI_RESOLVE(client, avahi_client_free);
    CAVAHI_RESOLVE(client, avahi_client_get_state);
    CAVAHI_RESOLVE(client, avahi_client_errno);
    CAVAHI_RESOLVE(client, avahi_entry_group_new);
    CAVAHI_RESOLVE(client, avahi_entry_group_free);
    CAVAHI_RESOLVE(client, avahi_entry_group_commit);
    CAVAHI_RESOLVE(client, avahi_entry_group_reset);
    CAVAHI_RESOLVE(client, avahi_entry_group_add_service_strlst);
    CAVAHI_RESOLVE(client, avahi_entry_group_update_service_txt_strlst);
    CAVAHI_RESOLVE(client, avahi_service_browser_new);
    CAVAHI_RESOLVE(client, avahi_service_browser_free);
    CAVAHI_RESOLVE(client, avahi_service_resolver_new);
    CAVAHI_RESOLVE(client, avahi_service_resolver_free);
    CAVAHI_RESOLVE(common, avahi_strerror);
    CAVAHI_RESOLVE(common, avahi_free);
    CAVAHI_RESOLVE(common, avahi_alternative_service_name);
    CAVAHI_RESOLVE(common, avahi_string_list_add_arbitrary);
    CAVAHI_RESOLVE(common, avahi_string_list_free);
    CAVAHI_RESOLVE(common, avahi_address_snprint);
#undef CAVAHI_RESOLVE
    return 0;

missing:
    copyError(dlerror(), error, errorCapacity);
    memset(functions, 0, sizeof *functions);
    dlclose(client);
    dlclose(common);
    return -1;
}

int CAvahi_addressBytes(const AvahiAddress *address, uint8_t bytes[16]) {
    switch (address->proto) {
    case AVAHI_PROTO_INET:
        memcpy(bytes, &address->data.ipv4.address, 4);
        return 4;
    case AVAHI_PROTO_INET6:
        memcpy(bytes, address->data.ipv6.address, 16);
        return 16;
    default:
        return 0;
    }
}

const AvahiStringList *CAvahi_stringListNext(const AvahiStringList *list) { return list->next; }
const uint8_t *CAvahi_stringListText(const AvahiStringList *list) { return list->text; }
size_t CAvahi_stringListSize(const AvahiStringList *list) { return list->size; }

#include <string.h>
#include "CAvahiLoader.h"
#include "CRuntimeLoader.h"

// Indexes into CAvahi_load's libraries, in the order they are loaded: libavahi-client needs libavahi-common.
enum { avahiCommon, avahiClient };

// One entry a member of CAvahi_Functions, in its order.
static const CRuntimeLoader_Symbol symbols[] = {
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_client_new),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_client_free),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_client_get_state),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_client_errno),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_entry_group_new),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_entry_group_free),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_entry_group_commit),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_entry_group_reset),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_entry_group_add_service_strlst),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_entry_group_update_service_txt_strlst),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_service_browser_new),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_service_browser_free),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_service_resolver_new),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiClient, avahi_service_resolver_free),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiCommon, avahi_strerror),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiCommon, avahi_free),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiCommon, avahi_alternative_service_name),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiCommon, avahi_string_list_add_arbitrary),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiCommon, avahi_string_list_free),
    CRUNTIME_LOADER_SYMBOL(CAvahi_Functions, avahiCommon, avahi_address_snprint),
};
_Static_assert(CRUNTIME_LOADER_COUNT(symbols) * sizeof(void *) == sizeof(CAvahi_Functions),
               "one symbol a member of CAvahi_Functions");

int CAvahi_load(const char *clientLibrary, const char *commonLibrary, CAvahi_Functions *functions, char *error,
                size_t errorCapacity) {
    const char *const libraries[] = {[avahiCommon] = commonLibrary, [avahiClient] = clientLibrary};
    return CRuntimeLoader_load(libraries, 2, symbols, CRUNTIME_LOADER_COUNT(symbols), functions, sizeof *functions,
                               error, errorCapacity);
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

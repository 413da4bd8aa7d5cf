#ifndef CSINK_LOADER_H
#define CSINK_LOADER_H
#include "include/CSinkLibraries.h"

/* Internal to the loader: each library's resolver fills its function table from `handle` and
 * returns NULL, or the name of the first function the library lacks. */
const char *csink_resolve_curl(void *handle);
const char *csink_resolve_pq(void *handle);
const char *csink_resolve_mosquitto(void *handle);
const char *csink_resolve_microhttpd(void *handle);
const char *csink_resolve_websockets(void *handle);
/* Loads `library` under its default soname if not yet loaded (a call reaching a forwarder before
 * the Swift side loaded it); 1 when loaded. */
int csink_ensure(csink_library library);

#define CSINK_HIDDEN __attribute__((visibility("hidden")))
/* One table entry per function: the header's own type. */
#define CSINK_ENTRY(name) __typeof__(name) *name;
#define CSINK_RESOLVE(name) \
    if ((table.name = (__typeof__(table.name))dlsym(handle, #name)) == NULL) return #name;
/* A library's function table `table` (one entry per FUNCTIONS name) and its resolver. */
#define CSINK_TABLE(FUNCTIONS, resolver) \
    static struct { FUNCTIONS(CSINK_ENTRY) } table; \
    const char *resolver(void *handle) { \
        FUNCTIONS(CSINK_RESOLVE) \
        return NULL; \
    }
#endif

#ifndef CSINK_LIBRARIES_H
#define CSINK_LIBRARIES_H
#include <stddef.h>

/* The sink libraries ingestd opens with dlopen when a sink of that kind first needs them
 * (libcurl, libpq, libmosquitto, libwebsockets), and libmicrohttpd when `serve` or `run --http` first listens, so
 * an idle daemon without them maps none of them (nor their TLS stacks, nor gnutls). The functions
 * ingestd calls are defined here, hidden from other objects, with the libraries' own prototypes (a mismatch with the header does not compile); each
 * forwards to the library's function found by dlsym. Swift calls them as if linked. */
typedef enum {
    CSINK_CURL = 0,
    CSINK_PQ = 1,
    CSINK_MOSQUITTO = 2,
    CSINK_MICROHTTPD = 3,
    CSINK_WEBSOCKETS = 4,
} csink_library;

/* Opens `library` (its soname, e.g. libcurl.so.4) once and resolves every function ingestd uses.
 * Returns 1 when loaded; 0 with the reason (dlerror's words, or the missing symbol) in `error`.
 * Thread-safe; a failed load is tried again on the next call. */
int csink_load(csink_library library, const char *soname, char *error, size_t error_size);

/* 1 when `library` is loaded. */
int csink_is_loaded(csink_library library);

#endif

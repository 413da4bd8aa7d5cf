#include "loader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *handles[5];
static const char *default_sonames[5] = {"libcurl.so.4", "libpq.so.5", "libmosquitto.so.1", "libmicrohttpd.so.12",
                                        "libwebsockets.so.17"};

int csink_load(csink_library library, const char *soname, char *error, size_t error_size) {
    if (library < 0 || library > 4) {
        snprintf(error, error_size, "unknown library %d", (int)library);
        return 0;
    }
    pthread_mutex_lock(&lock);
    if (handles[library] != NULL) {
        pthread_mutex_unlock(&lock);
        return 1;
    }
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(error, error_size, "%s", reason != NULL ? reason : "dlopen failed");
        pthread_mutex_unlock(&lock);
        return 0;
    }
    const char *missing = NULL;
    switch (library) {
    case CSINK_CURL: missing = csink_resolve_curl(handle); break;
    case CSINK_PQ: missing = csink_resolve_pq(handle); break;
    case CSINK_MOSQUITTO: missing = csink_resolve_mosquitto(handle); break;
    case CSINK_MICROHTTPD: missing = csink_resolve_microhttpd(handle); break;
    case CSINK_WEBSOCKETS: missing = csink_resolve_websockets(handle); break;
    }
    if (missing != NULL) {
        snprintf(error, error_size, "%s has no function %s (too old a version)", soname, missing);
        dlclose(handle);
        pthread_mutex_unlock(&lock);
        return 0;
    }
    __atomic_store_n(&handles[library], handle, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return 1;
}

int csink_is_loaded(csink_library library) {
    if (library < 0 || library > 4) return 0;
    return __atomic_load_n(&handles[library], __ATOMIC_ACQUIRE) != NULL;
}

int csink_ensure(csink_library library) {
    if (csink_is_loaded(library)) return 1;
    char error[512];
    return csink_load(library, default_sonames[library], error, sizeof error);
}

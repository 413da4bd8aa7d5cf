#include "../CCurl/shim.h"
#include <dlfcn.h>
#include "loader.h"

/* The libcurl functions ingestd calls (Sources/Delivery/CurlClient.swift, Sources/CCurl/shim.h). */
#define CURL_FUNCTIONS(X) X(curl_global_init) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) \
    X(curl_easy_perform) X(curl_easy_strerror) X(curl_easy_setopt) X(curl_easy_getinfo) \
    X(curl_slist_append) X(curl_slist_free_all)

CSINK_TABLE(CURL_FUNCTIONS, csink_resolve_curl)

#define READY csink_ensure(CSINK_CURL)

CSINK_HIDDEN CURLcode curl_global_init(long flags) { return READY ? table.curl_global_init(flags) : CURLE_FAILED_INIT; }
CSINK_HIDDEN CURL *curl_easy_init(void) { return READY ? table.curl_easy_init() : NULL; }
CSINK_HIDDEN void curl_easy_cleanup(CURL *handle) { if (READY) table.curl_easy_cleanup(handle); }
CSINK_HIDDEN void curl_easy_reset(CURL *handle) { if (READY) table.curl_easy_reset(handle); }
CSINK_HIDDEN CURLcode curl_easy_perform(CURL *handle) { return READY ? table.curl_easy_perform(handle) : CURLE_FAILED_INIT; }
CSINK_HIDDEN const char *curl_easy_strerror(CURLcode code) {
    return READY ? table.curl_easy_strerror(code) : "libcurl is not loaded";
}
CSINK_HIDDEN struct curl_slist *curl_slist_append(struct curl_slist *list, const char *string) {
    return READY ? table.curl_slist_append(list, string) : NULL;
}
CSINK_HIDDEN void curl_slist_free_all(struct curl_slist *list) { if (READY) table.curl_slist_free_all(list); }

/* curl_easy_setopt and curl_easy_getinfo are variadic: the shim's fixed-type wrappers, defined here. */
CSINK_HIDDEN CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return READY ? table.curl_easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}
CSINK_HIDDEN CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return READY ? table.curl_easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}
CSINK_HIDDEN CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return READY ? table.curl_easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}
CSINK_HIDDEN CURLcode ccurl_setopt_write_function(CURL *handle, ccurl_write_callback callback) {
    return READY ? table.curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback) : CURLE_FAILED_INIT;
}
CSINK_HIDDEN CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return READY ? table.curl_easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}
CSINK_HIDDEN CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return READY ? table.curl_easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

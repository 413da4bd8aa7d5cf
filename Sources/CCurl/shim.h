#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>
/* curl_easy_setopt and curl_easy_getinfo are variadic: fixed-type wrappers Swift can call. libcurl is
 * opened with dlopen when the HTTP sink first needs it (Sources/CSinkLibraries): these and the
 * functions ingestd calls are defined there, forwarding to the loaded library. */
CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value);
typedef size_t (*ccurl_write_callback)(char *data, size_t size, size_t count, void *context);
CURLcode ccurl_setopt_write_function(CURL *handle, ccurl_write_callback callback);
CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, char **value);
#endif

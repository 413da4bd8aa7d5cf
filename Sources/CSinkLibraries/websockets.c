#include "../CWebSockets/shim.h"
#include <dlfcn.h>
#include "loader.h"

/* The libwebsockets functions ingestd calls (Sources/Delivery/WebSocketClient.swift), as cws_ wrappers
 * declared in Sources/CWebSockets/shim.h: libwebsockets.h declares its functions with default
 * visibility, so same-named hidden forwarders (as for the other sink libraries) do not compile. */
#define WEBSOCKETS_FUNCTIONS(X) X(lws_create_context) X(lws_context_destroy) X(lws_client_connect_via_info) \
    X(lws_service) X(lws_callback_on_writable) X(lws_write) X(lws_is_final_fragment) \
    X(lws_remaining_packet_payload) X(lws_context_user) X(lws_get_context) X(lws_set_log_level) X(lws_set_timeout)

CSINK_TABLE(WEBSOCKETS_FUNCTIONS, csink_resolve_websockets)

#define READY csink_ensure(CSINK_WEBSOCKETS)

CSINK_HIDDEN struct lws_context *cws_create_context(const struct lws_context_creation_info *info) {
    return READY ? table.lws_create_context(info) : NULL;
}
CSINK_HIDDEN void cws_context_destroy(struct lws_context *context) { if (READY) table.lws_context_destroy(context); }
CSINK_HIDDEN struct lws *cws_client_connect_via_info(const struct lws_client_connect_info *info) {
    return READY ? table.lws_client_connect_via_info(info) : NULL;
}
CSINK_HIDDEN int cws_service(struct lws_context *context, int timeout_ms) {
    return READY ? table.lws_service(context, timeout_ms) : -1;
}
CSINK_HIDDEN int cws_callback_on_writable(struct lws *wsi) { return READY ? table.lws_callback_on_writable(wsi) : -1; }
CSINK_HIDDEN int cws_write(struct lws *wsi, unsigned char *buf, size_t len, enum lws_write_protocol protocol) {
    return READY ? table.lws_write(wsi, buf, len, protocol) : -1;
}
CSINK_HIDDEN int cws_is_final_fragment(struct lws *wsi) { return READY ? table.lws_is_final_fragment(wsi) : 1; }
CSINK_HIDDEN size_t cws_remaining_packet_payload(struct lws *wsi) {
    return READY ? table.lws_remaining_packet_payload(wsi) : 0;
}
CSINK_HIDDEN void *cws_context_user(struct lws_context *context) { return READY ? table.lws_context_user(context) : NULL; }
CSINK_HIDDEN struct lws_context *cws_get_context(const struct lws *wsi) { return READY ? table.lws_get_context(wsi) : NULL; }
CSINK_HIDDEN void cws_set_log_level(int level, void (*log_emit_function)(int level, const char *line)) {
    if (READY) table.lws_set_log_level(level, log_emit_function);
}
CSINK_HIDDEN void cws_set_timeout(struct lws *wsi, enum pending_timeout reason, int secs) {
    if (READY) table.lws_set_timeout(wsi, reason, secs);
}

#ifndef CWEBSOCKETS_SHIM_H
#define CWEBSOCKETS_SHIM_H
/* libwebsockets (Debian's libwebsockets-dev): the WebSocket client of the Home Assistant statistics
 * sink. Opened with dlopen when such a sink first connects (Sources/CSinkLibraries defines the
 * functions ingestd calls, forwarding to the loaded library): not linked. */
#include <libwebsockets.h>

/* The functions ingestd calls, forwarding to the library opened on first use (libwebsockets'
 * own names, prefixed cws_ instead of lws_). */
struct lws_context *cws_create_context(const struct lws_context_creation_info *info);
void cws_context_destroy(struct lws_context *context);
struct lws *cws_client_connect_via_info(const struct lws_client_connect_info *info);
int cws_service(struct lws_context *context, int timeout_ms);
int cws_callback_on_writable(struct lws *wsi);
int cws_write(struct lws *wsi, unsigned char *buf, size_t len, enum lws_write_protocol protocol);
int cws_is_final_fragment(struct lws *wsi);
size_t cws_remaining_packet_payload(struct lws *wsi);
void *cws_context_user(struct lws_context *context);
struct lws_context *cws_get_context(const struct lws *wsi);
void cws_set_log_level(int level, void (*log_emit_function)(int level, const char *line));
void cws_set_timeout(struct lws *wsi, enum pending_timeout reason, int secs);

/* LWS_PRE, the headroom lws_write needs before a payload, as a value Swift can read. */
static inline size_t cwebsockets_pre(void) { return LWS_PRE; }
#endif

#include "../CMicroHTTPD/shim.h"
#include <dlfcn.h>
#include "loader.h"

/* The libmicrohttpd functions ingestd calls (Sources/WebDashboard/HTTPServer.swift, Sources/CMicroHTTPD/shim.h).
 * Opened when `serve` or `run --http` first listens, so an idle daemon maps neither it nor gnutls. */
#define MICROHTTPD_FUNCTIONS(X) X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_get_daemon_info) \
    X(MHD_get_connection_values) X(MHD_queue_response) X(MHD_create_response_from_buffer) \
    X(MHD_destroy_response) X(MHD_add_response_header)

CSINK_TABLE(MICROHTTPD_FUNCTIONS, csink_resolve_microhttpd)

#define READY csink_ensure(CSINK_MICROHTTPD)

CSINK_HIDDEN struct MHD_Daemon *cmhd_start(unsigned int flags, const struct sockaddr *address, unsigned int connection_limit,
                                           unsigned int per_ip_limit, unsigned int timeout_seconds, size_t memory_limit,
                                           unsigned int threads, MHD_AccessHandlerCallback handler, void *context,
                                           MHD_RequestCompletedCallback completed, void *completed_context) {
    if (!READY) return NULL;
    return table.MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                                  MHD_OPTION_SOCK_ADDR, address,
                                  MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                  MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
                                  MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                  MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                                  MHD_OPTION_THREAD_POOL_SIZE, threads,
                                  MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                                  MHD_OPTION_END);
}
CSINK_HIDDEN struct MHD_Response *cmhd_response_copy(size_t size, const void *data) {
    return READY ? table.MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY) : NULL;
}
CSINK_HIDDEN int cmhd_port(struct MHD_Daemon *daemon) {
    if (!READY) return -1;
    const union MHD_DaemonInfo *info = table.MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? -1 : (int)info->port;
}
CSINK_HIDDEN void MHD_stop_daemon(struct MHD_Daemon *daemon) { if (READY) table.MHD_stop_daemon(daemon); }
CSINK_HIDDEN int MHD_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                           MHD_KeyValueIterator iterator, void *iterator_cls) {
    return READY ? table.MHD_get_connection_values(connection, kind, iterator, iterator_cls) : -1;
}
CSINK_HIDDEN enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                                struct MHD_Response *response) {
    return READY ? table.MHD_queue_response(connection, status_code, response) : MHD_NO;
}
CSINK_HIDDEN void MHD_destroy_response(struct MHD_Response *response) { if (READY) table.MHD_destroy_response(response); }
CSINK_HIDDEN enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
    return READY ? table.MHD_add_response_header(response, header, content) : MHD_NO;
}

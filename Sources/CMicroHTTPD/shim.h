#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdint.h>
#include <microhttpd.h>
/* MHD_start_daemon is variadic: a fixed-type wrapper Swift can call, with the options ingestd sets
   (the address to bind, the connection limit, the idle timeout, the per-connection memory limit
   that bounds headers, the thread pool size, the completion callback). */
static inline struct MHD_Daemon *cmhd_start(unsigned int flags, const struct sockaddr *address,
                                            unsigned int connection_limit, unsigned int per_ip_limit,
                                            unsigned int timeout_seconds, size_t memory_limit,
                                            unsigned int threads, MHD_AccessHandlerCallback handler, void *context,
                                            MHD_RequestCompletedCallback completed, void *completed_context) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_END);
}
/* The daemon's flags: its own threads (epoll or poll, whichever the system has), IPv6 when asked. */
static inline unsigned int cmhd_flags(int ipv6) {
    return (unsigned int)MHD_USE_AUTO_INTERNAL_THREAD | (ipv6 ? (unsigned int)MHD_USE_IPv6 : 0u);
}
/* A response holding a copy of `size` bytes at `data`. */
static inline struct MHD_Response *cmhd_response_copy(size_t size, const void *data) {
    return MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
}
/* The port the daemon listens on (after binding port 0). */
static inline int cmhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? -1 : (int)info->port;
}
#endif

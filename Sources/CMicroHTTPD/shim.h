#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdint.h>
#include <microhttpd.h>
/* libmicrohttpd is not linked: Sources/CSinkLibraries/microhttpd.c defines these and the MHD_ functions
   ingestd calls, forwarding to the library opened with dlopen when the server first starts.
   MHD_start_daemon is variadic: a fixed-type wrapper Swift can call, with the options ingestd sets
   (the address to bind, the connection limit, the idle timeout, the per-connection memory limit
   that bounds headers, the thread pool size, the completion callback). */
struct MHD_Daemon *cmhd_start(unsigned int flags, const struct sockaddr *address,
                              unsigned int connection_limit, unsigned int per_ip_limit,
                              unsigned int timeout_seconds, size_t memory_limit,
                              unsigned int threads, MHD_AccessHandlerCallback handler, void *context,
                              MHD_RequestCompletedCallback completed, void *completed_context);
/* The daemon's flags: its own threads (epoll or poll, whichever the system has), IPv6 when asked. */
static inline unsigned int cmhd_flags(int ipv6) {
    return (unsigned int)MHD_USE_AUTO_INTERNAL_THREAD | (ipv6 ? (unsigned int)MHD_USE_IPv6 : 0u);
}
/* A response holding a copy of `size` bytes at `data`. */
struct MHD_Response *cmhd_response_copy(size_t size, const void *data);
/* The port the daemon listens on (after binding port 0). */
int cmhd_port(struct MHD_Daemon *daemon);
#endif

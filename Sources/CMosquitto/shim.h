#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H
/* libmosquitto is opened with dlopen when a sink first needs it (Sources/CSinkLibraries defines the
 * functions ingestd calls, forwarding to the loaded library): not linked. */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

/* Asks the kernel to acknowledge the next TCP segments of the client's connection at once instead
 * of delaying the ACK (Linux resets this after a while, so it is set again before each wait).
 * A broker that does not set TCP_NODELAY holds each small PUBACK back until its previous segment
 * is acknowledged: without this, every wait for the last PUBACKs of a batch stalls for the
 * delayed-ACK timer (up to 40 ms). Returns 0, or -1 when there is no socket or the option fails. */
static inline int cmosquitto_quickack(struct mosquitto *client) {
    int fd = mosquitto_socket(client);
    if (fd < 0) return -1;
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}
#endif

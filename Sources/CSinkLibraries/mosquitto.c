#include "../CMosquitto/shim.h"
#include <dlfcn.h>
#include "loader.h"

/* The libmosquitto functions ingestd calls (Sources/Delivery/MosquittoClient.swift, Sources/CMosquitto/shim.h). */
#define MOSQUITTO_FUNCTIONS(X) X(mosquitto_connack_string) X(mosquitto_connect) X(mosquitto_connect_callback_set) \
    X(mosquitto_destroy) X(mosquitto_disconnect) X(mosquitto_disconnect_callback_set) X(mosquitto_int_option) \
    X(mosquitto_lib_init) X(mosquitto_loop_misc) X(mosquitto_loop_read) X(mosquitto_loop_write) \
    X(mosquitto_max_inflight_messages_set) \
    X(mosquitto_message_callback_set) X(mosquitto_new) X(mosquitto_publish) X(mosquitto_publish_callback_set) \
    X(mosquitto_reason_string) X(mosquitto_socket) X(mosquitto_strerror) X(mosquitto_subscribe) \
    X(mosquitto_tls_set) X(mosquitto_username_pw_set) X(mosquitto_want_write) X(mosquitto_will_set)

CSINK_TABLE(MOSQUITTO_FUNCTIONS, csink_resolve_mosquitto)

#define READY csink_ensure(CSINK_MOSQUITTO)
#define NOT_LOADED MOSQ_ERR_NOT_SUPPORTED

CSINK_HIDDEN const char *mosquitto_connack_string(int code) {
    return READY ? table.mosquitto_connack_string(code) : "libmosquitto is not loaded";
}
CSINK_HIDDEN int mosquitto_connect(struct mosquitto *mosq, const char *host, int port, int keepalive) {
    return READY ? table.mosquitto_connect(mosq, host, port, keepalive) : NOT_LOADED;
}
CSINK_HIDDEN void mosquitto_connect_callback_set(struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int)) {
    if (READY) table.mosquitto_connect_callback_set(mosq, on_connect);
}
CSINK_HIDDEN void mosquitto_destroy(struct mosquitto *mosq) { if (READY) table.mosquitto_destroy(mosq); }
CSINK_HIDDEN int mosquitto_disconnect(struct mosquitto *mosq) { return READY ? table.mosquitto_disconnect(mosq) : NOT_LOADED; }
CSINK_HIDDEN void mosquitto_disconnect_callback_set(struct mosquitto *mosq,
                                                    void (*on_disconnect)(struct mosquitto *, void *, int)) {
    if (READY) table.mosquitto_disconnect_callback_set(mosq, on_disconnect);
}
CSINK_HIDDEN int mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value) {
    return READY ? table.mosquitto_int_option(mosq, option, value) : NOT_LOADED;
}
CSINK_HIDDEN int mosquitto_lib_init(void) { return READY ? table.mosquitto_lib_init() : NOT_LOADED; }
CSINK_HIDDEN int mosquitto_loop_misc(struct mosquitto *mosq) { return READY ? table.mosquitto_loop_misc(mosq) : NOT_LOADED; }
CSINK_HIDDEN int mosquitto_loop_read(struct mosquitto *mosq, int max_packets) {
    return READY ? table.mosquitto_loop_read(mosq, max_packets) : NOT_LOADED;
}
CSINK_HIDDEN int mosquitto_loop_write(struct mosquitto *mosq, int max_packets) {
    return READY ? table.mosquitto_loop_write(mosq, max_packets) : NOT_LOADED;
}
CSINK_HIDDEN int mosquitto_max_inflight_messages_set(struct mosquitto *mosq, unsigned int max_inflight_messages) {
    return READY ? table.mosquitto_max_inflight_messages_set(mosq, max_inflight_messages) : NOT_LOADED;
}
CSINK_HIDDEN void mosquitto_message_callback_set(struct mosquitto *mosq,
                                                 void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *)) {
    if (READY) table.mosquitto_message_callback_set(mosq, on_message);
}
CSINK_HIDDEN struct mosquitto *mosquitto_new(const char *id, bool clean_session, void *obj) {
    return READY ? table.mosquitto_new(id, clean_session, obj) : NULL;
}
CSINK_HIDDEN int mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload,
                                   int qos, bool retain) {
    return READY ? table.mosquitto_publish(mosq, mid, topic, payloadlen, payload, qos, retain) : NOT_LOADED;
}
CSINK_HIDDEN void mosquitto_publish_callback_set(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int)) {
    if (READY) table.mosquitto_publish_callback_set(mosq, on_publish);
}
CSINK_HIDDEN const char *mosquitto_reason_string(int reason_code) {
    return READY ? table.mosquitto_reason_string(reason_code) : "libmosquitto is not loaded";
}
CSINK_HIDDEN int mosquitto_socket(struct mosquitto *mosq) { return READY ? table.mosquitto_socket(mosq) : -1; }
CSINK_HIDDEN const char *mosquitto_strerror(int mosq_errno) {
    return READY ? table.mosquitto_strerror(mosq_errno) : "libmosquitto is not loaded";
}
CSINK_HIDDEN int mosquitto_subscribe(struct mosquitto *mosq, int *mid, const char *sub, int qos) {
    return READY ? table.mosquitto_subscribe(mosq, mid, sub, qos) : NOT_LOADED;
}
CSINK_HIDDEN int mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                                   const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    return READY ? table.mosquitto_tls_set(mosq, cafile, capath, certfile, keyfile, pw_callback) : NOT_LOADED;
}
CSINK_HIDDEN int mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
    return READY ? table.mosquitto_username_pw_set(mosq, username, password) : NOT_LOADED;
}
CSINK_HIDDEN bool mosquitto_want_write(struct mosquitto *mosq) { return READY ? table.mosquitto_want_write(mosq) : false; }
CSINK_HIDDEN int mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos,
                                    bool retain) {
    return READY ? table.mosquitto_will_set(mosq, topic, payloadlen, payload, qos, retain) : NOT_LOADED;
}

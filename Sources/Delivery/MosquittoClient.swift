import CMosquitto
import SinkLibraries
import Foundation

/// The library is initialised once per process (its first use).
private let mosquittoLibrary: Int32 = mosquitto_lib_init()

/// What libmosquitto's callbacks report, kept for the thread that drives the loop.
final class MosquittoCallbackState {
    /// At most this many incoming messages are kept between polls (only status topics are subscribed).
    static let incomingLimit = 64
    var connackCode: Int32?
    var outstanding = Set<Int32>()
    var connectionLost = false
    var incoming: [(topic: String, payload: String)] = []
}

/// A blocking MQTT client over libmosquitto, driven on the caller's thread (no library thread) by
/// `poll(2)` and libmosquitto's read, write and housekeeping steps: connect, publish with QoS 1 and
/// wait for every PUBACK, subscribe, poll. (`mosquitto_loop` is not used: it waits with `select(2)`
/// and refuses a socket numbered 1024 or above with "Invalid function arguments provided", which a
/// daemon or test process holding many descriptors reaches.)
/// Publishes are pipelined: up to `window` messages are in flight (sent, PUBACK not yet read);
/// the next publish first reads acknowledgements until one is free. Waiting for a whole batch's
/// PUBACKs only after it is sent (or one at a time) leaves the connection idle for a round trip
/// per window; a small window also keeps libmosquitto's in-flight list, walked on every publish
/// and acknowledgement, short. While it waits for PUBACKs the client acknowledges the broker's
/// TCP segments at once (`TCP_QUICKACK`): a broker without `TCP_NODELAY` would otherwise hold
/// the last PUBACKs of every batch back for the delayed-ACK timer.
final class MosquittoClient {
    /// Messages in flight at most (also libmosquitto's `max_inflight_messages`).
    static let window = 32
    /// Seconds without a single PUBACK after which the connection counts as stuck.
    let acknowledgementTimeout: Double
    private let handle: OpaquePointer
    private let state = MosquittoCallbackState()
    let target: String
    let isVersion5: Bool
    private let usesTLS: Bool

    struct Settings {
        var clientID: String
        var version: MQTTProtocolVersion
        var username: String?
        var password: String?
        var caFile: String?
        var useTLS: Bool
        var will: (topic: String, payload: String)?
    }

    init(settings: Settings, target: String, acknowledgementTimeout: Double = 10) throws(SinkDeliveryError) {
        // libmosquitto is opened on first use (an ingestd without an MQTT sink never maps it).
        do { try DynamicLibrary.mosquitto.load() } catch {
            throw .misconfigured(target: target, reason: "\(error.library.soname) cannot be loaded: \(error.reason)", fix: error.fix)
        }
        _ = mosquittoLibrary
        self.target = target
        self.acknowledgementTimeout = acknowledgementTimeout
        isVersion5 = settings.version == .v5
        usesTLS = settings.useTLS || settings.caFile != nil
        let userdata = Unmanaged.passUnretained(state).toOpaque()
        guard let handle = mosquitto_new(settings.clientID, true, userdata) else {
            throw .unreachable(target: target, reason: "cannot create an MQTT client (out of memory or bad client id)")
        }
        // The handle is configured before it becomes this object's: a set-up that fails destroys it
        // here, once. (Destroying it after `self.handle` was set would be a double free, as deinit
        // runs too when a fully initialised object's init throws: the fifth such attempt in one
        // process aborted with "double free or corruption".)
        do {
            try Self.configure(handle, settings: settings, target: target)
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
        self.handle = handle
    }

    /// Options, callbacks, credentials, TLS and the last will of a new handle.
    private static func configure(_ handle: OpaquePointer, settings: Settings, target: String) throws(SinkDeliveryError) {
        func check(_ code: Int32, doing what: String) throws(SinkDeliveryError) {
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                throw .unreachable(target: target, reason: "\(what): \(errorText(code))")
            }
        }
        let isVersion5 = settings.version == .v5
        mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, isVersion5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
        mosquitto_max_inflight_messages_set(handle, UInt32(Self.window))
        // Small PUBLISHes go out as they are made: without Nagle's algorithm none is held back
        // waiting for the broker's TCP ACK.
        mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        mosquitto_connect_callback_set(handle) { _, userdata, code in
            guard let userdata else { return }
            Unmanaged<MosquittoCallbackState>.fromOpaque(userdata).takeUnretainedValue().connackCode = code
        }
        mosquitto_publish_callback_set(handle) { _, userdata, mid in
            guard let userdata else { return }
            Unmanaged<MosquittoCallbackState>.fromOpaque(userdata).takeUnretainedValue().outstanding.remove(mid)
        }
        mosquitto_disconnect_callback_set(handle) { _, userdata, _ in
            guard let userdata else { return }
            Unmanaged<MosquittoCallbackState>.fromOpaque(userdata).takeUnretainedValue().connectionLost = true
        }
        mosquitto_message_callback_set(handle) { _, userdata, message in
            guard let userdata, let message, let topic = message.pointee.topic else { return }
            let state = Unmanaged<MosquittoCallbackState>.fromOpaque(userdata).takeUnretainedValue()
            guard state.incoming.count < MosquittoCallbackState.incomingLimit else { return }
            let length = Int(max(0, min(message.pointee.payloadlen, 4096)))
            var payload = ""
            if let bytes = message.pointee.payload, length > 0 {
                payload = String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
            }
            state.incoming.append((String(cString: topic), payload))
        }
        if let username = settings.username {
            try check(mosquitto_username_pw_set(handle, username, settings.password), doing: "setting the credentials")
        }
        if settings.useTLS || settings.caFile != nil {
            let caPath = settings.caFile == nil ? "/etc/ssl/certs" : nil
            try check(mosquitto_tls_set(handle, settings.caFile, caPath, nil, nil, nil), doing: "setting up TLS")
        }
        if let will = settings.will {
            let bytes = Array(will.payload.utf8)
            try check(mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes, 1, true), doing: "setting the last will")
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    private func check(_ code: Int32, doing what: String) throws(SinkDeliveryError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw .unreachable(target: target, reason: "\(what): \(Self.errorText(code))")
        }
    }

    static func errorText(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(code))
    }

    /// Connects and waits for the broker's CONNACK.
    func connect(host: String, port: Int, keepalive: Int32, timeout: Double) throws(SinkDeliveryError) {
        state.connackCode = nil
        state.connectionLost = false
        let code = mosquitto_connect(handle, host, Int32(port), keepalive)
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw .unreachable(target: target, reason: Self.errorText(code))
        }
        let deadline = Date().addingTimeInterval(timeout)
        while state.connackCode == nil {
            let loop = loopOnce(milliseconds: 100)
            if state.connackCode != nil { break }
            if loop != MOSQ_ERR_SUCCESS.rawValue {
                throw .unreachable(target: target, reason: "connection closed before the broker answered: \(Self.errorText(loop))")
            }
            if Date() > deadline { throw .timedOut(target: target, seconds: timeout, waitingFor: "CONNACK") }
        }
        let answer = state.connackCode ?? 0
        guard answer == 0 else {
            let reason = isVersion5 ? String(cString: mosquitto_reason_string(answer)) : String(cString: mosquitto_connack_string(answer))
            throw .connectionRefused(target: target, reason: "\(reason) (code \(answer))")
        }
    }

    /// Whether the message `mid` (from `publish`) has its PUBACK. (Message ids wrap at 65,535; a
    /// reused id still in flight makes an older message count as unacknowledged, never the reverse.)
    func isAcknowledged(_ mid: Int32) -> Bool { !state.outstanding.contains(mid) }

    /// Sends a QoS 1 message once fewer than `window` are in flight; its PUBACK is awaited by
    /// `waitForAcknowledgements` (or a later publish). Returns the message id.
    @discardableResult
    func publish(topic: String, payload: String, retain: Bool) throws(SinkDeliveryError) -> Int32 {
        if state.outstanding.count >= Self.window {
            try waitForAcknowledgements(leaving: Self.window - 1, timeout: acknowledgementTimeout)
        }
        var mid: Int32 = 0
        let code: Int32 = payload.utf8.withContiguousStorageIfAvailable { bytes in
            mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, 1, retain)
        } ?? {
            let bytes = Array(payload.utf8)
            return mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes, 1, retain)
        }()
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw .unreachable(target: target, reason: "publishing to \(topic): \(Self.errorText(code))")
        }
        state.outstanding.insert(mid)
        return mid
    }

    /// Drives the connection until at most `leaving` published messages wait for their PUBACK
    /// (0: every one acknowledged); throws if the connection breaks or no acknowledgement arrives
    /// for `timeout` seconds.
    func waitForAcknowledgements(leaving: Int = 0, timeout: Double) throws(SinkDeliveryError) {
        var lastProgress = Date()
        var remaining = state.outstanding.count
        while state.outstanding.count > leaving {
            // The PUBACKs are wanted now: acknowledge the broker's segments without delay.
            _ = cmosquitto_quickack(handle)
            try pump(milliseconds: 100)
            if state.outstanding.count < remaining {
                remaining = state.outstanding.count
                lastProgress = Date()
            } else if Date().timeIntervalSince(lastProgress) > timeout {
                let waiting = state.outstanding.count
                throw .timedOut(target: target, seconds: timeout, waitingFor: "PUBACK for \(waiting) message(s)")
            }
        }
    }

    /// One pass of the network loop.
    func pump(milliseconds: Int32) throws(SinkDeliveryError) {
        let code = loopOnce(milliseconds: milliseconds)
        if code != MOSQ_ERR_SUCCESS.rawValue || state.connectionLost {
            // `outstanding` is kept: it tells which messages were acknowledged before the break.
            throw .unreachable(target: target, reason: "connection lost: \(Self.errorText(code == 0 ? MOSQ_ERR_CONN_LOST.rawValue : code))")
        }
    }

    /// Waits up to `milliseconds` for the socket, then reads what arrived, writes what is queued and
    /// runs libmosquitto's housekeeping (keepalive): what `mosquitto_loop` does, with `poll(2)`,
    /// which has no limit on the descriptor's number. Returns a libmosquitto result code.
    private func loopOnce(milliseconds: Int32) -> Int32 {
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return MOSQ_ERR_NO_CONN.rawValue }
        var events = Int16(POLLIN)
        if mosquitto_want_write(handle) { events |= Int16(POLLOUT) }
        var descriptor = pollfd(fd: socket, events: events, revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno != EINTR { return MOSQ_ERR_ERRNO.rawValue }
        let revents = ready > 0 ? descriptor.revents : 0
        // TLS may hold a decrypted record poll cannot see: its read is tried on every pass.
        if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 || usesTLS {
            // libmosquitto stops reading buffered packets when errno says EAGAIN, even a stale one.
            errno = 0
            let code = mosquitto_loop_read(handle, 1)
            if code != MOSQ_ERR_SUCCESS.rawValue || mosquitto_socket(handle) < 0 { return code }
        }
        if revents & Int16(POLLOUT) != 0 || mosquitto_want_write(handle) {
            let code = mosquitto_loop_write(handle, 1)
            if code != MOSQ_ERR_SUCCESS.rawValue { return code }
        }
        return mosquitto_loop_misc(handle)
    }

    func subscribe(_ topic: String) throws(SinkDeliveryError) {
        try check(mosquitto_subscribe(handle, nil, topic, 1), doing: "subscribing to \(topic)")
    }

    /// Incoming messages since the last call.
    func takeIncoming() -> [(topic: String, payload: String)] {
        defer { state.incoming.removeAll() }
        return state.incoming
    }

    func disconnect() {
        mosquitto_disconnect(handle)
        _ = loopOnce(milliseconds: 50)
    }
}

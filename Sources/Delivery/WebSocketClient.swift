import CWebSockets
import Foundation
import SinkLibraries

/// One WebSocket client connection through libwebsockets (opened on first use): connects to
/// `ws://` or `wss://` (TLS verified, `caFile` or the system's CAs), sends text messages and
/// receives whole text messages, each wait bounded. libwebsockets does the framing, masking,
/// fragmentation and the opening handshake; this type only queues and collects messages. Used by
/// one thread at a time.
final class WebSocketClient {
    /// The largest message accepted from the server (a bigger one ends the connection).
    static let maximumMessageSize = 16 * 1024 * 1024
    /// Messages received and not yet taken, at most this many (the server answers requests one by one).
    static let maximumQueuedMessages = 1024

    let target: String
    private let state = ConnectionState()
    private var context: OpaquePointer?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    /// C strings handed to libwebsockets, freed with the client.
    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// What the libwebsockets callback and the client share (same thread: lws_service calls back).
    final class ConnectionState {
        var connection: OpaquePointer?
        var established = false
        var closed = false
        var error: String?
        var outgoing: [[UInt8]] = []
        var incoming: [String] = []
        var partial: [UInt8] = []
    }

    /// Connects to `host:port` at `path`, waiting at most `timeout` seconds for the handshake.
    init(host: String, port: Int, path: String, useTLS: Bool, caFile: String?, target: String,
         timeout: Double) throws(SinkDeliveryError) {
        self.target = target
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        do { try DynamicLibrary.websockets.load() } catch {
            protocols.deallocate()
            throw .misconfigured(target: target, reason: "\(error.library.soname) cannot be loaded: \(error.reason)", fix: error.fix)
        }
        cws_set_log_level(0, nil)
        protocols[0].name = UnsafePointer(keep("ingestd"))
        protocols[0].callback = webSocketCallback
        protocols[0].rx_buffer_size = 64 * 1024
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.gid = -1
        info.uid = -1
        info.connect_timeout_secs = UInt32(max(1, timeout.rounded(.up)))
        info.user = Unmanaged.passUnretained(state).toOpaque()
        if useTLS {
            info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            if let caFile { info.client_ssl_ca_filepath = UnsafePointer(keep(caFile)) }
        }
        guard let context = cws_create_context(&info) else {
            release()
            throw .unreachable(target: target, reason: "cannot create a WebSocket client (libwebsockets)")
        }
        self.context = context
        var connect = lws_client_connect_info()
        connect.context = context
        connect.address = UnsafePointer(keep(host))
        connect.port = Int32(port)
        connect.path = UnsafePointer(keep(path))
        connect.host = UnsafePointer(keep(port == (useTLS ? 443 : 80) ? host : "\(host):\(port)"))
        connect.origin = connect.host
        connect.ssl_connection = useTLS ? Int32(LCCSCF_USE_SSL.rawValue) : 0
        connect.protocol = nil
        connect.ietf_version_or_minus_one = -1
        let wsi: OpaquePointer? = withUnsafeMutablePointer(to: &state.connection) { slot in
            connect.pwsi = slot
            return cws_client_connect_via_info(&connect)
        }
        guard wsi != nil || state.connection != nil else {
            close()
            throw .unreachable(target: target, reason: state.error ?? "cannot connect")
        }
        do {
            try serve(until: { $0.established }, timeout: timeout, waitingFor: "WebSocket handshake")
        } catch {
            close()
            throw Self.explained(error, useTLS: useTLS, caFile: caFile)
        }
    }

    /// libwebsockets names a failed TLS handshake only as "connect SSL err 1: …"; said in plain
    /// words with what to do (a certificate nobody vouched for is the usual cause).
    static func explained(_ error: SinkDeliveryError, useTLS: Bool, caFile: String?) -> SinkDeliveryError {
        guard useTLS, case .unreachable(let target, let reason) = error, reason.contains("SSL") else { return error }
        let fix = caFile == nil
            ? "a self-signed or private CA's certificate needs --ca-file PEM"
            : "check that --ca-file holds the CA of the server's certificate and that the certificate names this host"
        return .unreachable(target: target, reason: "the TLS handshake failed: the server's certificate was not accepted, or TLS is not spoken there (\(fix)); libwebsockets said: \(reason)")
    }

    private func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(text)!
        strings.append(copy)
        return copy
    }

    /// Runs libwebsockets until `condition` holds; throws when the connection fails or closes
    /// first, or after `timeout` seconds.
    private func serve(until condition: (ConnectionState) -> Bool, timeout: Double, waitingFor what: String) throws(SinkDeliveryError) {
        guard let context else { throw .unreachable(target: target, reason: "the connection is closed") }
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(state) {
            if let error = state.error { throw .unreachable(target: target, reason: error) }
            if state.closed { throw .unreachable(target: target, reason: "the server closed the connection") }
            if Date() >= deadline { throw .timedOut(target: target, seconds: timeout, waitingFor: what) }
            // lws_service sleeps until an event; the pending timeout wakes it (and closes the
            // connection) when the server stays silent.
            if let connection = state.connection {
                cws_set_timeout(connection, PENDING_TIMEOUT_USER_OK, Int32(max(1, deadline.timeIntervalSinceNow.rounded(.up))))
            }
            if cws_service(context, 250) < 0 { state.closed = true }
        }
    }

    /// Sends `text` as one text message; returns when libwebsockets has taken it.
    func send(_ text: String, timeout: Double) throws(SinkDeliveryError) {
        state.outgoing.append(Array(text.utf8))
        if let connection = state.connection { cws_callback_on_writable(connection) }
        try serve(until: { $0.outgoing.isEmpty }, timeout: timeout, waitingFor: "the WebSocket to take a message")
    }

    /// The next whole text message from the server, waiting at most `timeout` seconds.
    func receive(timeout: Double) throws(SinkDeliveryError) -> String {
        try serve(until: { !$0.incoming.isEmpty }, timeout: timeout, waitingFor: "an answer")
        return state.incoming.removeFirst()
    }

    /// Ends the connection and frees libwebsockets' context.
    func close() {
        if let context { cws_context_destroy(context) }
        context = nil
        state.connection = nil
        release()
    }

    private func release() {
        for string in strings { free(string) }
        strings = []
    }

    deinit {
        close()
        protocols.deallocate()
    }
}

/// libwebsockets' callback: the connection state is the context's user pointer.
private func webSocketCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                               _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = cws_get_context(wsi), let user = cws_context_user(context) else { return 0 }
    let state = Unmanaged<WebSocketClient.ConnectionState>.fromOpaque(user).takeUnretainedValue()
    switch reason {
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        state.established = true
        state.connection = wsi
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        let reason = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
        state.error = reason.isEmpty ? "connection failed" : reason
        state.connection = nil
    case LWS_CALLBACK_CLIENT_RECEIVE:
        if let input, length > 0 {
            state.partial.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        if state.partial.count > WebSocketClient.maximumMessageSize {
            state.error = "a message larger than \(WebSocketClient.maximumMessageSize) bytes"
            return -1
        }
        if cws_is_final_fragment(wsi) != 0, cws_remaining_packet_payload(wsi) == 0 {
            guard state.incoming.count < WebSocketClient.maximumQueuedMessages else {
                state.error = "more than \(WebSocketClient.maximumQueuedMessages) messages unanswered"
                return -1
            }
            state.incoming.append(String(decoding: state.partial, as: UTF8.self))
            state.partial = []
        }
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        guard !state.outgoing.isEmpty else { return 0 }
        let message = state.outgoing.removeFirst()
        let pre = cwebsockets_pre()
        var buffer = [UInt8](repeating: 0, count: pre + message.count)
        buffer.replaceSubrange(pre..., with: message)
        let written = buffer.withUnsafeMutableBufferPointer { pointer in
            cws_write(wsi, pointer.baseAddress! + pre, message.count, LWS_WRITE_TEXT)
        }
        if written < message.count {
            state.error = "the message could not be written"
            return -1
        }
        if !state.outgoing.isEmpty { cws_callback_on_writable(wsi) }
    case LWS_CALLBACK_CLIENT_CLOSED, LWS_CALLBACK_WSI_DESTROY:
        if state.connection == wsi || state.connection == nil { state.closed = true }
        state.connection = nil
    default:
        break
    }
    return 0
}

import CMicroHTTPD
import SinkLibraries
import Foundation

/// An address to listen on, `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public var isIPv6: Bool

    /// Parses `HOST:PORT` with a numeric IPv4 or bracketed IPv6 host; `localhost` means 127.0.0.1.
    public init(_ text: String) throws(ListenAddressError) {
        guard let colon = text.lastIndex(of: ":") else { throw .malformed(text) }
        var host = String(text[..<colon])
        guard let port = UInt16(text[text.index(after: colon)...]) else { throw .malformed(text) }
        var v6 = false
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            v6 = true
        }
        if host == "localhost" { host = "127.0.0.1" }
        var scratch = in6_addr()
        let family = v6 ? AF_INET6 : AF_INET
        guard inet_pton(family, host, &scratch) == 1 else { throw .malformed(text) }
        self.host = host
        self.port = port
        self.isIPv6 = v6
    }

    /// Whether only this machine can connect (127.0.0.0/8 or ::1).
    public var isLoopback: Bool { isIPv6 ? host == "::1" : host.hasPrefix("127.") }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Why an address to listen on was refused.
public enum ListenAddressError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    public var description: String {
        switch self {
        case .malformed(let text):
            "'\(text)' is not an address to listen on; expected HOST:PORT with a numeric host, e.g. 127.0.0.1:8080 or [::1]:8080"
        }
    }
}

/// A request as the handler sees it: the method, the path, decoded query arguments, headers
/// (names lower-cased) and the body (at most the limit; `bodyTooLarge` when more was sent).
public struct HTTPRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [String: String]
    /// Query arguments given more than once or without a value.
    public var malformedQueryKeys: [String]
    public var headers: [String: String]
    public var body: [UInt8]
    public var bodyTooLarge: Bool

    public init(method: String, path: String, query: [String: String] = [:], malformedQueryKeys: [String] = [],
                headers: [String: String] = [:], body: [UInt8] = [], bodyTooLarge: Bool = false) {
        self.method = method
        self.path = path
        self.query = query
        self.malformedQueryKeys = malformedQueryKeys
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
    }

    /// The body as `application/x-www-form-urlencoded` fields.
    public var formFields: [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            guard let key = parts.first else { continue }
            fields[decode(key)] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    /// The cookie `name` of the `Cookie` header.
    public func cookie(_ name: String) -> String? {
        guard let header = headers["cookie"] else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == name { return String(pair[1]) }
        }
        return nil
    }
}

/// A response: status, content type, body and extra headers.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var headers: [(String, String)]

    public init(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public init(status: Int, contentType: String, text: String, headers: [(String, String)] = []) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8), headers: headers)
    }
}

/// The bounds of the server: how many connections at once, how long an idle or slow connection
/// may stay, how much memory a connection's request line and headers may take, how large a body is.
public struct HTTPServerLimits: Sendable {
    public var connections: UInt32 = 64
    public var idleTimeoutSeconds: UInt32 = 10
    /// Per connection, for the request line and headers (larger ones are answered 431 by libmicrohttpd).
    public var connectionMemoryBytes = 32 * 1024
    public var bodyBytes = 16 * 1024
    public var threads: UInt32 = 2
    public init() {}
}

/// Why the server did not start.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    case cannotListen(String)
    /// libmicrohttpd could not be opened (the loader's message, naming the Debian package).
    case libraryMissing(String)
    public var description: String {
        switch self {
        case .libraryMissing(let message): message
        case .cannotListen(let address):
            "cannot listen on \(address) (is the port in use, or the address not on this machine?)"
        }
    }
}

/// An HTTP/1.1 server on libmicrohttpd (it parses requests; this only routes them to `handler`):
/// an internal thread pool, bounded connections, idle timeout, header memory and body size.
public final class HTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    private let handler: Handler
    private let limits: HTTPServerLimits
    private var daemon: OpaquePointer?
    private let lock = NSLock()
    /// The port bound (the one asked for, or the one the system chose for port 0).
    public private(set) var port: UInt16 = 0

    public init(address: ListenAddress, limits: HTTPServerLimits = HTTPServerLimits(), handler: @escaping Handler) throws(HTTPServerError) {
        self.handler = handler
        self.limits = limits
        do { try DynamicLibrary.microhttpd.load() } catch { throw .libraryMissing(error.description) }
        let flags = cmhd_flags(address.isIPv6 ? 1 : 0)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started: OpaquePointer? = Self.withSocketAddress(address) { socketAddress in
            cmhd_start(flags, socketAddress, limits.connections, 0, limits.idleTimeoutSeconds, limits.connectionMemoryBytes,
                       limits.threads, accessHandler, context, completionHandler, nil)
        }
        guard let started else { throw .cannotListen(address.description) }
        daemon = started
        port = UInt16(clamping: max(0, Int(cmhd_port(started))))
    }

    deinit { stop() }

    /// Stops listening and waits for the threads to end.
    public func stop() {
        lock.lock()
        let running = daemon
        daemon = nil
        lock.unlock()
        if let running { MHD_stop_daemon(running) }
    }

    private static func withSocketAddress<T>(_ address: ListenAddress, _ body: (UnsafePointer<sockaddr>) -> T) -> T {
        if address.isIPv6 {
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = address.port.bigEndian
            _ = inet_pton(AF_INET6, address.host, &socketAddress.sin6_addr)
            return withUnsafePointer(to: &socketAddress) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = address.port.bigEndian
        _ = inet_pton(AF_INET, address.host, &socketAddress.sin_addr)
        return withUnsafePointer(to: &socketAddress) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
    }

    /// One request's state between libmicrohttpd's calls: the body read so far.
    final class PendingRequest {
        var body: [UInt8] = []
        var tooLarge = false
    }

    fileprivate func handle(connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
                            uploadSize: UnsafeMutablePointer<Int>, state pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let raw = pointer.pointee else {
            pointer.pointee = Unmanaged.passRetained(PendingRequest()).toOpaque()
            return MHD_Result.YES
        }
        let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let upload, !pending.tooLarge {
                if pending.body.count + uploadSize.pointee > limits.bodyBytes {
                    pending.tooLarge = true
                    pending.body = []
                } else {
                    upload.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        pending.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return MHD_Result.YES
        }
        var request = HTTPRequest(method: method, path: url, body: pending.body, bodyTooLarge: pending.tooLarge)
        let collected = Self.values(connection, kind: MHD_ValueKind.HEADER_KIND)
        for (key, value) in collected { request.headers[key.lowercased()] = value ?? "" }
        for (key, value) in Self.values(connection, kind: MHD_ValueKind.GET_ARGUMENT_KIND) {
            if let value, request.query[key] == nil {
                request.query[key] = value
            } else {
                request.malformedQueryKeys.append(key)
            }
        }
        let response = handler(request)
        return Self.send(response, on: connection)
    }

    private final class ValueCollector {
        var pairs: [(String, String?)] = []
    }

    private static func values(_ connection: OpaquePointer, kind: MHD_ValueKind) -> [(String, String?)] {
        let collector = ValueCollector()
        let context = Unmanaged.passUnretained(collector).toOpaque()
        _ = MHD_get_connection_values(connection, kind, { context, _, key, value in
            guard let context, let key else { return MHD_Result.YES }
            let collector = Unmanaged<ValueCollector>.fromOpaque(context).takeUnretainedValue()
            guard collector.pairs.count < 256 else { return MHD_Result.NO }
            collector.pairs.append((String(cString: key), value.map { String(cString: $0) }))
            return MHD_Result.YES
        }, context)
        return withExtendedLifetime(collector) { collector.pairs }
    }

    private static func send(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let created = response.body.withUnsafeBytes { bytes in cmhd_response_copy(bytes.count, bytes.baseAddress) }
        guard let created else { return MHD_Result.NO }
        defer { MHD_destroy_response(created) }
        _ = MHD_add_response_header(created, "Content-Type", response.contentType)
        for (name, value) in response.headers {
            _ = MHD_add_response_header(created, name, value)
        }
        return MHD_queue_response(connection, UInt32(response.status), created)
    }

    fileprivate static func finish(_ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let state, let raw = state.pointee else { return }
        Unmanaged<PendingRequest>.fromOpaque(raw).release()
        state.pointee = nil
    }
}

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, upload, uploadSize, state in
    guard let context, let connection, let url, let method, let uploadSize, let state else { return MHD_Result.NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    return server.handle(connection: connection, url: String(cString: url), method: String(cString: method), upload: upload,
                         uploadSize: uploadSize, state: state)
}

private let completionHandler: MHD_RequestCompletedCallback = { _, _, state, _ in
    HTTPServer.finish(state)
}

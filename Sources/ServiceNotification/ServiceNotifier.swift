import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tells the service manager (systemd, `Type=notify`) what the daemon is doing, with the
/// datagram protocol of `sd_notify(3)`: newline-separated `KEY=VALUE` assignments in one
/// datagram sent to the `AF_UNIX` socket named by `NOTIFY_SOCKET` (a path, or an abstract
/// socket when it starts with `@`).
///
/// ```swift
/// if let notifier = try ServiceNotifier(environment: ProcessInfo.processInfo.environment) {
///     try notifier.send([.ready, .status("listening")])
/// }
/// ```
///
/// Sending never blocks (the socket is non-blocking); a service manager that went away makes
/// `send` throw, which callers log and otherwise ignore.
public final class ServiceNotifier: Sendable {
    /// One assignment of the protocol.
    public enum Message: Sendable, Equatable {
        /// `READY=1`: start-up is finished.
        case ready
        /// `STATUS=…`: a one-line description of the current state (newlines become spaces).
        case status(String)
        /// `STOPPING=1`: shutdown has begun.
        case stopping
        /// `RELOADING=1`: a configuration reload has begun (`ready` ends it).
        case reloading
        /// `WATCHDOG=1`: the daemon is alive (within `WatchdogSec`).
        case watchdog

        /// The `KEY=VALUE` text.
        public var assignment: String {
            switch self {
            case .ready: "READY=1"
            case .status(let text): "STATUS=" + text.map { $0.isNewline ? " " : $0 }.reduce(into: "") { $0.append($1) }
            case .stopping: "STOPPING=1"
            case .reloading: "RELOADING=1"
            case .watchdog: "WATCHDOG=1"
            }
        }
    }

    /// The socket named by `NOTIFY_SOCKET`, as given.
    public let socketName: String
    /// How often the service manager expects `WATCHDOG=1` (`WATCHDOG_USEC`), when it does and
    /// the watchdog is this process's (`WATCHDOG_PID` absent or this process's id).
    public let watchdogInterval: Duration?
    private let descriptor: Int32

    /// `nil` when `NOTIFY_SOCKET` is unset or empty (not started by a service manager that wants
    /// notifications). Throws when it is set but unusable.
    public convenience init?(environment: [String: String]) throws {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        try self.init(socketName: name, watchdogInterval: Self.watchdogInterval(environment: environment))
    }

    /// A notifier sending to `socketName` (a path, or `@name` for an abstract socket).
    public init(socketName: String, watchdogInterval: Duration? = nil) throws {
        guard socketName.hasPrefix("/") || socketName.hasPrefix("@") else {
            throw ServiceNotifierError.unsupportedSocket(socketName)
        }
        guard socketName.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw ServiceNotifierError.socketNameTooLong(socketName)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ServiceNotifierError.socketFailed(errno: errno) }
        self.socketName = socketName
        self.watchdogInterval = watchdogInterval
        self.descriptor = fd
    }

    deinit { close(descriptor) }

    /// `WATCHDOG_USEC` as a duration, when set, positive and meant for this process.
    public static func watchdogInterval(environment: [String: String], processID: Int32 = getpid()) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], !pid.isEmpty, Int32(pid) != processID { return nil }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// Sends `messages` as one datagram.
    public func send(_ messages: [Message]) throws {
        let text = messages.map(\.assignment).joined(separator: "\n")
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var nameBytes = Array(socketName.utf8)
        let abstract = nameBytes.first == UInt8(ascii: "@")
        if abstract { nameBytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: nameBytes)
        }
        // A path includes its terminating NUL; an abstract name is exactly its bytes.
        let length = MemoryLayout<sa_family_t>.size + nameBytes.count + (abstract ? 0 : 1)
        let sent = Array(text.utf8).withUnsafeBytes { body in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), $0, socklen_t(length))
                }
            }
        }
        guard sent == text.utf8.count else { throw ServiceNotifierError.sendFailed(socketName, errno: errno) }
    }
}

/// Why a notification could not be sent.
public enum ServiceNotifierError: Error, Equatable, CustomStringConvertible {
    /// `NOTIFY_SOCKET` is neither a path nor an abstract socket name (e.g. a `vsock:` address).
    case unsupportedSocket(String)
    /// The name does not fit in a `sockaddr_un`.
    case socketNameTooLong(String)
    /// `socket(2)` failed.
    case socketFailed(errno: Int32)
    /// `sendto(2)` to the socket failed.
    case sendFailed(String, errno: Int32)

    public var description: String {
        switch self {
        case .unsupportedSocket(let name): "NOTIFY_SOCKET=\(name): only a path or an @abstract socket is supported"
        case .socketNameTooLong(let name): "NOTIFY_SOCKET=\(name): longer than a unix socket address allows"
        case .socketFailed(let code): "cannot make a unix datagram socket: \(String(cString: strerror(code)))"
        case .sendFailed(let name, let code): "cannot notify the service manager at \(name): \(String(cString: strerror(code)))"
        }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The receiving end systemd holds: a real unix datagram socket bound to a path or an abstract name.
public final class NotifySocket {
    public let name: String
    private let descriptor: Int32
    private let path: String?

    /// Binds `name` (a path, or `@name` for the abstract namespace).
    public init(name: String) throws {
        self.name = name
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { close(descriptor); throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        path = abstract ? nil : name
        // Each receive waits at most a second; callers bound their loops by a deadline.
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
        if let path { unlink(path) }
    }

    /// The next datagram's text, or nil when none came within a second.
    public func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Datagrams until one contains `assignment` or `seconds` pass; all of them, in order.
    public func receive(until assignment: String, seconds: Double) -> [String] {
        var received: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard let datagram = receive() else { continue }
            received.append(datagram)
            if datagram.split(separator: "\n").contains(Substring(assignment)) { break }
        }
        return received
    }
}


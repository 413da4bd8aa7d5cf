import Foundation
import Testing

/// A TCP port on 127.0.0.1 nobody listens on right now (bound once, then released).
public func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #expect(fd >= 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
        }
    }
    try #require(bound, "cannot bind a socket on 127.0.0.1")
    return Int(UInt16(bigEndian: address.sin_port))
}

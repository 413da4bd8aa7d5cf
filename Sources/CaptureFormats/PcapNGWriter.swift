#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// close(2), reachable from a type that has its own `close()`.
private func posixClose(_ descriptor: Int32) { _ = close(descriptor) }

/// write(2), reachable from a type that has its own `write`.
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

/// Writes pcapng files with one interface of one link type (e.g. usbmon, LINKTYPE 220), to a
/// file or into memory, in little-endian byte order.
///
/// The file is one Section Header Block (version 1.0, section length unknown), one Interface
/// Description Block (snap length 0 = unlimited, default microsecond timestamps) and then one
/// Enhanced Packet Block per packet on interface 0. Writes are buffered; call ``flush()`` to
/// push them to the file and ``close()`` at the end.
public final class PcapNGWriter {
    /// The link type of the interface.
    public let linkType: Int
    private var fileDescriptor: Int32
    private let path: String?
    private var pending: [UInt8] = []
    private var memory: [UInt8] = []
    private let flushThreshold = 64 * 1024

    /// Creates (or truncates) a file, mode 0600, and writes the section header and interface.
    public init(path: String, linkType: Int) throws(CaptureError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .cannotWrite(path: path, errno: errno) }
        fileDescriptor = descriptor
        self.path = path
        self.linkType = linkType
        pending = Self.header(linkType: linkType)
    }

    /// Creates a writer that collects the file in memory; read it back with ``bytes``.
    public init(linkType: Int) {
        fileDescriptor = -1
        path = nil
        self.linkType = linkType
        memory = Self.header(linkType: linkType)
    }

    deinit {
        if fileDescriptor >= 0 {
            try? flush()
            posixClose(fileDescriptor)
        }
    }

    /// The whole file so far, for a writer created with ``init(linkType:)``.
    public var bytes: [UInt8] { memory }

    /// Appends one packet as an Enhanced Packet Block.
    /// - Parameters:
    ///   - timestamp: microseconds since the Unix epoch.
    ///   - packet: the link-layer frame (for usbmon: header and data).
    ///   - originalLength: the frame's length on the wire when `packet` holds only a prefix.
    public func write(timestamp: Int64, packet: some Collection<UInt8>, originalLength: Int? = nil) throws(CaptureError) {
        if fileDescriptor >= 0 {
            Self.appendPacketBlock(to: &pending, timestamp: timestamp, packet: packet, originalLength: originalLength)
            if pending.count >= flushThreshold { try flush() }
        } else {
            Self.appendPacketBlock(to: &memory, timestamp: timestamp, packet: packet, originalLength: originalLength)
        }
    }

    /// Writes buffered blocks to the file.
    public func flush() throws(CaptureError) {
        guard fileDescriptor >= 0, !pending.isEmpty else { return }
        var written = 0
        while written < pending.count {
            let start = written
            let result = pending.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return posixWrite(fileDescriptor, base + start, raw.count - start)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw .cannotWrite(path: path ?? "", errno: errno)
            }
            written += result
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes the file; later writes go nowhere.
    public func close() throws(CaptureError) {
        guard fileDescriptor >= 0 else { return }
        defer {
            posixClose(fileDescriptor)
            fileDescriptor = -1
        }
        try flush()
    }

    /// Section Header Block (28 bytes, no options) and Interface Description Block (20 bytes).
    static func header(linkType: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        append(UInt32(0x0A0D_0D0A), to: &bytes)          // block type
        append(UInt32(28), to: &bytes)                   // block length
        append(UInt32(0x1A2B_3C4D), to: &bytes)          // byte-order magic
        append(UInt16(1), to: &bytes)                    // major version
        append(UInt16(0), to: &bytes)                    // minor version
        append(UInt64.max, to: &bytes)                   // section length: not given
        append(UInt32(28), to: &bytes)
        append(UInt32(1), to: &bytes)                    // Interface Description Block
        append(UInt32(20), to: &bytes)
        append(UInt16(truncatingIfNeeded: linkType), to: &bytes)
        append(UInt16(0), to: &bytes)                    // reserved
        append(UInt32(0), to: &bytes)                    // snap length: unlimited
        append(UInt32(20), to: &bytes)
        return bytes
    }

    private static func appendPacketBlock(to output: inout [UInt8], timestamp: Int64, packet: some Collection<UInt8>,
                                          originalLength: Int?) {
        let captured = packet.count
        let padding = (4 - captured % 4) % 4
        let blockLength = UInt32(truncatingIfNeeded: 32 + captured + padding)
        let raw = UInt64(bitPattern: timestamp)
        append(UInt32(6), to: &output)                   // Enhanced Packet Block
        append(blockLength, to: &output)
        append(UInt32(0), to: &output)                   // interface 0
        append(UInt32(truncatingIfNeeded: raw >> 32), to: &output)
        append(UInt32(truncatingIfNeeded: raw), to: &output)
        append(UInt32(truncatingIfNeeded: captured), to: &output)
        append(UInt32(truncatingIfNeeded: max(captured, originalLength ?? captured)), to: &output)
        output.append(contentsOf: packet)
        output.append(contentsOf: repeatElement(0, count: padding))
        append(blockLength, to: &output)
    }

    private static func append<Value: FixedWidthInteger>(_ value: Value, to output: inout [UInt8]) {
        var remaining = value.littleEndian
        withUnsafeBytes(of: &remaining) { output.append(contentsOf: $0) }
    }
}

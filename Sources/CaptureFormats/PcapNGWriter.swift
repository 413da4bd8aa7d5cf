#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    private var sink: CaptureFileSink

    /// Creates (or truncates) a file, mode 0600, and writes the section header and interface.
    public init(path: String, linkType: Int) throws(CaptureError) {
        sink = try CaptureFileSink(path: path)
        self.linkType = linkType
        try sink.append { $0.append(contentsOf: Self.header(linkType: linkType)) }
    }

    /// Creates a writer that collects the file in memory; read it back with ``bytes``.
    public init(linkType: Int) {
        sink = CaptureFileSink()
        self.linkType = linkType
        try? sink.append { $0.append(contentsOf: Self.header(linkType: linkType)) }
    }

    deinit {
        try? sink.close()
    }

    /// The whole file so far, for a writer created with ``init(linkType:)``.
    public var bytes: [UInt8] { sink.memory }

    /// Appends one packet as an Enhanced Packet Block.
    /// - Parameters:
    ///   - timestamp: microseconds since the Unix epoch.
    ///   - packet: the link-layer frame (for usbmon: header and data).
    ///   - originalLength: the frame's length on the wire when `packet` holds only a prefix.
    public func write(timestamp: Int64, packet: some Collection<UInt8>, originalLength: Int? = nil) throws(CaptureError) {
        try sink.append { output in
            Self.appendPacketBlock(to: &output, timestamp: timestamp, packet: packet, originalLength: originalLength)
        }
    }

    /// Writes buffered blocks to the file.
    public func flush() throws(CaptureError) { try sink.flush() }

    /// Flushes and closes the file; later writes go nowhere.
    public func close() throws(CaptureError) { try sink.close() }

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

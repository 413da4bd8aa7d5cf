import BLEWire
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes btsnoop files with datalink 1002 (HCI UART / H4), the layout of Android's
/// `btsnoop_hci.log`, to a file or into memory.
///
/// Flags: bit0 direction (1 = controller to host), bit1 command/event (1) versus data (0).
/// Writes are buffered; call ``flush()`` to push them to the file and ``close()`` at the end.
public final class BTSnoopWriter {
    private var sink: CaptureFileSink

    /// Creates (or truncates) a file, mode 0600, and writes the btsnoop header.
    public init(path: String) throws(CaptureError) {
        sink = try CaptureFileSink(path: path)
        try sink.append { $0.append(contentsOf: Self.header) }
    }

    /// Creates a writer that collects the file in memory; read it back with ``bytes``.
    public init() {
        sink = CaptureFileSink()
        try? sink.append { $0.append(contentsOf: Self.header) }
    }

    deinit {
        try? sink.close()
    }

    /// The whole file so far, for a writer created with ``init()``.
    public var bytes: [UInt8] { sink.memory }

    /// The 16-byte file header: magic, version 1, datalink 1002.
    static let header: [UInt8] = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]

    /// Appends one HCI packet.
    /// - Parameters:
    ///   - type: the packet indicator, written as the record's first byte.
    ///   - direction: host to controller (`.sent`) or controller to host (`.received`).
    ///   - timestamp: microseconds since the Unix epoch.
    ///   - packet: the HCI packet without the indicator byte.
    public func write(type: HCIPacketType, direction: CaptureDirection, timestamp: Int64,
                      packet: some Collection<UInt8>) throws(CaptureError) {
        let length = UInt32(truncatingIfNeeded: packet.count + 1)
        var flags: UInt32 = direction == .received ? 1 : 0
        if type == .command || type == .event { flags |= 2 }
        let rawTimestamp = UInt64(bitPattern: timestamp &+ BTSnoopDatalink.epochOffset)
        try sink.append { output in
            Self.appendRecord(to: &output, length: length, flags: flags, timestamp: rawTimestamp, type: type,
                              packet: packet)
        }
    }

    /// Appends an HCI record read from another capture (other records are ignored).
    /// A record without a direction is written as `.received` unless it is a command.
    public func write(_ record: CaptureRecord) throws(CaptureError) {
        guard case .hci(let type) = record.content else { return }
        let direction = record.direction ?? (type == .command ? .sent : .received)
        try write(type: type, direction: direction, timestamp: record.timestamp, packet: record.bytes)
    }

    /// Writes buffered records to the file.
    public func flush() throws(CaptureError) { try sink.flush() }

    /// Flushes and closes the file; later writes go nowhere.
    public func close() throws(CaptureError) { try sink.close() }

    private static func appendRecord(to output: inout [UInt8], length: UInt32, flags: UInt32, timestamp: UInt64,
                                     type: HCIPacketType, packet: some Collection<UInt8>) {
        appendBigEndian(length, to: &output)  // original length
        appendBigEndian(length, to: &output)  // included length
        appendBigEndian(flags, to: &output)
        appendBigEndian(UInt32(0), to: &output)  // cumulative drops
        appendBigEndian(timestamp, to: &output)
        output.append(type.rawValue)
        output.append(contentsOf: packet)
    }

    private static func appendBigEndian<Value: FixedWidthInteger>(_ value: Value, to output: inout [UInt8]) {
        var shift = Value.bitWidth - 8
        while shift >= 0 {
            output.append(UInt8(truncatingIfNeeded: value >> shift))
            shift -= 8
        }
    }
}

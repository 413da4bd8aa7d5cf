import BLEWire
/// The btsnoop datalink codes this package understands.
public enum BTSnoopDatalink {
    /// HCI packets without the indicator byte; the type comes from the flags.
    public static let hciUnencapsulated = 1001
    /// HCI UART (H4): each record starts with the packet indicator byte (Android `btsnoop_hci.log`).
    public static let hciUART = 1002
    /// BlueZ monitor (`btmon -w`): flags hold the controller index (high 16 bits) and an opcode.
    public static let bluezMonitor = 2001

    /// The datalinks ``BTSnoopReader`` accepts.
    public static let supported: Set<Int> = [hciUnencapsulated, hciUART, bluezMonitor]

    /// Microseconds from 0000-01-01 (the btsnoop epoch) to 1970-01-01.
    public static let epochOffset: Int64 = 0x00DC_DDB3_0F2F_8000
}

/// Reads btsnoop files (datalinks 1001, 1002, 2001) record by record.
///
/// File header: `btsnoop\0`, version (u32 BE, 1), datalink (u32 BE). Each record: original
/// length, included length, flags, cumulative drops (u32 BE each), timestamp (i64 BE,
/// microseconds since year 0), then the included bytes.
public final class BTSnoopReader: CaptureFormatReader {
    /// The largest record an HCI packet can need: indicator + ACL header + 65535 data bytes.
    public static let maximumHCIRecordLength = 1 + 4 + 65_535
    /// The largest BlueZ monitor record accepted (non-HCI monitor payloads such as notes).
    public static let maximumMonitorRecordLength = 1 << 20

    public var format: CaptureFormat { .btsnoop }
    /// The datalink from the file header.
    public let datalink: Int
    public private(set) var warnings: [CaptureWarning] = []
    public private(set) var skipped: [CaptureSkipReason: Int] = [:]

    private let input: ChunkedInput

    public var bytesRead: Int { input.offset }
    private let maximumRecordLength: Int
    private var finished = false

    public init(input: ChunkedInput) throws(CaptureError) {
        self.input = input
        try input.requireHeader(16, "shorter than the 16-byte btsnoop header")
        guard input.slice(at: 0, count: 8).elementsEqual("btsnoop\0".utf8) else {
            throw .badHeader(offset: 0, reason: "magic is not \"btsnoop\\0\"")
        }
        let version = input.uint32(at: 8, bigEndian: true)
        guard version == 1 else { throw .badHeader(offset: 8, reason: "btsnoop version \(version), expected 1") }
        let datalink = Int(input.uint32(at: 12, bigEndian: true))
        guard BTSnoopDatalink.supported.contains(datalink) else { throw .unsupportedDatalink(datalink) }
        self.datalink = datalink
        maximumRecordLength = datalink == BTSnoopDatalink.bluezMonitor
            ? Self.maximumMonitorRecordLength : Self.maximumHCIRecordLength
        input.advance(16)
    }

    public func next() throws(CaptureError) -> CaptureRecord? {
        while !finished {
            let recordOffset = input.offset
            guard try input.fill(24) else {
                finish(truncatedAt: recordOffset)
                return nil
            }
            let (originalLength, includedLength, flags, rawTimestamp) = input.withUnreadBytes { header in
                (Int(UInt32(bigEndian: header.loadUnaligned(fromByteOffset: 0, as: UInt32.self))),
                 Int(UInt32(bigEndian: header.loadUnaligned(fromByteOffset: 4, as: UInt32.self))),
                 UInt32(bigEndian: header.loadUnaligned(fromByteOffset: 8, as: UInt32.self)),
                 Int64(bigEndian: header.loadUnaligned(fromByteOffset: 16, as: Int64.self)))
            }
            guard includedLength <= originalLength, includedLength <= maximumRecordLength else {
                throw .impossibleRecordLength(offset: recordOffset, length: includedLength)
            }
            guard try input.fill(24 + includedLength) else {
                finish(truncatedAt: recordOffset)
                return nil
            }
            let payload = input.slice(at: 24, count: includedLength)
            input.advance(24 + includedLength)
            let timestamp = rawTimestamp &- BTSnoopDatalink.epochOffset
            if let record = record(payload: payload, flags: flags, timestamp: timestamp,
                                   originalLength: originalLength, offset: recordOffset) {
                return record
            }
        }
        return nil
    }

    private func record(payload: ArraySlice<UInt8>, flags: UInt32, timestamp: Int64, originalLength: Int,
                        offset: Int) -> CaptureRecord? {
        let received = flags & 0x01 != 0
        switch datalink {
        case BTSnoopDatalink.hciUART:
            guard let indicator = payload.first else {
                skipped[.tooShortForLinkHeader, default: 0] += 1
                return nil
            }
            return CaptureRecord(
                timestamp: timestamp, direction: received ? .received : .sent,
                content: .hci(HCIPacketType(rawValue: indicator)), bytes: payload.dropFirst(),
                originalLength: max(0, originalLength - 1), fileOffset: offset)
        case BTSnoopDatalink.hciUnencapsulated:
            let isCommandOrEvent = flags & 0x02 != 0
            let type: HCIPacketType = isCommandOrEvent ? (received ? .event : .command) : .acl
            return CaptureRecord(
                timestamp: timestamp, direction: received ? .received : .sent, content: .hci(type),
                bytes: payload, originalLength: originalLength, fileOffset: offset)
        default:
            let opcode = UInt16(truncatingIfNeeded: flags)
            guard let (type, direction) = monitorPacket(opcode: opcode) else {
                skipped[.monitorOpcode(opcode), default: 0] += 1
                return nil
            }
            return CaptureRecord(
                timestamp: timestamp, direction: direction, content: .hci(type), bytes: payload,
                originalLength: originalLength, fileOffset: offset,
                controllerIndex: UInt16(truncatingIfNeeded: flags >> 16))
        }
    }

    private func finish(truncatedAt offset: Int) {
        if input.available > 0 {
            warnings.append(.truncatedFinalRecord(offset: offset))
            input.consumeAll()
        }
        finished = true
    }
}

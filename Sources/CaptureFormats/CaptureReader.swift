import BLEWire
/// The capture file formats this package reads.
public enum CaptureFormat: String, Hashable, Sendable, CaseIterable {
    /// btsnoop (RFC 1761 layout as used by Android `btsnoop_hci.log` and `btmon -w`).
    case btsnoop
    /// Classic libpcap (microsecond or nanosecond magic, either byte order).
    case pcap
    /// pcapng (either byte order, per section).
    case pcapng

    /// Identifies a format from the first bytes of a file (8 are enough); nil if none matches.
    public static func sniff(_ prefix: some Collection<UInt8>) -> CaptureFormat? {
        let head = Array(prefix.prefix(8))
        if head.count >= 8 && head == Array("btsnoop\0".utf8) { return .btsnoop }
        guard head.count >= 4 else { return nil }
        switch (head[0], head[1], head[2], head[3]) {
        case (0x0A, 0x0D, 0x0D, 0x0A): return .pcapng
        case (0xD4, 0xC3, 0xB2, 0xA1), (0xA1, 0xB2, 0xC3, 0xD4), (0x4D, 0x3C, 0xB2, 0xA1), (0xA1, 0xB2, 0x3C, 0x4D):
            return .pcap
        default: return nil
        }
    }
}

/// A streaming reader of one capture file: records come out one at a time, in file order,
/// with their original timestamps, using memory bounded by the largest record.
public protocol CaptureReader: AnyObject {
    /// The file format.
    var format: CaptureFormat { get }
    /// Problems that did not stop reading (e.g. a truncated final record), in file order.
    var warnings: [CaptureWarning] { get }
    /// Records or blocks passed over without being yielded, counted by reason.
    var skipped: [CaptureSkipReason: Int] { get }
    /// The next record, or nil at the end of the file. Errors name the byte offset.
    func next() throws(CaptureError) -> CaptureRecord?
    /// Bytes of the file read so far (the offset after the last record yielded): progress.
    var bytesRead: Int { get }
}

/// A reader of one capture format, opened on a file or on bytes in memory: the one opening every
/// format shares. `init(input:)` checks the format's header.
public protocol CaptureFormatReader: CaptureReader {
    /// Reads the format from `input`, starting with its header.
    init(input: ChunkedInput) throws(CaptureError)
}

extension CaptureFormatReader {
    /// Opens a capture file of this format.
    public init(path: String) throws(CaptureError) {
        try self.init(input: ChunkedInput(path: path))
    }

    /// Reads a capture of this format held in memory.
    public init(bytes: [UInt8]) throws(CaptureError) {
        try self.init(input: ChunkedInput(bytes: bytes))
    }
}

/// Opening capture files whatever their format.
public enum CaptureFile {
    /// Opens a file and picks the reader from its magic bytes.
    public static func open(path: String) throws(CaptureError) -> any CaptureReader {
        try reader(for: ChunkedInput(path: path))
    }

    /// Reads a capture held in memory (tests, fuzzing) and picks the reader from its magic bytes.
    public static func reader(bytes: [UInt8]) throws(CaptureError) -> any CaptureReader {
        try reader(for: ChunkedInput(bytes: bytes))
    }

    static func reader(for input: ChunkedInput) throws(CaptureError) -> any CaptureReader {
        _ = try input.fill(8)
        let prefix = input.slice(at: 0, count: min(8, input.available))
        switch CaptureFormat.sniff(prefix) {
        case .btsnoop: return try BTSnoopReader(input: input)
        case .pcap: return try PcapReader(input: input)
        case .pcapng: return try PcapNGReader(input: input)
        case nil:
            let shown = prefix.prefix(4).map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return hex.count == 1 ? "0" + hex : hex
            }.joined(separator: " ")
            throw .badHeader(offset: 0, reason: "unrecognised magic [\(shown)]: not btsnoop, pcap or pcapng")
        }
    }
}

/// Link types (tcpdump.org LINKTYPE_ values) carried by pcap and pcapng files.
public enum LinkType {
    /// Bluetooth HCI H4 without pseudo-header.
    public static let bluetoothHCIH4 = 187
    /// Linux usbmon, 48-byte header.
    public static let usbLinux = 189
    /// Bluetooth HCI H4 with a 4-byte big-endian direction pseudo-header.
    public static let bluetoothHCIH4WithPHDR = 201
    /// Linux usbmon, 64-byte (memory-mapped) header.
    public static let usbLinuxMMapped = 220
    /// BlueZ monitor: 2-byte adapter index and 2-byte opcode (big-endian), then the payload.
    public static let bluetoothLinuxMonitor = 254

    /// The link types the pcap and pcapng readers accept.
    public static let supported: Set<Int> = [
        bluetoothHCIH4, usbLinux, bluetoothHCIH4WithPHDR, usbLinuxMMapped, bluetoothLinuxMonitor,
    ]
}

/// Maps a BlueZ monitor opcode (btsnoop datalink 2001, LINKTYPE 254) to an HCI packet;
/// nil for opcodes that carry no HCI packet (index added/removed, notes, logging ...).
func monitorPacket(opcode: UInt16) -> (HCIPacketType, CaptureDirection)? {
    switch opcode {
    case 2: (.command, .sent)
    case 3: (.event, .received)
    case 4: (.acl, .sent)
    case 5: (.acl, .received)
    case 6: (.sco, .sent)
    case 7: (.sco, .received)
    case 18: (.iso, .sent)
    case 19: (.iso, .received)
    default: nil
    }
}

/// A pcap/pcapng packet as a record, or why it yields none.
enum LinkLayerOutcome {
    case record(CaptureRecord)
    case skip(CaptureSkipReason)
}

/// Turns the payload of a pcap/pcapng packet into a record according to its link type.
/// Returns nil (and the reason) when the payload is too short for its link-layer header.
func linkLayerRecord(
    linkType: Int, payload: ArraySlice<UInt8>, timestamp: Int64, originalLength: Int, fileOffset: Int
) -> LinkLayerOutcome {
    var bytes = payload
    var direction: CaptureDirection?
    var controllerIndex: UInt16 = 0
    let type: HCIPacketType
    switch linkType {
    case LinkType.bluetoothHCIH4WithPHDR:
        guard bytes.count >= 5 else { return .skip(.tooShortForLinkHeader) }
        let start = bytes.startIndex
        direction = bytes[start + 3] & 0x01 == 0 ? .sent : .received
        type = HCIPacketType(rawValue: bytes[start + 4])
        bytes = bytes.dropFirst(5)
    case LinkType.bluetoothHCIH4:
        guard let first = bytes.first else { return .skip(.tooShortForLinkHeader) }
        type = HCIPacketType(rawValue: first)
        if type == .command { direction = .sent } else if type == .event { direction = .received }
        bytes = bytes.dropFirst(1)
    case LinkType.bluetoothLinuxMonitor:
        guard bytes.count >= 4 else { return .skip(.tooShortForLinkHeader) }
        let start = bytes.startIndex
        controllerIndex = UInt16(bytes[start]) << 8 | UInt16(bytes[start + 1])
        let opcode = UInt16(bytes[start + 2]) << 8 | UInt16(bytes[start + 3])
        guard let (monitorType, monitorDirection) = monitorPacket(opcode: opcode) else {
            return .skip(.monitorOpcode(opcode))
        }
        type = monitorType
        direction = monitorDirection
        bytes = bytes.dropFirst(4)
    default:
        return .record(CaptureRecord(
            timestamp: timestamp, direction: nil, content: .linkLayerFrame(linkType: linkType), bytes: payload,
            originalLength: originalLength, fileOffset: fileOffset))
    }
    return .record(CaptureRecord(
        timestamp: timestamp, direction: direction, content: .hci(type), bytes: bytes,
        originalLength: max(0, originalLength - (payload.count - bytes.count)), fileOffset: fileOffset,
        controllerIndex: controllerIndex))
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a capture file cannot be read. Binary-format errors name the byte offset in the file.
public enum CaptureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file could not be opened.
    case cannotOpen(path: String, errno: Int32)
    /// The file could not be created or written.
    case cannotWrite(path: String, errno: Int32)
    /// read(2) failed at this offset.
    case readFailed(offset: Int, errno: Int32)
    /// A file header, section header or interface description is not valid.
    case badHeader(offset: Int, reason: String)
    /// The datalink / link type is not one this package reads.
    case unsupportedDatalink(Int)
    /// A record or block declares a length it cannot have.
    case impossibleRecordLength(offset: Int, length: Int)
    /// A record or block is structurally wrong in another way.
    case malformedRecord(offset: Int, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let code): "cannot open \(path): \(String(cString: strerror(code)))"
        case .cannotWrite(let path, let code): "cannot write \(path): \(String(cString: strerror(code)))"
        case .readFailed(let offset, let code): "read failed at byte \(offset): \(String(cString: strerror(code)))"
        case .badHeader(let offset, let reason): "bad header at byte \(offset): \(reason)"
        case .unsupportedDatalink(let link): "unsupported datalink / link type \(link)"
        case .impossibleRecordLength(let offset, let length): "impossible record length \(length) at byte \(offset)"
        case .malformedRecord(let offset, let reason): "malformed record at byte \(offset): \(reason)"
        }
    }
}

/// Something wrong with a capture that does not stop reading it.
public enum CaptureWarning: Hashable, Sendable, CustomStringConvertible {
    /// The file ends inside the record starting at this offset; the records before it were read.
    case truncatedFinalRecord(offset: Int)

    public var description: String {
        switch self {
        case .truncatedFinalRecord(let offset): "file ends inside the record at byte \(offset); it was ignored"
        }
    }
}

/// Why a reader passed over a record without yielding it; counted in `CaptureReader.skipped`.
public enum CaptureSkipReason: Hashable, Sendable, CustomStringConvertible {
    /// A BlueZ monitor record that is not an HCI packet (new index, system note, user logging ...).
    case monitorOpcode(UInt16)
    /// A pcapng block of a type that carries no packets for us (name resolution, statistics ...).
    case pcapngBlock(type: UInt32)
    /// A record too short to hold its link-layer header (empty H4 record, short pseudo-header).
    case tooShortForLinkHeader

    public var description: String {
        switch self {
        case .monitorOpcode(let opcode): "monitor opcode \(opcode)"
        case .pcapngBlock(let type): "pcapng block type 0x\(String(type, radix: 16))"
        case .tooShortForLinkHeader: "record too short for its link-layer header"
        }
    }
}

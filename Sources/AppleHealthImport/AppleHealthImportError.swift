import HealthModel
/// Why an Apple Health export could not be read (further). Offsets are byte offsets: into the
/// file for the zip structure and compressed data, into `export.xml` (uncompressed) for XML.
public enum AppleHealthImportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or read (`errno` as text).
    case unreadable(path: String, reason: String)
    /// A zip structure is damaged (a signature, a length or an offset that does not fit).
    case damagedZip(offset: Int, reason: String)
    /// The archive holds no `HealthData` XML document; `entries` are the names it does hold (the first few).
    case noHealthData(entries: [String])
    /// The entry is stored with a compression method other than stored (0) or deflate (8).
    case unsupportedCompression(entry: String, method: Int)
    /// The entry is encrypted.
    case encryptedEntry(String)
    /// The compressed data is damaged; `offset` is where in the file inflating stopped.
    case damagedCompressedData(entry: String, offset: Int, reason: String)
    /// The entry's data does not have the checksum or length the archive lists.
    case checksumMismatch(entry: String, expected: UInt32, found: UInt32)
    case lengthMismatch(entry: String, expected: Int, found: Int)
    /// The XML is not well-formed (or exceeds a bound) at `offset` of the document.
    case damagedXML(offset: Int, reason: String)
    /// The export's document is empty (0 bytes): `entry` in the archive, or the file itself (nil).
    case emptyDocument(entry: String?)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .damagedZip(let offset, let reason): "damaged zip archive at byte \(offset): \(reason)"
        case .noHealthData(let entries):
            "no Apple Health export.xml in the archive (entries: \(entries.isEmpty ? "none" : entries.map(PrintableText.escaped).joined(separator: ", ")))"
        case .unsupportedCompression(let entry, let method): "\(PrintableText.escaped(entry)): unsupported zip compression method \(method)"
        case .encryptedEntry(let entry): "\(PrintableText.escaped(entry)) is encrypted"
        case .damagedCompressedData(let entry, let offset, let reason):
            "\(PrintableText.escaped(entry)): damaged compressed data at byte \(offset) of the archive: \(reason)"
        case .checksumMismatch(let entry, let expected, let found):
            "\(PrintableText.escaped(entry)): CRC-32 is 0x\(String(found, radix: 16)), the archive lists 0x\(String(expected, radix: 16))"
        case .lengthMismatch(let entry, let expected, let found):
            "\(PrintableText.escaped(entry)): \(found) bytes inflated, the archive lists \(expected)"
        case .damagedXML(let offset, let reason): "damaged XML at byte \(offset) of the document: \(reason)"
        case .emptyDocument(let entry?): "\(PrintableText.escaped(entry)) in the archive is empty (0 bytes): the export was cut short; export again"
        case .emptyDocument(nil): "the file is empty (0 bytes)"
        }
    }
}

/// Finds the `HealthData` document of an export: the file itself when it is XML, or inside an
/// `export.zip` the XML entry whose content starts a `HealthData` document (localized iOS
/// versions have used other names than `apple_health_export/export.xml`).
///
/// An archive's entry is verified whole (inflated, its length and CRC-32 checked) before any of
/// its records is kept: `open` verifies before it hands the source out;
/// `openDeferringVerification` hands the check out with the source, for an import that stores
/// its first batches in a held transaction while the check runs beside the reading (and keeps
/// them only when it passes). Holding the batches uncommitted until the document's end instead
/// would keep one write transaction open for the whole import (minutes for a multi-GB export,
/// blocking the daemon's writes on the same store); the check costs one more inflate of the
/// entry (zlib, no XML parsing) and no memory.
public enum AppleHealthExportFile {
    /// The document's bytes, and the zip entry's name when the file is an archive.
    /// - Parameter verify: check an archive entry's CRC-32 before handing it out (the default).
    public static func open(path: String, verify: Bool = true) throws(AppleHealthImportError)
        -> (source: ByteChunkSource, entry: String?, fileSize: Int) {
        let opened = try openDeferringVerification(path: path)
        if verify { try opened.verification?.run() }
        return (opened.source, opened.entry, opened.fileSize)
    }

    /// The document's bytes as `open` finds them, with the archive entry's verification not yet
    /// run (nil for a plain XML file): the caller runs it while the records are read, and
    /// keeps nothing stored before it passed.
    public static func openDeferringVerification(path: String) throws(AppleHealthImportError)
        -> (source: ByteChunkSource, entry: String?, fileSize: Int, verification: ExportVerification?) {
        let file = try RandomAccessFile(path: path)
        guard file.size > 0 else { throw .emptyDocument(entry: nil) }
        let magic = try file.bytes(at: 0, count: 4)
        let archive: ZipArchive
        if magic.starts(with: [0x50, 0x4B]) {
            archive = try ZipArchive(file: file)
        } else if !looksLikeXML(magic), let found = try? ZipArchive(file: file) {
            // Bytes before the archive (a self-extractor's stub): the archive after them.
            archive = found
        } else {
            return (FileByteSource(file: file), nil, file.size, nil)
        }
        let candidates = archive.entries
            .filter { $0.name.lowercased().hasSuffix(".xml") && !$0.name.lowercased().contains("_cda") }
            .sorted { isExportName($0.name) && !isExportName($1.name) }
        for entry in candidates.prefix(16) {
            if entry.uncompressedSize == 0, isExportName(entry.name) { throw .emptyDocument(entry: entry.name) }
            if try startsHealthData(ZipEntryReader(archive: archive, entry: entry)) {
                let verification = ExportVerification(reader: try ZipEntryReader(archive: archive, entry: entry),
                                                      uncompressedSize: entry.uncompressedSize)
                return (try ZipEntryReader(archive: archive, entry: entry), entry.name, file.size, verification)
            }
        }
        throw .noHealthData(entries: Array(archive.entries.prefix(10).map(\.name)))
    }

    private static func isExportName(_ name: String) -> Bool { name.hasSuffix("/export.xml") || name == "export.xml" }

    /// Whether a file's first bytes can start an XML document (`<`, after a byte-order mark or white space).
    private static func looksLikeXML(_ magic: [UInt8]) -> Bool {
        let body = magic.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(magic.dropFirst(3)) : magic
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }) else { return true }
        return first == UInt8(ascii: "<")
    }

    /// Whether the first 64 KiB hold `<HealthData` (after the declaration and the DOCTYPE's start).
    private static func startsHealthData(_ source: ByteChunkSource) throws(AppleHealthImportError) -> Bool {
        var head = [UInt8](repeating: 0, count: 64 << 10)
        var filled = 0
        while filled < head.count {
            var failure: AppleHealthImportError?
            let count = head.withUnsafeMutableBytes { bytes -> Int in
                do throws(AppleHealthImportError) { return try source.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[filled...])) } catch {
                    failure = error
                    return 0
                }
            }
            if let failure { throw failure }
            if count == 0 { break }
            filled += count
        }
        let marker = Array("HealthData".utf8)
        guard filled >= marker.count else { return false }
        return (0...(filled - marker.count)).contains { head[$0..<($0 + marker.count)].elementsEqual(marker) }
    }
}

/// The check of an export's archive entry: inflated whole, its length and CRC-32 compared with
/// what the archive lists. Made by `AppleHealthExportFile.openDeferringVerification`; run once,
/// on any one thread.
public final class ExportVerification: @unchecked Sendable {
    /// The entry's size inflated: what the check reads (about a second per gigabyte).
    public let uncompressedSize: Int
    // Used by `run()` alone, on the one thread that runs it.
    private let reader: ZipEntryReader

    init(reader: ZipEntryReader, uncompressedSize: Int) {
        self.reader = reader
        self.uncompressedSize = uncompressedSize
    }

    /// Inflates the entry whole; throws what is wrong with it.
    public func run() throws(AppleHealthImportError) {
        try reader.verify()
    }
}

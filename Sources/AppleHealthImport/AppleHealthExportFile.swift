/// Finds the `HealthData` document of an export: the file itself when it is XML, or inside an
/// `export.zip` the XML entry whose content starts a `HealthData` document (localized iOS
/// versions have used other names than `apple_health_export/export.xml`).
public enum AppleHealthExportFile {
    /// The document's bytes, and the zip entry's name when the file is an archive.
    public static func open(path: String) throws(AppleHealthImportError) -> (source: ByteChunkSource, entry: String?, fileSize: Int) {
        let file = try RandomAccessFile(path: path)
        let magic = try file.bytes(at: 0, count: 4)
        guard magic.starts(with: [0x50, 0x4B]) else { return (FileByteSource(file: file), nil, file.size) }
        let archive = try ZipArchive(file: file)
        let candidates = archive.entries
            .filter { $0.name.lowercased().hasSuffix(".xml") && !$0.name.lowercased().contains("_cda") }
            .sorted { ($0.name.hasSuffix("/export.xml") || $0.name == "export.xml") && !($1.name.hasSuffix("/export.xml") || $1.name == "export.xml") }
        for entry in candidates.prefix(16) {
            if try startsHealthData(ZipEntryReader(archive: archive, entry: entry)) {
                return (try ZipEntryReader(archive: archive, entry: entry), entry.name, file.size)
            }
        }
        throw .noHealthData(entries: Array(archive.entries.prefix(10).map(\.name)))
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

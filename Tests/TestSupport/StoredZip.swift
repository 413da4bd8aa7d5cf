import Foundation

/// A zip archive of stored (uncompressed) entries, written byte by byte from the format
/// (PKWARE APPNOTE 4.3): what the import tests damage on purpose (a flipped bit the CRC-32 must
/// catch, an empty entry, bytes before the archive, impossible ZIP64 sizes).
public enum StoredZip {
    /// One entry; `listedCRC` and `zip64UncompressedSize` override what the directory says.
    public struct Entry {
        public var name: [UInt8]
        public var content: [UInt8]
        public var listedCRC: UInt32?
        public var zip64UncompressedSize: UInt64?

        public init(name: String, content: [UInt8], listedCRC: UInt32? = nil, zip64UncompressedSize: UInt64? = nil) {
            self.name = Array(name.utf8)
            self.content = content
            self.listedCRC = listedCRC
            self.zip64UncompressedSize = zip64UncompressedSize
        }
    }

    /// The archive; `prefix` comes before it (a self-extractor's stub) with offsets counted from
    /// the archive's own start, as `cat stub archive.zip` makes them.
    public static func bytes(_ entries: [Entry], prefix: [UInt8] = []) -> [UInt8] {
        var locals: [UInt8] = []
        var central: [UInt8] = []
        for entry in entries {
            let crc = entry.listedCRC ?? crc32(entry.content)
            let size = UInt32(entry.content.count)
            let extra = entry.zip64UncompressedSize.map { le16(1) + le16(8) + le64($0) } ?? []
            let listedSize = entry.zip64UncompressedSize == nil ? size : 0xFFFF_FFFF
            let offset = UInt32(locals.count)
            locals += le32(0x0403_4B50) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(crc)
                + le32(size) + le32(size) + le16(entry.name.count) + le16(0) + entry.name + entry.content
            central += le32(0x0201_4B50) + le16(45) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(crc)
                + le32(size) + le32(listedSize) + le16(entry.name.count) + le16(extra.count) + le16(0) + le16(0)
                + le16(0) + le32(0) + le32(offset) + entry.name + extra
        }
        let end = le32(0x0605_4B50) + le16(0) + le16(0) + le16(entries.count) + le16(entries.count)
            + le32(UInt32(central.count)) + le32(UInt32(locals.count)) + le16(0)
        return prefix + locals + central + end
    }

    /// CRC-32 (IEEE 802.3, reflected, as zip uses it), bit by bit: a test's own reference.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: UInt32) -> [UInt8] { le16(Int(value & 0xFFFF)) + le16(Int(value >> 16)) }
    static func le64(_ value: UInt64) -> [UInt8] { le32(UInt32(value & 0xFFFF_FFFF)) + le32(UInt32(value >> 32)) }
}

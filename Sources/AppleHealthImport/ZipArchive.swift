import HealthModel
import CZlib
import Foundation

/// Something that hands out bytes in order, a buffer at a time (a file, a zip entry).
public protocol ByteChunkSource: AnyObject {
    /// Reads up to `buffer.count` bytes; 0 means the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleHealthImportError) -> Int
    /// How far into the underlying file reading has come (for progress).
    var fileOffset: Int { get }
}

/// A file opened for reading by offset (POSIX `pread`), closed on deinit.
public final class RandomAccessFile {
    public let path: String
    public let size: Int
    private let descriptor: Int32

    public init(path: String) throws(AppleHealthImportError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .unreadable(path: path, reason: "not a regular file")
        }
        self.path = path
        self.descriptor = descriptor
        self.size = Int(status.st_size)
    }

    deinit { close(descriptor) }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    public func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(AppleHealthImportError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// `count` bytes at `offset` (fewer at the end of the file).
    func bytes(at offset: Int, count: Int) throws(AppleHealthImportError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var failure: AppleHealthImportError?
        let count = bytes.withUnsafeMutableBytes { buffer -> Int in
            do throws(AppleHealthImportError) { return try self.read(at: offset, into: buffer) } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        bytes.removeSubrange(count...)
        return bytes
    }
}

/// A whole file as a byte source (a plain `export.xml`).
public final class FileByteSource: ByteChunkSource {
    private let file: RandomAccessFile
    public private(set) var fileOffset = 0

    public init(file: RandomAccessFile) { self.file = file }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleHealthImportError) -> Int {
        let count = try file.read(at: fileOffset, into: buffer)
        fileOffset += count
        return count
    }
}

/// One file of a zip archive as listed by its central directory.
public struct ZipEntry: Equatable, Sendable {
    public var name: String
    public var method: Int
    public var flags: Int
    public var crc32: UInt32
    public var compressedSize: Int
    public var uncompressedSize: Int
    public var localHeaderOffset: Int
}

/// The central directory of a zip archive (ZIP64 included), read from the end of the file.
/// Only the directory is read here; `ZipEntryReader` streams one entry's data.
public struct ZipArchive {
    public let file: RandomAccessFile
    public let entries: [ZipEntry]

    /// At most this many directory bytes are read (an export lists a few thousand files).
    static let maximumDirectoryBytes = 64 << 20

    public init(file: RandomAccessFile) throws(AppleHealthImportError) {
        self.file = file
        let tailLength = min(file.size, 22 + 0xFFFF)
        let tailStart = file.size - tailLength
        let tail = try file.bytes(at: tailStart, count: tailLength)
        guard tail.count >= 22,
            let end = stride(from: tail.count - 22, through: 0, by: -1).first(where: { Self.u32(tail, $0) == 0x0605_4B50 })
        else { throw .damagedZip(offset: file.size, reason: "no end of central directory record (not a zip archive?)") }
        var entryCount = Int(Self.u16(tail, end + 10))
        var directorySize = Int(Self.u32(tail, end + 12))
        var directoryOffset = Int(Self.u32(tail, end + 16))
        var directoryEnd = tailStart + end
        var archiveStart = 0
        if entryCount == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            // ZIP64: a locator right before the end record points at the 64-bit end record.
            let locatorOffset = tailStart + end - 20
            guard locatorOffset >= 0 else { throw .damagedZip(offset: tailStart + end, reason: "ZIP64 locator missing") }
            let locator = try file.bytes(at: locatorOffset, count: 20)
            guard locator.count == 20, Self.u32(locator, 0) == 0x0706_4B50 else {
                throw .damagedZip(offset: locatorOffset, reason: "ZIP64 locator missing")
            }
            let recordOffset = try Self.fileQuantity(Self.u64(locator, 8), "ZIP64 end record offset", fileSize: file.size, at: locatorOffset + 8)
            let record = try file.bytes(at: recordOffset, count: 56)
            guard record.count == 56, Self.u32(record, 0) == 0x0606_4B50 else {
                throw .damagedZip(offset: recordOffset, reason: "ZIP64 end of central directory record missing")
            }
            entryCount = Int(min(Self.u64(record, 32), UInt64(Int.max)))
            directorySize = try Self.fileQuantity(Self.u64(record, 40), "central directory size", fileSize: file.size, at: recordOffset + 40)
            directoryOffset = try Self.fileQuantity(Self.u64(record, 48), "central directory offset", fileSize: file.size, at: recordOffset + 48)
            directoryEnd = recordOffset
        }
        // A self-extracting archive (or any file with bytes before the archive) records offsets
        // from the archive's own start: the directory then ends where the end records begin, and
        // every recorded offset is off by the length of what comes before.
        if directoryOffset + directorySize < directoryEnd, directoryEnd - directorySize >= 0,
            try file.bytes(at: directoryOffset, count: 4) != [0x50, 0x4B, 0x01, 0x02],
            try file.bytes(at: directoryEnd - directorySize, count: 4) == [0x50, 0x4B, 0x01, 0x02] {
            archiveStart = directoryEnd - directorySize - directoryOffset
            directoryOffset += archiveStart
        }
        guard directoryOffset >= 0, directorySize >= 0, directoryOffset <= file.size, directorySize <= file.size - directoryOffset else {
            throw .damagedZip(offset: tailStart + end, reason: "central directory (\(directorySize) bytes at \(directoryOffset)) is outside the file")
        }
        guard directorySize <= Self.maximumDirectoryBytes else {
            throw .damagedZip(offset: directoryOffset, reason: "central directory of \(directorySize) bytes exceeds \(Self.maximumDirectoryBytes)")
        }
        let directory = try file.bytes(at: directoryOffset, count: directorySize)
        var entries: [ZipEntry] = []
        var position = 0
        for _ in 0..<min(entryCount, directorySize / 46) {
            let at = directoryOffset + position
            guard position + 46 <= directory.count, Self.u32(directory, position) == 0x0201_4B50 else {
                throw .damagedZip(offset: at, reason: "central directory entry signature missing")
            }
            let nameLength = Int(Self.u16(directory, position + 28))
            let extraLength = Int(Self.u16(directory, position + 30))
            let commentLength = Int(Self.u16(directory, position + 32))
            let next = position + 46 + nameLength + extraLength + commentLength
            guard next <= directory.count else { throw .damagedZip(offset: at, reason: "central directory entry runs past the directory") }
            let name = String(decoding: directory[(position + 46)..<(position + 46 + nameLength)], as: UTF8.self)
            var entry = ZipEntry(
                name: name, method: Int(Self.u16(directory, position + 10)), flags: Int(Self.u16(directory, position + 8)),
                crc32: Self.u32(directory, position + 16),
                compressedSize: Int(Self.u32(directory, position + 20)), uncompressedSize: Int(Self.u32(directory, position + 24)),
                localHeaderOffset: Int(Self.u32(directory, position + 42)))
            try Self.applyZip64Extra(
                Array(directory[(position + 46 + nameLength)..<(position + 46 + nameLength + extraLength)]), to: &entry, at: at)
            entry.localHeaderOffset += archiveStart
            entries.append(entry)
            position = next
        }
        self.entries = entries
    }

    /// Replaces the 32-bit fields that are 0xFFFFFFFF by their ZIP64 extra field values.
    private static func applyZip64Extra(_ extra: [UInt8], to entry: inout ZipEntry, at offset: Int) throws(AppleHealthImportError) {
        var position = 0
        while position + 4 <= extra.count {
            let id = u16(extra, position)
            let length = Int(u16(extra, position + 2))
            guard position + 4 + length <= extra.count else { break }
            if id == 0x0001 {
                var field = position + 4
                func take(_ what: String) throws(AppleHealthImportError) -> Int {
                    guard field + 8 <= position + 4 + length else {
                        throw .damagedZip(offset: offset, reason: "ZIP64 extra field too short")
                    }
                    defer { field += 8 }
                    let value = u64(extra, field)
                    // Sizes and offsets are Int everywhere; 2^63 and more is no file's size.
                    guard value <= UInt64(Int.max) else {
                        throw .damagedZip(offset: offset, reason: "\(PrintableText.escaped(entry.name)): ZIP64 \(what) \(value) is impossible")
                    }
                    return Int(value)
                }
                if entry.uncompressedSize == 0xFFFF_FFFF { entry.uncompressedSize = try take("uncompressed size") }
                if entry.compressedSize == 0xFFFF_FFFF { entry.compressedSize = try take("compressed size") }
                if entry.localHeaderOffset == 0xFFFF_FFFF { entry.localHeaderOffset = try take("local header offset") }
            }
            position += 4 + length
        }
    }

    static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 { UInt32(u16(bytes, at)) | UInt32(u16(bytes, at + 2)) << 16 }
    /// A little-endian 64-bit field.
    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 { UInt64(u32(bytes, at)) | UInt64(u32(bytes, at + 4)) << 32 }

    /// A 64-bit size or offset as Int, or the damage naming its (unsigned) value when it does not
    /// fit in the file (2^63 and above never do).
    static func fileQuantity(_ value: UInt64, _ what: String, fileSize: Int, at offset: Int) throws(AppleHealthImportError) -> Int {
        guard value <= UInt64(fileSize) else {
            throw .damagedZip(offset: offset, reason: "\(what) \(value) is beyond the file's \(fileSize) bytes")
        }
        return Int(value)
    }
}

/// Streams one zip entry's uncompressed bytes (stored or deflated), checking its CRC-32 and
/// length at the end. Memory: one 64 KiB input buffer and zlib's 32 KiB window.
public final class ZipEntryReader: ByteChunkSource {
    public let entry: ZipEntry
    private let file: RandomAccessFile
    private var compressedOffset: Int
    private let compressedEnd: Int
    private var stream: UnsafeMutablePointer<z_stream>?
    private var input: UnsafeMutableRawBufferPointer
    private var crc: UInt = 0
    private var produced = 0
    private var finished = false
    private var streamEnded = false

    public var fileOffset: Int { compressedOffset - Int(stream?.pointee.avail_in ?? 0) }

    public init(archive: ZipArchive, entry: ZipEntry) throws(AppleHealthImportError) {
        self.entry = entry
        self.file = archive.file
        guard entry.flags & 1 == 0 else { throw .encryptedEntry(entry.name) }
        guard entry.method == 0 || entry.method == 8 else { throw .unsupportedCompression(entry: entry.name, method: entry.method) }
        let header = try archive.file.bytes(at: entry.localHeaderOffset, count: 30)
        guard header.count == 30, ZipArchive.u32(header, 0) == 0x0403_4B50 else {
            throw .damagedZip(offset: entry.localHeaderOffset, reason: "local header signature missing for \(PrintableText.escaped(entry.name))")
        }
        let dataStart = entry.localHeaderOffset + 30 + Int(ZipArchive.u16(header, 26)) + Int(ZipArchive.u16(header, 28))
        guard dataStart <= archive.file.size, entry.compressedSize <= archive.file.size - dataStart else {
            throw .damagedZip(offset: entry.localHeaderOffset, reason: "\(PrintableText.escaped(entry.name)): \(entry.compressedSize) bytes of data do not fit in the file")
        }
        compressedOffset = dataStart
        compressedEnd = dataStart + entry.compressedSize
        input = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        if entry.method == 8 {
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            guard czlib_inflate_init_raw(stream) == Z_OK else {
                stream.deinitialize(count: 1)
                stream.deallocate()
                input.deallocate()
                throw .damagedCompressedData(entry: entry.name, offset: dataStart, reason: "zlib could not start")
            }
            self.stream = stream
        }
    }

    deinit {
        if let stream {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        input.deallocate()
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleHealthImportError) -> Int {
        guard !finished, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let count = try (stream == nil ? readStored(into: buffer) : inflate(into: buffer))
        if count > 0 {
            crc = CZlib.crc32(crc, base.assumingMemoryBound(to: Bytef.self), uInt(count))
            produced += count
        } else {
            finished = true
            guard produced == entry.uncompressedSize else {
                throw .lengthMismatch(entry: entry.name, expected: entry.uncompressedSize, found: produced)
            }
            guard UInt32(truncatingIfNeeded: crc) == entry.crc32 else {
                throw .checksumMismatch(entry: entry.name, expected: entry.crc32, found: UInt32(truncatingIfNeeded: crc))
            }
        }
        return count
    }

    /// Reads the entry to its end, checking its length and CRC-32 (nothing is kept: memory is
    /// this reader's buffers and one 64 KiB scratch buffer).
    public func verify() throws(AppleHealthImportError) {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { scratch.deallocate() }
        while try read(into: scratch) > 0 {}
    }

    private func readStored(into buffer: UnsafeMutableRawBufferPointer) throws(AppleHealthImportError) -> Int {
        let wanted = min(buffer.count, compressedEnd - compressedOffset)
        guard wanted > 0 else { return 0 }
        let count = try file.read(at: compressedOffset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
        guard count == wanted else { throw .damagedZip(offset: compressedOffset + count, reason: "\(PrintableText.escaped(entry.name)) ends early") }
        compressedOffset += count
        return count
    }

    private func inflate(into buffer: UnsafeMutableRawBufferPointer) throws(AppleHealthImportError) -> Int {
        guard let stream, !streamEnded, let output = buffer.baseAddress, let inputBase = input.baseAddress else { return 0 }
        stream.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(buffer.count)
        while stream.pointee.avail_out == uInt(buffer.count) {
            if stream.pointee.avail_in == 0, compressedOffset < compressedEnd {
                let wanted = min(input.count, compressedEnd - compressedOffset)
                let count = try file.read(at: compressedOffset, into: UnsafeMutableRawBufferPointer(rebasing: input[0..<wanted]))
                guard count == wanted else { throw .damagedZip(offset: compressedOffset + count, reason: "\(PrintableText.escaped(entry.name)) ends early") }
                compressedOffset += count
                stream.pointee.next_in = inputBase.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(count)
            }
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END:
                streamEnded = true
                return buffer.count - Int(stream.pointee.avail_out)
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.pointee.avail_in == 0 && compressedOffset >= compressedEnd:
                throw .damagedCompressedData(entry: entry.name, offset: compressedEnd, reason: "the compressed data ends before the deflate stream does")
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                throw .damagedCompressedData(entry: entry.name, offset: fileOffset, reason: reason)
            }
        }
        return buffer.count - Int(stream.pointee.avail_out)
    }
}

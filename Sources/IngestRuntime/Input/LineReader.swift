import ExternalAdapters
import HealthModel
import Foundation

/// Reads a file (or stdin) line by line in fixed-size chunks, in memory bounded by the line
/// limit whatever the file holds: a line longer than `maximumLineLength` is not buffered but
/// skipped to its newline and reported with its length, and a file that runs on for
/// `maximumSkippedLength` bytes without a newline (`/dev/zero`) is given up.
public final class LineReader {
    /// One line of the file.
    public enum Line: Equatable {
        /// A line without its terminator (`\n` or `\r\n`).
        case text(ArraySlice<UInt8>)
        /// A line longer than the limit, skipped; `length` counts its bytes without the newline.
        case overlong(length: Int)
        /// The file ran on for `skipped` bytes without a newline; the rest of it is not read.
        case abandoned(skipped: Int)
    }

    private let handle: FileHandle
    private let ownsHandle: Bool
    private var splitter: LineSplitter
    /// Pieces of the last chunk not yet returned, in order.
    private var pending: [LineSplitter.Piece] = []
    private var pendingIndex = 0
    private var finished = false
    private let chunkSize: Int
    /// The chunk read last, and where its unread bytes start.
    private var chunk: [UInt8] = []
    private var chunkPosition = 0
    /// The path read (`-` for stdin), for messages.
    private let path: String
    /// Lines longer than this are skipped and reported as over-long.
    public let maximumLineLength: Int
    /// How far an over-long line is skipped looking for its newline before the file is given up.
    let maximumSkippedLength: Int

    /// Opens `path`, or stdin for `-`. Throws `RuntimeError.noInput` for a missing file.
    public init(path: String, chunkSize: Int = 1 << 16, maximumLineLength: Int = HealthRecordEncoder.maximumLineBytes,
         maximumSkippedLength: Int = 1 << 30) throws {
        self.chunkSize = max(1, chunkSize)
        self.path = path
        self.maximumLineLength = maximumLineLength
        self.maximumSkippedLength = maximumSkippedLength
        // One more byte than the limit: the `\r` of a `\r\n` line does not count.
        splitter = LineSplitter(maximumLength: maximumLineLength + 1)
        if path == "-" {
            handle = FileHandle.standardInput
            ownsHandle = false
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw RuntimeError.noInput(path: path)
            }
            guard !isDirectory.boolValue, let opened = FileHandle(forReadingAtPath: path) else {
                throw RuntimeError.noInput(path: path, reason: isDirectory.boolValue ? "is a directory" : "cannot be read")
            }
            handle = opened
            ownsHandle = true
        }
    }

    deinit {
        if ownsHandle { try? handle.close() }
    }

    /// The next line, or nil at the end (or after `.abandoned`).
    public func nextLine() throws -> Line? {
        while true {
            if pendingIndex < pending.count {
                let piece = pending[pendingIndex]
                pendingIndex += 1
                switch piece {
                case .line(let bytes), .unterminated(let bytes):
                    return Self.line(bytes[...], limit: maximumLineLength)
                case .overlong(let length):
                    return .overlong(length: length)
                }
            }
            if chunkPosition < chunk.count {
                let newline = chunk.withUnsafeBytes { bytes -> Int? in
                    guard let base = bytes.baseAddress,
                          let found = memchr(base + chunkPosition, 0x0A, bytes.count - chunkPosition)
                    else { return nil }
                    return UnsafeRawPointer(found) - base
                }
                // A line wholly inside the chunk is handed out as a slice of it, not copied;
                // the splitter's rules (`maximumLength`, over-long lengths) are the same.
                if let newline, splitter.isBetweenLines {
                    let bytes = chunk[chunkPosition..<newline]
                    chunkPosition = newline + 1
                    if bytes.count > splitter.maximumLength { return .overlong(length: bytes.count) }
                    return Self.line(bytes, limit: maximumLineLength)
                }
                // The end of a line begun in an earlier chunk, or the start of one the next
                // chunk ends: through the splitter.
                let end = newline.map { $0 + 1 } ?? chunk.count
                pending.removeAll(keepingCapacity: true)
                pendingIndex = 0
                chunk[chunkPosition..<end].withUnsafeBytes { bytes in
                    splitter.append(bytes) { pending.append($0) }
                }
                chunkPosition = end
                continue
            }
            guard !finished else { return nil }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            if let skipped = splitter.skippedLength, skipped >= maximumSkippedLength {
                finished = true
                return .abandoned(skipped: skipped)
            }
            let read = try readChunk()
            if read.isEmpty {
                finished = true
                if let last = splitter.finish() { pending.append(last) }
            } else {
                chunk = read
                chunkPosition = 0
            }
        }
    }

    /// A line without its newline: its `\r` dropped, over-long past `limit`.
    private static func line(_ bytes: ArraySlice<UInt8>, limit: Int) -> Line {
        var line = bytes
        if line.last == 0x0D { line = line.dropLast() }
        return line.count > limit ? .overlong(length: bytes.count) : .text(line)
    }

    /// Up to `chunkSize` more bytes of the file (a new array each time: lines handed out may
    /// still hold the last one); empty at its end. Read with read(2) itself: Foundation's
    /// `FileHandle.read(upToCount:)` reads a regular file 4 KiB per call.
    private func readChunk() throws -> [UInt8] {
        let descriptor = handle.fileDescriptor
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: chunkSize) { buffer, count in
            count = 0
            while true {
                let result = Glibc.read(descriptor, buffer.baseAddress, chunkSize)
                if result >= 0 {
                    count = result
                    return
                }
                guard errno == EINTR else {
                    failure = errno
                    return
                }
            }
        }
        guard failure == 0 else { throw RuntimeError.unreadableInput(path: path, reason: String(cString: strerror(failure))) }
        return bytes
    }
}

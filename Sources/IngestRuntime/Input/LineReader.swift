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
    /// Lines longer than this are skipped and reported as over-long.
    public let maximumLineLength: Int
    /// How far an over-long line is skipped looking for its newline before the file is given up.
    let maximumSkippedLength: Int

    /// Opens `path`, or stdin for `-`. Throws `RuntimeError.noInput` for a missing file.
    public init(path: String, chunkSize: Int = 1 << 16, maximumLineLength: Int = HealthRecordEncoder.maximumLineBytes,
         maximumSkippedLength: Int = 1 << 30) throws {
        self.chunkSize = chunkSize
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
                    var line = bytes[...]
                    if line.last == 0x0D { line = line.dropLast() }
                    return line.count > maximumLineLength ? .overlong(length: bytes.count) : .text(line)
                case .overlong(let length):
                    return .overlong(length: length)
                }
            }
            guard !finished else { return nil }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            if let skipped = splitter.skippedLength, skipped >= maximumSkippedLength {
                finished = true
                return .abandoned(skipped: skipped)
            }
            let chunk = try handle.read(upToCount: chunkSize) ?? Data()
            if chunk.isEmpty {
                finished = true
                if let last = splitter.finish() { pending.append(last) }
            } else {
                chunk.withUnsafeBytes { bytes in
                    splitter.append(bytes) { pending.append($0) }
                }
            }
        }
    }
}

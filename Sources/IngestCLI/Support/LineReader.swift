import ArgumentParsing
import Foundation

/// Reads a file (or stdin) line by line in fixed-size chunks: constant memory in the file size.
final class LineReader {
    private let handle: FileHandle
    private let ownsHandle: Bool
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEOF = false
    private let chunkSize: Int
    /// Lines longer than this are returned truncated to it, flagged as over-long.
    let maximumLineLength: Int

    /// Opens `path`, or stdin for `-`. Throws `CommandFailure.noInput` for a missing file.
    init(path: String, chunkSize: Int = 1 << 16, maximumLineLength: Int = 1 << 20) throws {
        self.chunkSize = chunkSize
        self.maximumLineLength = maximumLineLength
        if path == "-" {
            handle = FileHandle.standardInput
            ownsHandle = false
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandFailure.noInput(path: path)
            }
            guard !isDirectory.boolValue, let opened = FileHandle(forReadingAtPath: path) else {
                throw CommandFailure.noInput(path: path, reason: isDirectory.boolValue ? "is a directory" : "cannot be read")
            }
            handle = opened
            ownsHandle = true
        }
    }

    deinit {
        if ownsHandle { try? handle.close() }
    }

    /// The next line without its terminator (`\n` or `\r\n`), or nil at the end.
    func nextLine() throws -> (bytes: ArraySlice<UInt8>, truncated: Bool)? {
        while true {
            if let newline = buffer[position...].firstIndex(of: 0x0A) {
                var end = newline
                if end > position, buffer[end - 1] == 0x0D { end -= 1 }
                let line = buffer[position..<end]
                position = newline + 1
                if line.count > maximumLineLength { return (line.prefix(maximumLineLength), true) }
                return (line, false)
            }
            if atEOF {
                guard position < buffer.count else { return nil }
                let line = buffer[position...]
                position = buffer.count
                if line.count > maximumLineLength { return (line.prefix(maximumLineLength), true) }
                return (line, false)
            }
            if position > 0 {
                buffer.removeFirst(position)
                position = 0
            }
            let chunk = try handle.read(upToCount: chunkSize) ?? Data()
            if chunk.isEmpty { atEOF = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}

import Foundation

/// Cuts a byte stream into newline-terminated lines, never holding more than `maximumLength`
/// bytes of one line: the rest of a longer line is skipped and reported by its length, so a
/// plugin (or a JSON-lines file) cannot make ingestd buffer without bound. Linear in the input:
/// each byte is looked at once.
public struct LineSplitter {
    /// One piece of the stream.
    public enum Piece: Equatable, Sendable {
        /// A complete line without its newline.
        case line([UInt8])
        /// A line longer than the maximum; `length` counts its bytes without the newline.
        case overlong(length: Int)
        /// Bytes after the last newline when the stream ended (a line cut off mid-way).
        case unterminated([UInt8])
    }

    /// The longest line kept, in bytes (without the newline).
    public let maximumLength: Int
    private var current: [UInt8] = []
    private var overlongLength: Int?

    /// A splitter keeping lines of at most `maximumLength` bytes.
    public init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    /// While the line being read is over-long and skipped: its length so far.
    public var skippedLength: Int? { overlongLength }

    /// Whether no line is under way (every byte appended so far was handed out in a piece).
    public var isBetweenLines: Bool { current.isEmpty && overlongLength == nil }

    /// Adds bytes read from the stream; `emit` gets each piece they complete, in order.
    public mutating func append(_ bytes: UnsafeRawBufferPointer, emit: (Piece) throws -> Void) rethrows {
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count {
            let found = memchr(base + start, 0x0A, bytes.count - start)
            let newline = found.map { UnsafeRawPointer($0) - base }
            let end = newline ?? bytes.count
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if let skipped = overlongLength {
                overlongLength = skipped + chunk.count
            } else if current.count + chunk.count > maximumLength {
                overlongLength = current.count + chunk.count
                current.removeAll(keepingCapacity: false)
            } else {
                current.append(contentsOf: chunk)
            }
            guard let newline else { return }
            start = newline + 1
            if let length = overlongLength {
                overlongLength = nil
                try emit(.overlong(length: length))
            } else {
                let line = current
                current.removeAll(keepingCapacity: true)
                try emit(.line(line))
            }
        }
    }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: [UInt8], emit: (Piece) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { try append($0, emit: emit) }
    }

    /// The stream ended: an unfinished line, if any, as `.unterminated` (or `.overlong`).
    public mutating func finish() -> Piece? {
        defer {
            current.removeAll()
            overlongLength = nil
        }
        if let length = overlongLength { return .overlong(length: length) }
        return current.isEmpty ? nil : .unterminated(current)
    }
}

/// Cuts a byte stream into newline-terminated lines, never holding more than `maximumLength`
/// bytes of one line: the rest of a longer line is skipped and reported by its length, so a
/// plugin cannot make the daemon buffer without bound.
struct LineSplitter {
    /// One piece of the stream.
    enum Piece: Equatable {
        /// A complete line without its newline.
        case line([UInt8])
        /// A line longer than the maximum; `length` counts its bytes without the newline.
        case overlong(length: Int)
        /// Bytes after the last newline when the stream ended (a line cut off mid-way).
        case unterminated([UInt8])
    }

    let maximumLength: Int
    private var current: [UInt8] = []
    private var overlongLength: Int?

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    /// Adds bytes read from the stream; `emit` gets each piece they complete, in order.
    mutating func append(_ bytes: UnsafeRawBufferPointer, emit: (Piece) -> Void) {
        var start = 0
        while start < bytes.count {
            let newline = bytes[start...].firstIndex(of: 0x0A)
            let end = newline ?? bytes.count
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if var skipped = overlongLength {
                skipped += chunk.count
                overlongLength = skipped
            } else if current.count + chunk.count > maximumLength {
                overlongLength = current.count + chunk.count
                current.removeAll(keepingCapacity: false)
            } else {
                current.append(contentsOf: chunk)
            }
            guard let newline else { return }
            if let length = overlongLength {
                emit(.overlong(length: length))
                overlongLength = nil
            } else {
                emit(.line(current))
                current.removeAll(keepingCapacity: true)
            }
            start = newline + 1
        }
    }

    /// Adds bytes read from the stream.
    mutating func append(_ bytes: [UInt8], emit: (Piece) -> Void) {
        bytes.withUnsafeBytes { append($0, emit: emit) }
    }

    /// The stream ended: an unfinished line, if any, as `.unterminated` (or `.overlong`).
    mutating func finish() -> Piece? {
        defer {
            current.removeAll()
            overlongLength = nil
        }
        if let length = overlongLength { return .overlong(length: length) }
        return current.isEmpty ? nil : .unterminated(current)
    }
}

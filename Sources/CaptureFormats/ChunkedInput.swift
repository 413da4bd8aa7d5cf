#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only window on a file (read in chunks with read(2)) or on bytes already in memory.
///
/// Memory use is bounded by the largest record asked for, never by the file size: consumed
/// bytes are dropped when the buffer is refilled. Offsets passed to the accessors are relative
/// to the current position; `offset` is the absolute position in the file.
///
/// Public only as the input a ``CaptureFormatReader`` is opened on; nothing outside this module
/// can make or read one.
public final class ChunkedInput {
    /// The default read size.
    static let chunkSize = 64 * 1024

    private var fileDescriptor: Int32
    private(set) var buffer: [UInt8]
    /// Index in `buffer` of the next unread byte.
    private(set) var position = 0
    /// Index in `buffer` one past the last valid byte.
    private var limit: Int
    /// File offset of `buffer[0]`.
    private var bufferOrigin = 0
    private var reachedEnd: Bool

    /// Opens a file for reading.
    init(path: String) throws(CaptureError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        fileDescriptor = descriptor
        buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        limit = 0
        reachedEnd = false
    }

    /// Reads from bytes already in memory.
    init(bytes: [UInt8]) {
        fileDescriptor = -1
        buffer = bytes
        limit = bytes.count
        reachedEnd = true
    }

    deinit {
        if fileDescriptor >= 0 { close(fileDescriptor) }
    }

    /// Makes the `count` bytes of a format's fixed file header available, else a `badHeader`
    /// error at offset 0 saying how short the file is (`header` names what was wanted).
    func requireHeader(_ count: Int, _ header: String) throws(CaptureError) {
        guard try fill(count) else { throw .badHeader(offset: 0, reason: "file is \(available) bytes, \(header)") }
    }

    /// Absolute file offset of the next unread byte.
    var offset: Int { bufferOrigin + position }

    /// Bytes buffered and not yet consumed.
    var available: Int { limit - position }

    /// Makes at least `count` bytes available. Returns false if the input ends first; `available`
    /// then tells how many bytes were left.
    func fill(_ count: Int) throws(CaptureError) -> Bool {
        if limit - position >= count { return true }
        if reachedEnd { return false }
        // Keep only the unread bytes (a record header at most, usually) and refill the rest.
        compact()
        if buffer.count < count {
            buffer.append(contentsOf: repeatElement(0, count: count - buffer.count))
        }
        while limit - position < count {
            let room = buffer.count - limit
            let start = limit
            let result = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return read(fileDescriptor, base + start, room)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw .readFailed(offset: bufferOrigin + limit, errno: errno)
            }
            if result == 0 {
                reachedEnd = true
                close(fileDescriptor)
                fileDescriptor = -1
                return false
            }
            limit += result
        }
        return true
    }

    /// Moves the unread bytes to the front of the buffer.
    private func compact() {
        guard position > 0 else { return }
        let remaining = limit - position
        if remaining > 0 {
            let from = position
            buffer.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return }
                memmove(base, base + from, remaining)
            }
        }
        bufferOrigin += position
        position = 0
        limit = remaining
    }

    /// Consumes `count` bytes; they must be available.
    func advance(_ count: Int) {
        precondition(count <= limit - position, "advance past the buffered bytes")
        position += count
    }

    /// Consumes whatever is buffered (used when giving up at the end of the input).
    func consumeAll() { position = limit }

    /// The byte at `relative` past the current position (must be available).
    func byte(at relative: Int) -> UInt8 { buffer[position + relative] }

    /// A slice of `count` bytes starting `relative` past the current position (must be available).
    func slice(at relative: Int, count: Int) -> ArraySlice<UInt8> {
        buffer[(position + relative)..<(position + relative + count)]
    }

    /// Calls `body` with the buffered, unread bytes (index 0 is the current position); one
    /// buffer access for several fields.
    func withUnreadBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let start = position
        let end = limit
        return buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    /// A 16-bit integer at `relative` past the current position.
    func uint16(at relative: Int, bigEndian: Bool) -> UInt16 {
        let index = position + relative
        precondition(index >= 0 && index + 2 <= limit)
        let raw = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: index, as: UInt16.self) }
        return bigEndian ? UInt16(bigEndian: raw) : UInt16(littleEndian: raw)
    }

    /// A 32-bit integer at `relative` past the current position.
    func uint32(at relative: Int, bigEndian: Bool) -> UInt32 {
        let index = position + relative
        precondition(index >= 0 && index + 4 <= limit)
        let raw = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: index, as: UInt32.self) }
        return bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw)
    }

    /// A 64-bit integer at `relative` past the current position.
    func uint64(at relative: Int, bigEndian: Bool) -> UInt64 {
        let index = position + relative
        precondition(index >= 0 && index + 8 <= limit)
        let raw = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: index, as: UInt64.self) }
        return bigEndian ? UInt64(bigEndian: raw) : UInt64(littleEndian: raw)
    }
}

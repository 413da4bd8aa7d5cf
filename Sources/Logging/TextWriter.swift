#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// `write(2)`, named apart from `TextWriter.write(_:)`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}

/// A destination for text output, such as standard output or a test's capture buffer.
///
/// Each `write` call is atomic with respect to other writes on the same writer, so one log line
/// written from several tasks never interleaves with another.
public protocol TextWriter: Sendable {
    /// Appends `text` to the output.
    func write(_ text: String)
    /// Appends UTF-8 bytes to the output (many JSON lines at once, made as bytes).
    func write(utf8 bytes: [UInt8])
    /// Pushes buffered output to its destination.
    func flush()
    /// True once the destination's reader has gone (a closed pipe): a command whose only
    /// purpose is this output (`watch`) may stop.
    var isReaderGone: Bool { get }
    /// The first write that failed for another reason than a gone reader (a full disk,
    /// `/dev/full`, an I/O error); nothing more is written after it. The command runner turns
    /// it into an error and a non-zero exit.
    var writeError: OutputWriteError? { get }
}

extension TextWriter {
    /// Writes the bytes as text; writers that buffer bytes take them as they are.
    public func write(utf8 bytes: [UInt8]) {
        write(String(decoding: bytes, as: UTF8.self))
    }

    public var isReaderGone: Bool { false }
    public var writeError: OutputWriteError? { nil }
}

/// A write to an output stream that failed (other than `EPIPE`): the `errno` and its words.
public struct OutputWriteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` of the failed `write(2)`, e.g. `ENOSPC`.
    public let code: Int32

    public init(code: Int32) {
        self.code = code
    }

    /// `strerror`'s words: "No space left on device".
    public var description: String { String(cString: strerror(code)) }
}

extension TextWriter {
    /// Appends `line` followed by a newline.
    public func writeLine(_ line: String = "") {
        write(line + "\n")
    }
}

/// A `TextWriter` that keeps everything written in memory, for tests.
public final class CapturingWriter: TextWriter {
    private let buffer = Mutex("")

    public init() {}

    public func write(_ text: String) {
        buffer.withLock { $0 += text }
    }

    public func flush() {}

    /// Everything written so far.
    public var text: String {
        buffer.withLock { $0 }
    }

    /// Everything written so far, split into lines without their terminators.
    public var lines: [String] {
        var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if parts.last == "" { parts.removeLast() }
        return parts
    }
}

/// A `TextWriter` on a file descriptor (stdout, stderr) with its own buffer.
///
/// `.full` buffering writes when 64 KiB have gathered or on `flush()`; `.line` writes every
/// complete line at once; `.none` writes each `write` call straight through. Once the
/// descriptor reports `EPIPE` (the reader is gone) the writer quietly stops writing to it; any
/// other failure (`ENOSPC` on a full disk) is kept as `writeError` and stops it too.
public final class FileDescriptorWriter: TextWriter {
    /// When buffered bytes reach the descriptor.
    public enum Buffering: Sendable {
        case none
        case line
        case full
    }

    private static let fullBufferLimit = 64 * 1024

    /// The descriptor written to; not closed by this writer.
    public let fileDescriptor: Int32
    /// The buffering policy chosen at creation.
    public let buffering: Buffering
    private let pending = Mutex<[UInt8]>([])
    private let readerGone = Atomic<Bool>(false)
    /// The failed write's errno, 0 while none failed.
    private let failedCode = Atomic<Int32>(0)

    public init(fileDescriptor: Int32, buffering: Buffering) {
        self.fileDescriptor = fileDescriptor
        self.buffering = buffering
    }

    /// Standard output: line-buffered on a terminal, fully buffered otherwise.
    public static func standardOutput() -> FileDescriptorWriter {
        FileDescriptorWriter(fileDescriptor: 1, buffering: isatty(1) == 1 ? .line : .full)
    }

    /// Standard error: every write goes straight through.
    public static func standardError() -> FileDescriptorWriter {
        FileDescriptorWriter(fileDescriptor: 2, buffering: .none)
    }

    public func write(_ text: String) {
        pending.withLock { buffer in
            buffer.append(contentsOf: text.utf8)
            pass(&buffer)
        }
    }

    public func write(utf8 bytes: [UInt8]) {
        pending.withLock { buffer in
            // A large block with nothing pending goes out as it is, not copied into the buffer first.
            if buffering == .full, buffer.isEmpty, bytes.count >= Self.fullBufferLimit {
                writeAll(bytes[...])
                return
            }
            buffer.append(contentsOf: bytes)
            pass(&buffer)
        }
    }

    /// Writes what the buffering policy says is due of `buffer` and keeps the rest.
    private func pass(_ buffer: inout [UInt8]) {
        switch buffering {
        case .none:
            writeAll(buffer[...])
            buffer.removeAll(keepingCapacity: true)
        case .line:
            if let lastNewline = buffer.lastIndex(of: UInt8(ascii: "\n")) {
                writeAll(buffer[...lastNewline])
                buffer.removeSubrange(...lastNewline)
            }
        case .full:
            if buffer.count >= Self.fullBufferLimit {
                writeAll(buffer[...])
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    public func flush() {
        pending.withLock { buffer in
            writeAll(buffer[...])
            buffer.removeAll(keepingCapacity: true)
        }
    }

    deinit {
        flush()
    }

    /// Whether the descriptor's reader has gone (`EPIPE`): nothing more is written to it.
    public var isReaderGone: Bool { readerGone.load(ordering: .relaxed) }

    public var writeError: OutputWriteError? {
        let code = failedCode.load(ordering: .relaxed)
        return code == 0 ? nil : OutputWriteError(code: code)
    }

    /// Writes every byte, retrying after signals, short writes and a full non-blocking
    /// descriptor; gives up on any other error, keeping it as `writeError`.
    private func writeAll(_ bytes: ArraySlice<UInt8>) {
        guard !readerGone.load(ordering: .relaxed), failedCode.load(ordering: .relaxed) == 0 else { return }
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = systemWrite(fileDescriptor, base + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else if written < 0 && errno == EPIPE {
                    readerGone.store(true, ordering: .relaxed)
                    return
                } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    var ready = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, 1000)
                } else {
                    // write(2) returning 0 for a non-empty buffer is no progress: report it as EIO.
                    failedCode.store(written < 0 ? errno : EIO, ordering: .relaxed)
                    return
                }
            }
        }
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns an input named on the command line into something that can be opened more than once.
///
/// `decode` and `replay` look at a file's first bytes to pick a reader and then open it again;
/// a FIFO (`mkfifo`, `<(…)`) would lose those first bytes. A FIFO or socket is therefore copied,
/// up to `limit` bytes, into a private (0600) temporary file that `release()` removes. Regular
/// files and devices are used in place; a directory or a missing path is `noInput` (exit 66).
public final class InputStreamSpool {
    /// The most a stream may carry (1 GiB): beyond it the input is refused, not truncated.
    public static let defaultLimit = 1 << 30

    /// The path to read: the original, or the spooled copy.
    public let path: String
    private let temporary: String?

    public init(path original: String, limit: Int = InputStreamSpool.defaultLimit) throws {
        var status = stat()
        guard stat(original, &status) == 0 else {
            let code = errno
            throw RuntimeError.noInput(
                path: original, reason: code == ENOENT ? "no such file or directory" : String(cString: strerror(code)))
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            throw RuntimeError.noInput(path: original, reason: "is a directory")
        case S_IFIFO, S_IFSOCK:
            let copy = try Self.spool(original, limit: limit)
            path = copy
            temporary = copy
        default:
            path = original
            temporary = nil
        }
    }

    deinit { release() }

    /// Removes the spooled copy, if any.
    public func release() {
        if let temporary { unlink(temporary) }
    }

    private static func spool(_ source: String, limit: Int) throws -> String {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw RuntimeError.noInput(path: source, reason: String(cString: strerror(errno))) }
        defer { close(input) }
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/ingestd-stream-XXXXXX").utf8CString)
        let output = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard output >= 0 else {
            throw RuntimeError.temporaryCopyUncreatable(source: source, directory: directory, reason: String(cString: strerror(errno)))
        }
        let copyPath = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                let code = errno
                unlink(copyPath)
                throw RuntimeError.noInput(path: source, reason: String(cString: strerror(code)))
            }
            if count == 0 { break }
            total += count
            guard total <= limit else {
                unlink(copyPath)
                throw RuntimeError.streamTooLong(source: source, limit: limit)
            }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return -1 }
                    return write(output, base + offset, count - offset)
                }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    let code = errno
                    unlink(copyPath)
                    throw RuntimeError.temporaryCopyUnwritable(source: source, reason: String(cString: strerror(code)))
                }
                offset += written
            }
        }
        return copyPath
    }
}

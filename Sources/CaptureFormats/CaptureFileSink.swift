#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// close(2), reachable from a type that has its own `close()`.
private func posixClose(_ descriptor: Int32) { _ = close(descriptor) }

/// write(2), reachable from a type that has its own `write`.
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

/// Where a capture writer's bytes go: a file created 0600 (buffered, written in 64 KiB chunks) or
/// memory. Shared by `BTSnoopWriter` and `PcapNGWriter`.
struct CaptureFileSink {
    private var fileDescriptor: Int32
    private let path: String?
    private var pending: [UInt8] = []
    /// Everything written, for an in-memory sink.
    private(set) var memory: [UInt8] = []
    private let flushThreshold = 64 * 1024

    /// Creates (or truncates) `path` with mode 0600.
    init(path: String) throws(CaptureError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .cannotWrite(path: path, errno: errno) }
        fileDescriptor = descriptor
        self.path = path
    }

    /// A sink that keeps the bytes in memory.
    init() {
        fileDescriptor = -1
        path = nil
    }

    var isFile: Bool { fileDescriptor >= 0 }

    /// Appends bytes produced by `build`, flushing to the file past the threshold.
    mutating func append(_ build: (inout [UInt8]) -> Void) throws(CaptureError) {
        if fileDescriptor >= 0 {
            build(&pending)
            if pending.count >= flushThreshold { try flush() }
        } else {
            build(&memory)
        }
    }

    /// Writes buffered bytes to the file.
    mutating func flush() throws(CaptureError) {
        guard fileDescriptor >= 0, !pending.isEmpty else { return }
        var written = 0
        while written < pending.count {
            let start = written
            let descriptor = fileDescriptor
            let result = pending.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return posixWrite(descriptor, base + start, raw.count - start)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw .cannotWrite(path: path ?? "", errno: errno)
            }
            written += result
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes the file; later writes go nowhere.
    mutating func close() throws(CaptureError) {
        guard fileDescriptor >= 0 else { return }
        defer {
            posixClose(fileDescriptor)
            fileDescriptor = -1
        }
        try flush()
    }
}

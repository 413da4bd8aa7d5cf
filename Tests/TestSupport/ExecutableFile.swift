import Foundation

/// Writes executables (test plugins) so that starting them cannot fail with "Text file busy".
///
/// A file open for writing cannot be executed (ETXTBSY), and a process another test starts while
/// the file is open inherits the writing descriptor unless it is close-on-exec, keeping it open
/// for as long as that process lives. Here the descriptor is close-on-exec, and the file appears
/// under its name (rename) only once it is written and closed.
public enum ExecutableFile {
    public enum WriteError: Error, CustomStringConvertible {
        case failed(path: String, step: String, errno: Int32)
        public var description: String {
            switch self {
            case .failed(let path, let step, let code): "\(step) \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Writes `bytes` to `path` with `mode`, replacing what is there.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o755) throws {
        let temporary = path + ".partial-\(UUID().uuidString)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw WriteError.failed(path: temporary, step: "open", errno: errno) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else {
                let code = errno
                close(descriptor)
                unlink(temporary)
                throw WriteError.failed(path: temporary, step: "write", errno: code)
            }
            offset += written
        }
        // open(2) applies the umask: set the mode asked for.
        fchmod(descriptor, mode)
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw WriteError.failed(path: path, step: "rename", errno: code)
        }
    }

    /// Copies the file at `source` to `path` with `mode`, as `write` does.
    public static func copy(_ source: String, to path: String, mode: mode_t = 0o755) throws {
        try write(Array(try Data(contentsOf: URL(fileURLWithPath: source))), to: path, mode: mode)
    }
}

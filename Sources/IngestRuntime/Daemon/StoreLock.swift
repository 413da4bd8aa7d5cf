import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's claim on a store: an exclusive `flock(2)` on `<store>.lock`, holding the PID of
/// the daemon that took it, released by the kernel when the process ends (even by SIGKILL).
///
/// Two daemons on one store would both open devices and race to acknowledge their histories;
/// the second one refuses to start and names the first.
public final class StoreLock {
    /// Why the lock was not taken.
    public enum LockError: Error, Equatable, CustomStringConvertible {
        /// Another process holds the lock; `pid` is what it wrote in the file (nil if unreadable).
        case heldByAnotherProcess(lockPath: String, pid: Int32?)
        /// The lock file could not be opened or locked (`errno`).
        case cannotLock(lockPath: String, errno: Int32)

        public var description: String {
            switch self {
            case .heldByAnotherProcess(let lockPath, let pid?):
                "another ingestd daemon (PID \(pid)) is using this store (lock \(lockPath)); stop it first"
            case .heldByAnotherProcess(let lockPath, nil):
                "another ingestd daemon is using this store (lock \(lockPath)); stop it first"
            case .cannotLock(let lockPath, let code):
                "cannot lock \(lockPath): \(String(cString: strerror(code)))"
            }
        }
    }

    /// The lock file's path for a store.
    static func lockPath(forStore storePath: String) -> String { storePath + ".lock" }

    private let descriptor: Int32
    /// The lock file.
    let path: String

    /// Takes the lock for `storePath` or throws `LockError` at once (never waits).
    public init(storePath: String) throws {
        path = Self.lockPath(forStore: storePath)
        // O_NOFOLLOW: a symlink planted where the lock file goes is refused, never followed.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw LockError.cannotLock(lockPath: path, errno: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = Self.readPID(descriptor)
            close(descriptor)
            if code == EWOULDBLOCK { throw LockError.heldByAnotherProcess(lockPath: path, pid: holder) }
            throw LockError.cannotLock(lockPath: path, errno: code)
        }
        self.descriptor = descriptor
        let text = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = text.withCString { pwrite(descriptor, $0, strlen($0), 0) }
    }

    deinit {
        // The file stays (removing it would race with a daemon starting now); the lock goes.
        close(descriptor)
    }

    /// The PID written in the lock file (at most 32 bytes read), or nil.
    private static func readPID(_ descriptor: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes.prefix(count), as: UTF8.self)
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

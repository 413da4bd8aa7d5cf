import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a store file or its directory is refused: health data must stay private to its owner.
public enum StoreFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store's directory is writable by every user (mode 0777, 1777 like /tmp): another user
    /// could plant the store, its `-wal`/`-shm` or a symlink in its place.
    case directoryWritableByOthers(directory: String, mode: UInt32)
    /// The store path is a symlink in a directory that others may write to.
    case symlinkInSharedDirectory(path: String, directory: String)
    /// The file (store, `-wal` or `-shm`) can be read or written by others and belongs to
    /// another user, so its mode cannot be tightened.
    case looseModeNotOwned(path: String, mode: UInt32, owner: UInt32)
    /// Not a regular file (a directory, a FIFO, a device).
    case notARegularFile(path: String)
    /// A system call on the path failed (`errno`).
    case cannotInspect(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .directoryWritableByOthers(let directory, let mode):
            "refusing a store in \(directory) (mode \(Self.octal(mode))): every user may write there; "
                + "use a private directory such as the default ~/.local/share/ingestd"
        case .symlinkInSharedDirectory(let path, let directory):
            "refusing \(path): a symlink in \(directory), which other users may write to"
        case .looseModeNotOwned(let path, let mode, let owner):
            "refusing \(path): mode \(Self.octal(mode)) lets other users read or write it, and it belongs to "
                + "uid \(owner), so ingestd cannot make it 0600; ask its owner to run chmod 600"
        case .notARegularFile(let path):
            "\(path) is not a regular file"
        case .cannotInspect(let path, let code):
            "cannot inspect \(path): \(String(cString: strerror(code)))"
        }
    }

    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// The checks made on a store's path before SQLite opens it (DESIGN.md "Store files"):
///
/// - a store in a directory every user may write to (0777, 1777) is refused;
/// - a store path that is a symlink is refused when its directory is writable by anyone but
///   its owner (group or others) or belongs to another user; elsewhere it is resolved and the
///   target is checked like any store;
/// - the store and its existing `-wal`/`-shm` must be regular files; one that others may read
///   or write is tightened to 0600 when the user owns it and refused otherwise.
///
/// Returns the path to hand to SQLite: `path` itself, or the symlink's resolved target.
enum StoreFileGuard {
    static func check(path: String) throws(StoreFileError) -> String {
        var resolved = path
        let directory = Self.directory(of: path)
        let directoryStatus = try status(of: directory, following: true)
        var link = stat()
        if lstat(path, &link) == 0, (link.st_mode & S_IFMT) == S_IFLNK {
            let mode = UInt32(directoryStatus.st_mode)
            if mode & 0o022 != 0 || (directoryStatus.st_uid != geteuid() && directoryStatus.st_uid != 0) {
                throw .symlinkInSharedDirectory(path: path, directory: directory)
            }
            guard let real = realpath(path, nil) else {
                // A dangling symlink: SQLite would create the target; refuse to follow it blindly.
                throw .cannotInspect(path: path, errno: errno)
            }
            resolved = String(cString: real)
            free(real)
            return try check(path: resolved)
        }
        let directoryMode = UInt32(directoryStatus.st_mode)
        if directoryMode & 0o002 != 0 {
            throw .directoryWritableByOthers(directory: directory, mode: directoryMode)
        }
        for file in [resolved, resolved + "-wal", resolved + "-shm"] {
            try tighten(file)
        }
        return resolved
    }

    /// Makes an existing `file` 0600 if the user owns it; refuses a loose one owned by others.
    /// A missing file is fine (it is created 0600).
    ///
    /// The file is inspected by path (`lstat`, `chmod`), never opened: closing a descriptor of a
    /// database file drops every POSIX lock this process holds on it, so opening the store (or
    /// its `-wal`/`-shm`) behind the back of SQLite connections already open in the same process
    /// (the daemon's ingest service and its sink workers) broke their locking: a sink re-read on
    /// SIGHUP failed with SQLITE_IOERR_SHORT_READ.
    private static func tighten(_ file: String) throws(StoreFileError) {
        var status = stat()
        guard lstat(file, &status) == 0 else {
            let code = errno
            if code == ENOENT { return }
            // Not inspectable by us: SQLite's open reports it (permission denied) with the store's name.
            if code == EACCES { return }
            throw .cannotInspect(path: file, errno: code)
        }
        if (status.st_mode & S_IFMT) == S_IFLNK {
            throw .symlinkInSharedDirectory(path: file, directory: directory(of: file))
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: file) }
        let mode = UInt32(status.st_mode)
        guard mode & 0o077 != 0 else { return }
        guard status.st_uid == geteuid() else {
            throw .looseModeNotOwned(path: file, mode: mode, owner: UInt32(status.st_uid))
        }
        guard chmod(file, 0o600) == 0 else { throw .cannotInspect(path: file, errno: errno) }
    }

    private static func status(of path: String, following: Bool) throws(StoreFileError) -> stat {
        var status = stat()
        let result = following ? stat(path, &status) : lstat(path, &status)
        guard result == 0 else { throw .cannotInspect(path: path, errno: errno) }
        return status
    }

    static func directory(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}

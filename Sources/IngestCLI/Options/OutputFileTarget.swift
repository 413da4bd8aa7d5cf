import ArgumentParsing
import Foundation

/// The file an `--out FILE` option writes: absent or a regular file. Anything else (a FIFO, a
/// device node such as `/dev/null`, a directory, a socket, or a symlink to one of those) is
/// refused as a usage error naming the target, before any work starts: the export is written
/// beside it and renamed over it, which would turn a device node into a regular file.
enum OutputFileTarget {
    /// Throws unless `path` is absent or (after following symlinks) a regular file.
    static func check(_ path: String, argument: String = "--out") throws(UsageError) {
        var link = stat()
        guard lstat(path, &link) == 0 else { return }  // absent: created
        var target = stat()
        let isLink = link.st_mode & S_IFMT == S_IFLNK
        guard stat(path, &target) == 0 else {
            // A dangling symlink: the rename replaces the link, never anything it names.
            return
        }
        guard target.st_mode & S_IFMT != S_IFREG else { return }
        let kind = kindName(target.st_mode)
        throw UsageError.invalidValue(path, argument: argument,
                                      reason: (isLink ? "is a symbolic link to \(kind)" : "is \(kind)") + ", not a regular file")
    }

    /// `a FIFO`, `a character device`, … for a `st_mode`.
    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }
}

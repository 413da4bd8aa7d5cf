import ExternalAdapterProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where external adapters are looked for when no `--plugins DIR` is given.
public enum ExternalAdapterDirectories {
    /// The system-wide directory.
    public static let system = "/usr/lib/ingestd/adapters"

    /// `$HOME/.local/lib/ingestd/adapters` (when HOME is set), then ``system``.
    public static func defaults(environment: [String: String]) -> [String] {
        var directories: [String] = []
        if let home = environment["HOME"], !home.isEmpty {
            directories.append((home as NSString).appendingPathComponent(".local/lib/ingestd/adapters"))
        }
        directories.append(system)
        return directories
    }

    /// The `--plugins` directories if any were given, else the defaults.
    public static func resolve(_ given: [String], environment: [String: String]) -> [String] {
        given.isEmpty ? defaults(environment: environment) : given
    }
}

/// A file in a plugin directory named `ingestd-adapter-…`, with the reason it cannot be used, if any.
public struct PluginCandidate: Sendable, Hashable {
    /// The executable's path.
    public var path: String
    /// The `<id>` part of the file name (as written; it may be invalid, see `problem`).
    public var id: String
    /// Why the file is not used, before running it (bad name, not executable, unsafe permissions,
    /// shadowed by an earlier directory); nil when it may be described.
    public var problem: String?

    public init(path: String, id: String, problem: String?) {
        self.path = path
        self.id = id
        self.problem = problem
    }
}

/// Finds plugin executables. Directories are searched in order; within one, files are taken in
/// name order. A missing directory is not an error.
///
/// A plugin runs with the daemon's rights, so a file anyone else may change is refused: it must
/// be owned by root or by the daemon's user and not be writable by group or others, and neither
/// may its directory be writable by others.
public enum PluginDiscovery {
    public static func scan(directories: [String]) -> [PluginCandidate] {
        var candidates: [PluginCandidate] = []
        var firstPathByID: [String: String] = [:]
        for directory in directories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { continue }
            let directoryProblem = unsafeDirectoryProblem(directory)
            for name in names.sorted() {
                guard let id = ExternalAdapterProtocol.id(fromExecutableName: name) else { continue }
                let path = (directory as NSString).appendingPathComponent(name)
                var problem = directoryProblem ?? fileProblem(path: path, id: id)
                if problem == nil {
                    if let first = firstPathByID[id] {
                        problem = "shadowed by \(first)"
                    } else {
                        firstPathByID[id] = path
                    }
                }
                candidates.append(PluginCandidate(path: path, id: id, problem: problem))
            }
        }
        return candidates
    }

    static func fileProblem(path: String, id: String) -> String? {
        guard ExternalAdapterProtocol.isValidID(id) else {
            return "the file name must be \(ExternalAdapterProtocol.executablePrefix)<id> with a kebab-case id, not \"\(id)\""
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return "cannot read: \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "not a regular file" }
        guard access(path, X_OK) == 0 else { return "not executable (chmod +x \(path))" }
        if info.st_mode & 0o022 != 0 {
            return "writable by group or others, so anyone could change what runs (chmod go-w \(path))"
        }
        if info.st_uid != 0 && info.st_uid != geteuid() {
            return "owned by uid \(info.st_uid), neither root nor the daemon's user (uid \(geteuid()))"
        }
        return nil
    }

    static func unsafeDirectoryProblem(_ directory: String) -> String? {
        var info = stat()
        guard stat(directory, &info) == 0 else { return nil }
        if info.st_mode & 0o002 != 0 {
            return "its directory \(directory) is writable by others"
        }
        return nil
    }
}

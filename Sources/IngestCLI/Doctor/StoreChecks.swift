import Foundation
import SQLiteStore

/// The store file (and its `-wal`/`-shm`) is a regular file only its owner may read and write
/// (0600), in a directory others may not write to. Read with `stat(2)` only: opening the store
/// would tighten the mode itself, and doctor changes nothing.
struct StorePermissionsCheck: DoctorCheck {
    let group = DoctorGroup.store
    let id = "storePermissions"

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let path = setting.storePath
        guard let info = DoctorFiles.status(path, follow: false) else {
            return [DoctorFinding(id, group, .warn, "no store at \(path) yet: nothing was ingested there",
                                  fix: "ingestd run creates it (or give the service's store with --store /var/lib/ingestd/health.sqlite)")]
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            return [DoctorFinding(id, group, .warn, "\(path) is a symlink: ingestd refuses it in a directory others may write to",
                                  fix: "point --store at the file itself")]
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            return [DoctorFinding(id, group, .fail, "\(path) is not a regular file", fix: "give --store the path of the store file")]
        }
        var findings: [DoctorFinding] = []
        for file in [path, path + "-wal", path + "-shm"] {
            guard let status = DoctorFiles.status(file), status.st_mode & 0o077 != 0 else { continue }
            findings.append(DoctorFinding(id, group, subject: file == path ? nil : file, .fail,
                                          "\(file) has mode \(DoctorFiles.octal(status.st_mode)): other users can read health data",
                                          fix: "chmod 600 \(DoctorFiles.shellQuoted(file))"))
        }
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        if let status = DoctorFiles.status(directory), status.st_mode & 0o002 != 0 {
            findings.append(DoctorFinding(id, group, subject: directory, .fail,
                                          "the store's directory \(directory) has mode \(DoctorFiles.octal(status.st_mode)): every user may write there",
                                          fix: "move the store to a private directory (the default ~/.local/share/ingestd, or /var/lib/ingestd for the service)"))
        }
        if access(path, R_OK | W_OK) != 0 {
            findings.append(DoctorFinding(id, group, .fail, "\(path) is not readable and writable by this user (\(DoctorFiles.reason(errno)))",
                                          fix: "run as its owner (the service's store: sudo -u ingestd ingestd doctor)"))
        }
        return findings.isEmpty ? [DoctorFinding(id, group, .ok, "\(path) has mode \(DoctorFiles.octal(info.st_mode))")] : findings
    }
}

/// The store is a sound SQLite database (`PRAGMA quick_check`) with a schema this ingestd reads.
struct StoreContentsCheck: DoctorCheck {
    let group = DoctorGroup.store
    let id = "storeIntegrity"
    var timeLimit: Duration { .seconds(30) }

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let path = setting.storePath
        guard FileManager.default.fileExists(atPath: path) else {
            return [DoctorFinding(id, group, .skip, "no store to check yet")]
        }
        let inspection: StoreInspection
        do {
            inspection = try StoreInspection.inspect(path: path)
        } catch {
            return [DoctorFinding(id, group, .fail, "\(path) cannot be read as a database: \(error)",
                                  fix: "restore the store from a backup, or move it aside (mv \(DoctorFiles.shellQuoted(path)) "
                                    + "\(DoctorFiles.shellQuoted(path + ".broken"))) and let ingestd run start a new one")]
        }
        var findings: [DoctorFinding] = []
        if inspection.isIntact {
            findings.append(DoctorFinding(id, group, .ok, "quick_check: ok"))
        } else {
            findings.append(DoctorFinding(id, group, .fail, "quick_check found damage: " + inspection.problems.joined(separator: "; "),
                                          fix: "sqlite3 \(DoctorFiles.shellQuoted(path)) .recover | sqlite3 recovered.sqlite, "
                                            + "or restore a backup"))
        }
        let version = inspection.schemaVersion
        let current = inspection.currentSchemaVersion
        if !inspection.isIngestdStore, version == 0 {
            findings.append(DoctorFinding("storeSchema", group, .warn, "\(path) holds no ingestd schema yet (an empty file)",
                                          fix: "ingestd run sets it up"))
        } else if !inspection.isIngestdStore {
            findings.append(DoctorFinding("storeSchema", group, .fail, "\(path) is a SQLite database of another program",
                                          fix: "give --store the ingestd store's path"))
        } else if version > current {
            findings.append(DoctorFinding("storeSchema", group, .fail,
                                          "schema version \(version) is newer than this ingestd's \(current) (written by a newer version)",
                                          fix: "upgrade ingestd"))
        } else if version < current {
            findings.append(DoctorFinding("storeSchema", group, .warn, "schema version \(version); this ingestd migrates it to \(current) when it next opens it for writing",
                                          fix: "ingestd run (or any writing command) migrates it; back the file up first if you may downgrade"))
        } else {
            findings.append(DoctorFinding("storeSchema", group, .ok, "schema version \(version) (current)"))
        }
        return findings
    }
}

/// The store's file system has room (below 64 MiB free fails, below 512 MiB warns).
struct DiskSpaceCheck: DoctorCheck {
    let group = DoctorGroup.store
    let id = "diskSpace"
    static let failBelow: UInt64 = 64 << 20
    static let warnBelow: UInt64 = 512 << 20

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        var directory = (setting.storePath as NSString).deletingLastPathComponent
        if directory.isEmpty { directory = "." }
        while !FileManager.default.fileExists(atPath: directory), directory != "/", !directory.isEmpty {
            directory = (directory as NSString).deletingLastPathComponent
        }
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else {
            return [DoctorFinding(id, group, .skip, "cannot read the free space of \(directory) (\(DoctorFiles.reason(errno)))")]
        }
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize)
        let text = ByteCountFormatter.string(fromByteCount: Int64(clamping: free), countStyle: .binary)
        if free < Self.failBelow {
            return [DoctorFinding(id, group, .fail, "only \(text) free on \(directory): commits will fail",
                                  fix: "free space on that file system (df -h \(DoctorFiles.shellQuoted(directory)))")]
        }
        if free < Self.warnBelow {
            return [DoctorFinding(id, group, .warn, "\(text) free on \(directory)", fix: "free space before it runs out (df -h)")]
        }
        return [DoctorFinding(id, group, .ok, "\(text) free on \(directory)")]
    }
}

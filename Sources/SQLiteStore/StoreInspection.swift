import Foundation

/// What `ingestd doctor` learns about a store file without changing it: opened read-only (the
/// file's mode is not tightened, nothing is migrated), SQLite's `PRAGMA quick_check` and the
/// schema version against the one this build writes.
public struct StoreInspection: Sendable, Hashable {
    /// `ok`, or the first problems `quick_check` reported (at most `maximumProblems`).
    public var problems: [String]
    /// The file's `PRAGMA user_version`.
    public var schemaVersion: Int32
    /// The schema version this build migrates stores to.
    public var currentSchemaVersion: Int32
    /// Whether `PRAGMA application_id` marks the file as an ingestd store (0: a new, empty file).
    public var isIngestdStore: Bool

    /// How many `quick_check` lines are kept.
    public static let maximumProblems = 5

    /// Whether SQLite found the file sound.
    public var isIntact: Bool { problems.isEmpty }

    /// Inspects the store at `path` read-only. `full` runs `PRAGMA integrity_check` (reads every
    /// index entry; slow on a large store) instead of `quick_check`.
    /// - Throws: `SQLiteError` when the file cannot be opened or is not a database at all
    ///   (`SQLITE_NOTADB`), which is itself a failed check.
    public static func inspect(path: String, full: Bool = false) throws -> StoreInspection {
        var configuration = Connection.Configuration()
        configuration.journalMode = nil
        configuration.busyTimeout = .seconds(2)
        let connection = try Connection(path: path, mode: .readOnly, configuration: configuration)
        defer { connection.close() }
        let pragma = full ? "integrity_check(\(maximumProblems))" : "quick_check(\(maximumProblems))"
        let lines = try connection.prepare("PRAGMA \(pragma)").mapRows { $0.string(at: 0) ?? "" }
        let problems = lines == ["ok"] ? [] : lines
        let version = Int32(truncatingIfNeeded: try connection.scalarInt64("PRAGMA user_version") ?? 0)
        let application = Int32(truncatingIfNeeded: try connection.scalarInt64("PRAGMA application_id") ?? 0)
        return StoreInspection(problems: problems, schemaVersion: version,
                               currentSchemaVersion: HealthStore.migrator.latestVersion,
                               isIngestdStore: application == HealthStore.applicationID)
    }
}

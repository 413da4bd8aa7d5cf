import CSQLite

/// Why a database file could not be opened as an ingestd store.
public enum StoreOpenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An SQLite database, but another application's (foreign `application_id`, or tables
    /// without our id).
    case notAnIngestdStore(path: String)
    /// Not an SQLite database at all (SQLite reported `SQLITE_NOTADB`).
    case notADatabase(path: String)
    /// An SQLite file too damaged to read its header or schema (`SQLITE_CORRUPT`), e.g. truncated.
    case corrupt(path: String)
    /// Written by a newer ingestd: its schema version is beyond what this build knows.
    case newerThanThisBuild(path: String, found: Int32, supported: Int32)
    /// An older schema opened read-only: it needs migrating, which needs write access.
    case needsMigration(path: String, found: Int32, required: Int32)
    /// A migration failed and was rolled back; `reason` is the error's description (it never
    /// contains bound values).
    case migrationFailed(path: String, version: Int32, name: String, reason: String)

    /// One line, naming the file.
    public var description: String {
        switch self {
        case .notAnIngestdStore(let path):
            "\(path) is an SQLite database that does not belong to ingestd"
        case .notADatabase(let path):
            "\(path) is not an SQLite database"
        case .corrupt(let path):
            "\(path) is a damaged SQLite database"
        case .newerThanThisBuild(let path, let found, let supported):
            "\(path) has schema version \(found), newer than the \(supported) this build supports"
        case .needsMigration(let path, let found, let required):
            "\(path) has schema version \(found) and needs migrating to \(required), but is open read-only"
        case .migrationFailed(let path, let version, let name, let reason):
            "migration \(version) (\(name)) of \(path) failed: \(reason)"
        }
    }
}

/// One schema step: `version` becomes the database's `PRAGMA user_version` once it is applied.
public struct Migration: Sendable {
    /// The schema version this migration produces (> 0, strictly increasing in a `Migrator`).
    public let version: Int32
    /// A short human name, for errors and logs.
    public let name: String
    /// Runs the migration with `PRAGMA foreign_keys = OFF` (needed to rebuild tables), then
    /// checks `PRAGMA foreign_key_check` before committing.
    public let disablesForeignKeys: Bool
    let apply: @Sendable (Connection) throws -> Void

    /// A migration that runs an SQL script.
    public init(version: Int32, name: String, disablesForeignKeys: Bool = false, sql: String) {
        self.init(version: version, name: name, disablesForeignKeys: disablesForeignKeys) {
            try $0.execute(sql: sql)
        }
    }

    /// A migration written as code (runs inside the migration's transaction).
    public init(
        version: Int32, name: String, disablesForeignKeys: Bool = false,
        _ apply: @escaping @Sendable (Connection) throws -> Void
    ) {
        self.version = version
        self.name = name
        self.disablesForeignKeys = disablesForeignKeys
        self.apply = apply
    }
}

/// Brings a database to the newest schema: migrations keyed on `PRAGMA user_version`, each in
/// its own IMMEDIATE transaction, and the file marked as ours with `PRAGMA application_id`.
///
/// A file is accepted if its application_id is ours, or if it is empty (application_id 0, no
/// schema objects, user_version 0): then the first migration also sets the application_id.
/// Several processes may migrate the same file at once: each step re-reads `user_version`
/// inside its transaction and skips work already done.
public struct Migrator: Sendable {
    /// The `PRAGMA application_id` that marks our files (non-zero).
    public let applicationID: Int32
    /// The migrations in ascending version order.
    public let migrations: [Migration]

    /// - Precondition: `applicationID` is non-zero and versions are > 0 and strictly
    ///   increasing (a programming error otherwise, caught by any test that builds the list).
    public init(applicationID: Int32, migrations: [Migration]) {
        precondition(applicationID != 0, "application_id 0 means 'no application'")
        var previous: Int32 = 0
        for migration in migrations {
            precondition(migration.version > previous, "migration versions must be > 0 and increasing")
            previous = migration.version
        }
        self.applicationID = applicationID
        self.migrations = migrations
    }

    /// The newest schema version this build knows (0 if there are no migrations).
    public var latestVersion: Int32 { migrations.last?.version ?? 0 }

    /// Opens the store at `path` and migrates it: the identity checks run before anything is
    /// written, so a foreign or newer file is left untouched (not even switched to WAL).
    /// Errors are `StoreOpenError`, or `SQLiteError` for other failures (missing file with
    /// `.readWrite`, permissions, I/O).
    public func openDatabase(
        path: String,
        mode: Connection.OpenMode = .createIfMissing,
        configuration: Connection.Configuration = Connection.Configuration()
    ) throws -> Connection {
        var openingConfiguration = configuration
        openingConfiguration.journalMode = nil
        let connection: Connection
        do {
            connection = try Connection(path: path, mode: mode, configuration: openingConfiguration)
        } catch let error as SQLiteError {
            throw Self.openError(error, path: path)
        }
        do {
            _ = try checkIdentity(of: connection)
            if let journalMode = configuration.journalMode, mode != .readOnly, path != ":memory:" {
                try mapOpenErrors(path: path) { try connection.setJournalMode(journalMode) }
            }
            try migrate(connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Checks that the connection's database is ours (or empty) and not newer than this build;
    /// returns its current schema version.
    @discardableResult
    public func checkIdentity(of connection: Connection) throws -> Int32 {
        let path = connection.path
        return try mapOpenErrors(path: path) {
            let foundID = try readInt32Pragma("application_id", connection)
            let version = try readInt32Pragma("user_version", connection)
            if foundID != applicationID {
                guard foundID == 0, version == 0 else { throw StoreOpenError.notAnIngestdStore(path: path) }
                let objects = try connection.scalarInt64("SELECT count(*) FROM sqlite_schema") ?? 0
                guard objects == 0 else { throw StoreOpenError.notAnIngestdStore(path: path) }
            }
            guard version >= 0 else { throw StoreOpenError.notAnIngestdStore(path: path) }
            guard version <= latestVersion else {
                throw StoreOpenError.newerThanThisBuild(path: path, found: version, supported: latestVersion)
            }
            return version
        }
    }

    /// Checks identity, then applies every migration newer than the database's `user_version`,
    /// each in its own IMMEDIATE transaction. Returns the versions applied by this call.
    @discardableResult
    public func migrate(_ connection: Connection) throws -> [Int32] {
        let path = connection.path
        let current = try checkIdentity(of: connection)
        guard current < latestVersion else { return [] }
        if connection.mode == .readOnly {
            throw StoreOpenError.needsMigration(path: path, found: current, required: latestVersion)
        }
        var applied: [Int32] = []
        for migration in migrations where migration.version > current {
            if try apply(migration, to: connection) { applied.append(migration.version) }
        }
        return applied
    }

    /// Applies one migration unless another connection got there first; true if it ran here.
    private func apply(_ migration: Migration, to connection: Connection) throws -> Bool {
        let path = connection.path
        let restoreForeignKeys = migration.disablesForeignKeys && connection.configuration.foreignKeys
        if restoreForeignKeys { try connection.execute(sql: "PRAGMA foreign_keys = OFF") }
        defer { if restoreForeignKeys { try? connection.execute(sql: "PRAGMA foreign_keys = ON") } }
        do {
            return try connection.transaction(.immediate) {
                let version = try readInt32Pragma("user_version", connection)
                if version >= migration.version {
                    guard version <= latestVersion else {
                        throw StoreOpenError.newerThanThisBuild(path: path, found: version, supported: latestVersion)
                    }
                    return false
                }
                if version == 0 {
                    try connection.execute(sql: "PRAGMA application_id = \(applicationID)")
                }
                try migration.apply(connection)
                if migration.disablesForeignKeys {
                    let violations = try connection.prepare("PRAGMA foreign_key_check").mapRows { _ in () }.count
                    guard violations == 0 else {
                        throw SQLiteError(
                            code: Self.constraintForeignKey,
                            message: "foreign_key_check found \(violations) violation(s)",
                            sql: "PRAGMA foreign_key_check"
                        )
                    }
                }
                try connection.execute(sql: "PRAGMA user_version = \(migration.version)")
                return true
            }
        } catch let error as StoreOpenError {
            throw error
        } catch {
            throw StoreOpenError.migrationFailed(
                path: path, version: migration.version, name: migration.name, reason: "\(error)")
        }
    }

    private static let constraintForeignKey = SQLITE_CONSTRAINT | (3 << 8)

    private func readInt32Pragma(_ name: String, _ connection: Connection) throws -> Int32 {
        let value = try connection.scalarInt64("PRAGMA \(name)") ?? 0
        return Int32(truncatingIfNeeded: value)
    }

    /// Runs `body`, turning "not a database" and "corrupt" SQLite errors into `StoreOpenError`s.
    private func mapOpenErrors<T>(path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw Self.openError(error, path: path)
        }
    }

    private static func openError(_ error: SQLiteError, path: String) -> any Error {
        if error.isNotADatabase { return StoreOpenError.notADatabase(path: path) }
        if error.isCorrupt { return StoreOpenError.corrupt(path: path) }
        return error
    }
}

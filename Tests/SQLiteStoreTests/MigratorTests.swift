import Foundation
import Testing

@testable import SQLiteStore

@Suite("Migrator")
struct MigratorTests {
    static let applicationID: Int32 = 0x696E_6764  // "ingd"

    static let version1 = Migration(version: 1, name: "samples", sql: """
        CREATE TABLE sample(id INTEGER PRIMARY KEY, value REAL NOT NULL);
        CREATE INDEX sample_value ON sample(value);
        """)
    static let version2 = Migration(version: 2, name: "sample source") { connection in
        try connection.execute(sql: "ALTER TABLE sample ADD COLUMN source TEXT")
    }
    static let version3 = Migration(version: 3, name: "devices", sql: "CREATE TABLE device(id INTEGER PRIMARY KEY)")

    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path("health.sqlite")
    }

    func migrator(_ migrations: [Migration] = [version1, version2]) -> Migrator {
        Migrator(applicationID: Self.applicationID, migrations: migrations)
    }

    /// Writes a database with plain SQLite settings (rollback journal), as another program would.
    func writeForeignDatabase(_ sql: String) throws {
        var configuration = Connection.Configuration()
        configuration.journalMode = nil
        let connection = try Connection(path: path, configuration: configuration)
        try connection.execute(sql: sql)
        connection.close()
    }

    func fileBytes() throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    func expectOpenError(_ expected: StoreOpenError, migrator: Migrator? = nil, mode: Connection.OpenMode = .createIfMissing) {
        let migrator = migrator ?? self.migrator()
        let error = #expect(throws: StoreOpenError.self) {
            try migrator.openDatabase(path: path, mode: mode)
        }
        #expect(error == expected)
    }

    // MARK: Fresh and existing stores

    @Test("a new file gets every migration, our application_id, WAL and mode 0600")
    func freshStore() throws {
        let connection = try migrator().openDatabase(path: path)
        #expect(try connection.pragma("user_version") == .integer(2))
        #expect(try connection.pragma("application_id") == .integer(Int64(Self.applicationID)))
        #expect(try connection.pragma("journal_mode") == .text("wal"))
        try connection.execute(sql: "INSERT INTO sample(value, source) VALUES (1.5, 'scale')")
        #expect(permissionBits(path) == 0o600)
        #expect(permissionBits(path + "-wal") == 0o600)
        #expect(permissionBits(path + "-shm") == 0o600)
    }

    @Test("migrate returns the versions it applied: all, then none, then only the new one")
    func incremental() throws {
        let connection = try Connection(path: path)
        #expect(try migrator([Self.version1]).migrate(connection) == [1])
        try connection.execute(sql: "INSERT INTO sample(value) VALUES (2.5)")
        #expect(try migrator([Self.version1]).migrate(connection) == [])
        #expect(try migrator([Self.version1, Self.version2, Self.version3]).migrate(connection) == [2, 3])
        #expect(try connection.pragma("user_version") == .integer(3))
        #expect(try connection.scalar("SELECT value FROM sample") == .real(2.5))
        #expect(try migrator([Self.version1, Self.version2, Self.version3]).checkIdentity(of: connection) == 3)
    }

    @Test("a second connection finds the work done and applies nothing")
    func secondConnection() throws {
        let first = try migrator().openDatabase(path: path)
        let second = try Connection(path: path, mode: .readWrite)
        #expect(try migrator().migrate(second) == [])
        #expect(try first.pragma("user_version") == .integer(2))
    }

    @Test("an empty file made by someone else is a fresh store")
    func emptyFile() throws {
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let connection = try migrator().openDatabase(path: path, mode: .readWrite)
        #expect(try connection.pragma("user_version") == .integer(2))
    }

    @Test("in-memory databases migrate too")
    func inMemory() throws {
        let connection = try migrator().openDatabase(path: ":memory:")
        #expect(try connection.pragma("user_version") == .integer(2))
    }

    @Test("latestVersion is the newest migration's version")
    func latestVersion() {
        #expect(migrator().latestVersion == 2)
        #expect(migrator([]).latestVersion == 0)
    }

    // MARK: Not ours

    @Test("a database with another application_id is refused and left untouched")
    func foreignApplicationID() throws {
        try writeForeignDatabase("PRAGMA application_id = 1598903374; CREATE TABLE notes(body TEXT);")
        let before = try fileBytes()
        expectOpenError(.notAnIngestdStore(path: path))
        #expect(try fileBytes() == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a database without application_id but with tables is refused and left untouched")
    func foreignTables() throws {
        try writeForeignDatabase("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('x');")
        let before = try fileBytes()
        expectOpenError(.notAnIngestdStore(path: path))
        #expect(try fileBytes() == before)
        // Still in its own journal mode: we did not switch it to WAL.
        let check = try Connection(path: path, mode: .readOnly)
        #expect(try check.pragma("journal_mode") == .text("delete"))
    }

    @Test("a database without tables but with a user_version is not ours either")
    func foreignUserVersion() throws {
        try writeForeignDatabase("PRAGMA user_version = 3")
        expectOpenError(.notAnIngestdStore(path: path))
    }

    @Test("a store from a newer build is refused with both versions")
    func newerStore() throws {
        do {
            let connection = try migrator([Self.version1, Self.version2, Self.version3]).openDatabase(path: path)
            connection.close()
        }
        expectOpenError(.newerThanThisBuild(path: path, found: 3, supported: 2))
        let error = StoreOpenError.newerThanThisBuild(path: path, found: 3, supported: 2)
        #expect(error.description == "\(path) has schema version 3, newer than the 2 this build supports")
    }

    @Test("random bytes are not a database: a clear error and the file unchanged")
    func randomBytes() throws {
        var generator = SplitMix64(seed: 0x5EED)
        let bytes = Data((0..<8192).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        try bytes.write(to: URL(fileURLWithPath: path))
        expectOpenError(.notADatabase(path: path))
        expectOpenError(.notADatabase(path: path), mode: .readWrite)
        expectOpenError(.notADatabase(path: path), mode: .readOnly)
        #expect(try fileBytes() == bytes)
    }

    @Test("a text file is not a database", arguments: [
        "hello\n",
        "uuid,type,value\n0b8f,HKQuantityTypeIdentifierBodyMass,72.35\n",
        String(repeating: "a long line of plain text that fills more than one page\n", count: 200),
    ])
    func textFile(contents: String) throws {
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        expectOpenError(.notADatabase(path: path))
        #expect(try fileBytes() == Data(contents.utf8))
    }

    @Test("a truncated database gives .corrupt, not a crash")
    func truncatedDatabase() throws {
        do {
            let connection = try migrator().openDatabase(path: path)
            let insert = try connection.prepare("INSERT INTO sample(value) VALUES (?)")
            try connection.transaction {
                for value in 0..<2_000 { try insert.execute(binding: Double(value)) }
            }
            connection.close()  // last connection: checkpoints the WAL into the file
        }
        let whole = try fileBytes()
        #expect(whole.count > 8192)
        try whole.prefix(6000).write(to: URL(fileURLWithPath: path))
        expectOpenError(.corrupt(path: path))
    }

    // MARK: Failing and read-only

    @Test("a failing migration is rolled back alone; earlier ones stay committed")
    func failingMigration() throws {
        let broken = Migration(version: 2, name: "broken") { connection in
            try connection.execute(sql: "CREATE TABLE half_done(a)")
            try connection.execute(sql: "INSERT INTO no_such_table VALUES (1)")
        }
        let error = #expect(throws: StoreOpenError.self) {
            try migrator([Self.version1, broken]).openDatabase(path: path)
        }
        guard case .migrationFailed(let failedPath, let version, let name, let reason)? = error else {
            Issue.record("expected migrationFailed, got \(String(describing: error))")
            return
        }
        #expect(failedPath == path)
        #expect(version == 2)
        #expect(name == "broken")
        #expect(reason == "SQLITE_ERROR (1): no such table: no_such_table [sql: INSERT INTO no_such_table VALUES (1)]")

        let check = try Connection(path: path, mode: .readWrite)
        #expect(try check.pragma("user_version") == .integer(1))
        #expect(try check.pragma("application_id") == .integer(Int64(Self.applicationID)))
        #expect(try check.scalarInt64("SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'") == 0)
        check.close()

        // A fixed build then finishes the job.
        let connection = try migrator().openDatabase(path: path)
        #expect(try connection.pragma("user_version") == .integer(2))
    }

    @Test("read-only: a current store opens, an older one needs migrating")
    func readOnly() throws {
        do {
            let connection = try migrator([Self.version1]).openDatabase(path: path)
            connection.close()
        }
        let current = try migrator([Self.version1]).openDatabase(path: path, mode: .readOnly)
        #expect(try current.scalarInt64("SELECT count(*) FROM sample") == 0)
        current.close()
        expectOpenError(.needsMigration(path: path, found: 1, required: 2), mode: .readOnly)
    }

    @Test("a read-only open of a missing file is an SQLite error, and creates nothing")
    func readOnlyMissing() throws {
        let error = #expect(throws: SQLiteError.self) { try migrator().openDatabase(path: path, mode: .readOnly) }
        #expect(error?.isCannotOpen == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    // MARK: Foreign keys off during a migration

    @Test("disablesForeignKeys lets a migration rebuild a referenced table, then restores enforcement")
    func rebuildWithForeignKeysOff() throws {
        let schema = Migration(version: 1, name: "schema", sql: """
            CREATE TABLE source(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE sample(id INTEGER PRIMARY KEY, source_id INTEGER NOT NULL REFERENCES source(id));
            INSERT INTO source VALUES (1, 'scale');
            INSERT INTO sample VALUES (10, 1);
            """)
        let rebuild = Migration(version: 2, name: "rebuild source", disablesForeignKeys: true, sql: """
            CREATE TABLE source_new(id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '');
            INSERT INTO source_new SELECT id, name FROM source;
            DROP TABLE source;
            ALTER TABLE source_new RENAME TO source;
            """)
        let connection = try migrator([schema, rebuild]).openDatabase(path: path)
        #expect(try connection.pragma("foreign_keys") == .integer(1))
        #expect(try connection.scalar("SELECT name FROM source WHERE id = 1") == .text("scale"))
        let error = #expect(throws: SQLiteError.self) {
            try connection.execute(sql: "INSERT INTO sample VALUES (11, 99)")
        }
        #expect(error?.isForeignKeyViolation == true)

        let dangling = Migration(version: 3, name: "dangling", disablesForeignKeys: true, sql: "DELETE FROM source")
        let failure = #expect(throws: StoreOpenError.self) { try migrator([schema, rebuild, dangling]).migrate(connection) }
        guard case .migrationFailed(_, 3, "dangling", let reason)? = failure else {
            Issue.record("expected migrationFailed for version 3, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("foreign_key_check found 1 violation"))
        #expect(try connection.scalarInt64("SELECT count(*) FROM source") == 1)
        #expect(try connection.pragma("foreign_keys") == .integer(1))
    }
}

/// A small deterministic generator for test bytes (SplitMix64).
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A store written by the build before the pending area (schema 1) opens, migrates and keeps its data.
@Suite struct PendingAreaMigrationTests {
    @Test("a schema-1 store migrates to the pending area and explicit denials, keeping its grants")
    func migratesSchemaOne() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("old.sqlite").path
        let schemaOne = Migrator(applicationID: HealthStore.applicationID, migrations: [
            Migration(version: 1, name: "initial schema", sql: HealthStore.schemaV1),
        ])
        let old = try schemaOne.openDatabase(path: path, mode: .createIfMissing)
        try old.execute(sql: "INSERT INTO grants(source, type, granted_at) VALUES ('phone', 'HKQuantityTypeIdentifierStepCount', 0)")
        #expect(try old.prepare("PRAGMA user_version").firstRow { $0.int(at: 0) } == 1)
        old.close()

        let store = try HealthStore(path: path)
        defer { store.close() }
        // Migrated through every later step too (5: people, 6: whose samples a sink reads, 7: the
        // store's identity, 128 random bits in hex, 8: advertisement keys, 9: correlation identity,
        // 10: what each sink last published as a state, 11: each person's body-composition formula,
        // 12: each device's, 13: heart and respiratory rates per minute, 14: counts maintained at commit,
        // 15: each person's units; the latest).
        #expect(try store.db.prepare("PRAGMA user_version").firstRow { $0.int(at: 0) } == Int(HealthStore.migrator.latestVersion))
        #expect(try store.identity().range(of: "^[0-9a-f]{32}$", options: .regularExpression) != nil)
        #expect(try store.advertisementKeys().isEmpty)
        #expect(try store.sinks().isEmpty && store.readGrants().isEmpty)
        #expect(try store.grants().map(\.source) == ["phone"])
        #expect(try store.people().map(\.name) == [HealthStore.firstPersonName])
        #expect(try store.pendingCounts().isEmpty)
        try store.deny(source: "neighbour", types: [.bodyMass])
        let policy = try store.loadAuthorization()
        #expect(policy.decision(source: "phone", type: .stepCount) == .granted)
        #expect(policy.decision(source: "neighbour", type: .bodyMass) == .denied)
        #expect(policy.decision(source: "neighbour", type: .stepCount) == .undecided)
    }
}

/// A store with a sink from before people had sinks of their own (schema 5) keeps the sink, which
/// then reads every person's samples.
@Suite struct SinkPersonMigrationTests {
    @Test func aSchemaFiveSinkReadsEverybodyAfterTheMigration() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("five.sqlite").path
        let schemaFive = Migrator(applicationID: HealthStore.applicationID, migrations: [
            Migration(version: 1, name: "initial schema", sql: HealthStore.schemaV1),
            Migration(version: 2, name: "pending area and explicit denials", sql: HealthStore.schemaV2),
            Migration(version: 3, name: "what adapters remember per device", sql: HealthStore.schemaV3),
            Migration(version: 4, name: "sinks, read grants, cursors, dead letters", sql: HealthStore.schemaV4),
            Migration(version: 5, name: "people", sql: HealthStore.schemaV5),
        ])
        let old = try schemaFive.openDatabase(path: path, mode: .createIfMissing)
        try old.execute(sql: """
            INSERT INTO sinks(name, url, options, cursor, created_at) VALUES ('ha', 'mqtt://127.0.0.1', '{}', 7, 0);
            INSERT INTO read_grants(sink, type, granted_at) VALUES ('ha', '*', 0);
            """)
        old.close()

        let store = try HealthStore(path: path)
        defer { store.close() }
        let sink = try store.sink(named: "ha")
        #expect(sink.definition.person == nil && sink.cursor == 7 && sink.definition.readsAllTypes)
        #expect(try store.sinkScope(person: sink.definition.person) == .anyPerson)
    }
}

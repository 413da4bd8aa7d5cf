import Foundation
import Testing

@testable import SQLiteStore

@Suite("Connection")
struct ConnectionTests {
    // MARK: Files and modes

    @Test("a missing database file is created with mode 0600, and so are -wal and -shm")
    func createsFilesWithMode0600() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("health.sqlite")
        #expect(permissionBits(path) == nil)

        let connection = try Connection(path: path)
        #expect(permissionBits(path) == 0o600)
        try connection.execute(sql: "CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (1);")

        // While the connection is open (and after a write) SQLite has created the WAL files.
        #expect(permissionBits(path + "-wal") == 0o600)
        #expect(permissionBits(path + "-shm") == 0o600)
        connection.close()
    }

    @Test("an existing file keeps its contents and its mode")
    func reopensExistingFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("health.sqlite")
        do {
            let connection = try Connection(path: path)
            try connection.execute(sql: "CREATE TABLE t(a TEXT); INSERT INTO t VALUES ('kept');")
        }
        let connection = try Connection(path: path, mode: .readWrite)
        #expect(try connection.scalar("SELECT a FROM t") == .text("kept"))
        #expect(permissionBits(path) == 0o600)
    }

    @Test(".readWrite and .readOnly do not create a missing file")
    func readWriteDoesNotCreate() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("missing.sqlite")
        for mode in [Connection.OpenMode.readWrite, .readOnly] {
            let error = #expect(throws: SQLiteError.self) { try Connection(path: path, mode: mode) }
            #expect(error?.isCannotOpen == true)
            #expect(error?.message.contains(path) == true)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a file in a missing directory gives SQLITE_CANTOPEN with the errno text")
    func missingDirectory() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("no/such/dir/health.sqlite")
        let error = #expect(throws: SQLiteError.self) { try Connection(path: path) }
        #expect(error?.isCannotOpen == true)
        #expect(error?.message.contains("No such file or directory") == true)
    }

    @Test("a read-only connection reads but refuses writes with isReadOnly")
    func readOnly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("health.sqlite")
        let writer = try Connection(path: path)
        try writer.execute(sql: "CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (7);")

        let reader = try Connection(path: path, mode: .readOnly)
        #expect(try reader.scalarInt64("SELECT a FROM t") == 7)
        let error = #expect(throws: SQLiteError.self) { try reader.execute(sql: "INSERT INTO t VALUES (8)") }
        #expect(error?.isReadOnly == true)
    }

    @Test("the configuration is applied on open: WAL, synchronous FULL, foreign keys, busy timeout, extra pragmas")
    func configurationApplied() throws {
        let directory = try TemporaryDirectory()
        var configuration = Connection.Configuration()
        configuration.pragmas = [.init("cache_size", "-4321")]
        let connection = try Connection(path: directory.path("c.sqlite"), configuration: configuration)
        #expect(try connection.pragma("journal_mode") == .text("wal"))
        #expect(try connection.pragma("synchronous") == .integer(2))  // FULL
        #expect(try connection.pragma("foreign_keys") == .integer(1))
        #expect(try connection.pragma("busy_timeout") == .integer(5000))
        #expect(try connection.pragma("cache_size") == .integer(-4321))

        configuration.busyTimeout = .milliseconds(250)
        configuration.foreignKeys = false
        configuration.synchronous = .normal
        let other = try Connection(path: directory.path("d.sqlite"), configuration: configuration)
        #expect(try other.pragma("busy_timeout") == .integer(250))
        #expect(try other.pragma("foreign_keys") == .integer(0))
        #expect(try other.pragma("synchronous") == .integer(1))
    }

    @Test("foreign keys are enforced by default")
    func foreignKeysEnforced() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: """
            CREATE TABLE parent(id INTEGER PRIMARY KEY);
            CREATE TABLE child(parent_id INTEGER NOT NULL REFERENCES parent(id));
            """)
        let error = #expect(throws: SQLiteError.self) {
            try connection.execute(sql: "INSERT INTO child VALUES (42)")
        }
        #expect(error?.isConstraintViolation == true)
        #expect(error?.isForeignKeyViolation == true)
        #expect(error?.isUniqueViolation == false)
    }

    @Test("an in-memory database works and is private to its connection")
    func inMemory() throws {
        let first = try Connection.inMemory()
        try first.execute(sql: "CREATE TABLE t(a)")
        let second = try Connection.inMemory()
        let error = #expect(throws: SQLiteError.self) { try second.execute(sql: "SELECT * FROM t") }
        #expect(error?.message == "no such table: t")
        #expect(first.path == ":memory:")
    }

    @Test("an empty path is refused")
    func emptyPath() {
        #expect(throws: SQLiteError.self) { try Connection(path: "") }
    }

    // MARK: Running SQL

    @Test("execute(sql:) runs every statement of a script, comments and blanks included")
    func executeScript() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: """
            -- a comment
            CREATE TABLE t(a INTEGER);
            INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);

            /* trailing comment */
            """)
        #expect(try connection.scalarInt64("SELECT sum(a) FROM t") == 3)
        try connection.execute(sql: "")
        try connection.execute(sql: "   ;  ")
    }

    @Test("a failing script statement is named in the error, and earlier statements stay applied")
    func executeScriptError() throws {
        let connection = try Connection.inMemory()
        let error = #expect(throws: SQLiteError.self) {
            try connection.execute(sql: "CREATE TABLE t(a); INSERT INTO nope VALUES (1); CREATE TABLE u(b);")
        }
        #expect(error?.sql == "INSERT INTO nope VALUES (1);")
        #expect(error?.message == "no such table: nope")
        #expect(try connection.scalarInt64("SELECT count(*) FROM sqlite_schema WHERE name = 't'") == 1)
        #expect(try connection.scalarInt64("SELECT count(*) FROM sqlite_schema WHERE name = 'u'") == 0)
    }

    @Test("prepare refuses several statements but accepts trailing blanks and comments")
    func prepareSingleStatement() throws {
        let connection = try Connection.inMemory()
        _ = try connection.prepare("SELECT 1; -- fine\n  ")
        let error = #expect(throws: SQLiteError.self) { try connection.prepare("SELECT 1; SELECT 2") }
        #expect(error?.code == 21)  // SQLITE_MISUSE
        let syntax = #expect(throws: SQLiteError.self) { try connection.prepare("SELEC 1") }
        #expect(syntax?.code == 1)
        #expect(syntax?.message.contains("syntax error") == true)
        #expect(syntax?.sql == "SELEC 1")
        #expect(throws: SQLiteError.self) { try connection.prepare("  -- nothing ") }
    }

    @Test("cachedStatement returns the same statement, reset and with cleared bindings")
    func statementCache() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE t(a INTEGER, b TEXT)")
        let sql = "INSERT INTO t(a, b) VALUES (?, ?)"
        let first = try connection.cachedStatement(sql)
        try first.bind(1, at: 1)
        try first.bind("x", at: 2)
        try first.execute()
        try first.bind(2, at: 1)  // left bound, and b still "x"

        let second = try connection.cachedStatement(sql)
        #expect(first === second)
        try second.bind(3, at: 1)
        try second.execute()  // b was cleared: NULL
        #expect(try connection.scalar("SELECT b FROM t WHERE a = 3") == .null)

        let query = try connection.cachedStatement("SELECT a FROM t ORDER BY a")
        #expect(try query.step())  // left in the middle of a result
        let again = try connection.cachedStatement("SELECT a FROM t ORDER BY a")
        #expect(try again.mapRows { $0.int64(at: 0) } == [1, 3])

        connection.clearStatementCache()
        #expect(try connection.cachedStatement(sql) !== first)
    }

    @Test("lastInsertRowID, changes and totalChanges")
    func rowidAndChanges() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER)")
        try connection.execute(sql: "INSERT INTO t(id, a) VALUES (41, 1)")
        #expect(connection.lastInsertRowID == 41)
        try connection.execute(sql: "INSERT INTO t(a) VALUES (2)")
        #expect(connection.lastInsertRowID == 42)
        try connection.execute(sql: "INSERT INTO t(a) VALUES (2), (2), (3)")
        #expect(connection.changes == 3)
        try connection.execute(sql: "UPDATE t SET a = 9 WHERE a = 2")
        #expect(connection.changes == 3)
        #expect(connection.totalChanges == 8)
    }

    // MARK: Tracing

    @Test("traceStatements hands over each statement as prepared, never a bound value, until it is stopped")
    func tracesStatementsWithoutTheirValues() throws {
        let connection = try Connection.inMemory()
        final class Seen { var statements: [String] = [] }
        let seen = Seen()
        connection.traceStatements { seen.statements.append($0) }
        try connection.execute(sql: "CREATE TABLE t(a TEXT);CREATE INDEX t_by_a ON t(a);")
        let insert = try connection.prepare("INSERT INTO t(a) VALUES (?)")
        try insert.bind("a secret value", at: 1)
        try insert.execute()
        connection.traceStatements(nil)
        try connection.execute(sql: "DELETE FROM t")
        #expect(seen.statements == ["CREATE TABLE t(a TEXT);", "CREATE INDEX t_by_a ON t(a);", "INSERT INTO t(a) VALUES (?)"])
    }

    // MARK: Transactions

    struct Expected: Error, Equatable {}

    @Test("transaction commits what the body did and returns its value", arguments: [
        Connection.TransactionKind.deferred, .immediate, .exclusive,
    ])
    func transactionCommits(kind: Connection.TransactionKind) throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(path: directory.path("t.sqlite"))
        try connection.execute(sql: "CREATE TABLE t(a INTEGER)")
        let value = try connection.transaction(kind) {
            #expect(connection.isInTransaction)
            try connection.execute(sql: "INSERT INTO t VALUES (1), (2)")
            return "done"
        }
        #expect(value == "done")
        #expect(!connection.isInTransaction)
        // Visible from another connection: really committed.
        let other = try Connection(path: directory.path("t.sqlite"), mode: .readOnly)
        #expect(try other.scalarInt64("SELECT count(*) FROM t") == 2)
    }

    @Test("transaction rolls back when the body throws and rethrows the body's error")
    func transactionRollsBack() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE t(a INTEGER)")
        #expect(throws: Expected.self) {
            try connection.transaction(.immediate) {
                try connection.execute(sql: "INSERT INTO t VALUES (1)")
                throw Expected()
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 0)
    }

    @Test("transactions do not nest; savepoints do, and roll back only their own work")
    func savepoints() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE t(a INTEGER)")
        try connection.transaction {
            // (do/catch, not `let e = #expect(throws:)`: in Swift 6.3.1 that form, followed by a
            // nested closure holding another #expect(throws:), rethrows the first error.)
            do {
                try connection.transaction {}
                Issue.record("a nested transaction must fail")
            } catch let error as SQLiteError {
                #expect(error.message.contains("within a transaction"))
            }
            try connection.execute(sql: "INSERT INTO t VALUES (1)")
            try connection.savepoint {
                try connection.execute(sql: "INSERT INTO t VALUES (2)")
                #expect(throws: Expected.self) {
                    try connection.savepoint {
                        try connection.execute(sql: "INSERT INTO t VALUES (3)")
                        throw Expected()
                    }
                }
            }
            #expect(throws: Expected.self) {
                try connection.savepoint {
                    try connection.execute(sql: "INSERT INTO t VALUES (4)")
                    throw Expected()
                }
            }
            #expect(connection.isInTransaction)
        }
        let values = try connection.prepare("SELECT a FROM t ORDER BY a").mapRows { $0.int64(at: 0) }
        #expect(values == [1, 2])

        // Outside a transaction a savepoint acts as one.
        #expect(throws: Expected.self) {
            try connection.savepoint {
                try connection.execute(sql: "INSERT INTO t VALUES (5)")
                throw Expected()
            }
        }
        #expect(!connection.isInTransaction)
        try connection.savepoint { try connection.execute(sql: "INSERT INTO t VALUES (6)") }
        #expect(!connection.isInTransaction)
        #expect(try connection.scalar("SELECT group_concat(a, ',') FROM t") == .text("1,2,6"))
    }

    @Test("a writer blocked by another connection's write lock fails with isBusy after the timeout")
    func busy() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("busy.sqlite")
        let holder = try Connection(path: path)
        try holder.execute(sql: "CREATE TABLE t(a)")
        var configuration = Connection.Configuration()
        configuration.busyTimeout = .milliseconds(10)
        let waiter = try Connection(path: path, configuration: configuration)
        try holder.transaction(.immediate) {
            try holder.execute(sql: "INSERT INTO t VALUES (1)")
            let error = #expect(throws: SQLiteError.self) {
                try waiter.transaction(.immediate) {}
            }
            #expect(error?.isBusy == true)
            #expect(error?.sql == "BEGIN IMMEDIATE")
            // WAL: readers are not blocked by the writer and see the last commit.
            #expect(try waiter.scalarInt64("SELECT count(*) FROM t") == 0)
        }
        #expect(try waiter.scalarInt64("SELECT count(*) FROM t") == 1)
    }

    // MARK: Disk full

    @Test("running out of pages gives isDiskFull, and earlier committed rows are intact")
    func diskFull() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("full.sqlite")
        let connection = try Connection(path: path)
        try connection.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        let insert = try connection.prepare("INSERT INTO t(payload) VALUES (?)")
        let payload = Data(repeating: 0xA5, count: 1000)
        try connection.transaction {
            for _ in 0..<20 {
                try insert.bind(payload, at: 1)
                try insert.execute()
            }
        }
        let pages = try #require(try connection.scalarInt64("PRAGMA page_count"))
        try connection.setPragma("max_page_count", "\(pages + 4)")

        var inserted = 0
        let error = #expect(throws: SQLiteError.self) {
            try connection.transaction {
                for _ in 0..<1000 {
                    try insert.bind(payload, at: 1)
                    try insert.execute()
                    inserted += 1
                }
            }
        }
        #expect(error?.isDiskFull == true)
        #expect(error?.codeName == "SQLITE_FULL")
        #expect(inserted > 0 && inserted < 1000)
        #expect(!connection.isInTransaction)
        #expect(try connection.scalarInt64("SELECT count(*) FROM t") == 20)
        connection.close()

        // A fresh connection (no page limit) sees the 20 rows and a sound file.
        let reopened = try Connection(path: path, mode: .readWrite)
        #expect(try reopened.scalarInt64("SELECT count(*) FROM t") == 20)
        #expect(try reopened.scalar("PRAGMA integrity_check") == .text("ok"))
        try reopened.execute(sql: "INSERT INTO t(payload) VALUES (x'00')")
        #expect(try reopened.scalarInt64("SELECT count(*) FROM t") == 21)
    }

    // MARK: Closing

    @Test("close is idempotent, later calls throw SQLITE_MISUSE, statements prepared before stay valid")
    func close() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (1);")
        let survivor = try connection.prepare("SELECT a FROM t")
        connection.close()
        connection.close()
        #expect(!connection.isOpen)
        let error = #expect(throws: SQLiteError.self) { try connection.execute(sql: "SELECT 1") }
        #expect(error?.code == 21)
        #expect(error?.message == "connection is closed")
        #expect(connection.lastInsertRowID == 0)
        // sqlite3_close_v2 keeps the handle alive until the last statement is released, so a
        // statement prepared before close still works (and nothing dangles).
        #expect(try survivor.step())
        #expect(survivor.int64(at: 0) == 1)
        #expect(try !survivor.step())
    }
}

import CSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One SQLite database connection: open/configure, run SQL, prepare and cache statements,
/// transactions and savepoints.
///
/// Threading: a connection (and its statements) must be used by one thread or actor at a time.
/// It is deliberately not `Sendable`; move it into the actor or thread that owns it. SQLite is
/// opened with `SQLITE_OPEN_NOMUTEX` (no per-call locking), so sharing it concurrently is a bug.
/// Use one connection per thread/actor; WAL mode lets readers on other connections run while a
/// writer commits.
///
/// Files: a missing database file is created by `open(2)` with mode 0600 before SQLite sees
/// it; SQLite gives its `-wal` and `-shm` files the database file's mode. A path that is a
/// symlink is refused (`SQLITE_OPEN_NOFOLLOW`).
public final class Connection {
    /// Process-wide SQLite settings, applied once before the first connection opens (SQLite
    /// takes them only before it initializes): no memory statistics, whose global mutex every
    /// allocation took (about 3 % of an import's storing thread).
    private static let processSettings: Void = {
        _ = csqlite_disable_memory_statistics()
    }()

    /// How to open the database file.
    public enum OpenMode: Sendable, Hashable {
        /// Open an existing file for reading and writing; fails if it does not exist.
        case readWrite
        /// Open an existing file read-only; writes fail with `SQLITE_READONLY`.
        case readOnly
        /// Open for reading and writing, creating the file (mode 0600) if it does not exist.
        case createIfMissing
    }

    /// The kind of lock a transaction takes at `BEGIN`.
    public enum TransactionKind: String, Sendable, Hashable {
        /// Locks are taken when first needed (a read may later fail to upgrade with BUSY).
        case deferred = "DEFERRED"
        /// Takes the write lock at once: the right kind for read-modify-write.
        case immediate = "IMMEDIATE"
        /// Like immediate (in WAL mode); also keeps readers out in other journal modes.
        case exclusive = "EXCLUSIVE"
    }

    /// `PRAGMA journal_mode` values.
    public enum JournalMode: String, Sendable, Hashable {
        case wal = "WAL", delete = "DELETE", truncate = "TRUNCATE", persist = "PERSIST", memory = "MEMORY", off = "OFF"
    }

    /// `PRAGMA synchronous` values.
    public enum SynchronousMode: String, Sendable, Hashable {
        case off = "OFF", normal = "NORMAL", full = "FULL", extra = "EXTRA"
    }

    /// Settings applied when a connection opens.
    public struct Configuration: Sendable, Hashable {
        /// Journal mode set on open (nil: leave the file's mode alone). Default WAL. Ignored for
        /// read-only and in-memory connections.
        public var journalMode: JournalMode? = .wal
        /// Default FULL: a committed transaction survives power loss.
        public var synchronous: SynchronousMode = .full
        /// Enforce foreign keys (SQLite's default is off). Default on.
        public var foreignKeys = true
        /// How long to retry when another connection holds a lock (default 5 s).
        public var busyTimeout: Duration = .seconds(5)
        /// `SQLITE_DBCONFIG_DEFENSIVE`: forbid writes that can corrupt the file (e.g. through
        /// `writable_schema`). Default on.
        public var defensive = true
        /// More pragmas, run in order after the ones above as `PRAGMA name = value`
        /// (for example `("cache_size", "-16000")`). Names and values are SQL, not user input.
        public var pragmas: [Pragma] = []

        /// The default configuration: WAL, synchronous FULL, foreign keys on, 5 s busy timeout.
        public init() {}
    }

    /// A `PRAGMA name = value` to run on open.
    public struct Pragma: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    private var handle: OpaquePointer?
    /// The file path (`:memory:` for in-memory databases).
    public let path: String
    /// The mode the connection was opened with (`.createIfMissing` for in-memory databases).
    public let mode: OpenMode
    /// The configuration applied on open.
    public let configuration: Configuration
    private var statementCache: [String: Statement] = [:]
    private var savepointDepth = 0
    /// Whether a held transaction is open (`beginHeldTransaction()`).
    public private(set) var holdsTransaction = false
    /// The body `traceStatements` installed, kept alive while SQLite holds a pointer to it.
    private var statementTracer: StatementTracer?

    /// Opens (and with `.createIfMissing` creates, mode 0600) the database at `path`, then applies
    /// `configuration`. `":memory:"` opens a private in-memory database.
    public init(path: String, mode: OpenMode = .createIfMissing, configuration: Configuration = Configuration()) throws {
        guard !path.isEmpty else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "empty database path")
        }
        self.path = path
        self.mode = mode
        self.configuration = configuration
        let isMemory = path == ":memory:"
        if mode == .createIfMissing, !isMemory {
            try Self.createFileIfMissing(path)
        }
        // The file exists now (or must already exist): SQLite never creates it itself.
        // NOFOLLOW: a symlink at `path` is refused by SQLite itself (callers resolve links they trust).
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE | SQLITE_OPEN_NOFOLLOW
        flags |= mode == .readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if isMemory { flags |= SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY }
        var openName = path
        if mode == .readOnly, !isMemory, let immutable = Self.immutableURI(forReadOnly: path) {
            // A WAL database can only be read where its -shm exists or can be created; in a
            // directory the user may not write to, with no writer active (no -wal), it is read
            // as immutable instead (no lock, no -shm).
            openName = immutable
            flags |= SQLITE_OPEN_URI
        }
        _ = Self.processSettings
        var db: OpaquePointer?
        let resultCode = sqlite3_open_v2(openName, &db, flags, nil)
        guard resultCode == SQLITE_OK, let db else {
            let error = SQLiteError(code: resultCode, db: db, sql: nil)
            sqlite3_close_v2(db)
            throw SQLiteError(code: error.extendedCode, message: "\(error.message): \(path)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        do {
            try configure(db, isMemory: isMemory)
        } catch {
            sqlite3_close_v2(db)
            handle = nil
            throw error
        }
    }

    /// Opens a private in-memory database (same configuration rules; no journal file).
    public static func inMemory(configuration: Configuration = Configuration()) throws -> Connection {
        try Connection(path: ":memory:", mode: .createIfMissing, configuration: configuration)
    }

    deinit {
        close()
    }

    /// Finalizes the cached statements and closes the connection. Idempotent. Statements still
    /// held elsewhere keep the SQLite handle alive until they are released (`sqlite3_close_v2`).
    public func close() {
        statementCache.removeAll()
        guard let db = handle else { return }
        handle = nil
        if statementTracer != nil {
            // Statements held elsewhere outlive the handle: none of them may call a released tracer.
            sqlite3_trace_v2(db, 0, nil, nil)
            statementTracer = nil
        }
        sqlite3_close_v2(db)
    }

    /// True until `close()`.
    public var isOpen: Bool { handle != nil }

    // MARK: Opening

    /// Creates `path` with mode 0600 (exactly, whatever the umask) if it does not exist yet.
    private static func createFileIfMissing(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor < 0 {
            let code = errno
            if code == EEXIST { return }
            throw SQLiteError(
                code: SQLITE_CANTOPEN,
                message: "cannot create database file \(path): \(String(cString: strerror(code))) (errno \(code))"
            )
        }
        // open(2) applies the umask, which can only remove bits; make the mode exactly 0600.
        let chmodResult = fchmod(descriptor, 0o600)
        let chmodErrno = errno
        _ = closeDescriptor(descriptor)
        if chmodResult != 0 {
            throw SQLiteError(
                code: SQLITE_CANTOPEN,
                message: "cannot set mode 0600 on \(path): \(String(cString: strerror(chmodErrno)))"
            )
        }
    }

    /// `file:PATH?immutable=1` when `path` sits in a directory the user may not write to and has
    /// no `-wal` or `-shm` beside it (so no writer is active); nil otherwise.
    static func immutableURI(forReadOnly path: String) -> String? {
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        guard access(directory, W_OK) != 0, errno == EACCES || errno == EROFS,
              access(path + "-wal", F_OK) != 0, access(path + "-shm", F_OK) != 0 else { return nil }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "/-._~")
        guard let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
        return "file:" + encoded + "?immutable=1"
    }

    private static func closeDescriptor(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
    }

    private func configure(_ db: OpaquePointer, isMemory: Bool) throws {
        let milliseconds = configuration.busyTimeout.components.seconds * 1000
            + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(db, Int32(clamping: max(0, milliseconds)))
        if configuration.defensive, mode != .readOnly {
            _ = csqlite_defensive(db, 1)
        }
        // Read-only connections never write, so the write-path pragmas are left out: they would
        // only touch the file (and fail in a read-only directory).
        if mode != .readOnly {
            try execute(sql: "PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
            try execute(sql: "PRAGMA synchronous = \(configuration.synchronous.rawValue)")
        }
        if let journalMode = configuration.journalMode, !isMemory, mode != .readOnly {
            try setJournalMode(journalMode)
        }
        for pragma in configuration.pragmas {
            try execute(sql: "PRAGMA \(pragma.name) = \(pragma.value)")
        }
    }

    /// Sets `PRAGMA journal_mode` and checks that SQLite accepted it (this reads the file, so a
    /// file that is not a database fails here with `SQLITE_NOTADB`).
    public func setJournalMode(_ journalMode: JournalMode) throws {
        let sql = "PRAGMA journal_mode = \(journalMode.rawValue)"
        let statement = try prepare(sql)
        let result = try statement.firstRow { $0.string(at: 0) } ?? nil
        guard result?.uppercased() == journalMode.rawValue else {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message: "journal_mode is \(result ?? "unknown"), wanted \(journalMode.rawValue)",
                sql: sql
            )
        }
    }

    // MARK: Running SQL

    private func openHandle(sql: String?) throws -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "connection is closed", sql: sql)
        }
        return handle
    }

    /// Runs a script of one or more `;`-separated statements (no parameters, rows ignored).
    /// An error names the statement of the script that failed.
    public func execute(sql: String) throws {
        let db = try openHandle(sql: sql)
        var script = sql
        try script.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            try base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { start in
                let end = start + utf8.count
                var cursor = start
                while cursor < end {
                    var statementHandle: OpaquePointer?
                    var tail: UnsafePointer<CChar>?
                    let resultCode = sqlite3_prepare_v2(db, cursor, Int32(clamping: end - cursor), &statementHandle, &tail)
                    let consumed = tail.map { $0 - cursor } ?? (end - cursor)
                    let text = Self.text(cursor, count: consumed)
                    guard resultCode == SQLITE_OK else {
                        sqlite3_finalize(statementHandle)
                        throw SQLiteError(code: resultCode, db: db, sql: text)
                    }
                    cursor += max(consumed, 1)
                    // Whitespace or comments only: nothing to run.
                    guard let statementHandle else { continue }
                    let statement = Statement(handle: statementHandle, sql: text)
                    try statement.execute()
                }
            }
        }
    }

    private static func text(_ start: UnsafePointer<CChar>, count: Int) -> String {
        let bytes = UnsafeRawPointer(start).assumingMemoryBound(to: UInt8.self)
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Prepares one statement. Trailing text after the first statement (other than whitespace
    /// and comments) is an error, so a script is never half-run by mistake.
    public func prepare(_ sql: String) throws -> Statement {
        let db = try openHandle(sql: sql)
        var statementHandle: OpaquePointer?
        var trailing = false
        var text = sql
        let resultCode = text.withUTF8 { utf8 -> Int32 in
            guard let base = utf8.baseAddress else {
                return sqlite3_prepare_v3(db, "", 0, 0, &statementHandle, nil)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { start in
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v3(
                    db, start, Int32(clamping: utf8.count), UInt32(SQLITE_PREPARE_PERSISTENT), &statementHandle, &tail)
                if code == SQLITE_OK, let tail, tail < start + utf8.count {
                    trailing = Self.hasStatement(from: tail, end: start + utf8.count, db: db)
                }
                return code
            }
        }
        guard resultCode == SQLITE_OK else {
            sqlite3_finalize(statementHandle)
            throw SQLiteError(code: resultCode, db: db, sql: sql)
        }
        guard let statementHandle else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement to prepare", sql: sql)
        }
        if trailing {
            sqlite3_finalize(statementHandle)
            throw SQLiteError(
                code: SQLITE_MISUSE,
                message: "more than one statement: use execute(sql:) for scripts",
                sql: sql
            )
        }
        return Statement(handle: statementHandle, sql: sql)
    }

    /// True if the text between `start` and `end` holds an SQL statement (not only whitespace
    /// and comments).
    private static func hasStatement(from start: UnsafePointer<CChar>, end: UnsafePointer<CChar>, db: OpaquePointer) -> Bool {
        var probe: OpaquePointer?
        let code = sqlite3_prepare_v2(db, start, Int32(clamping: end - start), &probe, nil)
        defer { sqlite3_finalize(probe) }
        return code != SQLITE_OK || probe != nil
    }

    /// A prepared statement kept for reuse, keyed by its exact SQL text. It comes back reset,
    /// with its bindings cleared. The cache lives as long as the connection (it is meant for the
    /// fixed set of statements a store uses). Hold the statement across a loop rather than
    /// looking it up per row.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            statement.clearBindings()
            return statement
        }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// Finalizes all cached statements (those still referenced elsewhere live on until released).
    public func clearStatementCache() {
        statementCache.removeAll()
    }

    /// The rowid of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int {
        handle.map { Int(sqlite3_changes64($0)) } ?? 0
    }

    /// Rows changed since the connection opened.
    public var totalChanges: Int {
        handle.map { Int(sqlite3_total_changes64($0)) } ?? 0
    }

    /// True while a transaction is open (`sqlite3_get_autocommit` is 0).
    public var isInTransaction: Bool {
        handle.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    /// The first column of the first row of `sql` as an integer, nil if no row or NULL.
    public func scalarInt64(_ sql: String) throws -> Int64? {
        try prepare(sql).firstRow { $0.column(0, as: Int64.self) } ?? nil
    }

    /// The first column of the first row of `sql`, `.null` if there is no row.
    public func scalar(_ sql: String) throws -> DatabaseValue {
        try prepare(sql).firstRow { $0.value(at: 0) } ?? .null
    }

    /// Reads `PRAGMA name` (first column of the first row).
    public func pragma(_ name: String) throws -> DatabaseValue {
        try scalar("PRAGMA \(name)")
    }

    /// Runs `PRAGMA name = value`.
    public func setPragma(_ name: String, _ value: String) throws {
        try execute(sql: "PRAGMA \(name) = \(value)")
    }

    // MARK: Tracing

    /// Hands `body` the SQL text of every statement as it starts running on this connection
    /// (`SQLITE_TRACE_STMT`), as it was prepared: parameters stay `?`, never their values. The
    /// statements of `execute(sql:)` scripts are included; a trigger's statements are not (its
    /// firing statement is). nil stops. For tests and diagnostics: it costs a call per statement.
    public func traceStatements(_ body: ((String) -> Void)?) {
        guard let db = handle else { return }
        guard let body else {
            sqlite3_trace_v2(db, 0, nil, nil)
            statementTracer = nil
            return
        }
        let tracer = StatementTracer(body: body)
        statementTracer = tracer
        sqlite3_trace_v2(db, UInt32(SQLITE_TRACE_STMT), { event, context, statement, _ in
            guard event == UInt32(SQLITE_TRACE_STMT), let context, let statement,
                  let text = sqlite3_sql(OpaquePointer(statement)) else { return 0 }
            Unmanaged<StatementTracer>.fromOpaque(context).takeUnretainedValue().body(String(cString: text))
            return 0
        }, Unmanaged.passUnretained(tracer).toOpaque())
    }

    // MARK: Transactions

    /// Runs `body` in a transaction: commits if it returns, rolls back if it (or the commit)
    /// throws, then rethrows. Transactions do not nest: use `savepoint(_:)` inside one. While a
    /// held transaction is open (`beginHeldTransaction()`), `body` runs in a savepoint of it, so
    /// its work commits only when the held transaction does.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        if holdsTransaction {
            // SQLite ends a transaction by itself on some errors (SQLITE_FULL): a savepoint
            // outside one would start and commit a transaction of its own.
            guard isInTransaction else {
                throw SQLiteError(code: SQLITE_ERROR, message: "the held transaction was rolled back")
            }
            return try savepoint(body)
        }
        try cachedStatement(Self.beginSQL(kind)).execute()
        let result: T
        do {
            result = try body()
            try cachedStatement("COMMIT").execute()
        } catch {
            rollbackIfNeeded()
            throw error
        }
        return result
    }

    private static func beginSQL(_ kind: TransactionKind) -> String {
        switch kind {
        case .deferred: "BEGIN DEFERRED"
        case .immediate: "BEGIN IMMEDIATE"
        case .exclusive: "BEGIN EXCLUSIVE"
        }
    }

    /// Rolls back unless SQLite already did (some errors, e.g. SQLITE_FULL, roll back by
    /// themselves). A failing rollback is not reported: the original error matters more.
    private func rollbackIfNeeded() {
        guard isInTransaction, let statement = try? cachedStatement("ROLLBACK") else { return }
        try? statement.execute()
    }

    /// Opens a write transaction (IMMEDIATE) that every later `transaction(_:_:)` of this
    /// connection joins as a savepoint until `endHeldTransaction(commit:)`: their work is
    /// committed, or rolled back, together with the caller's decision (an import's batches
    /// stored while its archive is still being verified). Other connections' writers wait
    /// meanwhile, so hold one briefly.
    public func beginHeldTransaction() throws {
        precondition(!holdsTransaction, "held transactions do not nest")
        try cachedStatement(Self.beginSQL(.immediate)).execute()
        holdsTransaction = true
    }

    /// Commits (`commit`) or rolls back the held transaction; a failed commit rolls it back
    /// and throws.
    public func endHeldTransaction(commit: Bool) throws {
        precondition(holdsTransaction, "no held transaction")
        holdsTransaction = false
        guard commit else {
            rollbackIfNeeded()
            return
        }
        guard isInTransaction else {
            throw SQLiteError(code: SQLITE_ERROR, message: "the held transaction was rolled back")
        }
        do {
            try cachedStatement("COMMIT").execute()
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }

    /// Runs `body` inside a savepoint: released if it returns, rolled back to (and released)
    /// if it throws. Nests, and works inside or outside a transaction (outside, it behaves
    /// like a deferred transaction).
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "ingestd_sp\(savepointDepth)"
        try cachedStatement("SAVEPOINT \(name)").execute()
        let result: T
        do {
            result = try body()
            try cachedStatement("RELEASE \(name)").execute()
        } catch {
            // Rolled-back work is discarded; RELEASE then ends the savepoint (and the implicit
            // transaction if it started one).
            try? cachedStatement("ROLLBACK TO \(name)").execute()
            try? cachedStatement("RELEASE \(name)").execute()
            throw error
        }
        return result
    }
}

/// The body of `Connection.traceStatements`, passed to SQLite as the trace callback's context.
private final class StatementTracer {
    let body: (String) -> Void

    init(body: @escaping (String) -> Void) {
        self.body = body
    }
}

extension Connection {
    /// Makes the `ingestd_sample_rows` table (a batch of sample rows in this process's memory,
    /// `CSQLite/shim.h`) known to this connection, for `BatchWriter`'s one-statement inserts.
    func registerSampleRows() throws {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "connection closed") }
        let resultCode = csqlite_register_sample_rows(handle)
        guard resultCode == SQLITE_OK else { throw SQLiteError(code: resultCode, db: handle, sql: nil) }
    }
}

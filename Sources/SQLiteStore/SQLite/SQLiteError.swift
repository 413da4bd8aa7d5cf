import CSQLite

/// An error reported by SQLite: the result code, SQLite's message and the SQL text involved.
///
/// The error never carries bound parameter values: health data must not leak into logs. Only the
/// SQL text of the failing statement (with its `?` / `:name` placeholders) is kept.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The extended result code (for example `SQLITE_CONSTRAINT_UNIQUE`, 2067).
    public let extendedCode: Int32
    /// SQLite's English message (`sqlite3_errmsg`), or ours for errors raised by this layer.
    public let message: String
    /// The SQL text of the statement that failed, if there was one.
    public let sql: String?

    /// Creates an error from a result code (primary or extended), a message and the SQL text.
    public init(code: Int32, message: String, sql: String? = nil) {
        self.extendedCode = code
        self.message = message
        self.sql = sql
    }

    /// Reads the current error of `db` (`sqlite3_extended_errcode` and `sqlite3_errmsg`).
    ///
    /// `code` is the result code the failing call returned; it wins when the connection's error
    /// state has already been overwritten (it is the more reliable of the two).
    init(code: Int32, db: OpaquePointer?, sql: String?) {
        var extended = code
        var message = String(cString: sqlite3_errstr(code))
        if let db {
            let dbExtended = sqlite3_extended_errcode(db)
            // Use the connection's extended code only if it refines the code we were handed.
            if dbExtended & 0xFF == code & 0xFF {
                extended = dbExtended
                if let text = sqlite3_errmsg(db) { message = String(cString: text) }
            }
        }
        self.init(code: extended, message: message, sql: sql)
    }

    /// The primary result code (for example `SQLITE_CONSTRAINT`, 19).
    public var code: Int32 { extendedCode & 0xFF }

    /// `SQLITE_BUSY`: another connection holds a lock and the busy timeout ran out.
    public var isBusy: Bool { code == SQLITE_BUSY }
    /// `SQLITE_LOCKED`: a conflict inside this connection (or a shared cache).
    public var isLocked: Bool { code == SQLITE_LOCKED }
    /// Any `SQLITE_CONSTRAINT` violation (UNIQUE, NOT NULL, CHECK, FOREIGN KEY, ...).
    public var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }
    /// A UNIQUE or PRIMARY KEY constraint failed.
    public var isUniqueViolation: Bool {
        extendedCode == Self.constraintUnique || extendedCode == Self.constraintPrimaryKey
    }
    /// A FOREIGN KEY constraint failed.
    public var isForeignKeyViolation: Bool { extendedCode == Self.constraintForeignKey }
    /// `SQLITE_FULL`: the disk (or `PRAGMA max_page_count`) is full.
    public var isDiskFull: Bool { code == SQLITE_FULL }
    /// `SQLITE_NOTADB`: the file is not an SQLite database.
    public var isNotADatabase: Bool { code == SQLITE_NOTADB }
    /// `SQLITE_CORRUPT`: the database file is malformed.
    public var isCorrupt: Bool { code == SQLITE_CORRUPT }
    /// `SQLITE_READONLY`: a write was attempted on a read-only connection or file.
    public var isReadOnly: Bool { code == SQLITE_READONLY }
    /// `SQLITE_CANTOPEN`: the file could not be opened (missing, a directory, no permission).
    public var isCannotOpen: Bool { code == SQLITE_CANTOPEN }

    /// The symbolic name of the primary code, for example `SQLITE_CONSTRAINT`.
    public var codeName: String {
        let index = Int(code)
        guard index >= 0, index < Self.primaryCodeNames.count else { return "SQLITE_\(code)" }
        return Self.primaryCodeNames[index]
    }

    /// One line: `SQLITE_CONSTRAINT (2067): UNIQUE constraint failed: t.a [sql: INSERT ...]`.
    public var description: String {
        var line = "\(codeName) (\(extendedCode)): \(Self.oneLine(message))"
        if let sql { line += " [sql: \(Self.oneLine(sql, limit: 240))]" }
        return line
    }

    /// Collapses whitespace runs (newlines included) to one space and caps the length.
    static func oneLine(_ text: String, limit: Int = 1_000) -> String {
        var result = ""
        var length = 0
        var pendingSpace = false
        for character in text {
            if character.isWhitespace {
                pendingSpace = length > 0
                continue
            }
            if length >= limit {
                result.append("…")
                break
            }
            if pendingSpace {
                result.append(" ")
                length += 1
                pendingSpace = false
            }
            result.append(character)
            length += 1
        }
        return result
    }

    // Extended codes are function-like macro expressions in sqlite3.h, which Swift does not
    // import: the values below are the documented `primary | (n << 8)` definitions.
    static let constraintForeignKey = SQLITE_CONSTRAINT | (3 << 8)
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    /// Names of the primary result codes 0...28 in order (sqlite3.h).
    private static let primaryCodeNames = [
        "SQLITE_OK", "SQLITE_ERROR", "SQLITE_INTERNAL", "SQLITE_PERM", "SQLITE_ABORT", "SQLITE_BUSY",
        "SQLITE_LOCKED", "SQLITE_NOMEM", "SQLITE_READONLY", "SQLITE_INTERRUPT", "SQLITE_IOERR",
        "SQLITE_CORRUPT", "SQLITE_NOTFOUND", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL",
        "SQLITE_EMPTY", "SQLITE_SCHEMA", "SQLITE_TOOBIG", "SQLITE_CONSTRAINT", "SQLITE_MISMATCH",
        "SQLITE_MISUSE", "SQLITE_NOLFS", "SQLITE_AUTH", "SQLITE_FORMAT", "SQLITE_RANGE",
        "SQLITE_NOTADB", "SQLITE_NOTICE", "SQLITE_WARNING",
    ]
}

import CSQLite
import Foundation

/// A prepared SQL statement: bind parameters, step through rows, read typed columns, reuse.
///
/// Reuse is the fast path: prepare once (or take it from `Connection.cachedStatement(_:)`), then
/// per row bind every parameter by index and call `execute()`; `execute()` and the row
/// iterations reset the statement when they finish (also on error), so it is ready for the next
/// round without another prepare. Bindings stay in place until rebound or `clearBindings()`.
///
/// Parameter indexes are 1-based (SQLite's convention); column indexes are 0-based.
///
/// Not thread-safe, like its `Connection`: use it only where the connection is used. A
/// statement may outlive its connection object or `close()`: SQLite keeps the database handle
/// until the last statement is released (`sqlite3_close_v2`), so nothing dangles.
public final class Statement {
    let handle: OpaquePointer
    /// The SQL text of this statement, as prepared (without bound values).
    public let sql: String

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Errors

    @inline(__always)
    private func check(_ resultCode: Int32) throws {
        if resultCode != SQLITE_OK { throw makeError(resultCode) }
    }

    func makeError(_ resultCode: Int32) -> SQLiteError {
        SQLiteError(code: resultCode, db: sqlite3_db_handle(handle), sql: sql)
    }

    private func rangeError(_ message: String) -> SQLiteError {
        SQLiteError(code: SQLITE_RANGE, message: message, sql: sql)
    }

    // MARK: Parameters

    /// The number of parameters (the largest parameter index).
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// The 1-based index of a named parameter. `name` may carry its prefix (`:id`, `@id`, `$id`)
    /// or not (`id`, then `:`, `@` and `$` are tried in that order).
    public func parameterIndex(named name: String) -> Int? {
        if let first = name.unicodeScalars.first, first == ":" || first == "@" || first == "$" || first == "?" {
            let index = sqlite3_bind_parameter_index(handle, name)
            return index > 0 ? Int(index) : nil
        }
        for prefix in [":", "@", "$"] {
            let index = sqlite3_bind_parameter_index(handle, prefix + name)
            if index > 0 { return Int(index) }
        }
        return nil
    }

    /// The name of parameter `index` including its prefix, or nil for a nameless `?`.
    public func parameterName(at index: Int) -> String? {
        sqlite3_bind_parameter_name(handle, Int32(truncatingIfNeeded: index)).map { String(cString: $0) }
    }

    /// True if the statement does not write to the database (`sqlite3_stmt_readonly`).
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    // MARK: Binding by index

    /// Binds an integer to parameter `index` (1-based).
    public func bind(_ value: Int64, at index: Int) throws {
        try check(sqlite3_bind_int64(handle, Int32(truncatingIfNeeded: index), value))
    }

    /// Binds an integer to parameter `index` (1-based).
    public func bind(_ value: Int, at index: Int) throws {
        try check(sqlite3_bind_int64(handle, Int32(truncatingIfNeeded: index), Int64(value)))
    }

    /// Binds a Bool as the integer 0 or 1.
    public func bind(_ value: Bool, at index: Int) throws {
        try check(sqlite3_bind_int64(handle, Int32(truncatingIfNeeded: index), value ? 1 : 0))
    }

    /// Binds a floating-point value (NaN is stored as NULL by SQLite).
    public func bind(_ value: Double, at index: Int) throws {
        try check(sqlite3_bind_double(handle, Int32(truncatingIfNeeded: index), value))
    }

    /// Binds text. The UTF-8 bytes are read in place (no Swift-side copy) and SQLite copies them
    /// once (`SQLITE_TRANSIENT`), since the string's storage is only pinned during this call.
    public func bind(_ value: String, at index: Int) throws {
        let position = Int32(truncatingIfNeeded: index)
        let resultCode: Int32
        if let code = value.utf8.withContiguousStorageIfAvailable({ bindText($0, at: position) }) {
            resultCode = code
        } else {
            var copy = value
            resultCode = copy.withUTF8 { bindText($0, at: position) }
        }
        try check(resultCode)
    }

    @inline(__always)
    private func bindText(_ utf8: UnsafeBufferPointer<UInt8>, at position: Int32) -> Int32 {
        guard let base = utf8.baseAddress, utf8.count > 0 else {
            // A nil pointer would bind NULL: bind an empty text value instead.
            return sqlite3_bind_text(handle, position, "", 0, csqlite_transient())
        }
        return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
            sqlite3_bind_text64(handle, position, $0, UInt64(utf8.count), csqlite_transient(), UInt8(SQLITE_UTF8))
        }
    }

    /// Binds text whose UTF-8 bytes SQLite must NOT copy (`SQLITE_STATIC`).
    ///
    /// - Important: the caller guarantees the bytes stay valid and unchanged until the statement
    ///   is reset and this parameter rebound or cleared. Use only when profiling shows the copy of
    ///   `bind(_: String, at:)` matters.
    public func bindStaticText(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int) throws {
        let position = Int32(truncatingIfNeeded: index)
        guard let base = utf8.baseAddress, utf8.count > 0 else {
            try check(sqlite3_bind_text(handle, position, "", 0, csqlite_transient()))
            return
        }
        let resultCode = base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
            sqlite3_bind_text64(handle, position, $0, UInt64(utf8.count), csqlite_static(), UInt8(SQLITE_UTF8))
        }
        try check(resultCode)
    }

    /// Binds a blob (SQLite copies the bytes). An empty `Data` binds an empty blob, not NULL.
    public func bind(_ value: Data, at index: Int) throws {
        let position = Int32(truncatingIfNeeded: index)
        try check(value.withUnsafeBytes { bindBlob($0, at: position) })
    }

    /// Binds a blob (SQLite copies the bytes). An empty array binds an empty blob, not NULL.
    public func bind(_ value: [UInt8], at index: Int) throws {
        let position = Int32(truncatingIfNeeded: index)
        try check(value.withUnsafeBytes { bindBlob($0, at: position) })
    }

    /// Binds a blob from raw bytes (SQLite copies them), for callers that have the bytes in
    /// place (`withUnsafeBytes(of: uuid.uuid) { try statement.bind(bytes: $0, at: 1) }`) and
    /// should not build an array per row. An empty buffer binds an empty blob, not NULL.
    public func bind(bytes: UnsafeRawBufferPointer, at index: Int) throws {
        try check(bindBlob(bytes, at: Int32(truncatingIfNeeded: index)))
    }

    @inline(__always)
    private func bindBlob(_ bytes: UnsafeRawBufferPointer, at position: Int32) -> Int32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            return sqlite3_bind_zeroblob(handle, position, 0)
        }
        return sqlite3_bind_blob64(handle, position, base, UInt64(bytes.count), csqlite_transient())
    }

    /// Binds SQL NULL.
    public func bindNull(at index: Int) throws {
        try check(sqlite3_bind_null(handle, Int32(truncatingIfNeeded: index)))
    }

    /// Binds any convertible value, or NULL for `nil` (`bind(nil, at: 3)`).
    public func bind(_ value: (any DatabaseValueConvertible)?, at index: Int) throws {
        guard let value else {
            try bindNull(at: index)
            return
        }
        try value.bind(to: self, at: index)
    }

    // MARK: Binding by name and in bulk

    /// Binds a value to the named parameter (`:name`, `@name`, `$name`; the prefix is optional).
    /// Throws `SQLITE_RANGE` if the statement has no such parameter.
    public func bind(_ value: (any DatabaseValueConvertible)?, named name: String) throws {
        guard let index = parameterIndex(named: name) else {
            throw rangeError("no parameter named \(name)")
        }
        try bind(value, at: index)
    }

    /// Binds all parameters in order, starting at index 1: `try statement.bind(uuid, start, 72.5)`.
    /// Throws `SQLITE_RANGE` if the number of values differs from `parameterCount`.
    /// (Use `nil as String?` or `DatabaseValue.null` for NULL.)
    public func bind<each Value: DatabaseValueConvertible>(_ values: repeat each Value) throws {
        var count = 0
        for _ in repeat each values { count += 1 }
        guard count == parameterCount else {
            throw rangeError("\(count) values for \(parameterCount) parameters")
        }
        var index = 0
        for value in repeat each values {
            index += 1
            try value.bind(to: self, at: index)
        }
    }

    /// Binds all parameters in order from an array (for dynamically built statements).
    /// Throws `SQLITE_RANGE` if the number of values differs from `parameterCount`.
    public func bind(all values: [DatabaseValue]) throws {
        guard values.count == parameterCount else {
            throw rangeError("\(values.count) values for \(parameterCount) parameters")
        }
        for (offset, value) in values.enumerated() {
            try value.bind(to: self, at: offset + 1)
        }
    }

    /// Binds named parameters from a dictionary (keys with or without prefix).
    public func bind(named values: [String: DatabaseValue]) throws {
        for (name, value) in values {
            try bind(value, named: name)
        }
    }

    /// Binds a batch of sample rows for `ingestd_sample_rows(?)` (`Connection.registerSampleRows`).
    /// The batch and everything it points to must stay in place until the statement is reset;
    /// clear the binding then.
    func bind(sampleRows batch: UnsafePointer<csqlite_sample_rows>, at index: Int) throws {
        try check(csqlite_bind_sample_rows(handle, Int32(truncatingIfNeeded: index), batch))
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    // MARK: Running

    /// Advances to the next row: true while a row is available (`SQLITE_ROW`), false when done.
    /// On error the statement is reset (so it can be reused) and the error thrown.
    @discardableResult
    public func step() throws -> Bool {
        let resultCode = sqlite3_step(handle)
        if resultCode == SQLITE_ROW { return true }
        if resultCode == SQLITE_DONE { return false }
        let error = makeError(resultCode)
        sqlite3_reset(handle)
        throw error
    }

    /// Runs the statement to completion (ignoring rows), then resets it; bindings are kept.
    public func execute() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Binds all parameters in order (like `bind(_:)`), then runs the statement to completion.
    public func execute<each Value: DatabaseValueConvertible>(binding values: repeat each Value) throws {
        try bind(repeat each values)
        try execute()
    }

    /// Rewinds the statement so it can run again; bindings are kept. Any error of the previous
    /// run was already thrown by `step()`, so the result code of `sqlite3_reset` is ignored.
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Calls `body` with the statement positioned on each row in turn, then resets it (also when
    /// `body` or a step throws). Do not keep the statement's row values past the call: read them.
    public func forEachRow(_ body: (Statement) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while try step() {
            try body(self)
        }
    }

    /// Collects `transform(row)` for every row, then resets the statement.
    public func mapRows<T>(_ transform: (Statement) throws -> T) throws -> [T] {
        var result: [T] = []
        try forEachRow { result.append(try transform($0)) }
        return result
    }

    /// `transform` of the first row (nil if there is none), then resets the statement.
    public func firstRow<T>(_ transform: (Statement) throws -> T) throws -> T? {
        defer { sqlite3_reset(handle) }
        return try step() ? transform(self) : nil
    }

    // MARK: Columns

    /// The number of columns in a result row (0 for statements that return no data).
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// The name of result column `index` (its `AS` name if any); nil if out of range.
    public func columnName(at index: Int) -> String? {
        sqlite3_column_name(handle, Int32(truncatingIfNeeded: index)).map { String(cString: $0) }
    }

    /// The 0-based index of the result column called `name` (exact match), or nil.
    public func columnIndex(named name: String) -> Int? {
        (0..<columnCount).first { columnName(at: $0) == name }
    }

    /// The storage class of column `index` in the current row.
    public func columnType(at index: Int) -> ColumnType {
        switch sqlite3_column_type(handle, Int32(truncatingIfNeeded: index)) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// True if column `index` of the current row is NULL.
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(truncatingIfNeeded: index)) == SQLITE_NULL
    }

    /// Column `index` as an integer (NULL reads as 0; check `isNull(at:)` where it matters).
    public func int64(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(truncatingIfNeeded: index))
    }

    /// Column `index` as an `Int` (NULL reads as 0).
    public func int(at index: Int) -> Int {
        Int(truncatingIfNeeded: sqlite3_column_int64(handle, Int32(truncatingIfNeeded: index)))
    }

    /// Column `index` as a Bool: any non-zero integer is true (NULL reads as false).
    public func bool(at index: Int) -> Bool {
        sqlite3_column_int64(handle, Int32(truncatingIfNeeded: index)) != 0
    }

    /// Column `index` as a Double (NULL reads as 0.0).
    public func double(at index: Int) -> Double {
        sqlite3_column_double(handle, Int32(truncatingIfNeeded: index))
    }

    /// Column `index` as text (numbers are converted by SQLite); nil for NULL.
    /// Invalid UTF-8 is repaired with U+FFFD.
    public func string(at index: Int) -> String? {
        let position = Int32(truncatingIfNeeded: index)
        guard let text = sqlite3_column_text(handle, position) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, position))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes; nil for NULL, empty `Data` for an empty blob.
    public func data(at index: Int) -> Data? {
        withUnsafeBytes(at: index) { $0.map { Data($0) } }
    }

    /// Column `index` as a byte array; nil for NULL.
    public func bytes(at index: Int) -> [UInt8]? {
        withUnsafeBytes(at: index) { $0.map { Array($0) } }
    }

    /// Reads column `index` without copying: `body` gets the bytes (nil for NULL), valid only
    /// during the call. Text columns give their UTF-8 bytes.
    public func withUnsafeBytes<R>(at index: Int, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        let position = Int32(truncatingIfNeeded: index)
        guard sqlite3_column_type(handle, position) != SQLITE_NULL else { return try body(nil) }
        let base = sqlite3_column_blob(handle, position)
        let count = Int(sqlite3_column_bytes(handle, position))
        guard let base, count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Column `index` as a dynamically typed value.
    public func value(at index: Int) -> DatabaseValue {
        switch columnType(at: index) {
        case .integer: .integer(int64(at: index))
        case .real: .real(double(at: index))
        case .text: .text(string(at: index) ?? "")
        case .blob: .blob(data(at: index) ?? Data())
        case .null: .null
        }
    }

    /// Column `index` decoded as `T`; nil for NULL (or a value that does not fit `T`).
    public func column<T: DatabaseValueConvertible>(_ index: Int, as type: T.Type = T.self) -> T? {
        T.read(from: self, at: index)
    }
}

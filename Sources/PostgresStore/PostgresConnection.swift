import CLibPQ
import Foundation
import SinkLibraries

/// Why talking to PostgreSQL failed. Messages carry the server's words and the offending value,
/// never a password (targets are shown without credentials).
public enum PostgresError: Error, Equatable, CustomStringConvertible {
    /// The connection could not be made or broke (server down, wrong socket).
    case connectionFailed(target: String, reason: String)
    /// The server refused who we are (wrong password, unknown role or database, `pg_hba.conf`):
    /// a configuration to fix, not an outage.
    case authenticationFailed(target: String, reason: String)
    /// The gateway id is already used in the schema by another store (two gateways left at the
    /// same default id, e.g. `raspberrypi`).
    case gatewayTaken(gateway: String, schema: String)
    /// A statement failed; `state` is the SQLSTATE code (e.g. `23505`), `statement` its first words.
    case statementFailed(statement: String, state: String, message: String)
    /// COPY data could not be sent.
    case copyFailed(reason: String)
    /// A value read back has an unexpected form.
    case unexpectedValue(column: String, value: String)
    /// The schema name cannot be used.
    case invalidSchemaName(String)
    /// The database holds a newer schema than this ingestd knows.
    case schemaTooNew(schema: String, version: Int, known: Int)
    /// The database holds an older schema than the queries need (no sink of this ingestd delivered yet).
    case schemaTooOld(schema: String, version: Int, needed: Int)

    public var description: String {
        switch self {
        case .connectionFailed(let target, let reason): "PostgreSQL at \(target): \(reason)"
        case .authenticationFailed(let target, let reason): "PostgreSQL at \(target) refused the login: \(reason)"
        case .gatewayTaken(let gateway, let schema):
            "the gateway id '\(gateway)' is already used in schema \(schema) by another store (each gateway needs its own id)"
        case .statementFailed(let statement, let state, let message):
            "PostgreSQL refused '\(statement)' (SQLSTATE \(state)): \(message)"
        case .copyFailed(let reason): "PostgreSQL COPY failed: \(reason)"
        case .unexpectedValue(let column, let value): "PostgreSQL returned '\(value)' for \(column)"
        case .invalidSchemaName(let name):
            "invalid schema name '\(name)': use 1-63 lowercase letters, digits or '_', starting with a letter"
        case .schemaTooNew(let schema, let version, let known):
            "schema \(schema) is at version \(version); this ingestd knows up to \(known) (upgrade ingestd)"
        case .schemaTooOld(let schema, let version, let needed):
            "schema \(schema) is at version \(version); queries need version \(needed) (a sink of this ingestd migrates it when it next delivers)"
        }
    }

    /// Whether the error means the server could not be reached (retry later) rather than a refusal.
    public var isConnectionProblem: Bool {
        switch self {
        case .connectionFailed: true
        case .statementFailed(_, let state, _): state.hasPrefix("08") || state.hasPrefix("57P") || state.isEmpty
        case .copyFailed: true
        default: false
        }
    }
}

/// The rows of a finished statement, as text (libpq's text format).
public struct PostgresRows: Sendable {
    /// Column names in order.
    public var columns: [String]
    /// Each row's values; nil is SQL NULL.
    public var rows: [[String?]]
    /// The rows a command touched (`INSERT 0 5` gives 5).
    public var affected: Int
}

/// One libpq connection. Not thread-safe: one thread at a time owns it (like the SQLite
/// `Connection`). Statements use the text protocol with `$n` parameters; COPY streams rows.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    /// The target for messages: the URL without its password.
    public let target: String

    /// Connects to `url` (`postgresql://user@host:port/db`, `postgresql:///db?host=/socket/dir`);
    /// `password`, when given, is used instead of one in the URL. Waits at most `timeoutSeconds`.
    public init(url: String, password: String? = nil, timeoutSeconds: Int = 10) throws(PostgresError) {
        target = PostgresURL.redacted(url)
        // libpq is opened on first use (an ingestd without PostgreSQL never maps it).
        do { try DynamicLibrary.libpq.load() } catch { throw .connectionFailed(target: target, reason: error.description) }
        // Strings go out as UTF-8 (COPY text and binary, parameters); the server converts them
        // to the database's encoding.
        var keys = ["dbname", "connect_timeout", "application_name", "client_encoding"]
        var values = [url, String(max(1, timeoutSeconds)), "ingestd", "UTF8"]
        if let password {
            keys.append("password")
            values.append(password)
        }
        let connection = Self.connect(keys: keys, values: values)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let reason = connection.map { Self.message(PQerrorMessage($0)) } ?? "out of memory"
            if let connection { PQfinish(connection) }
            if Self.isAuthenticationRefusal(reason) { throw .authenticationFailed(target: target, reason: reason) }
            throw .connectionFailed(target: target, reason: reason.isEmpty ? "no answer" : reason)
        }
        // The server's NOTICEs ("schema … already exists, skipping") are not for the user: libpq
        // would print them on stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    /// Whether libpq's message for a failed connection is the server refusing the login (SQLSTATE
    /// class 28, or 3D000 for an unknown database), which libpq reports only as text: the
    /// server's English messages and libpq's own for a missing password.
    static func isAuthenticationRefusal(_ message: String) -> Bool {
        let phrases = ["authentication failed", "no password supplied", "no pg_hba.conf entry", "pg_hba.conf rejects",
                       "password is required", "does not exist", "not permitted to log in", "permission denied for database"]
        let lower = message.lowercased()
        return phrases.contains { lower.contains($0) }
    }

    private static func connect(keys: [String], values: [String]) -> OpaquePointer? {
        let keyPointers = keys.map { strdup($0) }
        let valuePointers = values.map { strdup($0) }
        defer {
            keyPointers.forEach { free($0) }
            valuePointers.forEach { free($0) }
        }
        var keyArray: [UnsafePointer<CChar>?] = keyPointers.map { UnsafePointer($0) } + [nil]
        var valueArray: [UnsafePointer<CChar>?] = valuePointers.map { UnsafePointer($0) } + [nil]
        return keyArray.withUnsafeMutableBufferPointer { keyBuffer in
            valueArray.withUnsafeMutableBufferPointer { valueBuffer in
                PQconnectdbParams(keyBuffer.baseAddress, valueBuffer.baseAddress, 1)
            }
        }
    }

    deinit { close() }

    /// Closes the connection (idempotent).
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func live() throws(PostgresError) -> OpaquePointer {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw .connectionFailed(target: target, reason: "the connection is closed")
        }
        return handle
    }

    private static func head(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return flat.count > 60 ? String(flat.prefix(60)) + "…" : flat
    }

    /// Checks a result; returns its rows or throws with the server's SQLSTATE and message.
    private func rows(of result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresRows {
        guard let result else {
            let reason = handle.map { Self.message(PQerrorMessage($0)) } ?? "no connection"
            throw .statementFailed(statement: Self.head(sql), state: "", message: reason)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_COPY_IN else {
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            throw .statementFailed(statement: Self.head(sql), state: state, message: Self.message(PQresultErrorMessage(result)))
        }
        let columnCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        let columns = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            rows.append((0..<columnCount).map { column in
                PQgetisnull(result, Int32(row), Int32(column)) == 1 ? nil : String(cString: PQgetvalue(result, Int32(row), Int32(column)))
            })
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresRows(columns: columns, rows: rows, affected: affected)
    }

    /// Runs one statement with `$1…` parameters (text; nil is NULL) and returns its rows.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        let connection = try live()
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { value in value.flatMap { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        var pointers: [UnsafePointer<CChar>?] = copies.map { copy in copy.map { UnsafePointer($0) } }
        let result = pointers.withUnsafeMutableBufferPointer { buffer in
            PQexecParams(connection, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        return try rows(of: result, sql: sql)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    /// `COPY … FROM STDIN` with `data` in COPY's text format (rows of tab-separated fields,
    /// see `PostgresCopyText`); returns the rows copied.
    @discardableResult
    public func copyIn(_ sql: String, data: String) throws(PostgresError) -> Int {
        var utf8 = data
        return try utf8.withUTF8 { buffer in copyIn(sql, buffer: UnsafeRawBufferPointer(buffer)) }.get()
    }

    /// `COPY … FROM STDIN` with `bytes` as the data, in the format `sql` names (`PostgresCopyBinary`
    /// builds the binary one); returns the rows copied.
    @discardableResult
    public func copyIn(_ sql: String, bytes: [UInt8]) throws(PostgresError) -> Int {
        try bytes.withUnsafeBytes { buffer in copyIn(sql, buffer: buffer) }.get()
    }

    private func copyIn(_ sql: String, buffer: UnsafeRawBufferPointer) -> Result<Int, PostgresError> {
        do throws(PostgresError) {
            return .success(try copyIn(sql, bufferThrowing: buffer))
        } catch {
            return .failure(error)
        }
    }

    private func copyIn(_ sql: String, bufferThrowing buffer: UnsafeRawBufferPointer) throws(PostgresError) -> Int {
        let connection = try live()
        let started = PQexec(connection, sql)
        guard let started, PQresultStatus(started) == PGRES_COPY_IN else {
            _ = try rows(of: started, sql: sql)
            throw .copyFailed(reason: "the server did not enter COPY mode")
        }
        PQclear(started)
        // In pieces of at most 1 MiB: PQputCopyData takes an Int32 length.
        var offset = 0
        var sent: Int32 = 1
        while offset < buffer.count, sent == 1 {
            let length = min(1 << 20, buffer.count - offset)
            sent = PQputCopyData(connection, buffer.baseAddress?.advanced(by: offset).assumingMemoryBound(to: CChar.self), Int32(length))
            offset += length
        }
        guard sent == 1, PQputCopyEnd(connection, nil) == 1 else {
            throw .copyFailed(reason: Self.message(PQerrorMessage(connection)))
        }
        var copied = 0
        var failure: PostgresError?
        while let result = PQgetResult(connection) {
            do {
                copied += try rows(of: result, sql: sql).affected
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return copied
    }
}

/// COPY's text format: fields separated by tabs, rows by newlines, `\N` for NULL.
public enum PostgresCopyText {
    /// `text` with backslash, tab, newline and carriage return escaped.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for character in text.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// One row: each field escaped (nil as `\N`), tab-separated, newline-terminated.
    public static func row(_ fields: [String?]) -> String {
        fields.map { $0.map(escape) ?? "\\N" }.joined(separator: "\t") + "\n"
    }
}

/// PostgreSQL connection URLs for messages.
public enum PostgresURL {
    /// Whether `url` is a PostgreSQL URL (`postgresql://` or `postgres://`).
    public static func matches(_ url: String) -> Bool {
        let lower = url.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    /// `url` without the password of its user information, and that password (percent-decoded).
    public static func splittingPassword(_ url: String) -> (url: String, password: String?) {
        guard let schemeEnd = url.range(of: "://") else { return (url, nil) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return (url, nil) }
        let password = String(authority[authority.index(after: colon)..<at])
        let clean = String(url[..<schemeEnd.upperBound]) + authority[..<colon] + authority[at...] + rest[authorityEnd...]
        return (clean, password.removingPercentEncoding ?? password)
    }

    /// `url` with any password replaced by `***`.
    public static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var result = String(url[..<schemeEnd.upperBound])
        if let at = authority.lastIndex(of: "@") {
            let user = authority[..<at]
            if let colon = user.firstIndex(of: ":") {
                result += user[..<colon] + ":***"
            } else {
                result += user
            }
            result += authority[at...]
        } else {
            result += authority
        }
        var tail = String(rest[authorityEnd...])
        // A password may also be a query parameter.
        if let range = tail.range(of: "password=") {
            let end = tail[range.upperBound...].firstIndex(of: "&") ?? tail.endIndex
            tail.replaceSubrange(range.upperBound..<end, with: "***")
        }
        return result + tail
    }
}

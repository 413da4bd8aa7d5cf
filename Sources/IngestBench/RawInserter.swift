import CSQLite
import Foundation
import HealthModel

/// A failure of the benchmark itself (not of the code under test), with what went wrong.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One `samples` row exactly as `HealthStore` writes it for a sample without sync identifier
/// and correlation: the raw baseline binds these values.
struct RawSampleRow {
    var uuid: uuid_t
    var type: Int64
    var value: Double
    var start: Double
    var end: Double
    var source: Int64
    var device: Int64?
    var deviceLocalID: String
    var metadata: String?
}

/// The baseline: the same rows inserted through the sqlite3 C API alone, into a file with the
/// store's schema, indexes and pragmas (less the triggers that maintain its counts). One
/// prepared statement (prepare once; bind, step, reset
/// per row), one IMMEDIATE transaction per batch, `INSERT OR IGNORE` as the store does.
final class RawInserter {
    static let insertSQL = """
        INSERT OR IGNORE INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id,
                                      sync_id, sync_version, metadata, correlation)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    private let db: OpaquePointer
    private var insert: OpaquePointer?
    private var typeIDs: [String: Int64] = [:]
    private var sourceIDs: [String: Int64] = [:]
    private var deviceIDs: [Device: Int64] = [:]

    /// Opens `path` (already created with the store's schema) with the store's connection
    /// settings.
    init(path: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE, nil)
            == SQLITE_OK, let handle
        else {
            sqlite3_close_v2(handle)
            throw BenchError("raw: cannot open \(path)")
        }
        db = handle
        sqlite3_busy_timeout(db, 5000)
        try exec("PRAGMA foreign_keys = ON")
        try exec("PRAGMA synchronous = FULL")
        try exec("PRAGMA journal_mode = WAL")
        // The baseline inserts rows and nothing else: without the store's count triggers
        // (`CountsMigration`), so their cost shows in the ratios against it.
        try exec(Self.dropTriggersSQL)
        guard sqlite3_prepare_v3(db, Self.insertSQL, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &insert, nil) == SQLITE_OK
        else { throw error("prepare") }
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close_v2(db)
    }

    /// The row the store writes for `sample` (value in the canonical unit). Not timed: types,
    /// sources and devices get their ids here, in order of first use as in the store.
    func row(for sample: QuantitySample) throws -> RawSampleRow {
        let type = try id(of: sample.type.identifier, in: &typeIDs,
                          sql: "INSERT INTO types(identifier) VALUES ('\(sample.type.identifier)')")
        let source = try id(of: sample.source, in: &sourceIDs,
                            sql: "INSERT INTO sources(name, created_at) VALUES ('\(sample.source)', \(Date().timeIntervalSince1970))")
        var device: Int64?
        if let sampleDevice = sample.device {
            let identity = HealthRecordEncoder().encode(sampleDevice).replacingOccurrences(of: "'", with: "''")
            device = try id(of: sampleDevice, in: &deviceIDs,
                            sql: "INSERT INTO devices(name, identity) VALUES ('\(sampleDevice.name ?? "")', '\(identity)')")
        }
        let value = try sample.quantity.doubleValue(for: sample.type.canonicalUnit)
        return RawSampleRow(
            uuid: sample.uuid.uuid, type: type, value: value, start: sample.start.timeIntervalSince1970,
            end: sample.end.timeIntervalSince1970, source: source, device: device,
            deviceLocalID: sample.device?.localIdentifier ?? "",
            metadata: sample.metadata.isEmpty ? nil : HealthRecordEncoder().encode(sample.metadata))
    }

    private func id<Key: Hashable>(of key: Key, in ids: inout [Key: Int64], sql: String) throws -> Int64 {
        if let id = ids[key] { return id }
        try exec(sql)
        let id = sqlite3_last_insert_rowid(db)
        ids[key] = id
        return id
    }

    /// Inserts `rows` in one transaction; returns how many were new. This is the timed part.
    func insert(_ rows: [RawSampleRow]) throws -> Int {
        guard let insert else { throw BenchError("raw: no statement") }
        try exec("BEGIN IMMEDIATE")
        var written = 0
        for row in rows {
            var uuid = row.uuid
            let uuidResult = withUnsafeBytes(of: &uuid) {
                sqlite3_bind_blob(insert, 1, $0.baseAddress, 16, csqlite_transient())
            }
            var result = uuidResult
            result |= sqlite3_bind_int64(insert, 2, row.type)
            result |= sqlite3_bind_double(insert, 3, row.value)
            result |= sqlite3_bind_double(insert, 4, row.start)
            result |= sqlite3_bind_double(insert, 5, row.end)
            result |= sqlite3_bind_int64(insert, 6, row.source)
            if let device = row.device {
                result |= sqlite3_bind_int64(insert, 7, device)
            } else {
                result |= sqlite3_bind_null(insert, 7)
            }
            result |= sqlite3_bind_text(insert, 8, row.deviceLocalID, -1, csqlite_transient())
            result |= sqlite3_bind_null(insert, 9)
            result |= sqlite3_bind_null(insert, 10)
            if let metadata = row.metadata {
                result |= sqlite3_bind_text(insert, 11, metadata, -1, csqlite_transient())
            } else {
                result |= sqlite3_bind_null(insert, 11)
            }
            result |= sqlite3_bind_null(insert, 12)
            guard result == SQLITE_OK else { throw error("bind") }
            guard sqlite3_step(insert) == SQLITE_DONE else {
                let failure = error("insert")
                sqlite3_reset(insert)
                throw failure
            }
            written += Int(sqlite3_changes(db))
            sqlite3_reset(insert)
        }
        try exec("COMMIT")
        return written
    }

    /// Empties `samples` and checkpoints the file (between runs of the same rows).
    func deleteSamples() throws {
        try exec("DELETE FROM samples")
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
        try exec("VACUUM")
    }

    /// Inserts all `rows`, `perTransaction` at a time, then checkpoints the write-ahead log into
    /// the file as closing the last connection does (the command it is compared with closes its
    /// store before it exits); the wall seconds it took and the CPU seconds of this whole process
    /// meanwhile (every thread), user and system.
    func timedInsert(_ rows: [RawSampleRow], perTransaction: Int) throws -> (wall: Double, user: Double, system: Double) {
        let started = ContinuousClock.now
        let before = Measure.processCPU()
        var offset = 0
        while offset < rows.count {
            _ = try insert(Array(rows[offset..<min(rows.count, offset + perTransaction)]))
            offset += perTransaction
        }
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
        let after = Measure.processCPU()
        return (Measure.seconds(ContinuousClock.now - started), after.user - before.user, after.system - before.system)
    }

    /// A summary of the `samples` table (count and column totals) to check that two files hold
    /// the same rows.
    static let dropTriggersSQL = """
        DROP TRIGGER IF EXISTS sample_counts_insert; DROP TRIGGER IF EXISTS sample_counts_delete;
        DROP TRIGGER IF EXISTS sample_counts_update;
        """

    /// Drops the triggers that keep the store's sample counts from the store file at `path`.
    static func dropCountTriggers(path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchError("cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        guard sqlite3_exec(db, dropTriggersSQL, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("dropping the count triggers: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// The rows' content, with each type by its identifier (the store numbers types in the order
    /// it first meets them, and it may meet derived types before a batch's own).
    static func fingerprint(path: String) throws -> String {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchError("fingerprint: cannot open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        let sql = """
            SELECT count(*), total(value), total(start_time), total(end_time),
                   total(length(t.identifier) * 1000 + unicode(substr(t.identifier, 25)) * 10 + unicode(substr(t.identifier, -1))),
                   total(source), total(device), count(metadata), total(length(device_local_id)), total(length(uuid))
            FROM samples x JOIN types t ON t.id = x.type
            """
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement,
              sqlite3_step(statement) == SQLITE_ROW
        else { throw BenchError("fingerprint: \(String(cString: sqlite3_errmsg(db)))") }
        defer { sqlite3_finalize(statement) }
        return (0..<10).map { String(sqlite3_column_double(statement, $0)) }.joined(separator: " ")
    }

    /// The sample rows a store holds (members of correlations included, as plain rows), with
    /// its types, sources and devices copied into this file under the same ids: the rows an
    /// import wrote, to insert again as the import's baseline.
    func rowsCopied(fromStore path: String) throws -> [RawSampleRow] {
        try exec("ATTACH DATABASE '\(path.replacingOccurrences(of: "'", with: "''"))' AS imported")
        defer { try? exec("DETACH DATABASE imported") }
        try exec("BEGIN; INSERT INTO types SELECT * FROM imported.types; INSERT INTO sources SELECT * FROM imported.sources; "
                 + "INSERT INTO devices SELECT * FROM imported.devices; COMMIT")
        var statement: OpaquePointer?
        let sql = "SELECT uuid, type, value, start_time, end_time, source, device, device_local_id, metadata FROM imported.samples ORDER BY id"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw error("select") }
        defer { sqlite3_finalize(statement) }
        var rows: [RawSampleRow] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            guard sqlite3_column_bytes(statement, 0) == 16, let blob = sqlite3_column_blob(statement, 0) else { throw error("a uuid") }
            let uuid = blob.loadUnaligned(as: uuid_t.self)
            func text(_ column: Int32) -> String? {
                sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : String(cString: sqlite3_column_text(statement, column))
            }
            rows.append(RawSampleRow(
                uuid: uuid, type: sqlite3_column_int64(statement, 1), value: sqlite3_column_double(statement, 2),
                start: sqlite3_column_double(statement, 3), end: sqlite3_column_double(statement, 4),
                source: sqlite3_column_int64(statement, 5),
                device: sqlite3_column_type(statement, 6) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 6),
                deviceLocalID: text(7) ?? "", metadata: text(8)))
        }
        return rows
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    private func error(_ what: String) -> BenchError {
        BenchError("raw: \(what): \(String(cString: sqlite3_errmsg(db)))")
    }
}

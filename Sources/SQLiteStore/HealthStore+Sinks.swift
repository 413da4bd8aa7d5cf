import Foundation
import HealthModel
import Pipeline

/// One delivered batch's count for one type: the "records processed by the receiver" log.
public struct DeliveredEvent: Sendable, Equatable {
    public var id: Int64
    public var sink: String
    public var type: String
    public var count: Int
    public var anchor: Int64
}

extension HealthStore {
    // MARK: Sink definitions

    /// Adds a sink with its read grants; its cursor starts at 0 (the whole feed is its backlog).
    public func addSink(_ sink: SinkDefinition, now: Date = Date()) throws {
        try db.transaction(.immediate) {
            let exists = try db.prepare("SELECT 1 FROM sinks WHERE name = ?")
            try exists.bind(sink.name, at: 1)
            if try exists.firstRow({ _ in true }) != nil { throw SinkStoreError.sinkExists(sink.name) }
            let personID = try sink.person.map { try person(named: $0).id }
            let insert = try db.prepare("INSERT INTO sinks(name, url, options, every, created_at, person) VALUES (?, ?, ?, ?, ?, ?)")
            try insert.bind(sink.name, at: 1)
            try insert.bind(sink.url, at: 2)
            try insert.bind(sink.options, at: 3)
            if let every = sink.every { try insert.bind(every, at: 4) } else { try insert.bindNull(at: 4) }
            try insert.bind(now.timeIntervalSince1970, at: 5)
            if let personID { try insert.bind(personID, at: 6) } else { try insert.bindNull(at: 6) }
            try insert.execute()
            let grant = try db.prepare("INSERT OR IGNORE INTO read_grants(sink, type, granted_at) VALUES (?, ?, ?)")
            for type in sink.readTypes {
                try grant.bind(sink.name, at: 1)
                try grant.bind(type, at: 2)
                try grant.bind(now.timeIntervalSince1970, at: 3)
                try grant.execute()
            }
        }
    }

    /// Removes a sink, its read grants and its dead letters.
    public func removeSink(named name: String) throws {
        try db.transaction(.immediate) {
            for sql in ["DELETE FROM read_grants WHERE sink = ?", "DELETE FROM dead_letters WHERE sink = ?",
                        "DELETE FROM sinks WHERE name = ?"] {
                let statement = try db.prepare(sql)
                try statement.bind(name, at: 1)
                try statement.execute()
            }
            if db.changes == 0 { throw SinkStoreError.noSuchSink(name) }
        }
    }

    /// Stops a sink reading `types` (identifiers); a sink reading every type (`*`) is given the
    /// rest of the catalogue. Returns the identifiers it no longer reads, sorted; throws
    /// `SinkStoreError.noSuchSink` when there is no such sink and `.notRead` when it read none of them.
    @discardableResult
    public func revokeSinkTypes(sink name: String, types: [String], catalogue: [String], now: Date = Date()) throws -> [String] {
        try db.transaction(.immediate) {
            let exists = try db.prepare("SELECT 1 FROM sinks WHERE name = ?")
            try exists.bind(name, at: 1)
            guard try exists.firstRow({ _ in true }) != nil else { throw SinkStoreError.noSuchSink(name) }
            let read = try db.prepare("SELECT type FROM read_grants WHERE sink = ?")
            try read.bind(name, at: 1)
            let granted = Set(try read.mapRows { $0.string(at: 0) ?? "" })
            let wanted = Set(types)
            if granted.contains("*") {
                let delete = try db.prepare("DELETE FROM read_grants WHERE sink = ? AND type = '*'")
                try delete.bind(name, at: 1)
                try delete.execute()
                let insert = try db.prepare("INSERT OR IGNORE INTO read_grants(sink, type, granted_at) VALUES (?, ?, ?)")
                for identifier in catalogue where !wanted.contains(identifier) {
                    try insert.bind(name, at: 1)
                    try insert.bind(identifier, at: 2)
                    try insert.bind(now.timeIntervalSince1970, at: 3)
                    try insert.execute()
                }
                return wanted.intersection(catalogue).sorted()
            }
            let revoked = wanted.intersection(granted).sorted()
            guard !revoked.isEmpty else { throw SinkStoreError.notRead(sink: name, types: types.sorted()) }
            let delete = try db.prepare("DELETE FROM read_grants WHERE sink = ? AND type = ?")
            for identifier in revoked {
                try delete.bind(name, at: 1)
                try delete.bind(identifier, at: 2)
                try delete.execute()
            }
            return revoked
        }
    }

    /// Every sink with its state, by name.
    public func sinks() throws -> [SinkState] {
        var grants: [String: [String]] = [:]
        try db.prepare("SELECT sink, type FROM read_grants ORDER BY sink, type").forEachRow { row in
            grants[row.string(at: 0) ?? "", default: []].append(row.string(at: 1) ?? "")
        }
        var dead: [String: Int] = [:]
        try db.prepare("SELECT sink, count(*) FROM dead_letters GROUP BY sink").forEachRow { row in
            dead[row.string(at: 0) ?? ""] = row.int(at: 1)
        }
        let statement = try db.prepare("""
            SELECT k.name, k.url, k.options, k.every, k.cursor, k.last_success, k.last_error, k.last_error_at, p.name
            FROM sinks k LEFT JOIN people p ON p.id = k.person ORDER BY k.name
            """)
        return try statement.mapRows { row in
            let name = row.string(at: 0) ?? ""
            return SinkState(
                definition: SinkDefinition(name: name, url: row.string(at: 1) ?? "", options: row.string(at: 2) ?? "{}",
                                           every: row.isNull(at: 3) ? nil : row.double(at: 3), readTypes: grants[name] ?? [],
                                           person: row.string(at: 8)),
                cursor: row.int64(at: 4),
                lastSuccess: row.isNull(at: 5) ? nil : Date(timeIntervalSince1970: row.double(at: 5)),
                lastError: row.string(at: 6),
                lastErrorAt: row.isNull(at: 7) ? nil : Date(timeIntervalSince1970: row.double(at: 7)),
                deadLetters: dead[name] ?? 0)
        }
    }

    /// One sink with its state; throws `SinkStoreError.noSuchSink` when there is none.
    public func sink(named name: String) throws -> SinkState {
        guard let state = try sinks().first(where: { $0.definition.name == name }) else {
            throw SinkStoreError.noSuchSink(name)
        }
        return state
    }

    /// Every read grant as (sink, type identifier or `*`), sorted.
    public func readGrants() throws -> [(sink: String, type: String)] {
        try db.prepare("SELECT sink, type FROM read_grants ORDER BY sink, type").mapRows { row in
            (row.string(at: 0) ?? "", row.string(at: 1) ?? "")
        }
    }

    // MARK: The feed as a sink reads it

    /// The filter on type identifiers for `types` (`*` = none), with its parameters from `?first` on.
    /// The column is written `+column` so that SQLite walks the anchor order (the primary key)
    /// instead of collecting every row of the type through its index and sorting them per page.
    private func typeFilter(_ types: [String], column: String, first: Int = 3) -> String {
        if types.contains("*") { return "" }
        if types.isEmpty { return " AND 0" }
        let marks = types.indices.map { "?\($0 + first)" }.joined(separator: ", ")
        return " AND +\(column) IN (SELECT id FROM types WHERE identifier IN (\(marks)))"
    }

    private func bindTypes(_ types: [String], to statement: Statement, first: Int = 3) throws {
        guard !types.contains("*") else { return }
        for (index, type) in types.enumerated() { try statement.bind(type, at: index + first) }
    }

    /// The person scope of a sink reading `person` (nil: every person, never the unassigned).
    public func sinkScope(person: String?) throws -> PersonScope {
        guard let person else { return .anyPerson }
        return .person(try self.person(named: person).id)
    }

    /// At most about `limit` entries (samples and tombstones of `types` and of the people in
    /// `person`) after `cursor`, oldest first, never splitting one anchor; `throughAnchor` is
    /// where the cursor may move once all are acknowledged (past stretches that hold nothing of
    /// `types`). A sample moved to another person (`assign`) is a tombstone of the previous
    /// person and an addition of the new one at the same anchor: each scope sees its half.
    public func feedBatch(after cursor: Int64, types: [String], limit: Int, person: PersonScope = .everyone) throws -> FeedBatch {
        try refreshIDs()
        let limit = max(1, limit)
        let upper = try currentAnchor()
        guard upper > cursor else { return FeedBatch(entries: [], people: [], throughAnchor: cursor) }
        let added = try db.prepare("""
            SELECT \(Self.sampleColumns), t.identifier, x.person FROM samples x JOIN sources s ON s.id = x.source
            JOIN types t ON t.id = x.type LEFT JOIN devices d ON d.id = x.device
            WHERE x.id > ?1 AND x.id <= ?2\(typeFilter(types, column: "x.type"))\(person.condition("x", indexed: false))
            ORDER BY x.id LIMIT \(limit)
            """)
        try added.bind(cursor, at: 1)
        try added.bind(upper, at: 2)
        try bindTypes(types, to: added)
        var samples: [(anchor: Int64, entry: ChangeEntry, person: Int64?)] = []
        var lastSampleAnchor = cursor
        var rowsOfSamples = 0
        try added.forEachRow { row in
            rowsOfSamples += 1
            let id = row.int64(at: 0)
            lastSampleAnchor = id
            guard let identifier = row.string(at: 17), let quantityType = QuantityType.named(identifier),
                  let sample = try readSample(row, type: quantityType) else { return }
            samples.append((id, .added(sample, anchor: id), row.isNull(at: 18) ? nil : row.int64(at: 18)))
        }
        let deleted = try db.prepare("""
            SELECT x.anchor, x.uuid, t.identifier, x.person FROM tombstones x JOIN types t ON t.id = x.type
            WHERE x.anchor > ?1 AND x.anchor <= ?2\(typeFilter(types, column: "x.type"))\(person.condition("x", indexed: false))
            ORDER BY x.anchor LIMIT \(limit)
            """)
        try deleted.bind(cursor, at: 1)
        try deleted.bind(upper, at: 2)
        try bindTypes(types, to: deleted)
        var tombstones: [(anchor: Int64, entry: ChangeEntry, person: Int64?)] = []
        var rowsOfTombstones = 0
        var lastTombstoneAnchor = cursor
        try deleted.forEachRow { row in
            rowsOfTombstones += 1
            let anchor = row.int64(at: 0)
            lastTombstoneAnchor = anchor
            guard let uuid = Self.uuid(from: row.bytes(at: 1) ?? []) else { return }
            tombstones.append((anchor, .deleted(uuid: uuid, type: row.string(at: 2) ?? "", anchor: anchor),
                               row.isNull(at: 3) ? nil : row.int64(at: 3)))
        }
        var through = upper
        // A full page may have more behind it: stop at its last anchor (whole anchors only).
        if rowsOfSamples >= limit { through = min(through, lastSampleAnchor) }
        if rowsOfTombstones >= limit { through = min(through, lastTombstoneAnchor) }
        var entries = tombstones.filter { $0.anchor <= through }
            .map { (anchor: $0.anchor, deleted: true, entry: $0.entry, person: $0.person) }
        entries += samples.filter { $0.anchor <= through }
            .map { (anchor: $0.anchor, deleted: false, entry: $0.entry, person: $0.person) }
        // At one anchor the deletion comes before the insert that replaced it.
        entries.sort { ($0.anchor, $0.deleted ? 0 : 1) < ($1.anchor, $1.deleted ? 0 : 1) }
        let people = try entries.map { entry in try entry.person.map { try personName($0) } ?? "" }
        return FeedBatch(entries: entries.map(\.entry), people: people, throughAnchor: through)
    }

    /// How many entries of `types` wait after `cursor` for a sink bound to `person` (nil: everyone).
    public func backlogCount(after cursor: Int64, types: [String], sinkPerson person: String?) throws -> Int {
        try backlogCount(after: cursor, types: types, person: try sinkScope(person: person))
    }

    /// How many entries of `types` (and of the people in `person`) wait after `cursor`.
    public func backlogCount(after cursor: Int64, types: [String], person: PersonScope = .everyone) throws -> Int {
        try refreshIDs()
        var total = 0
        for (table, column) in [("samples", "id"), ("tombstones", "anchor")] {
            let statement = try db.prepare(
                "SELECT count(*) FROM \(table) x WHERE x.\(column) > ?1\(typeFilter(types, column: "x.type", first: 2))\(person.condition("x", indexed: false))")
            try statement.bind(cursor, at: 1)
            try bindTypes(types, to: statement, first: 2)
            total += try statement.firstRow { $0.int(at: 0) } ?? 0
        }
        return total
    }

    // MARK: Acknowledgements, failures, dead letters

    /// The end time of the reading each (person, type) of `sink` last published as its current
    /// state (`acknowledge(publishedStates:)`), in no particular order.
    public func publishedStates(sink: String) throws -> [PublishedState] {
        let select = try db.prepare("SELECT person, type, published_end FROM sink_states WHERE sink = ?")
        try select.bind(sink, at: 1)
        return try select.mapRows { row in
            PublishedState(person: row.string(at: 0) ?? "", type: row.string(at: 1) ?? "",
                           end: Date(timeIntervalSince1970: row.double(at: 2)))
        }
    }

    /// Forgets `sink`'s published states of these (person, type identifier) pairs (their
    /// entities were removed from the receiver).
    public func forgetPublishedStates(sink: String, keys: [(person: String, type: String)]) throws {
        try db.transaction(.immediate) {
            let forget = try db.prepare("DELETE FROM sink_states WHERE sink = ? AND person = ? AND type = ?")
            for key in keys {
                try forget.bind(sink, at: 1)
                try forget.bind(key.person, at: 2)
                try forget.bind(key.type, at: 3)
                try forget.execute()
            }
        }
    }

    /// After the receiver acknowledged: in one transaction, moves the cursor to `through` (never
    /// back), logs the delivered counts per type, keeps the rejected records as dead letters,
    /// removes the dead letters that were sent again and accepted, and clears the last error.
    public func acknowledge(sink: String, through: Int64?, delivered: [String: Int], rejected: [RejectedRecord] = [],
                            resolvedDeadLetters: [Int64] = [], publishedStates: [PublishedState] = [],
                            now: Date = Date()) throws {
        try db.transaction(.immediate) {
            let mark = try db.prepare("""
                INSERT INTO sink_states(sink, person, type, published_end) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT(sink, person, type) DO UPDATE SET published_end = max(published_end, excluded.published_end)
                """)
            for state in publishedStates {
                try mark.bind(sink, at: 1)
                try mark.bind(state.person, at: 2)
                try mark.bind(state.type, at: 3)
                try mark.bind(state.end.timeIntervalSince1970, at: 4)
                try mark.execute()
            }
            let update = try db.prepare("""
                UPDATE sinks SET cursor = max(cursor, ?2), last_success = ?3, last_error = NULL, last_error_at = NULL
                WHERE name = ?1
                """)
            try update.bind(sink, at: 1)
            if let through { try update.bind(through, at: 2) } else { try update.bind(Int64(0), at: 2) }
            try update.bind(now.timeIntervalSince1970, at: 3)
            try update.execute()
            if db.changes == 0 { throw SinkStoreError.noSuchSink(sink) }
            let anchor = through ?? 0
            let log = try db.prepare("INSERT INTO deliveries(sink, type, count, anchor, at) VALUES (?, ?, ?, ?, ?)")
            for (type, count) in delivered.sorted(by: { $0.key < $1.key }) where count > 0 {
                try log.bind(sink, at: 1)
                try log.bind(type, at: 2)
                try log.bind(count, at: 3)
                try log.bind(anchor, at: 4)
                try log.bind(now.timeIntervalSince1970, at: 5)
                try log.execute()
            }
            try insertDeadLetters(sink: sink, rejected, now: now)
            let remove = try db.prepare("DELETE FROM dead_letters WHERE id = ? AND sink = ?")
            for id in resolvedDeadLetters {
                try remove.bind(id, at: 1)
                try remove.bind(sink, at: 2)
                try remove.execute()
            }
        }
    }

    private func insertDeadLetters(sink: String, _ rejected: [RejectedRecord], now: Date) throws {
        guard !rejected.isEmpty else { return }
        let insert = try db.prepare(
            "INSERT INTO dead_letters(sink, anchor, uuid, type, record, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?)")
        for record in rejected {
            try insert.bind(sink, at: 1)
            try insert.bind(record.anchor, at: 2)
            try insert.bind(Self.bytes(of: record.uuid), at: 3)
            try insert.bind(record.type, at: 4)
            try insert.bind(record.record, at: 5)
            try insert.bind(record.reason, at: 6)
            try insert.bind(now.timeIntervalSince1970, at: 7)
            try insert.execute()
        }
    }

    /// Dead letters sent again and refused again: they stay, with the new reason, no longer queued.
    public func refuseAgain(sink: String, deadLetters ids: [Int64], reason: String, now: Date = Date()) throws {
        try db.transaction(.immediate) {
            let update = try db.prepare("UPDATE dead_letters SET retry = 0, reason = ?, at = ? WHERE id = ? AND sink = ?")
            for id in ids {
                try update.bind(reason, at: 1)
                try update.bind(now.timeIntervalSince1970, at: 2)
                try update.bind(id, at: 3)
                try update.bind(sink, at: 4)
                try update.execute()
            }
        }
    }

    /// Records a failed delivery attempt (the message must already be free of secrets).
    public func recordDeliveryFailure(sink: String, message: String, now: Date = Date()) throws {
        let update = try db.prepare("UPDATE sinks SET last_error = ?, last_error_at = ? WHERE name = ?")
        try update.bind(message, at: 1)
        try update.bind(now.timeIntervalSince1970, at: 2)
        try update.bind(sink, at: 3)
        try update.execute()
    }

    /// A sink's dead letters, oldest first (at most `limit`, 0 = all); `retryingOnly` gives those
    /// `sinks retry` queued.
    public func deadLetters(sink: String, retryingOnly: Bool = false, limit: Int = 0) throws -> [DeadLetter] {
        var sql = "SELECT id, anchor, uuid, type, record, reason, at, retry FROM dead_letters WHERE sink = ?"
        if retryingOnly { sql += " AND retry = 1" }
        sql += " ORDER BY id"
        if limit > 0 { sql += " LIMIT \(limit)" }
        let statement = try db.prepare(sql)
        try statement.bind(sink, at: 1)
        var result: [DeadLetter] = []
        try statement.forEachRow { row in
            guard let uuid = Self.uuid(from: row.bytes(at: 2) ?? []) else { return }
            result.append(DeadLetter(id: row.int64(at: 0), anchor: row.int64(at: 1), uuid: uuid, type: row.string(at: 3) ?? "",
                                     record: row.string(at: 4) ?? "", reason: row.string(at: 5) ?? "",
                                     at: Date(timeIntervalSince1970: row.double(at: 6)), retrying: row.int(at: 7) != 0))
        }
        return result
    }

    /// Queues every dead letter of `sink` to be sent again; returns how many.
    @discardableResult
    public func retryDeadLetters(sink: String) throws -> Int {
        _ = try self.sink(named: sink)
        let update = try db.prepare("UPDATE dead_letters SET retry = 1 WHERE sink = ?")
        try update.bind(sink, at: 1)
        try update.execute()
        return db.changes
    }

    // MARK: The delivered log (for `ingestd watch`)

    /// Delivered events after `afterID`, oldest first.
    public func deliveredEvents(afterID: Int64) throws -> [DeliveredEvent] {
        let statement = try db.prepare("SELECT id, sink, type, count, anchor FROM deliveries WHERE id > ? ORDER BY id")
        try statement.bind(afterID, at: 1)
        return try statement.mapRows { row in
            DeliveredEvent(id: row.int64(at: 0), sink: row.string(at: 1) ?? "", type: row.string(at: 2) ?? "",
                           count: row.int(at: 3), anchor: row.int64(at: 4))
        }
    }

    /// The newest delivered event's id (0 when none).
    public func lastDeliveredEventID() throws -> Int64 {
        try db.prepare("SELECT COALESCE(MAX(id), 0) FROM deliveries").firstRow { $0.int64(at: 0) } ?? 0
    }

    /// The newest anchor of the change feed (for schedulers that wait for new commits).
    public func latestAnchor() throws -> Int64 {
        try currentAnchor()
    }

    static func bytes(of uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }
}

extension HealthStore {
    /// Moves a sink's cursor past a stretch of the feed that held nothing it may read (never back).
    public func advanceCursor(sink: String, to anchor: Int64) throws {
        let update = try db.prepare("UPDATE sinks SET cursor = max(cursor, ?) WHERE name = ?")
        try update.bind(anchor, at: 1)
        try update.bind(sink, at: 2)
        try update.execute()
    }

    /// Commits of this connection wait for the WAL write, not for the disk (`synchronous=NORMAL`):
    /// for a delivering connection, whose commits only move cursors, a cursor lost to a power cut
    /// means a batch is sent again (at-least-once), never that a record is lost.
    public func relaxDurabilityForDelivery() throws {
        try db.setPragma("synchronous", "NORMAL")
    }

    /// Whether `sinks retry` queued dead letters of `sink` that wait to be sent again.
    public func hasDeadLettersToRetry(sink: String) throws -> Bool {
        let statement = try db.cachedStatement("SELECT EXISTS(SELECT 1 FROM dead_letters WHERE sink = ? AND retry = 1)")
        try statement.bind(sink, at: 1)
        return try statement.firstRow { $0.int(at: 0) != 0 } ?? false
    }
}


/// The local store as the delivery port: a sink's feed is read by person name (resolved to the
/// store's person on each batch; nil reads every person's samples, never the unassigned ones).
extension HealthStore: DeliveryFeed {
    public func newestSample(person: String, type: QuantityType) throws -> QuantitySample? {
        try newestSamples(type: type, person: sinkScope(person: person), count: 1).last
    }

    public func feedBatch(after cursor: Int64, types: [String], limit: Int, person: String?) throws -> FeedBatch {
        try feedBatch(after: cursor, types: types, limit: limit, person: sinkScope(person: person))
    }
}

/// The local store as the sink commands' port.
extension HealthStore: SinkAdministrationStore {}

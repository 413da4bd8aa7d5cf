import Foundation
import HealthModel
import Pipeline

/// One held record read back for a grant: its pending row and the record, or why it cannot be read.
public struct HeldRecord: Sendable {
    public var id: Int64
    public var record: Result<HealthRecord, RecordDecodingError>
}

/// What bringing held records in after a grant did.
public struct ReleaseSummary: Sendable {
    /// The pipeline's report over every released batch (written, duplicate, held again, denied, invalid).
    public var report = IngestReport()
    /// Held records taken out of the pending area.
    public var released = 0
    /// Pending rows that could not be decoded (left in place), with the first error.
    public var unreadable = 0
    public var firstUnreadableError: String?
    /// Body-composition values the grant derived from weighings already stored (a grant of a
    /// derived type after its weighing); the released weighings derive theirs as they come in.
    public var derivedFromStoredWeighings = 0
}

extension HealthStore {
    /// Minimum time between two retention passes of one connection.
    static let pendingPurgeInterval: TimeInterval = 3600
    /// Held records read per batch when a grant brings them in.
    static let releaseBatchSize = 1000

    // MARK: Holding (inside a write transaction)

    /// Adds held records to the pending area (deduplicated per source; a higher sync version
    /// replaces), then enforces the per-source bounds.
    func hold(_ records: [NormalizedRecord], now: Date) throws -> PendingReceipt {
        var receipt = PendingReceipt()
        guard !records.isEmpty else { return receipt }
        let insert = try db.cachedStatement("""
            INSERT INTO pending(source, type, device, identity, sync_version, start_time, end_time, record, size, held_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(source, identity) DO UPDATE SET
                type = excluded.type, device = excluded.device, sync_version = excluded.sync_version,
                start_time = excluded.start_time, end_time = excluded.end_time, record = excluded.record,
                size = excluded.size
            WHERE excluded.sync_version > pending.sync_version
            """)
        let firstHeld = try db.cachedStatement(
            "INSERT OR IGNORE INTO pending_sources(source, first_held) VALUES (?, ?)")
        let encoder = HealthRecordEncoder()
        // A correlation is filed under its first undecided member type, so that granting that type brings it in.
        let policy = records.contains { if case .correlation = $0 { true } else { false } } ? try loadAuthorization() : nil
        var sources: [String] = []
        /// Sources of this batch the source bound has no room for (their records are not held).
        var refusedSources: [String] = []
        for record in records {
            if refusedSources.contains(record.source) {
                receipt.dropped[record.source, default: 0] += 1
                continue
            }
            if !sources.contains(record.source), try !admitsSource(record.source) {
                refusedSources.append(record.source)
                receipt.dropped[record.source, default: 0] += 1
                continue
            }
            let key = Self.pendingKey(record, policy: policy)
            try insert.bind(record.source, at: 1)
            try insert.bind(key.type, at: 2)
            try insert.bind(key.device, at: 3)
            try insert.bind(key.identity, at: 4)
            try insert.bind(key.syncVersion, at: 5)
            try insert.bind(key.start.timeIntervalSince1970, at: 6)
            try insert.bind(key.end.timeIntervalSince1970, at: 7)
            let text = switch record {
            case .sample(let sample): encoder.encode(sample)
            case .correlation(let correlation): encoder.encode(correlation)
            }
            try insert.bind(text, at: 8)
            try insert.bind(text.utf8.count, at: 9)
            try insert.bind(now.timeIntervalSince1970, at: 10)
            try insert.execute()
            if db.changes > 0 { receipt.newlyHeld += 1 } else { receipt.alreadyHeld += 1 }
            if !sources.contains(record.source) {
                sources.append(record.source)
                try firstHeld.bind(record.source, at: 1)
                try firstHeld.bind(now.timeIntervalSince1970, at: 2)
                try firstHeld.execute()
            }
        }
        for source in sources {
            let dropped = try enforcePendingBounds(source: source)
            if dropped > 0 { receipt.dropped[source] = dropped }
        }
        return receipt
    }

    /// The pending row's type, device text, identity and times for a record.
    static func pendingKey(_ record: NormalizedRecord, policy: AuthorizationPolicy?)
        -> (type: String, device: String, identity: String, syncVersion: Int, start: Date, end: Date) {
        switch record {
        case .sample(let sample):
            let identity: String
            if let syncID = sample.metadata.syncIdentifier {
                identity = "sync\u{1F}\(sample.type.identifier)\u{1F}\(syncID)"
            } else {
                identity = "sample\u{1F}\(sample.type.identifier)\u{1F}\(sample.device?.localIdentifier ?? "")\u{1F}"
                    + "\(sample.start.timeIntervalSince1970.bitPattern)\u{1F}\(sample.end.timeIntervalSince1970.bitPattern)"
                    + "\u{1F}\(sample.quantity.value.bitPattern)"
            }
            let version = sample.metadata.syncIdentifier == nil ? 0 : (sample.metadata.syncVersion ?? 0)
            return (sample.type.identifier, deviceText(sample.device), identity, version, sample.start, sample.end)
        case .correlation(let correlation):
            // Its own identity, not its dates: two readings in one minute are both held.
            let identity = "correlation\u{1F}" + correlation.identity
            let undecided = correlation.objects.first { policy?.decision(source: $0.source, type: $0.type) == .undecided }
            let type = (undecided ?? correlation.objects.first)?.type.identifier ?? correlation.type.identifier
            return (type, deviceText(correlation.device), identity, 0, correlation.start, correlation.end)
        }
    }

    /// "name (local identifier)", whichever parts the device has.
    public static func deviceText(_ device: Device?) -> String {
        guard let device else { return "" }
        let name = device.name ?? device.model ?? device.manufacturer
        switch (name, device.localIdentifier) {
        case let (name?, id?): return "\(name) (\(id))"
        case let (name?, nil): return name
        case let (nil, id?): return id
        case (nil, nil): return ""
        }
    }

    /// Whether `source` may hold records: it already does, or fewer than `maxSources` sources
    /// do. Past the bound, `refuse` throws.
    private func admitsSource(_ source: String) throws -> Bool {
        let holds = try db.cachedStatement("SELECT EXISTS(SELECT 1 FROM pending WHERE source = ?)")
        try holds.bind(source, at: 1)
        if try holds.firstRow({ $0.int(at: 0) }) == 1 { return true }
        let distinct = try db.cachedStatement("SELECT COUNT(DISTINCT source) FROM pending")
        let count = try distinct.firstRow { $0.int(at: 0) } ?? 0
        guard count >= pendingLimits.maxSources else { return true }
        if pendingLimits.overflow == .refuse {
            throw PendingBoundExceeded(source: source, bound: .sources, limit: pendingLimits.maxSources)
        }
        return false
    }

    /// Drops the oldest readings of `source` until it is within both bounds; returns how many.
    /// With `refuse`, throws instead of dropping anything.
    private func enforcePendingBounds(source: String) throws -> Int {
        let totals = try db.cachedStatement(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM pending WHERE source = ?")
        try totals.bind(source, at: 1)
        guard var (count, bytes) = try totals.firstRow({ ($0.int(at: 0), $0.int(at: 1)) }) else { return 0 }
        let limits = pendingLimits
        guard count > limits.maxRecordsPerSource || bytes > limits.maxBytesPerSource else { return 0 }
        if limits.overflow == .refuse {
            throw count > limits.maxRecordsPerSource
                ? PendingBoundExceeded(source: source, bound: .records, limit: limits.maxRecordsPerSource)
                : PendingBoundExceeded(source: source, bound: .bytes, limit: limits.maxBytesPerSource)
        }
        let oldest = try db.cachedStatement(
            "SELECT id, size FROM pending WHERE source = ? ORDER BY start_time, id")
        try oldest.bind(source, at: 1)
        var victims: [Int64] = []
        // One pass over the source's rows at most: the loop ends when the rows do.
        try oldest.forEachRow { row in
            guard count > limits.maxRecordsPerSource || bytes > limits.maxBytesPerSource else { return }
            victims.append(row.int64(at: 0))
            count -= 1
            bytes -= row.int(at: 1)
        }
        try removePending(ids: victims)
        let counted = try db.cachedStatement("UPDATE pending_sources SET dropped = dropped + ? WHERE source = ?")
        try counted.bind(victims.count, at: 1)
        try counted.bind(source, at: 2)
        try counted.execute()
        return victims.count
    }

    func removePending(ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        let delete = try db.cachedStatement("DELETE FROM pending WHERE id = ?")
        for id in ids {
            try delete.bind(id, at: 1)
            try delete.execute()
        }
    }

    /// Removes records held since before `now - retention`; returns the count per source.
    func removeExpiredPending(now: Date) throws -> [String: Int] {
        let cutoff = now.timeIntervalSince1970 - pendingLimits.retention
        // By the held_at index: this runs hourly inside a write and usually finds nothing. Left to
        // itself SQLite scans the whole area in source order to spare the GROUP BY its sort.
        let find = try db.cachedStatement(
            "SELECT source, COUNT(*) FROM pending INDEXED BY pending_by_held_at WHERE held_at < ? GROUP BY source")
        try find.bind(cutoff, at: 1)
        var expired: [String: Int] = [:]
        try find.forEachRow { expired[$0.string(at: 0) ?? ""] = $0.int(at: 1) }
        guard !expired.isEmpty else { return [:] }
        let delete = try db.cachedStatement("DELETE FROM pending WHERE held_at < ?")
        try delete.bind(cutoff, at: 1)
        try delete.execute()
        let counted = try db.cachedStatement("UPDATE pending_sources SET expired = expired + ? WHERE source = ?")
        for (source, n) in expired {
            try counted.bind(n, at: 1)
            try counted.bind(source, at: 2)
            try counted.execute()
        }
        return expired
    }

    /// Removes the pending records older than the retention period (at `now`) in its own
    /// transaction; returns the count per source.
    public func purgeExpiredPending(now: Date = Date()) throws -> [String: Int] {
        try db.transaction(.immediate) {
            let expired = try removeExpiredPending(now: now)
            lastPendingPurge = now
            return expired
        }
    }

    // MARK: Reading the pending area

    /// Held records per (source, type, device), sorted.
    public func pendingGroups() throws -> [PendingGroup] {
        // The counts the store maintains as it commits (`CountsMigration`); an extreme that
        // lost its record is read from the records of its one (source, type, device).
        try db.prepare("""
            SELECT c.source, c.type, c.device, c.count,
                   CASE WHEN c.first_exact THEN c.first_start ELSE (
                       SELECT MIN(p.start_time) FROM pending p
                       WHERE p.source = c.source AND p.type = c.type AND p.device = c.device) END,
                   CASE WHEN c.last_exact THEN c.last_end ELSE (
                       SELECT MAX(p.end_time) FROM pending p
                       WHERE p.source = c.source AND p.type = c.type AND p.device = c.device) END
            FROM pending_counts c ORDER BY c.source, c.type, c.device
            """).mapRows { row in
            PendingGroup(source: row.string(at: 0) ?? "", type: row.string(at: 1) ?? "", device: row.string(at: 2) ?? "",
                         count: row.int(at: 3), firstStart: Date(timeIntervalSince1970: row.double(at: 4)),
                         lastEnd: Date(timeIntervalSince1970: row.double(at: 5)))
        }
    }

    /// Held record counts per source (`ingestd status`, `ingestd sources`).
    public func pendingCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        try db.prepare("SELECT source, SUM(count) FROM pending_counts GROUP BY source").forEachRow {
            counts[$0.string(at: 0) ?? ""] = $0.int(at: 1)
        }
        return counts
    }

    /// Per source: records dropped by the bounds and removed by the retention period so far.
    public func pendingLosses() throws -> [String: (dropped: Int, expired: Int)] {
        var losses: [String: (dropped: Int, expired: Int)] = [:]
        try db.prepare("SELECT source, dropped, expired FROM pending_sources WHERE dropped > 0 OR expired > 0")
            .forEachRow { losses[$0.string(at: 0) ?? ""] = ($0.int(at: 1), $0.int(at: 2)) }
        return losses
    }

    /// Up to `limit` held records of `source` (of `types`, or all with nil) with ids in `range`, by id.
    func heldRecords(source: String, types: [String]?, ids range: ClosedRange<Int64>, limit: Int) throws -> [HeldRecord] {
        let typeFilter = types.map { " AND type IN (" + Array(repeating: "?", count: $0.count).joined(separator: ", ") + ")" } ?? ""
        let statement = try db.prepare(
            "SELECT id, record FROM pending WHERE source = ? AND id BETWEEN ? AND ?\(typeFilter) ORDER BY id LIMIT ?")
        try statement.bind(source, at: 1)
        try statement.bind(range.lowerBound, at: 2)
        try statement.bind(range.upperBound, at: 3)
        for (offset, type) in (types ?? []).enumerated() { try statement.bind(type, at: 4 + offset) }
        try statement.bind(limit, at: 4 + (types?.count ?? 0))
        let decoder = HealthRecordDecoder(defaultSource: source)
        return try statement.mapRows { row in
            let id = row.int64(at: 0)
            do throws(RecordDecodingError) {
                return HeldRecord(id: id, record: .success(try decoder.decodeLine(row.string(at: 1) ?? "")))
            } catch {
                return HeldRecord(id: id, record: .failure(error))
            }
        }
    }

    /// Brings the held records of `source` (of `types`, or every type with `all`) into the store
    /// through `pipeline` (validation, dedup), each batch leaving the pending area in the batch's
    /// own transaction. A daemon that read the grants just before they changed may still hold a
    /// record while this runs: a few more passes pick up what was held meanwhile.
    public func releaseHeld(source: String, types: [QuantityType], all: Bool, through pipeline: Pipeline) throws -> ReleaseSummary {
        var summary = ReleaseSummary()
        let newest = try db.cachedStatement("SELECT MAX(id) FROM pending WHERE source = ?")
        var next: Int64 = 0
        for _ in 0..<Self.releasePasses {
            try newest.bind(source, at: 1)
            guard let last = try newest.firstRow({ $0.isNull(at: 0) ? nil : $0.int64(at: 0) }) ?? nil, last >= next else { break }
            try release(source: source, types: all ? nil : types.map(\.identifier), ids: next...last,
                        through: pipeline, into: &summary)
            next = last + 1
        }
        return summary
    }

    /// Passes of `releaseHeld` over records held while it ran.
    static let releasePasses = 3

    /// Releases the held records with ids in `range`, a batch at a time; unreadable rows stay and are counted.
    private func release(source: String, types: [String]?, ids range: ClosedRange<Int64>, through pipeline: Pipeline,
                         into summary: inout ReleaseSummary) throws {
        var next = range.lowerBound
        while next <= range.upperBound {
            let rows = try heldRecords(source: source, types: types, ids: next...range.upperBound, limit: Self.releaseBatchSize)
            guard let lastRow = rows.last else { return }
            next = lastRow.id + 1
            var records: [HealthRecord] = []
            var ids: [Int64] = []
            for row in rows {
                switch row.record {
                case .success(let record):
                    records.append(record)
                    ids.append(row.id)
                case .failure(let error):
                    summary.unreadable += 1
                    if summary.firstUnreadableError == nil { summary.firstUnreadableError = "pending row \(row.id): \(error)" }
                }
            }
            guard !records.isEmpty else { continue }
            // One transaction per batch (the records leave the pending area as they are written),
            // retried while a writer in another process holds the store.
            summary.report.merge(try retryingWhileBusy { try pipeline.ingest(records, releasing: ids) })
            summary.released += ids.count
        }
    }
}

/// The store file keeps the authorization decisions: `auth revoke`, `auth deny` and `auth pending` reach them through this port.
extension HealthStore: AuthorizationStore {}

import Foundation
import HealthModel
import Pipeline

/// Schema 13: heart and respiratory rates are stored in count/min instead of count/s, so a
/// device's 85 bpm is stored as 85 instead of 1.4166666666666667 (issue 29). Stored values are
/// multiplied by 60 and rounded to nine decimals (far below any device's resolution; without the
/// rounding 62 bpm, stored as 1.0333333333333334, would become 62.00000000000001, and the reading
/// arriving again would not meet its stored twin). Held records in the pending area are
/// rewritten in count/min with their identities, for the same reason.
///
/// Rows that become equal to another reading of theirs (same source, device, type, interval and
/// now value) are removed with a tombstone, so change feeds and sinks see the removal: without
/// it the unique identity index would stop the update. Rescaled values are first written
/// negated, so that none meets a not-yet-rescaled value midway (respiratory rates in count/s and
/// in count/min overlap between 1 and 2).
enum RatePerMinuteMigration {
    static let migration = Migration(version: 13, name: "heart and respiratory rates stored per minute") { db in
        try apply(db, now: Date())
    }

    /// The types whose stored unit changed, by identifier.
    static let types: [QuantityType] = [.heartRate, .respiratoryRate]

    static func apply(_ db: Connection, now: Date) throws {
        let names = types.map { "'\($0.identifier)'" }.joined(separator: ", ")
        let filter = "type IN (SELECT id FROM types WHERE identifier IN (\(names)))"
        try db.execute(sql: "UPDATE OR IGNORE samples SET value = -round(value * 60, 9) WHERE \(filter) AND value > 0")
        try removeDuplicates(db, filter: filter, now: now)
        try db.execute(sql: "UPDATE samples SET value = -value WHERE \(filter) AND value < 0")
        try rewritePending(db)
    }

    /// The rows the negated update skipped: each would equal another reading of theirs.
    private static func removeDuplicates(_ db: Connection, filter: String, now: Date) throws {
        let duplicates = try db.prepare("SELECT id, uuid, type, source, person FROM samples WHERE \(filter) AND value > 0 ORDER BY id")
            .mapRows { row in
                (id: row.int64(at: 0), uuid: row.bytes(at: 1) ?? [], type: row.int64(at: 2), source: row.int64(at: 3),
                 person: row.isNull(at: 4) ? nil : row.int64(at: 4))
            }
        guard !duplicates.isEmpty else { return }
        let highest = try db.prepare("""
            SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'samples'), 0),
                       COALESCE((SELECT MAX(id) FROM samples), 0), COALESCE((SELECT MAX(anchor) FROM tombstones), 0))
            """).firstRow { $0.int64(at: 0) } ?? 0
        let tombstone = try db.prepare("INSERT INTO tombstones(anchor, uuid, type, source, deleted_at, person) VALUES (?, ?, ?, ?, ?, ?)")
        let delete = try db.prepare("DELETE FROM samples WHERE id = ?")
        for (offset, row) in duplicates.enumerated() {
            try tombstone.bind(highest + 1 + Int64(offset), at: 1)
            try tombstone.bind(row.uuid, at: 2)
            try tombstone.bind(row.type, at: 3)
            try tombstone.bind(row.source, at: 4)
            try tombstone.bind(now.timeIntervalSince1970, at: 5)
            if let person = row.person { try tombstone.bind(person, at: 6) } else { try tombstone.bindNull(at: 6) }
            try tombstone.execute()
            try delete.bind(row.id, at: 1)
            try delete.execute()
        }
        // The feed's next anchor comes after the tombstones.
        let last = highest + Int64(duplicates.count)
        try db.execute(sql: "UPDATE sqlite_sequence SET seq = \(last) WHERE name = 'samples'")
        if db.changes == 0 { try db.execute(sql: "INSERT INTO sqlite_sequence(name, seq) VALUES ('samples', \(last))") }
    }

    /// Held heart and respiratory rates: the record in count/min and the identity it now has; a
    /// record that becomes another's twin replaces it (one reading is held once).
    private static func rewritePending(_ db: Connection) throws {
        let names = types.map { "'\($0.identifier)'" }.joined(separator: ", ")
        let held = try db.prepare("SELECT id, source, record FROM pending WHERE type IN (\(names)) ORDER BY id").mapRows { row in
            (id: row.int64(at: 0), source: row.string(at: 1) ?? "", record: row.string(at: 2) ?? "")
        }
        guard !held.isEmpty else { return }
        let update = try db.prepare("UPDATE OR REPLACE pending SET identity = ?, record = ?, size = ? WHERE id = ?")
        let encoder = HealthRecordEncoder()
        for row in held {
            // A held record that no longer reads stays as it is: bringing it in reports why.
            guard case .sample(var sample) = try? HealthRecordDecoder(defaultSource: row.source).decodeLine(row.record),
                  types.contains(sample.type),
                  let perMinute = try? sample.quantity.converted(to: .countPerMinute) else { continue }
            sample.quantity = Quantity(value: (perMinute.value * 1e9).rounded() / 1e9, unit: .countPerMinute)
            let text = encoder.encode(sample)
            try update.bind(HealthStore.pendingKey(.sample(sample), policy: nil).identity, at: 1)
            try update.bind(text, at: 2)
            try update.bind(text.utf8.count, at: 3)
            try update.bind(row.id, at: 4)
            try update.execute()
        }
    }
}

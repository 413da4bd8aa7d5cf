import Foundation
import HealthModel

/// Schema 9: correlations are unique by (source, type, ``Correlation/identity``) instead of
/// (source, type, start, end). Under the old key two blood pressures of one cuff in the same
/// minute became one correlation with two systolic and two diastolic members; such a merged
/// correlation is split again, its n-th systolic paired with its n-th diastolic in the order
/// they were stored (the order the readings came in), each pair a correlation of its own.
enum CorrelationIdentityMigration {
    static let migration = Migration(version: 9, name: "correlations identified by their own identity",
                                     disablesForeignKeys: true) { db in try apply(db) }

    private struct Member {
        var id: Int64
        var type: String
        var value: Double
        var syncIdentifier: String?
    }

    private struct Row {
        var id: Int64
        var uuid: [UInt8]
        var type: String
        var start: Double
        var end: Double
        var source: Int64
        var device: Int64?
        var metadata: String?
        var syncIdentifier: String?
        var deviceLocalIdentifier: String
    }

    static func apply(_ db: Connection) throws {
        try db.execute(sql: """
            CREATE TABLE correlations_new(
                id INTEGER PRIMARY KEY,
                uuid BLOB NOT NULL UNIQUE,
                type TEXT NOT NULL,
                start_time REAL NOT NULL,
                end_time REAL NOT NULL,
                source INTEGER NOT NULL REFERENCES sources(id),
                device INTEGER REFERENCES devices(id),
                metadata TEXT,
                identity TEXT NOT NULL,
                UNIQUE(source, type, identity)
            );
            """)
        let rows = try db.prepare("""
            SELECT c.id, c.uuid, c.type, c.start_time, c.end_time, c.source, c.device, c.metadata,
                   CASE WHEN json_valid(c.metadata) THEN json_extract(c.metadata, '$.HKMetadataKeySyncIdentifier') END,
                   COALESCE(d.local_identifier, '')
            FROM correlations c LEFT JOIN devices d ON d.id = c.device ORDER BY c.id
            """).mapRows { row in
            Row(id: row.int64(at: 0), uuid: row.bytes(at: 1) ?? [], type: row.string(at: 2) ?? "",
                start: row.double(at: 3), end: row.double(at: 4), source: row.int64(at: 5),
                device: row.isNull(at: 6) ? nil : row.int64(at: 6), metadata: row.string(at: 7),
                syncIdentifier: row.isNull(at: 8) ? nil : row.string(at: 8), deviceLocalIdentifier: row.string(at: 9) ?? "")
        }
        let members = try db.prepare("""
            SELECT s.id, t.identifier, s.value, s.sync_id FROM samples s JOIN types t ON t.id = s.type
            WHERE s.correlation = ? ORDER BY s.id
            """)
        let insert = try db.prepare("""
            INSERT INTO correlations_new(id, uuid, type, start_time, end_time, source, device, metadata, identity)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let move = try db.prepare("UPDATE samples SET correlation = ? WHERE id = ?")
        var nextID = (try db.prepare("SELECT COALESCE(MAX(id), 0) FROM correlations").firstRow { $0.int64(at: 0) } ?? 0) + 1
        var used = Set<String>()
        for row in rows {
            try members.bind(row.id, at: 1)
            let stored = try members.mapRows { member in
                Member(id: member.int64(at: 0), type: member.string(at: 1) ?? "", value: member.double(at: 2),
                       syncIdentifier: member.isNull(at: 3) ? nil : member.string(at: 3))
            }
            members.reset()
            for (index, group) in groups(of: stored, type: row.type).enumerated() {
                let id = index == 0 ? row.id : nextID
                if index > 0 { nextID += 1 }
                var identity = Correlation.identity(
                    type: row.type, syncIdentifier: index == 0 ? row.syncIdentifier : nil,
                    deviceLocalIdentifier: row.deviceLocalIdentifier,
                    start: Date(timeIntervalSince1970: row.start), end: Date(timeIntervalSince1970: row.end),
                    members: group.map { .init(type: $0.type, value: $0.value, syncIdentifier: $0.syncIdentifier) })
                if !used.insert("\(row.source)\u{1F}\(identity)").inserted {
                    identity = "row\u{1F}\(id)"
                    used.insert("\(row.source)\u{1F}\(identity)")
                }
                var uuid = row.uuid
                if index > 0 { uuid = withUnsafeBytes(of: SampleIdentifierGenerator.shared.next().uuid) { Array($0) } }
                try insert.bind(id, at: 1)
                try insert.bind(uuid, at: 2)
                try insert.bind(row.type, at: 3)
                try insert.bind(row.start, at: 4)
                try insert.bind(row.end, at: 5)
                try insert.bind(row.source, at: 6)
                if let device = row.device { try insert.bind(device, at: 7) } else { try insert.bindNull(at: 7) }
                if let metadata = row.metadata { try insert.bind(metadata, at: 8) } else { try insert.bindNull(at: 8) }
                try insert.bind(identity, at: 9)
                try insert.execute()
                insert.reset()
                guard index > 0 else { continue }
                for member in group {
                    try move.bind(id, at: 1)
                    try move.bind(member.id, at: 2)
                    try move.execute()
                    move.reset()
                }
            }
        }
        try db.execute(sql: """
            DROP TABLE correlations;
            ALTER TABLE correlations_new RENAME TO correlations;
            """)
    }

    /// The members as correlations: one group, except a blood pressure holding more than one
    /// systolic or diastolic, which is cut into pairs (the n-th of each, in stored order; an
    /// unpaired rest stays with the last pair).
    private static func groups(of members: [Member], type: String) -> [[Member]] {
        guard type == CorrelationType.bloodPressure.identifier else { return [members] }
        let systolic = members.filter { $0.type == QuantityType.bloodPressureSystolic.identifier }
        let diastolic = members.filter { $0.type == QuantityType.bloodPressureDiastolic.identifier }
        let pairs = min(systolic.count, diastolic.count)
        guard pairs > 1 else { return [members] }
        var groups = (0..<pairs).map { [systolic[$0], diastolic[$0]] }
        let paired = Set(groups.joined().map(\.id))
        groups[pairs - 1] += members.filter { !paired.contains($0.id) }
        return groups
    }
}

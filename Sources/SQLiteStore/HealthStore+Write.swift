import Foundation
import HealthModel
import Pipeline

extension HealthStore: SampleStore {
    public func loadAuthorization() throws -> AuthorizationPolicy {
        var policy = AuthorizationPolicy()
        try db.prepare("SELECT source, type FROM grants").forEachRow { row in
            guard let source = row.string(at: 0), let type = row.string(at: 1) else { return }
            if type == "*" {
                policy.grantAll(source: source)
            } else if let quantityType = QuantityType.named(type) {
                policy.grant(source: source, type: quantityType)
            }
        }
        return policy
    }

    /// Writes a batch in one IMMEDIATE transaction. Identity is enforced by the unique indexes:
    /// `INSERT OR IGNORE` that changes nothing is a duplicate.
    public func write(_ batch: [NormalizedRecord], rejections: [RejectionKey: Int]) throws -> CommitReceipt {
        let now = Date()
        return try db.transaction(.immediate) {
            var outcomes: [[WriteOutcome]] = []
            outcomes.reserveCapacity(batch.count)
            var counts: [PairKey: Int] = [:]
            for record in batch {
                switch record {
                case .sample(let sample):
                    let outcome = try insert(sample, correlation: nil, now: now)
                    if outcome != .duplicate { counts[try pairKey(sample, now: now), default: 0] += 1 }
                    outcomes.append([outcome])
                case .correlation(let correlation):
                    let memberOutcomes = try insert(correlation, now: now)
                    for (member, outcome) in zip(correlation.objects, memberOutcomes) where outcome != .duplicate {
                        counts[try pairKey(member, now: now), default: 0] += 1
                    }
                    outcomes.append(memberOutcomes)
                }
            }
            try recordRejections(rejections, now: now)
            let anchor = try currentAnchor()
            var events: [RecordsProcessed] = []
            if !counts.isEmpty {
                let commit = try db.cachedStatement("INSERT INTO commits(anchor, committed_at) VALUES (?, ?)")
                try commit.bind(anchor, at: 1)
                try commit.bind(now.timeIntervalSince1970, at: 2)
                try commit.execute()
                let commitID = db.lastInsertRowID
                let count = try db.cachedStatement(
                    "INSERT INTO commit_counts(commit_id, type, source, count) VALUES (?, ?, ?, ?)")
                let firstWritten = try db.cachedStatement(
                    "INSERT OR IGNORE INTO source_types(source, type, first_written) VALUES (?, ?, ?)")
                for key in counts.keys.sorted(by: { ($0.type, $0.source) < ($1.type, $1.source) }) {
                    let n = counts[key] ?? 0
                    try count.bind(commitID, at: 1)
                    try count.bind(key.type, at: 2)
                    try count.bind(key.source, at: 3)
                    try count.bind(n, at: 4)
                    try count.execute()
                    try firstWritten.bind(key.source, at: 1)
                    try firstWritten.bind(key.type, at: 2)
                    try firstWritten.bind(now.timeIntervalSince1970, at: 3)
                    try firstWritten.execute()
                    events.append(RecordsProcessed(type: typeNames[key.type] ?? "?", source: sourceName(key.source),
                                                   count: n, anchor: anchor))
                }
            }
            return CommitReceipt(outcomes: outcomes, anchor: anchor, events: events)
        }
    }

    struct PairKey: Hashable {
        var type: Int64
        var source: Int64
    }

    private func pairKey(_ sample: QuantitySample, now: Date) throws -> PairKey {
        PairKey(type: try typeID(sample.type.identifier), source: try sourceID(sample.source, now: now))
    }

    func sourceName(_ id: Int64) -> String {
        sourceIDs.first { $0.value == id }?.key ?? "?"
    }

    /// The newest anchor: the highest sample id ever assigned (tombstones share those anchors).
    func currentAnchor() throws -> Int64 {
        let statement = try db.cachedStatement("SELECT seq FROM sqlite_sequence WHERE name = 'samples'")
        return try statement.firstRow { $0.int64(at: 0) } ?? 0
    }

    private func recordRejections(_ rejections: [RejectionKey: Int], now: Date) throws {
        guard !rejections.isEmpty else { return }
        let insert = try db.cachedStatement(
            "INSERT INTO rejections(at, source, type, reason, count) VALUES (?, ?, ?, ?, ?)")
        for (key, count) in rejections.sorted(by: { $0.key < $1.key }) {
            try insert.bind(now.timeIntervalSince1970, at: 1)
            try insert.bind(key.source, at: 2)
            try insert.bind(key.type, at: 3)
            try insert.bind(key.reason, at: 4)
            try insert.bind(count, at: 5)
            try insert.execute()
        }
    }

    private static let insertSQL = """
        INSERT OR IGNORE INTO samples(uuid, type, value, start_time, end_time, source, device, device_local_id,
                                      sync_id, sync_version, metadata, correlation)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Inserts one sample; the unique indexes decide whether it is new.
    func insert(_ sample: QuantitySample, correlation: Int64?, now: Date) throws -> WriteOutcome {
        let type = try typeID(sample.type.identifier)
        let source = try sourceID(sample.source, now: now)
        var correlation = correlation
        var replacing: (id: Int64, uuid: [UInt8])?
        if let syncID = sample.metadata.syncIdentifier {
            let find = try db.cachedStatement(
                "SELECT id, sync_version, uuid, correlation FROM samples WHERE source = ? AND sync_id = ?")
            try find.bind(source, at: 1)
            try find.bind(syncID, at: 2)
            let existing = try find.firstRow { row in
                (id: row.int64(at: 0), version: row.isNull(at: 1) ? 0 : row.int64(at: 1),
                 uuid: row.bytes(at: 2) ?? [], correlation: row.isNull(at: 3) ? nil : Optional(row.int64(at: 3)))
            }
            if let existing {
                guard Int64(sample.metadata.syncVersion ?? 0) > existing.version else { return .duplicate }
                let delete = try db.cachedStatement("DELETE FROM samples WHERE id = ?")
                try delete.bind(existing.id, at: 1)
                try delete.execute()
                replacing = (existing.id, existing.uuid)
                // Replacing a member also replaces it inside its correlation (HealthKit's rule).
                if correlation == nil { correlation = existing.correlation }
            }
        }
        let insert = try db.cachedStatement(Self.insertSQL)
        try insert.bind(Self.uuidBytes(sample.uuid), at: 1)
        try insert.bind(type, at: 2)
        try insert.bind(sample.quantity.value, at: 3)
        try insert.bind(sample.start.timeIntervalSince1970, at: 4)
        try insert.bind(sample.end.timeIntervalSince1970, at: 5)
        try insert.bind(source, at: 6)
        if let device = try deviceID(sample.device) { try insert.bind(device, at: 7) } else { try insert.bindNull(at: 7) }
        try insert.bind(sample.device?.localIdentifier ?? "", at: 8)
        if let syncID = sample.metadata.syncIdentifier {
            try insert.bind(syncID, at: 9)
            try insert.bind(sample.metadata.syncVersion ?? 0, at: 10)
        } else {
            try insert.bindNull(at: 9)
            try insert.bindNull(at: 10)
        }
        if sample.metadata.isEmpty {
            try insert.bindNull(at: 11)
        } else {
            try insert.bind(HealthRecordEncoder().encode(sample.metadata), at: 11)
        }
        if let correlation { try insert.bind(correlation, at: 12) } else { try insert.bindNull(at: 12) }
        try insert.execute()
        guard db.changes > 0 else { return .duplicate }
        guard let replacing else { return .written }
        let tombstone = try db.cachedStatement(
            "INSERT INTO tombstones(anchor, uuid, type, source, deleted_at) VALUES (?, ?, ?, ?, ?)")
        try tombstone.bind(db.lastInsertRowID, at: 1)
        try tombstone.bind(replacing.uuid, at: 2)
        try tombstone.bind(type, at: 3)
        try tombstone.bind(source, at: 4)
        try tombstone.bind(now.timeIntervalSince1970, at: 5)
        try tombstone.execute()
        return .replaced
    }

    /// Inserts a correlation and its members. A correlation already stored (same source, type and
    /// dates) keeps its row; its members are deduplicated one by one.
    func insert(_ correlation: Correlation, now: Date) throws -> [WriteOutcome] {
        let source = try sourceID(correlation.source, now: now)
        let insert = try db.cachedStatement("""
            INSERT OR IGNORE INTO correlations(uuid, type, start_time, end_time, source, device, metadata)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        try insert.bind(Self.uuidBytes(correlation.uuid), at: 1)
        try insert.bind(correlation.type.identifier, at: 2)
        try insert.bind(correlation.start.timeIntervalSince1970, at: 3)
        try insert.bind(correlation.end.timeIntervalSince1970, at: 4)
        try insert.bind(source, at: 5)
        if let device = try deviceID(correlation.device) { try insert.bind(device, at: 6) } else { try insert.bindNull(at: 6) }
        if correlation.metadata.isEmpty {
            try insert.bindNull(at: 7)
        } else {
            try insert.bind(HealthRecordEncoder().encode(correlation.metadata), at: 7)
        }
        try insert.execute()
        let find = try db.cachedStatement(
            "SELECT id FROM correlations WHERE source = ? AND type = ? AND start_time = ? AND end_time = ?")
        try find.bind(source, at: 1)
        try find.bind(correlation.type.identifier, at: 2)
        try find.bind(correlation.start.timeIntervalSince1970, at: 3)
        try find.bind(correlation.end.timeIntervalSince1970, at: 4)
        let correlationID = try find.firstRow { $0.int64(at: 0) }
        return try correlation.objects.map { try self.insert($0, correlation: correlationID, now: now) }
    }

    static func uuidBytes(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    static func uuid(from bytes: [UInt8]) -> UUID? {
        guard bytes.count == 16 else { return nil }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

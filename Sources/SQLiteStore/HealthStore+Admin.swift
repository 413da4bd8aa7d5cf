import Foundation
import HealthModel
import Pipeline

extension HealthStore {
    // MARK: Authorization

    /// Grants `source` the right to write `types` (or every type with `all`), replacing any explicit
    /// denial of them. Held samples stay pending: `releaseHeld` brings them in. A grant of a
    /// derived body-composition type derives, in the same transaction, the values of the
    /// source's stored weighings that were refused for want of it (returned).
    @discardableResult
    public func grant(source: String, types: [QuantityType], all: Bool = false) throws -> BodyCompositionRecomputation {
        try retryingWhileBusy {
            try db.transaction(.immediate) {
                try changeDecision(table: "grants", clearing: "denials", source: source, types: types, all: all)
                guard all || types.contains(where: BodyCompositionStage.derivedTypes.contains) else { return BodyCompositionRecomputation() }
                return try deriveMissingBodyComposition(source: source)
            }
        }
    }

    /// Runs `body` (one transaction) again while another process holds the write lock beyond
    /// the busy timeout (a replay committing large batches), at most `busyRetries` times.
    func retryingWhileBusy<T>(_ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where error.isBusy && attempt < Self.busyRetries {
                attempt += 1
                usleep(useconds_t(100_000 * attempt))
            }
        }
    }

    /// Retries of a grant's transactions that found the store busy.
    static let busyRetries = 5

    /// Records an explicit denial of `types` (or every type with `all`) for `source`, replacing its
    /// grants of them, and discards what was held for them. Returns the count of discarded records.
    @discardableResult
    public func deny(source: String, types: [QuantityType], all: Bool = false) throws -> Int {
        try db.transaction(.immediate) {
            try changeDecision(table: "denials", clearing: "grants", source: source, types: types, all: all)
            let discarded: Int
            if all {
                let delete = try db.cachedStatement("DELETE FROM pending WHERE source = ?")
                try delete.bind(source, at: 1)
                try delete.execute()
                discarded = db.changes
            } else {
                let delete = try db.cachedStatement("DELETE FROM pending WHERE source = ? AND type = ?")
                var count = 0
                for type in types {
                    try delete.bind(source, at: 1)
                    try delete.bind(type.identifier, at: 2)
                    try delete.execute()
                    count += db.changes
                }
                discarded = count
            }
            return discarded
        }
    }

    /// Every explicit denial as (source, type identifier or `*`), sorted.
    public func denials() throws -> [(source: String, type: String)] {
        try db.prepare("SELECT source, type FROM denials ORDER BY source, type").mapRows { row in
            (row.string(at: 0) ?? "", row.string(at: 1) ?? "")
        }
    }

    /// Inserts the decision rows into `table` and removes the opposite ones from `clearing` (all of
    /// the source's with `all`), in one transaction (joining the caller's when there is one).
    private func changeDecision(table: String, clearing: String, source: String, types: [QuantityType], all: Bool) throws {
        let now = Date().timeIntervalSince1970
        let body = {
            let insert = try self.db.cachedStatement("INSERT OR IGNORE INTO \(table)(source, type, \(table == "grants" ? "granted_at" : "denied_at")) VALUES (?, ?, ?)")
            for identifier in all ? ["*"] : types.map(\.identifier) {
                try insert.bind(source, at: 1)
                try insert.bind(identifier, at: 2)
                try insert.bind(now, at: 3)
                try insert.execute()
            }
            if all {
                let clear = try self.db.cachedStatement("DELETE FROM \(clearing) WHERE source = ?")
                try clear.bind(source, at: 1)
                try clear.execute()
            } else {
                let clear = try self.db.cachedStatement("DELETE FROM \(clearing) WHERE source = ? AND type = ?")
                for type in types {
                    try clear.bind(source, at: 1)
                    try clear.bind(type.identifier, at: 2)
                    try clear.execute()
                }
            }
        }
        if db.isInTransaction { try body() } else { try db.transaction(.immediate, body) }
    }

    /// Revokes grants; `all` removes every grant of the source, including `--all`.
    public func revoke(source: String, types: [QuantityType], all: Bool = false) throws {
        try db.transaction(.immediate) {
            if all {
                let delete = try db.cachedStatement("DELETE FROM grants WHERE source = ?")
                try delete.bind(source, at: 1)
                try delete.execute()
                return
            }
            let delete = try db.cachedStatement("DELETE FROM grants WHERE source = ? AND type = ?")
            for type in types {
                try delete.bind(source, at: 1)
                try delete.bind(type.identifier, at: 2)
                try delete.execute()
            }
        }
    }

    /// Every grant as (source, type identifier or `*`), sorted.
    public func grants() throws -> [(source: String, type: String)] {
        try db.prepare("SELECT source, type FROM grants ORDER BY source, type").mapRows { row in
            (row.string(at: 0) ?? "", row.string(at: 1) ?? "")
        }
    }

    // MARK: Priorities

    /// Sets the source order for a type: the first source wins where sources overlap.
    public func setPriority(type: QuantityType, sources: [String]) throws {
        try db.transaction(.immediate) {
            let clear = try db.cachedStatement("DELETE FROM priorities WHERE type = ?")
            try clear.bind(type.identifier, at: 1)
            try clear.execute()
            let insert = try db.cachedStatement("INSERT INTO priorities(type, source, rank) VALUES (?, ?, ?)")
            for (rank, source) in sources.enumerated() {
                try insert.bind(type.identifier, at: 1)
                try insert.bind(source, at: 2)
                try insert.bind(rank, at: 3)
                try insert.execute()
            }
        }
    }

    /// The sources of a type in priority order: the explicit order first, then the others by
    /// when they first wrote that type.
    public func priority(for type: QuantityType) throws -> [String] {
        let explicitStatement = try db.prepare("SELECT source FROM priorities WHERE type = ? ORDER BY rank")
        try explicitStatement.bind(type.identifier, at: 1)
        var ordered = try explicitStatement.mapRows { $0.string(at: 0) ?? "" }
        guard let typeID = typeIDs[type.identifier] else { return ordered }
        let byFirstWrite = try db.prepare("""
            SELECT s.name FROM source_types st JOIN sources s ON s.id = st.source
            WHERE st.type = ? ORDER BY st.first_written, s.id
            """)
        try byFirstWrite.bind(typeID, at: 1)
        for name in try byFirstWrite.mapRows({ $0.string(at: 0) ?? "" }) where !ordered.contains(name) {
            ordered.append(name)
        }
        return ordered
    }

    // MARK: Sources

    /// Every source name the store has met: with stored samples, held in the pending area, or
    /// counted in the rejection log (denied or invalid samples), sorted.
    public func seenSourceNames() throws -> [String] {
        try db.prepare("""
            SELECT name FROM sources UNION SELECT source FROM pending_sources UNION SELECT source FROM rejections
            ORDER BY 1
            """).mapRows { $0.string(at: 0) ?? "" }
    }

    /// Every source with its sample counts per type and its devices.
    public func sources() throws -> [SourceSummary] {
        var result: [String: SourceSummary] = [:]
        let names = try db.prepare("SELECT name FROM sources ORDER BY name").mapRows { $0.string(at: 0) ?? "" }
        for name in names { result[name] = SourceSummary(name: name, sampleCount: 0, countsByType: [:], devices: []) }
        // The counts the store maintains as it commits (`CountsMigration`), not a scan.
        try db.prepare("""
            SELECT s.name, t.identifier, SUM(c.count) FROM sample_counts c
            JOIN sources s ON s.id = c.source JOIN types t ON t.id = c.type
            GROUP BY c.source, c.type
            """).forEachRow { row in
            let name = row.string(at: 0) ?? ""
            let n = row.int(at: 2)
            result[name, default: SourceSummary(name: name, sampleCount: 0, countsByType: [:], devices: [])]
                .countsByType[row.string(at: 1) ?? ""] = n
            result[name]?.sampleCount += n
        }
        try db.prepare("""
            SELECT DISTINCT s.name, d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version,
                   d.software_version, d.local_identifier, d.udi_device_identifier
            FROM sample_counts c JOIN sources s ON s.id = c.source JOIN devices d ON d.id = c.device
            ORDER BY s.name, d.id
            """).forEachRow { row in
            let device = Device(name: row.string(at: 1), manufacturer: row.string(at: 2), model: row.string(at: 3),
                                hardwareVersion: row.string(at: 4), firmwareVersion: row.string(at: 5),
                                softwareVersion: row.string(at: 6), localIdentifier: row.string(at: 7),
                                udiDeviceIdentifier: row.string(at: 8))
            result[row.string(at: 0) ?? ""]?.devices.append(device)
        }
        for battery in try deviceBatteries() { result[battery.source]?.batteries.append(battery) }
        return result.values.sorted { $0.name < $1.name }
    }

    // MARK: Profile

    /// The characteristic types of the first person (the single user of a one-person store);
    /// `profile(of:)` reads anybody's.
    public func profile() throws -> UserProfile {
        guard let first = try people().first else { return UserProfile() }
        return first.profile
    }

    /// Sets the characteristics of the first person (the single user of a one-person store).
    public func setProfile(_ profile: UserProfile) throws {
        guard let first = try people().first else { return }
        try setProfile(profile, of: first)
    }

    /// When the newest commit of samples was made (the commit log's last row); nil before the first.
    public func lastCommitTime() throws -> Date? {
        let statement = try db.prepare("SELECT committed_at FROM commits ORDER BY id DESC LIMIT 1")
        return try statement.firstRow { Date(timeIntervalSince1970: $0.double(at: 0)) }
    }

    // MARK: Rejections

    /// Rejection counts per (source, type, reason) since `since`.
    public func rejections(since: Date) throws -> [RejectionKey: Int] {
        let statement = try db.prepare(
            "SELECT source, type, reason, SUM(count) FROM rejections WHERE at >= ? GROUP BY source, type, reason")
        try statement.bind(since.timeIntervalSince1970, at: 1)
        var result: [RejectionKey: Int] = [:]
        try statement.forEachRow { row in
            result[RejectionKey(source: row.string(at: 0) ?? "", type: row.string(at: 1) ?? "",
                                reason: row.string(at: 2) ?? "")] = row.int(at: 3)
        }
        return result
    }
}

extension HealthStore {
    /// Counts and the last sample time per (source, type), sorted by source then type, from the
    /// counts the store maintains as it commits (`CountsMigration`): a latest end that lost its
    /// sample is read from the samples of its one (source, type, person, device).
    public func sourceTypeStatus() throws -> [SourceTypeStatus] {
        try db.prepare("""
            SELECT s.name, t.identifier, SUM(c.count), MAX(CASE WHEN c.last_exact THEN c.last_end ELSE (
                       SELECT MAX(x.end_time) FROM samples x
                       WHERE x.person IS NULLIF(c.person, 0) AND x.type = c.type AND x.source = c.source
                         AND x.device IS NULLIF(c.device, 0)) END)
            FROM sample_counts c JOIN sources s ON s.id = c.source JOIN types t ON t.id = c.type
            GROUP BY c.source, c.type ORDER BY s.name, t.identifier
            """).mapRows { row in
            SourceTypeStatus(source: row.string(at: 0) ?? "", type: row.string(at: 1) ?? "", count: row.int(at: 2),
                             lastSampleEnd: Date(timeIntervalSince1970: row.double(at: 3)))
        }
    }
}

/// The store file keeps each type's source order; `ingestd priority` reaches it through this port.
extension HealthStore: SourcePriorityStore {}

import Foundation
import HealthModel
import Pipeline


/// One committed batch's count for one (type, source): the "records processed" log.
public struct CommitEvent: Sendable, Equatable {
    public var commitID: Int64
    public var type: String
    public var source: String
    public var count: Int
    public var anchor: Int64
    /// The person the samples went to (nil: unassigned).
    public var person: String?
}

/// The raw material of statistics: a sample's interval, value (canonical unit) and source.
public struct StoredPoint: Sendable {
    public var start: Double
    public var end: Double
    public var value: Double
    public var source: String
}

extension HealthStore {
    static let sampleColumns = """
        x.id, x.uuid, x.value, x.start_time, x.end_time, s.name, x.metadata,
        d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
        d.local_identifier, d.udi_device_identifier, x.sync_id, x.sync_version
        """

    /// A sample from a row whose first 17 columns are `sampleColumns`; nil for a malformed uuid.
    func readSample(_ row: Statement, type: QuantityType) throws -> QuantitySample? {
        guard let uuid = Self.uuid(from: row.bytes(at: 1) ?? []) else { return nil }
        var metadata = Metadata()
        if let json = row.string(at: 6) {
            metadata = try HealthRecordDecoder(defaultSource: "").decodeMetadata(json)
        }
        let device = Self.readDevice(row, at: 7)
        return QuantitySample(
            uuid: uuid, type: type, quantity: Quantity(value: row.double(at: 2), unit: type.canonicalUnit),
            start: Date(timeIntervalSince1970: row.double(at: 3)), end: Date(timeIntervalSince1970: row.double(at: 4)),
            source: row.string(at: 5) ?? "", device: device, metadata: metadata)
    }

    /// The device in the eight device columns from `first` (name, manufacturer, model, hardware,
    /// firmware and software versions, local identifier, UDI); nil when none of them is set.
    static func readDevice(_ row: Statement, at first: Int) -> Device? {
        guard (first..<first + 8).contains(where: { !row.isNull(at: $0) }) else { return nil }
        return Device(name: row.string(at: first), manufacturer: row.string(at: first + 1), model: row.string(at: first + 2),
                      hardwareVersion: row.string(at: first + 3), firmwareVersion: row.string(at: first + 4),
                      softwareVersion: row.string(at: first + 5), localIdentifier: row.string(at: first + 6),
                      udiDeviceIdentifier: row.string(at: first + 7))
    }

    /// Samples of `type` overlapping [from, to) (an instantaneous sample at `from` is included),
    /// optionally of one source, of the people in `person`, sorted by start date, at most `limit` (0 = no limit).
    public func samples(type: QuantityType, from: Date? = nil, to: Date? = nil, source: String? = nil,
                        person: PersonScope = .everyone, limit: Int = 0) throws -> [QuantitySample] {
        try samples(type: type, from: from, to: to, source: source, person: person, limit: limit, newestFirst: false)
    }

    /// The newest `count` samples of `type` as `samples` selects them, oldest first.
    public func newestSamples(type: QuantityType, from: Date? = nil, to: Date? = nil, source: String? = nil,
                              person: PersonScope = .everyone, count: Int) throws -> [QuantitySample] {
        try samples(type: type, from: from, to: to, source: source, person: person, limit: max(count, 1), newestFirst: true)
            .reversed()
    }

    private func samples(type: QuantityType, from: Date?, to: Date?, source: String?,
                         person: PersonScope, limit: Int, newestFirst: Bool) throws -> [QuantitySample] {
        var result: [QuantitySample] = []
        try forEachSample(type: type, from: from, to: to, source: source, person: person, limit: limit,
                          newestFirst: newestFirst) { result.append($0) }
        return result
    }

    /// The samples `samples` selects, one at a time from the open statement (nothing gathered).
    func forEachSample(type: QuantityType, from: Date?, to: Date?, source: String?, person: PersonScope, limit: Int,
                       newestFirst: Bool, _ body: (QuantitySample) throws -> Void) throws {
        guard let typeID = typeIDs[type.identifier] else { return }
        var sql = """
            SELECT \(Self.sampleColumns) FROM samples x JOIN sources s ON s.id = x.source
            LEFT JOIN devices d ON d.id = x.device WHERE x.type = ?1
            """
        if from != nil { sql += " AND x.start_time >= ?5 AND (x.end_time > ?2 OR x.start_time >= ?2)" }
        if to != nil { sql += " AND x.start_time < ?3" }
        if source != nil { sql += " AND s.name = ?4" }
        sql += person.condition("x")
        sql += newestFirst
            ? " ORDER BY x.start_time DESC, x.end_time DESC, x.id DESC"
            : " ORDER BY x.start_time, x.end_time, x.id"
        if limit > 0 { sql += " LIMIT \(limit)" }
        let statement = try db.prepare(sql)
        try statement.bind(typeID, at: 1)
        if let from { try statement.bind(from.timeIntervalSince1970, at: 2) }
        if let to { try statement.bind(to.timeIntervalSince1970, at: 3) }
        if let source { try statement.bind(source, at: 4) }
        if let from { try statement.bind(try overlapBound(typeID: typeID, from: from), at: 5) }
        try statement.forEachRow { row in
            if let sample = try readSample(row, type: type) { try body(sample) }
        }
    }

    /// The raw points of `type` overlapping [from, to), for statistics, sorted by start.
    public func points(type: QuantityType, from: Date?, to: Date?, person: PersonScope = .everyone) throws -> [StoredPoint] {
        guard let statement = try pointsStatement(type: type, from: from, to: to, person: person) else { return [] }
        var result: [StoredPoint] = []
        var lastSource: Int64?
        var lastName = "?"
        try statement.forEachRow { row in
            let source = row.int64(at: 3)
            if source != lastSource {
                lastSource = source
                lastName = sourceNames[source] ?? "?"
            }
            result.append(StoredPoint(start: row.double(at: 0), end: row.double(at: 1), value: row.double(at: 2),
                                      source: lastName))
        }
        return result
    }

    /// The earliest start a sample of the type can have and still overlap a range beginning at
    /// `from`: `from` less the longest duration stored for the type (`LongestSampleMigration`),
    /// so that the overlap condition reads a bounded range of the time index, not every older
    /// sample of the type.
    func overlapBound(typeID: Int64, from: Date) throws -> Double {
        let longest = try db.cachedStatement("SELECT COALESCE(MAX(longest), 0) FROM sample_counts WHERE type = ?")
        try longest.bind(typeID, at: 1)
        let seconds = try longest.firstRow { $0.double(at: 0) } ?? 0
        // A millisecond more than the longest: the durations were rounded when computed.
        return from.timeIntervalSince1970 - max(seconds, 0) - 0.001
    }

    /// The query behind `points`: start, end, value and source id of the samples of `type`
    /// overlapping [from, to), by start; nil when the store has never seen the type.
    func pointsStatement(type: QuantityType, from: Date?, to: Date?, person: PersonScope) throws -> Statement? {
        guard let typeID = typeIDs[type.identifier] else { return nil }
        var sql = "SELECT x.start_time, x.end_time, x.value, x.source FROM samples x WHERE x.type = ?1"
        if from != nil { sql += " AND x.start_time >= ?4 AND (x.end_time > ?2 OR x.start_time >= ?2)" }
        if to != nil { sql += " AND x.start_time < ?3" }
        sql += person.condition("x")
        sql += " ORDER BY x.start_time"
        let statement = try db.prepare(sql)
        try statement.bind(typeID, at: 1)
        if let from {
            try statement.bind(from.timeIntervalSince1970, at: 2)
            try statement.bind(try overlapBound(typeID: typeID, from: from), at: 4)
        }
        if let to { try statement.bind(to.timeIntervalSince1970, at: 3) }
        return statement
    }

    /// The anchored query: samples added and tombstones written after `anchor`, oldest first,
    /// of the people in `person` (a tombstone belongs to the person the sample had).
    public func changes(since anchor: Int64 = 0, type: QuantityType? = nil, person: PersonScope = .everyone,
                        includeDeletions: Bool = true, limit: Int = 0)
        throws -> (entries: [ChangeEntry], anchor: Int64) {
        var entries: [ChangeEntry] = []
        let next = try forEachChange(since: anchor, type: type, person: person, includeDeletions: includeDeletions, limit: limit) {
            entries.append($0)
        }
        return (entries, next)
    }

    /// The entries `changes` returns, handed to `body` one at a time as the two cursors (samples
    /// by anchor, tombstones by anchor) are merged: nothing is gathered, so a feed of any length
    /// is read in bounded memory. At one anchor the deletion comes before the insert that
    /// replaced it. Returns the anchor to continue from: after the last change handed when
    /// `limit` stopped the read, else the store's newest. Both cursors and that newest anchor
    /// are read in one read transaction (one snapshot): a commit another connection makes while
    /// the feed is walked is after the returned anchor, so the next call hands it out.
    public func forEachChange(since anchor: Int64 = 0, type: QuantityType? = nil, person: PersonScope = .everyone,
                              includeDeletions: Bool = true, limit: Int = 0,
                              _ body: (ChangeEntry) throws -> Void) throws -> Int64 {
        try refreshIDs()
        return try db.savepoint {
            try forEachChangeInSnapshot(since: anchor, type: type, person: person, includeDeletions: includeDeletions,
                                        limit: limit, body)
        }
    }

    private func forEachChangeInSnapshot(since anchor: Int64, type: QuantityType?, person: PersonScope,
                                         includeDeletions: Bool, limit: Int,
                                         _ body: (ChangeEntry) throws -> Void) throws -> Int64 {
        var sql = """
            SELECT \(Self.sampleColumns), t.identifier FROM samples x JOIN sources s ON s.id = x.source
            JOIN types t ON t.id = x.type LEFT JOIN devices d ON d.id = x.device WHERE x.id > ?1
            """
        if type != nil { sql += " AND t.identifier = ?2" }
        sql += person.condition("x")
        sql += " ORDER BY x.id"
        let added = try db.prepare(sql)
        try added.bind(anchor, at: 1)
        if let type { try added.bind(type.identifier, at: 2) }
        var tombSQL = "SELECT x.anchor, x.uuid, t.identifier FROM tombstones x JOIN types t ON t.id = x.type WHERE x.anchor > ?1"
        if type != nil { tombSQL += " AND t.identifier = ?2" }
        tombSQL += person.condition("x")
        tombSQL += " ORDER BY x.anchor"
        let deleted = try db.prepare(tombSQL)
        try deleted.bind(anchor, at: 1)
        if let type { try deleted.bind(type.identifier, at: 2) }
        defer {
            added.reset()
            deleted.reset()
        }
        var hasAdded = try added.step()
        var hasDeleted = includeDeletions ? try deleted.step() : false
        var handed = 0
        var last: Int64?
        while hasAdded || hasDeleted, limit <= 0 || handed < limit {
            if hasDeleted, !hasAdded || deleted.int64(at: 0) <= added.int64(at: 0) {
                let at = deleted.int64(at: 0)
                if let uuid = Self.uuid(from: deleted.bytes(at: 1) ?? []) {
                    try body(.deleted(uuid: uuid, type: deleted.string(at: 2) ?? "", anchor: at))
                    handed += 1
                    last = at
                }
                hasDeleted = try deleted.step()
            } else {
                let id = added.int64(at: 0)
                if let identifier = added.string(at: 17), let quantityType = QuantityType.named(identifier),
                   let sample = try readSample(added, type: quantityType) {
                    try body(.added(sample, anchor: id))
                    handed += 1
                    last = id
                }
                hasAdded = try added.step()
            }
        }
        // Stopped by the limit: continue after the last change handed. Read to the end: the store's
        // anchor, as without a limit (changes of other types or people after the last one are passed).
        if hasAdded || hasDeleted, let last { return last }
        return max(anchor, try currentAnchor())
    }

    /// Commit events after commit `afterCommit` (for `ingestd watch`) of the people in `person`, oldest first.
    public func commitEvents(afterCommit: Int64, person: PersonScope = .everyone) throws -> [CommitEvent] {
        try refreshIDs()
        let statement = try db.prepare("""
            SELECT c.id, t.identifier, s.name, SUM(k.count), c.anchor, p.name FROM commits c
            JOIN commit_counts k ON k.commit_id = c.id JOIN types t ON t.id = k.type JOIN sources s ON s.id = k.source
            LEFT JOIN people p ON p.id = k.person
            WHERE c.id > ?\(person.condition("k")) GROUP BY c.id, k.type, k.source, k.person ORDER BY c.id, t.identifier, s.name, p.name
            """)
        try statement.bind(afterCommit, at: 1)
        return try statement.mapRows { row in
            CommitEvent(commitID: row.int64(at: 0), type: row.string(at: 1) ?? "", source: row.string(at: 2) ?? "",
                        count: row.int(at: 3), anchor: row.int64(at: 4), person: row.string(at: 5))
        }
    }

    /// The id of the first commit whose anchor is above `anchor` minus one: where `watch --since` starts.
    public func commitID(forAnchor anchor: Int64) throws -> Int64 {
        let statement = try db.prepare("SELECT COALESCE(MAX(id), 0) FROM commits WHERE anchor <= ?")
        try statement.bind(anchor, at: 1)
        return try statement.firstRow { $0.int64(at: 0) } ?? 0
    }

    /// Re-reads the id caches (another process may have added types or sources).
    func refreshIDs() throws {
        try db.prepare("SELECT id, identifier FROM types").forEachRow { row in
            if let name = row.string(at: 1) {
                typeIDs[name] = row.int64(at: 0)
                typeNames[row.int64(at: 0)] = name
            }
        }
        try db.prepare("SELECT id, name FROM sources").forEachRow { row in
            if let name = row.string(at: 1) {
                sourceIDs[name] = row.int64(at: 0)
                sourceNames[row.int64(at: 0)] = name
            }
        }
    }
}

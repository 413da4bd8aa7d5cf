import Foundation
import HealthModel
import Pipeline

/// Whose samples a query reads: one person's, the unassigned set, or everybody's (admin views).
public enum PersonScope: Sendable, Equatable {
    case everyone
    case person(Int64)
    case unassigned
    /// Every person's samples, not the unassigned ones (a sink reading the whole household).
    case anyPerson

    /// The SQL condition on the samples (or tombstones) alias `alias`, starting with " AND".
    /// `indexed: false` writes the column `+alias.person` so that SQLite does not pick the
    /// person index (the change feed walks the anchor order instead of collecting and sorting
    /// every sample of the person per page). A person after the first is also said to be one
    /// (`person > 1`): the person index holds only their samples (schema 20), and SQLite uses
    /// a partial index only for a query that names its condition.
    func condition(_ alias: String, indexed: Bool = true) -> String {
        let column = (indexed ? "" : "+") + alias + ".person"
        return switch self {
        case .everyone: ""
        case .person(let id) where indexed && id > 1: " AND \(column) = \(id) AND \(column) > 1"
        case .person(let id): " AND \(column) = \(id)"
        case .unassigned: " AND \(column) IS NULL"
        case .anyPerson: " AND \(column) IS NOT NULL"
        }
    }
}

/// An unassigned sample with its type (for `ingestd unassigned`).
public struct UnassignedSample: Sendable {
    public var sample: QuantitySample
    public var anchor: Int64
}

extension HealthStore {
    // MARK: People

    /// Everybody, in the order they were added.
    public func people() throws -> [Person] {
        try db.prepare("SELECT \(Self.personColumns) FROM people ORDER BY id").mapRows(Self.person(from:))
    }

    /// The columns `person(from:)` reads, in its order.
    static let personColumns = "id, name, profile, body_mass, scale_user_index, body_composition, units"

    /// A person from a row of `personColumns`.
    private static func person(from row: Statement) -> Person {
        let profileText = row.string(at: 2) ?? "{}"
        let profile = (try? JSONDecoder().decode(UserProfile.self, from: Data(profileText.utf8))) ?? UserProfile()
        return Person(id: row.int64(at: 0), name: row.string(at: 1) ?? "", profile: profile,
                      bodyMassKilograms: row.isNull(at: 3) ? nil : row.double(at: 3),
                      scaleUserIndex: row.isNull(at: 4) ? nil : row.int(at: 4),
                      bodyComposition: row.string(at: 5).flatMap(BodyCompositionChoice.init(rawValue:)) ?? .standard,
                      units: row.string(at: 6).flatMap(UnitSystem.init(rawValue:)))
    }

    /// Sets the measurement system `person` reads values in (nil: the configuration's).
    public func setUnits(_ units: UnitSystem?, of person: Person) throws {
        let update = try db.prepare("UPDATE people SET units = ? WHERE id = ?")
        if let units { try update.bind(units.rawValue, at: 1) } else { try update.bindNull(at: 1) }
        try update.bind(person.id, at: 2)
        try update.execute()
    }

    /// The measurement system of the person named `name`; nil when none is set or nobody has the name.
    public func unitSystem(ofPerson name: String) throws -> UnitSystem? {
        let find = try db.cachedStatement("SELECT units FROM people WHERE name = ?")
        try find.bind(name, at: 1)
        return try find.firstRow { $0.string(at: 0).flatMap(UnitSystem.init(rawValue:)) } ?? nil
    }

    /// The person named `name`, or `PeopleError.unknownPerson` listing everybody.
    public func person(named name: String) throws -> Person {
        let everybody = try people()
        guard let person = everybody.first(where: { $0.name == name }) else {
            throw PeopleError.unknownPerson(name, known: everybody.map(\.name))
        }
        return person
    }

    /// The name of person `id` ("?" for an id no longer in the store).
    func personName(_ id: Int64) throws -> String {
        if let name = personNames[id] { return name }
        let find = try db.cachedStatement("SELECT name FROM people WHERE id = ?")
        try find.bind(id, at: 1)
        let name = try find.firstRow { $0.string(at: 0) } ?? nil
        if let name { personNames[id] = name }
        return name ?? "?"
    }

    /// Adds a person. `bodyMassKilograms` is the weight the body-mass rule starts from.
    @discardableResult
    public func addPerson(name: String, profile: UserProfile = UserProfile(), bodyMassKilograms: Double? = nil,
                          scaleUserIndex: Int? = nil) throws -> Person {
        if let problem = Person.problem(withName: name) { throw PeopleError.invalidName(name, reason: problem) }
        if let index = scaleUserIndex, !(0...254).contains(index) { throw PeopleError.scaleUserIndexOutOfRange(index) }
        return try db.transaction(.immediate) {
            let everybody = try people()
            if everybody.contains(where: { $0.name == name }) { throw PeopleError.duplicateName(name) }
            if let index = scaleUserIndex, let holder = everybody.first(where: { $0.scaleUserIndex == index }) {
                throw PeopleError.scaleUserIndexTaken(index, by: holder.name)
            }
            let insert = try db.prepare(
                "INSERT INTO people(name, profile, body_mass, scale_user_index, created_at) VALUES (?, ?, ?, ?, ?)")
            try insert.bind(name, at: 1)
            try insert.bind(String(decoding: try JSONEncoder().encode(profile), as: UTF8.self), at: 2)
            if let bodyMassKilograms { try insert.bind(bodyMassKilograms, at: 3) } else { try insert.bindNull(at: 3) }
            if let scaleUserIndex { try insert.bind(scaleUserIndex, at: 4) } else { try insert.bindNull(at: 4) }
            try insert.bind(Date().timeIntervalSince1970, at: 5)
            try insert.execute()
            return Person(id: db.lastInsertRowID, name: name, profile: profile, bodyMassKilograms: bodyMassKilograms,
                          scaleUserIndex: scaleUserIndex)
        }
    }

    /// Whether the person named `person` has any stored sample of type `type` (an identifier),
    /// from the counts kept at commit.
    public func holdsSamples(person: String, type: String) throws -> Bool {
        let find = try db.cachedStatement("""
            SELECT 1 FROM sample_counts c JOIN people p ON p.id = c.person JOIN types t ON t.id = c.type
            WHERE p.name = ? AND t.identifier = ? AND c.count > 0 LIMIT 1
            """)
        try find.bind(person, at: 1)
        try find.bind(type, at: 2)
        return try find.firstRow { _ in true } ?? false
    }

    /// How many stored samples belong to `person`.
    public func sampleCount(of person: Person) throws -> Int {
        let count = try db.prepare("SELECT COALESCE(SUM(count), 0) FROM sample_counts WHERE person = ?")
        try count.bind(person.id, at: 1)
        return try count.firstRow { $0.int(at: 0) } ?? 0
    }

    /// What `removePerson` does with the person's samples.
    public typealias SampleDisposal = PersonSampleDisposal

    /// Removes a person and their device ownerships. Returns how many samples were moved or deleted.
    @discardableResult
    public func removePerson(named name: String, samples disposal: SampleDisposal) throws -> Int {
        try db.transaction(.immediate) {
            let person = try person(named: name)
            let everybody = try people()
            if everybody.count == 1 { throw PeopleError.lastPerson(name) }
            let readers = try db.prepare("SELECT name FROM sinks WHERE person = ? ORDER BY name")
            try readers.bind(person.id, at: 1)
            let sinks = try readers.mapRows { $0.string(at: 0) ?? "" }
            if !sinks.isEmpty { throw PeopleError.readBySinks(name, sinks: sinks) }
            let count = try sampleCount(of: person)
            switch disposal {
            case .refuse:
                if count > 0 { throw PeopleError.hasSamples(name, count: count) }
            case .reassign(let other):
                if other == name { throw PeopleError.reassignToSelf(name) }
                let target = try self.person(named: other)
                let ids = try db.prepare("SELECT x.id FROM samples x WHERE 1\(PersonScope.person(person.id).condition("x")) ORDER BY x.id")
                try move(sampleIDs: try ids.mapRows { $0.int64(at: 0) }, to: target.id)
            case .delete:
                try deleteSamples(ofPerson: person.id)
            }
            for sql in ["DELETE FROM device_owners WHERE person = ?", "DELETE FROM people WHERE id = ?"] {
                let delete = try db.prepare(sql)
                try delete.bind(person.id, at: 1)
                try delete.execute()
            }
            personNames[person.id] = nil
            return count
        }
    }

    /// Deletes every sample of a person, each leaving a tombstone at a fresh anchor.
    private func deleteSamples(ofPerson person: Int64) throws {
        let rows = try db.prepare(
            "SELECT x.id, x.uuid, x.type, x.source FROM samples x WHERE 1\(PersonScope.person(person).condition("x")) ORDER BY x.id")
        let doomed = try rows.mapRows { ($0.int64(at: 0), $0.bytes(at: 1) ?? [], $0.int64(at: 2), $0.int64(at: 3)) }
        let now = Date().timeIntervalSince1970
        for (id, uuid, type, source) in doomed {
            let delete = try db.cachedStatement("DELETE FROM samples WHERE id = ?")
            try delete.bind(id, at: 1)
            try delete.execute()
            try writeTombstone(anchor: try nextAnchor(), uuid: uuid, type: type, source: source, person: person, at: now)
        }
    }

    /// Takes the next change anchor without inserting a sample (for a deletion without replacement).
    func nextAnchor() throws -> Int64 {
        let maxID = try db.prepare("SELECT COALESCE(MAX(id), 0) FROM samples").firstRow { $0.int64(at: 0) } ?? 0
        let next = max(try currentAnchor(), maxID) + 1
        let update = try db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'samples'")
        try update.bind(next, at: 1)
        try update.execute()
        if db.changes == 0 {
            let insert = try db.prepare("INSERT INTO sqlite_sequence(name, seq) VALUES ('samples', ?)")
            try insert.bind(next, at: 1)
            try insert.execute()
        }
        return next
    }

    func writeTombstone(anchor: Int64, uuid: [UInt8], type: Int64, source: Int64, person: Int64?,
                                at time: Double) throws {
        let tombstone = try db.cachedStatement(
            "INSERT INTO tombstones(anchor, uuid, type, source, deleted_at, person) VALUES (?, ?, ?, ?, ?, ?)")
        try tombstone.bind(anchor, at: 1)
        try tombstone.bind(uuid, at: 2)
        try tombstone.bind(type, at: 3)
        try tombstone.bind(source, at: 4)
        try tombstone.bind(time, at: 5)
        if let person { try tombstone.bind(person, at: 6) } else { try tombstone.bindNull(at: 6) }
        try tombstone.execute()
    }

    // MARK: Profiles

    /// The characteristics of `person`.
    public func profile(of person: Person) throws -> UserProfile {
        try self.person(named: person.name).profile
    }

    /// Replaces the characteristics of `person` and recomputes the body composition derived
    /// from their weighings (old derived samples become tombstones, new ones new samples).
    @discardableResult
    public func setProfile(_ profile: UserProfile, of person: Person) throws -> BodyCompositionRecomputation {
        try db.transaction(.immediate) {
            let update = try db.prepare("UPDATE people SET profile = ? WHERE id = ?")
            try update.bind(String(decoding: try JSONEncoder().encode(profile), as: UTF8.self), at: 1)
            try update.bind(person.id, at: 2)
            try update.execute()
            return try recomputeBodyComposition(ofPerson: person.id)
        }
    }

    // MARK: Devices

    /// Makes `person` the owner of the device `identifier` (a BLE address, a serial number or an
    /// adapter-given local identifier): its later samples are theirs.
    public func assignDevice(_ identifier: String, to person: Person) throws {
        let trimmed = identifier.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw PeopleError.emptyDeviceIdentifier }
        let upsert = try db.prepare(
            "INSERT OR REPLACE INTO device_owners(device, label, person, assigned_at) VALUES (?, ?, ?, ?)")
        try upsert.bind(Household.deviceKey(trimmed), at: 1)
        try upsert.bind(trimmed, at: 2)
        try upsert.bind(person.id, at: 3)
        try upsert.bind(Date().timeIntervalSince1970, at: 4)
        try upsert.execute()
    }

    /// Every device owner, by device.
    public func deviceOwners() throws -> [DeviceOwner] {
        try db.prepare("""
            SELECT o.label, p.name FROM device_owners o JOIN people p ON p.id = o.person ORDER BY o.device
            """).mapRows { DeviceOwner(device: $0.string(at: 0) ?? "", person: $0.string(at: 1) ?? "") }
    }

    // MARK: Assignment

    /// Read once per ingested batch: the people with their profiles (for the body-composition
    /// stage), and owners and recent weights only when there is more than one person.
    public func loadHousehold() throws -> Household {
        let everybody = try db.cachedStatement("SELECT \(Self.personColumns) FROM people ORDER BY id").mapRows(Self.person(from:))
        for person in everybody { personNames[person.id] = person.name }
        var household = Household(people: everybody, deviceBodyComposition: try deviceBodyComposition())
        guard everybody.count > 1 else { return household }
        try db.prepare("SELECT device, person FROM device_owners").forEachRow { row in
            if let device = row.string(at: 0) { household.deviceOwners[device] = row.int64(at: 1) }
        }
        // By type name, not the cached id: another process may have stored the first body mass.
        let latest = try db.cachedStatement("""
            SELECT x.value FROM samples x JOIN types t ON t.id = x.type
            WHERE x.person = ? AND t.identifier = ? ORDER BY x.start_time DESC LIMIT 1
            """)
        for person in everybody {
            try latest.bind(person.id, at: 1)
            try latest.bind(QuantityType.bodyMass.identifier, at: 2)
            let value = try latest.firstRow { $0.double(at: 0) }
            if let kilograms = value ?? person.bodyMassKilograms { household.latestBodyMass[person.id] = kilograms }
        }
        return household
    }

    public func personOfWeighing(source: String, syncIdentifier: String) throws -> Int64? {
        let find = try db.cachedStatement("""
            SELECT x.person FROM samples x JOIN sources s ON s.id = x.source JOIN types t ON t.id = x.type
            WHERE s.name = ? AND t.identifier = ? AND x.sync_id = ?
            """)
        try find.bind(source, at: 1)
        try find.bind(QuantityType.bodyMass.identifier, at: 2)
        try find.bind(syncIdentifier, at: 3)
        return try find.firstRow { $0.isNull(at: 0) ? nil : Optional($0.int64(at: 0)) } ?? nil
    }

    /// Moves the samples `uuids` to `person`. Each move is a delete + add in the change feed (the
    /// sample gets a new anchor; its tombstone names the previous person). Samples already the
    /// person's are left alone. Returns how many moved; an unknown uuid fails the whole call.
    @discardableResult
    public func assign(_ uuids: [UUID], to person: Person) throws -> Int {
        try db.transaction(.immediate) {
            var ids: [Int64] = []
            let find = try db.cachedStatement("SELECT id, person FROM samples WHERE uuid = ?")
            for uuid in uuids {
                try withUnsafeBytes(of: uuid.uuid) { try find.bind(bytes: $0, at: 1) }
                guard let row = try find.firstRow({ (id: $0.int64(at: 0), person: $0.isNull(at: 1) ? nil : Optional($0.int64(at: 1))) }) else {
                    throw PeopleError.unknownSample(uuid)
                }
                if row.person != person.id, !ids.contains(row.id) { ids.append(row.id) }
            }
            try move(sampleIDs: ids, to: person.id)
            return ids.count
        }
    }

    /// Moves the sample `uuid` to `person` only while it belongs to nobody (a page listing the
    /// unassigned readings may be older than another person's claim). Returns whether it moved.
    public func assignIfUnassigned(_ uuid: UUID, to person: Person) throws -> Bool {
        try db.transaction(.immediate) {
            let find = try db.cachedStatement("SELECT id FROM samples WHERE uuid = ? AND person IS NULL")
            try withUnsafeBytes(of: uuid.uuid) { try find.bind(bytes: $0, at: 1) }
            guard let id = try find.firstRow({ $0.int64(at: 0) }) else { return false }
            try move(sampleIDs: [id], to: person.id)
            return true
        }
    }

    /// Moves every unassigned sample of the device `identifier` (its local identifier, UDI or
    /// serial number, case-insensitively) to `person`. Returns how many moved.
    @discardableResult
    public func assignUnassigned(fromDevice identifier: String, to person: Person) throws -> Int {
        let key = Household.deviceKey(identifier.trimmingCharacters(in: .whitespaces))
        guard !key.isEmpty else { throw PeopleError.emptyDeviceIdentifier }
        return try db.transaction(.immediate) {
            let find = try db.prepare("""
                SELECT x.id FROM samples x LEFT JOIN devices d ON d.id = x.device
                WHERE x.person IS NULL AND (lower(x.device_local_id) = ?1 OR lower(d.udi_device_identifier) = ?1
                      OR lower(json_extract(x.metadata, '$.HKDeviceSerialNumber')) = ?1)
                ORDER BY x.id
                """)
            try find.bind(key, at: 1)
            let ids = try find.mapRows { $0.int64(at: 0) }
            try move(sampleIDs: ids, to: person.id)
            return ids.count
        }
    }

    /// Counts a sample `move` inserted again (`values`: its columns as `move` reads them).
    private func countMoved(_ values: [DatabaseValue], person: Int64) throws {
        guard case .integer(let type) = values[1], case .integer(let source) = values[5] else {
            throw StoreRowError.missingAfterInsert(table: "samples", key: "type and source of a moved sample")
        }
        let device: Int64 = if case .integer(let id) = values[6] { id } else { 0 }
        func seconds(_ value: DatabaseValue) -> Double {
            switch value {
            case .real(let seconds): seconds
            case .integer(let seconds): Double(seconds)
            default: 0
            }
        }
        let start = seconds(values[3]), end = seconds(values[4])
        try addSampleCounts([SampleCount(key: CountKey(source: source, type: type, person: person, device: device),
                                         count: 1, lastEnd: end, longest: end - start)])
    }

    /// Re-inserts each sample with `person` under a new anchor and leaves a tombstone at that
    /// anchor naming its previous person; logs one commit for `watch`. The moved weighings'
    /// body composition is derived again for `person`. Inside a transaction.
    private func move(sampleIDs: [Int64], to person: Int64) throws {
        guard !sampleIDs.isEmpty else { return }
        let columns = "uuid, type, value, start_time, end_time, source, device, device_local_id, sync_id, sync_version, metadata, correlation"
        let read = try db.cachedStatement("SELECT \(columns), person FROM samples WHERE id = ?")
        let delete = try db.cachedStatement("DELETE FROM samples WHERE id = ?")
        let insert = try db.cachedStatement(
            "INSERT INTO samples(\(columns), person) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        let now = Date()
        var counts: [PairKey: Int] = [:]
        var moved: [Int64] = []
        for id in sampleIDs {
            try read.bind(id, at: 1)
            guard let values = try read.firstRow({ row in (0..<13).map { row.value(at: $0) } }) else { continue }
            try delete.bind(id, at: 1)
            try delete.execute()
            try insert.bind(all: Array(values.prefix(12)) + [.integer(person)])
            try insert.execute()
            let anchor = db.lastInsertRowID
            moved.append(anchor)
            try countMoved(values, person: person)
            guard case .blob(let uuid) = values[0], case .integer(let type) = values[1],
                  case .integer(let source) = values[5] else { continue }
            let previous: Int64? = if case .integer(let old) = values[12] { old } else { nil }
            try writeTombstone(anchor: anchor, uuid: Array(uuid), type: type, source: source, person: previous,
                               at: now.timeIntervalSince1970)
            counts[PairKey(type: type, source: source, person: person), default: 0] += 1
        }
        _ = try recordCommit(counts, anchor: try currentAnchor(), now: now)
        _ = try recomputeBodyComposition(ofSampleIDs: moved, person: person)
    }

    /// The unassigned samples, oldest first, at most `limit` (0: all), one at a time from the
    /// change feed's cursor.
    public func forEachUnassignedSample(limit: Int = 0, _ body: (QuantitySample) throws -> Void) throws {
        _ = try forEachChange(since: 0, person: .unassigned, includeDeletions: false, limit: limit) { entry in
            if case .added(let sample, _) = entry { try body(sample) }
        }
    }

    /// How many samples are unassigned (from the counts maintained at commit, person 0).
    public func unassignedCount() throws -> Int {
        try db.prepare("SELECT COALESCE(SUM(count), 0) FROM sample_counts WHERE person = 0").firstRow { $0.int(at: 0) } ?? 0
    }
}

/// The store file is the household's store: the admin commands reach it through these ports.
extension HealthStore: PeopleStore, DeviceOwnershipStore, SampleAssignmentStore {}

import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Schema 20: the person index holds only the samples of people after the first. A schema-19
/// store's samples are read by person as before, a re-sent sample is still a duplicate, and
/// SQLite's integrity check finds every index holding exactly the rows its definition names.
@Suite struct PersonIndexMigrationTests {
    static let start = 1_780_000_000.0

    @Test func aSchema19StoreReadsByPersonAndDeduplicatesAsBefore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("nineteen.sqlite").path
        let schemaNineteen = Migrator(applicationID: HealthStore.applicationID,
                                      migrations: Array(HealthStore.migrator.migrations.prefix(19)))
        let old = try schemaNineteen.openDatabase(path: path, mode: .createIfMissing)
        #expect(try old.prepare("PRAGMA user_version").firstRow { $0.int(at: 0) } == 19)
        try old.execute(sql: """
            INSERT INTO people(name, profile, created_at) VALUES ('ana', '{}', 0);
            INSERT INTO types(id, identifier) VALUES (1, '\(QuantityType.heartRate.identifier)');
            INSERT INTO sources(id, name, created_at) VALUES (1, 'band', 0);
            INSERT INTO samples(uuid, type, value, start_time, end_time, source, device_local_id, person) VALUES
                (randomblob(16), 1, 60, \(Self.start), \(Self.start), 1, '', 1),
                (randomblob(16), 1, 61, \(Self.start + 60), \(Self.start + 60), 1, '', 2),
                (randomblob(16), 1, 62, \(Self.start + 120), \(Self.start + 120), 1, '', NULL);
            """)
        // Before: every assigned sample has an entry in the person index.
        #expect(try old.prepare("SELECT count(*) FROM samples INDEXED BY samples_by_person_type_time WHERE person >= 1")
            .firstRow { $0.int(at: 0) } == 2)
        old.close()

        let store = try HealthStore(path: path)
        defer { store.close() }
        #expect(try store.db.prepare("PRAGMA integrity_check").mapRows { $0.string(at: 0) ?? "" } == ["ok"])
        let definition = try store.db.prepare("SELECT sql FROM sqlite_master WHERE name = 'samples_by_person_type_time'")
            .firstRow { $0.string(at: 0) }
        #expect(definition??.hasSuffix("WHERE person > 1") == true)
        // Only the second person's sample is in the person index now.
        #expect(try store.db.prepare("SELECT count(*) FROM samples INDEXED BY samples_by_person_type_time WHERE person > 1")
            .firstRow { $0.int(at: 0) } == 1)

        func values(_ scope: PersonScope) throws -> [Double] {
            try store.samples(type: .heartRate, person: scope).map(\.quantity.value).sorted()
        }
        #expect(try values(.person(1)) == [60])
        #expect(try values(.person(2)) == [61])
        #expect(try values(.unassigned) == [62])
        #expect(try values(.anyPerson) == [60, 61])
        #expect(try values(.everyone) == [60, 61, 62])

        // The first sample sent again under a new uuid is still a duplicate.
        _ = try store.grant(source: "band", types: [], all: true)
        let pipeline = try Pipeline(store: store, now: { Date(timeIntervalSince1970: Self.start + 86_400) })
        let again = QuantitySample(type: .heartRate, quantity: Quantity(value: 60, unit: QuantityType.heartRate.canonicalUnit),
                                   start: Date(timeIntervalSince1970: Self.start), end: Date(timeIntervalSince1970: Self.start),
                                   source: "band")
        let report = try pipeline.ingest([.sample(again)])
        #expect(report.totals.duplicate == 1 && report.totals.written == 0)
        #expect(try values(.everyone) == [60, 61, 62])
    }

    /// What the first person's samples cost: no entry in the person index, however many there
    /// are; a second person's samples get theirs.
    @Test func theFirstPersonsSamplesHaveNoPersonIndexEntry() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore(path: directory.path("entries.sqlite"))
        defer { store.close() }
        let me = try store.person(named: HealthStore.firstPersonName)
        let ana = try store.addPerson(name: "ana", profile: UserProfile(), bodyMassKilograms: 60)
        #expect(me.id == 1 && ana.id == 2)
        _ = try store.grant(source: "band", types: [], all: true)
        let pipeline = try Pipeline(store: store, now: { Date(timeIntervalSince1970: Self.start + 86_400) })
        let samples = (0..<50).map { minute -> HealthRecord in
            let at = Date(timeIntervalSince1970: Self.start + Double(minute) * 60)
            return .sample(QuantitySample(type: .heartRate, quantity: Quantity(value: 60, unit: QuantityType.heartRate.canonicalUnit),
                                          start: at, end: at, source: "band"))
        }
        // Whoever the pipeline's rules give them to, 30 are then assigned to the first person and
        // 20 to the second by hand.
        _ = try pipeline.ingest(samples)
        let stored = try store.samples(type: .heartRate)
        #expect(stored.count == 50)
        _ = try store.assign(Array(stored.prefix(30).map(\.uuid)), to: me)
        _ = try store.assign(Array(stored.suffix(20).map(\.uuid)), to: ana)
        func entries() throws -> Int {
            try store.db.prepare("SELECT count(*) FROM samples INDEXED BY samples_by_person_type_time WHERE person > 1")
                .firstRow { $0.int(at: 0) } ?? -1
        }
        #expect(try entries() == 20)
        #expect(try store.db.prepare("PRAGMA integrity_check").mapRows { $0.string(at: 0) ?? "" } == ["ok"])
        #expect(try store.samples(type: .heartRate, person: .person(me.id)).count == 30)
        #expect(try store.samples(type: .heartRate, person: .person(ana.id)).count == 20)
    }
}

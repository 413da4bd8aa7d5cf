import Foundation
import Testing
import HealthModel
import Pipeline
@testable import SQLiteStore

/// The assignment stage (issue 15) against a real store: the body-mass rule never guesses
/// between two people, a scale's user slot wins over the weight, derived readings of a weighing
/// follow it, and an old single-user store migrates without changing an answer.
@Suite struct PeopleAssignmentTests {
    let temp: TemporaryStore

    init() throws {
        temp = try TemporaryStore()
        try temp.store.grant(source: "scale", types: [], all: true)
    }

    private func household(_ people: [(String, Double, Int?)]) throws -> [Person] {
        let added = try people.map { name, kilograms, slot in
            try temp.store.addPerson(name: name, bodyMassKilograms: kilograms, scaleUserIndex: slot)
        }
        try temp.store.removePerson(named: HealthStore.firstPersonName, samples: .refuse)
        return added
    }

    private func bodyMass(of person: Person) throws -> [Double] {
        try temp.store.samples(type: .bodyMass, person: .person(person.id)).map(\.quantity.value)
    }

    @Test func aReadingWithinTwoPeoplesToleranceIsUnassigned() throws {
        let people = try household([("alice", 64, nil), ("bob", 66, nil)])
        let report = try Pipeline(store: temp.store, now: { noon })
            .ingest([.sample(try sample(.bodyMass, 65, "kg", start: "2026-11-29T08:00:00Z"))])
        #expect(report.totals.written == 1)
        #expect(report.unassigned == 1)
        for person in people { #expect(try bodyMass(of: person).isEmpty) }
        #expect(try temp.store.unassignedSamples().map(\.quantity.value) == [65])
    }

    @Test func aScaleUserIndexMappedToBobWinsWhateverTheWeight() throws {
        let people = try household([("alice", 60, 1), ("bob", 85, 2)])
        var reading = try sample(.bodyMass, 59.5, "kg", start: "2026-11-29T08:00:00Z", sync: ("scale/0800/user-2", 1))
        try reading.metadata.set(.number(2), forKey: MetadataKey.deviceUserID)
        let report = try Pipeline(store: temp.store, now: { noon }).ingest([.sample(reading)])
        #expect(report.unassigned == 0)
        #expect(try bodyMass(of: people[1]) == [59.5])
        #expect(try bodyMass(of: people[0]).isEmpty)
    }

    @Test func derivedReadingsOfAWeighingFollowTheWeightEvenInALaterBatch() throws {
        let people = try household([("alice", 60, nil), ("bob", 85, nil)])
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        let bmi = try sample(.bodyMassIndex, 22.1, "count", start: "2026-11-29T08:00:00Z", sync: ("w1", 1))
        let weight = try sample(.bodyMass, 61, "kg", start: "2026-11-29T08:00:00Z", sync: ("w1", 1))
        _ = try pipeline.ingest([.sample(bmi), .sample(weight)])
        let fat = try sample(.bodyFatPercentage, 0.21, "%", start: "2026-11-29T08:00:00Z", sync: ("w1", 1))
        _ = try pipeline.ingest([.sample(fat)])
        let alice = PersonScope.person(people[0].id)
        #expect(try temp.store.samples(type: .bodyMassIndex, person: alice).map(\.quantity.value) == [22.1])
        #expect(try temp.store.samples(type: .bodyFatPercentage, person: alice).count == 1)
        #expect(try temp.store.unassignedCount() == 0)
        // Alice's recent weight is now 61 kg: 66.5 is within her ±10 % and not bob's.
        _ = try pipeline.ingest([.sample(try sample(.bodyMass, 66.5, "kg", start: "2026-11-29T09:00:00Z"))])
        #expect(try bodyMass(of: people[0]) == [61, 66.5])
    }

    @Test func oneStoreWithOnePersonGivesThemEverything() throws {
        let report = try Pipeline(store: temp.store, now: { noon })
            .ingest([.sample(try sample(.bodyMass, 120, "kg", start: "2026-11-29T08:00:00Z"))])
        #expect(report.unassigned == 0)
        let me = try temp.store.person(named: HealthStore.firstPersonName)
        #expect(try bodyMass(of: me) == [120])
    }

    @Test func removingAPersonWithSamplesNeedsADecision() throws {
        let people = try household([("alice", 60, nil), ("bob", 85, nil)])
        _ = try Pipeline(store: temp.store, now: { noon })
            .ingest([.sample(try sample(.bodyMass, 60.5, "kg", start: "2026-11-29T08:00:00Z"))])
        #expect(throws: PeopleError.hasSamples("alice", count: 1)) {
            try temp.store.removePerson(named: "alice", samples: .refuse)
        }
        let anchor = try temp.store.changes().anchor
        #expect(try temp.store.removePerson(named: "alice", samples: .reassign(to: "bob")) == 1)
        #expect(try bodyMass(of: people[1]) == [60.5])
        let feed = try temp.store.changes(since: anchor).entries
        #expect(feed.count == 2)
        #expect(throws: PeopleError.lastPerson("bob")) { try temp.store.removePerson(named: "bob", samples: .delete) }
        #expect(throws: PeopleError.unknownPerson("carol", known: ["bob"])) { try temp.store.person(named: "carol") }
    }

    @Test func allFromADeviceMovesItsUnassignedSamplesOnly() throws {
        let people = try household([("alice", 60, nil), ("bob", 85, nil)])
        let band = Device(name: "Band", localIdentifier: "C4:7C:8D:6A:00:01")
        let other = Device(name: "Other", localIdentifier: "C4:7C:8D:6A:00:02")
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        _ = try pipeline.ingest([
            .sample(try sample(.stepCount, 100, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T08:10:00Z", device: band)),
            .sample(try sample(.stepCount, 200, "count", start: "2026-11-29T08:10:00Z", end: "2026-11-29T08:20:00Z", device: band)),
            .sample(try sample(.stepCount, 300, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T08:10:00Z", device: other)),
        ])
        #expect(try temp.store.unassignedCount() == 3)
        #expect(try temp.store.assignUnassigned(fromDevice: "c4:7c:8d:6a:00:01", to: people[1]) == 2)
        #expect(try temp.store.samples(type: .stepCount, person: .person(people[1].id)).map(\.quantity.value) == [100, 200])
        #expect(try temp.store.unassignedSamples().map(\.quantity.value) == [300])
        #expect(try temp.store.commitEvents(afterCommit: 0, person: .person(people[1].id)).map(\.count) == [2])
        // Owned from now on: the band's next samples are bob's without a move.
        try temp.store.assignDevice("C4:7C:8D:6A:00:01", to: people[1])
        _ = try pipeline.ingest([
            .sample(try sample(.stepCount, 400, "count", start: "2026-11-29T09:00:00Z", end: "2026-11-29T09:10:00Z", device: band)),
        ])
        #expect(try temp.store.samples(type: .stepCount, person: .person(people[1].id)).count == 3)
    }

    @Test func badNamesTakenNamesAndTakenSlotsAreRefusedWithTheValue() throws {
        try temp.store.addPerson(name: "alice", scaleUserIndex: 1)
        #expect(throws: PeopleError.duplicateName("alice")) { try temp.store.addPerson(name: "alice") }
        #expect(throws: PeopleError.scaleUserIndexTaken(1, by: "alice")) { try temp.store.addPerson(name: "bob", scaleUserIndex: 1) }
        #expect(throws: PeopleError.scaleUserIndexOutOfRange(255)) { try temp.store.addPerson(name: "bob", scaleUserIndex: 255) }
        for bad in ["", "bob\u{0}", "tab\there", " padded", String(repeating: "x", count: 65)] {
            #expect(throws: PeopleError.self) { try temp.store.addPerson(name: bad) }
        }
        #expect(throws: PeopleError.emptyDeviceIdentifier) {
            try temp.store.assignDevice("  ", to: try temp.store.person(named: "alice"))
        }
        #expect(try temp.store.people().map(\.name) == [HealthStore.firstPersonName, "alice"])
    }

    /// A store written by the schema before people (version 2), with the rows the old writer
    /// made: after opening, every query answers as it did, and new samples are the first person's.
    @Test func anOldSingleUserStoreMigratesAndAnswersAsBefore() throws {
        let path = temp.directory.appendingPathComponent("old.sqlite").path
        let old = try Migrator(applicationID: HealthStore.applicationID,
                               migrations: Array(HealthStore.migrator.migrations.prefix(2)))
            .openDatabase(path: path, mode: .createIfMissing)
        try old.execute(sql: """
            INSERT INTO types(id, identifier) VALUES (1, 'HKQuantityTypeIdentifierStepCount'), (2, 'HKQuantityTypeIdentifierBodyMass');
            INSERT INTO sources(id, name, created_at) VALUES (1, 'phone', 1764400000), (2, 'watch', 1764400000);
            INSERT INTO devices(id, name, local_identifier, identity) VALUES (1, 'Watch', 'AA:BB', '{"name":"Watch","localIdentifier":"AA:BB"}');
            INSERT INTO samples(id, uuid, type, value, start_time, end_time, source, device, device_local_id, sync_id, sync_version)
            VALUES (1, X'00000000000000000000000000000001', 1, 1000, 1764403200, 1764405000, 1, NULL, '', NULL, NULL),
                   (2, X'00000000000000000000000000000002', 1, 800, 1764403200, 1764405000, 2, 1, 'AA:BB', NULL, NULL),
                   (4, X'00000000000000000000000000000004', 2, 70.5, 1764403200, 1764403200, 1, NULL, '', 'w1', 2);
            INSERT INTO sqlite_sequence(name, seq) VALUES ('samples', 4);
            INSERT INTO tombstones(anchor, uuid, type, source, deleted_at) VALUES (4, X'00000000000000000000000000000003', 2, 1, 1764403300);
            INSERT INTO commits(id, anchor, committed_at) VALUES (1, 4, 1764403300);
            INSERT INTO commit_counts(commit_id, type, source, count) VALUES (1, 1, 1, 1), (1, 1, 2, 1), (1, 2, 1, 1);
            INSERT INTO grants(source, type, granted_at) VALUES ('phone', '*', 1764400000), ('watch', '*', 1764400000);
            INSERT INTO source_types(source, type, first_written) VALUES (1, 1, 1764400000), (2, 1, 1764400001), (1, 2, 1764400000);
            INSERT INTO priorities(type, source, rank) VALUES ('HKQuantityTypeIdentifierStepCount', 'watch', 0);
            INSERT INTO profile(key, value) VALUES ('profile', '{"dateOfBirth":"1980-02-29","biologicalSex":"female"}');
            """)
        old.close()

        let store = try HealthStore(path: path)
        defer { store.close() }
        let people = try store.people()
        #expect(people.map(\.name) == [HealthStore.firstPersonName])
        let me = PersonScope.person(try #require(people.first).id)
        #expect(try store.profile() == UserProfile(dateOfBirth: CalendarDate("1980-02-29"), biologicalSex: .female))
        for scope in [PersonScope.everyone, me] {
            #expect(try store.samples(type: .stepCount, person: scope).map(\.quantity.value) == [1000, 800])
            #expect(try store.samples(type: .stepCount, person: scope).last?.device?.localIdentifier == "AA:BB")
            let total = try store.statistics(.sum, type: .stepCount, from: nil, to: nil, granularity: nil,
                                             zone: TimeZone(identifier: "UTC")!, person: scope)
            #expect(total.first?.value == 800, "watch has priority over phone for the same half hour")
            let changes = try store.changes(since: 0, person: scope)
            #expect(changes.anchor == 4)
            #expect(changes.entries.count == 4)
            if case .deleted(let uuid, _, let anchor)? = changes.entries.dropFirst(2).first {
                #expect(uuid == UUID(uuidString: "00000000-0000-0000-0000-000000000003"))
                #expect(anchor == 4)
            } else {
                Issue.record("the tombstone comes before the sample that replaced it")
            }
            #expect(try store.commitEvents(afterCommit: 0, person: scope).map(\.count) == [1, 1, 1])
        }
        #expect(try store.unassignedCount() == 0)
        #expect(try store.priority(for: .stepCount) == ["watch", "phone"])
        #expect(try store.sources().map(\.sampleCount) == [2, 1])
        let report = try Pipeline(store: store, now: { noon })
            .ingest([.sample(try sample(.stepCount, 5, "count", start: "2026-11-29T10:00:00Z", end: "2026-11-29T10:01:00Z", source: "phone"))])
        #expect(report.totals.written == 1)
        #expect(try store.samples(type: .stepCount, person: me).count == 3)
    }
}

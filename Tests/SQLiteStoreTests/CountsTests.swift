import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Schema 14 (issue 31): the counts the store maintains as it commits equal a full scan of the
/// samples and the pending area after every kind of write, and after an old store migrates; the
/// answers of `status`, `sources` and `auth pending` read from them equal the scans they replace.
@Suite struct CountsTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)

    /// The counts tables against `GROUP BY` scans, row by row (an inexact extreme is a bound of
    /// the true one), and every answer read from them against the scan it replaced.
    static func expectCountsMatchScan(_ store: HealthStore, _ step: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let db = store.db
        struct Counted: Equatable { var key: String; var count: Int; var extreme: Double; var exact: Bool }
        let scannedSamples = try db.prepare("""
            SELECT source, type, COALESCE(person, 0), COALESCE(device, 0), COUNT(*), MAX(end_time) FROM samples
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            """).mapRows { Counted(key: "\($0.int64(at: 0))/\($0.int64(at: 1))/\($0.int64(at: 2))/\($0.int64(at: 3))",
                                   count: $0.int(at: 4), extreme: $0.double(at: 5), exact: true) }
        let countedSamples = try db.prepare("""
            SELECT source, type, person, device, count, last_end, last_exact FROM sample_counts ORDER BY 1, 2, 3, 4
            """).mapRows { Counted(key: "\($0.int64(at: 0))/\($0.int64(at: 1))/\($0.int64(at: 2))/\($0.int64(at: 3))",
                                   count: $0.int(at: 4), extreme: $0.double(at: 5), exact: $0.int(at: 6) == 1) }
        #expect(countedSamples.map(\.key) == scannedSamples.map(\.key), "\(step): sample count keys", sourceLocation: sourceLocation)
        #expect(countedSamples.map(\.count) == scannedSamples.map(\.count), "\(step): sample counts", sourceLocation: sourceLocation)
        for (counted, scanned) in zip(countedSamples, scannedSamples) {
            if counted.exact {
                #expect(counted.extreme == scanned.extreme, "\(step): last end of \(counted.key)", sourceLocation: sourceLocation)
            } else {
                #expect(counted.extreme >= scanned.extreme, "\(step): bound of \(counted.key)", sourceLocation: sourceLocation)
            }
        }
        // Schema 16: the longest duration per key, at least the longest stored (a removal may leave it larger).
        let longestScanned = try db.prepare("""
            SELECT MAX(end_time - start_time) FROM samples GROUP BY source, type, COALESCE(person, 0), COALESCE(device, 0)
            ORDER BY source, type, COALESCE(person, 0), COALESCE(device, 0)
            """).mapRows { $0.double(at: 0) }
        let longestCounted = try db.prepare("SELECT longest FROM sample_counts ORDER BY source, type, person, device")
            .mapRows { $0.double(at: 0) }
        #expect(longestCounted.count == longestScanned.count, "\(step): longest per key", sourceLocation: sourceLocation)
        for (counted, scanned) in zip(longestCounted, longestScanned) {
            #expect(counted >= scanned, "\(step): longest \(counted) below the stored \(scanned)", sourceLocation: sourceLocation)
        }
        struct Held: Equatable { var key: String; var count: Int; var first: Double; var firstExact: Bool; var last: Double; var lastExact: Bool }
        let scannedPending = try db.prepare("""
            SELECT source, type, device, COUNT(*), MIN(start_time), MAX(end_time) FROM pending GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            """).mapRows { Held(key: "\($0.string(at: 0) ?? "")/\($0.string(at: 1) ?? "")/\($0.string(at: 2) ?? "")",
                                count: $0.int(at: 3), first: $0.double(at: 4), firstExact: true, last: $0.double(at: 5), lastExact: true) }
        let countedPending = try db.prepare("""
            SELECT source, type, device, count, first_start, first_exact, last_end, last_exact FROM pending_counts ORDER BY 1, 2, 3
            """).mapRows { Held(key: "\($0.string(at: 0) ?? "")/\($0.string(at: 1) ?? "")/\($0.string(at: 2) ?? "")",
                                count: $0.int(at: 3), first: $0.double(at: 4), firstExact: $0.int(at: 5) == 1,
                                last: $0.double(at: 6), lastExact: $0.int(at: 7) == 1) }
        #expect(countedPending.map(\.key) == scannedPending.map(\.key), "\(step): pending count keys", sourceLocation: sourceLocation)
        #expect(countedPending.map(\.count) == scannedPending.map(\.count), "\(step): pending counts", sourceLocation: sourceLocation)
        for (counted, scanned) in zip(countedPending, scannedPending) {
            #expect(counted.firstExact ? counted.first == scanned.first : counted.first <= scanned.first,
                    "\(step): first start of \(counted.key)", sourceLocation: sourceLocation)
            #expect(counted.lastExact ? counted.last == scanned.last : counted.last >= scanned.last,
                    "\(step): last end of \(counted.key)", sourceLocation: sourceLocation)
        }

        // The answers, against the scans they replaced.
        let status = try db.prepare("""
            SELECT s.name, t.identifier, COUNT(*), MAX(x.end_time) FROM samples x
            JOIN sources s ON s.id = x.source JOIN types t ON t.id = x.type
            GROUP BY x.source, x.type ORDER BY s.name, t.identifier
            """).mapRows { "\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "") \($0.int(at: 2)) \($0.double(at: 3))" }
        #expect(try store.sourceTypeStatus().map { "\($0.source) \($0.type) \($0.count) \($0.lastSampleEnd.timeIntervalSince1970)" }
                == status, "\(step): status", sourceLocation: sourceLocation)
        let groups = try db.prepare("""
            SELECT source, type, device, COUNT(*), MIN(start_time), MAX(end_time) FROM pending
            GROUP BY source, type, device ORDER BY source, type, device
            """).mapRows { "\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "") \($0.string(at: 2) ?? "") \($0.int(at: 3)) \($0.double(at: 4)) \($0.double(at: 5))" }
        #expect(try store.pendingGroups().map {
            "\($0.source) \($0.type) \($0.device) \($0.count) \($0.firstStart.timeIntervalSince1970) \($0.lastEnd.timeIntervalSince1970)"
        } == groups, "\(step): auth pending", sourceLocation: sourceLocation)
        var held: [String: Int] = [:]
        try db.prepare("SELECT source, COUNT(*) FROM pending GROUP BY source").forEachRow { held[$0.string(at: 0) ?? ""] = $0.int(at: 1) }
        #expect(try store.pendingCounts() == held, "\(step): held per source", sourceLocation: sourceLocation)
        #expect(try store.unassignedCount() == db.prepare("SELECT COUNT(*) FROM samples WHERE person IS NULL").firstRow { $0.int(at: 0) },
                "\(step): unassigned", sourceLocation: sourceLocation)
        var bySourceType: [String: [String: Int]] = [:]
        try db.prepare("""
            SELECT s.name, t.identifier, COUNT(*) FROM samples x JOIN sources s ON s.id = x.source JOIN types t ON t.id = x.type
            GROUP BY x.source, x.type
            """).forEachRow { bySourceType[$0.string(at: 0) ?? "", default: [:]][$0.string(at: 1) ?? ""] = $0.int(at: 2) }
        let devices = try db.prepare("""
            SELECT DISTINCT s.name, d.identity FROM samples x JOIN sources s ON s.id = x.source JOIN devices d ON d.id = x.device
            ORDER BY s.name, d.id
            """).mapRows { "\($0.string(at: 0) ?? "") \($0.string(at: 1) ?? "")" }
        let summaries = try store.sources()
        #expect(summaries.filter { !$0.countsByType.isEmpty }.map(\.name) == bySourceType.keys.sorted(),
                "\(step): sources with samples", sourceLocation: sourceLocation)
        for summary in summaries {
            #expect(summary.countsByType == (bySourceType[summary.name] ?? [:]), "\(step): types of \(summary.name)",
                    sourceLocation: sourceLocation)
            #expect(summary.sampleCount == (bySourceType[summary.name] ?? [:]).values.reduce(0, +), sourceLocation: sourceLocation)
        }
        let encoder = HealthRecordEncoder()
        #expect(summaries.flatMap { summary in summary.devices.map { "\(summary.name) \(encoder.encode($0))" } } == devices,
                "\(step): devices", sourceLocation: sourceLocation)
        for person in try store.people() {
            #expect(try store.sampleCount(of: person)
                    == db.prepare("SELECT COUNT(*) FROM samples WHERE person = \(person.id)").firstRow { $0.int(at: 0) },
                    "\(step): samples of \(person.name)", sourceLocation: sourceLocation)
        }
    }

    static func sample(_ type: QuantityType, _ value: Double, _ unit: HealthModel.Unit, at offset: Double, source: String,
                       device: Device? = nil, sync: (String, Int)? = nil, length: Double = 60) -> QuantitySample {
        var metadata = Metadata()
        if let sync {
            metadata.syncIdentifier = sync.0
            metadata.syncVersion = sync.1
        }
        return QuantitySample(type: type, quantity: Quantity(value: value, unit: unit), start: start.addingTimeInterval(offset),
                              end: start.addingTimeInterval(offset + length), source: source, device: device, metadata: metadata)
    }

    @Test func countsEqualAFullScanAfterEveryKindOfWrite() throws {
        let directory = try TemporaryDirectory()
        let store = try HealthStore(path: directory.url.appendingPathComponent("counts.sqlite").path)
        defer { store.close() }
        let pipeline = try Pipeline(store: store, now: { Self.start.addingTimeInterval(1_000_000) })
        try store.grant(source: "band", types: [], all: true)
        try store.grant(source: "scale", types: [], all: true)
        try Self.expectCountsMatchScan(store, "empty")

        let band = Device(manufacturer: "Acme", model: "Band", localIdentifier: "B1")
        let strap = Device(manufacturer: "Acme", model: "Strap", localIdentifier: "S1")
        var batch: [HealthRecord] = []
        for minute in 0..<50 {
            batch.append(.sample(Self.sample(.stepCount, Double(minute), .count, at: Double(minute) * 60, source: "band", device: band)))
            batch.append(.sample(Self.sample(.heartRate, 60 + Double(minute % 7), .countPerMinute, at: Double(minute) * 60,
                                             source: "band", device: minute.isMultiple(of: 2) ? band : strap)))
        }
        batch.append(.sample(Self.sample(.stepCount, 3, .count, at: 90_000, source: "band")))
        var report = try pipeline.ingest(batch)
        #expect(report.totals.written == 101)
        try Self.expectCountsMatchScan(store, "inserts")

        // Duplicates change nothing.
        report = try pipeline.ingest(Array(batch.prefix(20)))
        #expect(report.totals.duplicate == 20)
        try Self.expectCountsMatchScan(store, "duplicates")

        // Synced readings, then a newer version of each: one later, one earlier than the newest
        // reading (the replaced newest leaves its bound; status still reads the true last end).
        let syncedLate = Self.sample(.bodyMass, 70, .kilogram, at: 200_000, source: "band", device: band, sync: ("w1", 1))
        let syncedOther = Self.sample(.bodyMass, 71, .kilogram, at: 100_000, source: "band", device: band, sync: ("w2", 1))
        _ = try pipeline.ingest([.sample(syncedLate), .sample(syncedOther)])
        try Self.expectCountsMatchScan(store, "synced")
        report = try pipeline.ingest([.sample(Self.sample(.bodyMass, 70.5, .kilogram, at: 50_000, source: "band", device: band,
                                                          sync: ("w1", 2)))])
        #expect(report.totals.replaced == 1)
        let inexact = try store.db.prepare("SELECT COUNT(*) FROM sample_counts WHERE last_exact = 0").firstRow { $0.int(at: 0) }
        #expect(inexact == 1, "the newest weighing was replaced by an earlier one")
        try Self.expectCountsMatchScan(store, "replaced by an earlier version")
        report = try pipeline.ingest([.sample(Self.sample(.bodyMass, 71.5, .kilogram, at: 300_000, source: "band", device: band,
                                                          sync: ("w2", 2)))])
        #expect(report.totals.replaced == 1)
        #expect(try store.db.prepare("SELECT COUNT(*) FROM sample_counts WHERE last_exact = 0").firstRow { $0.int(at: 0) } == 0,
                "a later reading makes the last end exact again")
        try Self.expectCountsMatchScan(store, "replaced by a later version")

        // Two people of about the same weight: the scale's reading belongs to nobody, then to alice.
        let alice = try store.addPerson(name: "alice", bodyMassKilograms: 64)
        _ = try store.addPerson(name: "bob", bodyMassKilograms: 66)
        try store.removePerson(named: HealthStore.firstPersonName, samples: .reassign(to: "alice"))
        try Self.expectCountsMatchScan(store, "person removed, samples reassigned")
        let weighings = (0..<3).map { Self.sample(.bodyMass, 65, .kilogram, at: 400_000 + Double($0) * 3600, source: "scale") }
        report = try pipeline.ingest(weighings.map { .sample($0) })
        #expect(report.unassigned == 3)
        try Self.expectCountsMatchScan(store, "unassigned")
        #expect(try store.assign([weighings[0].uuid], to: alice) == 1)
        #expect(try store.assignIfUnassigned(weighings[1].uuid, to: alice))
        try Self.expectCountsMatchScan(store, "assigned")

        // Held for an undecided source, held again, then one type denied and another granted.
        let watch = Device(name: "Watch", localIdentifier: "W1")
        var held: [HealthRecord] = []
        for minute in 0..<30 {
            held.append(.sample(Self.sample(.heartRate, 70, .countPerMinute, at: 500_000 + Double(minute) * 60, source: "watch",
                                            device: minute < 20 ? watch : nil)))
            held.append(.sample(Self.sample(.stepCount, Double(minute), .count, at: 500_000 + Double(minute) * 60, source: "watch",
                                            device: watch)))
            held.append(.sample(Self.sample(.activeEnergyBurned, 1, .kilocalorie, at: 500_000 + Double(minute) * 60, source: "watch")))
        }
        report = try pipeline.ingest(held)
        #expect(report.pending.newlyHeld == 90)
        try Self.expectCountsMatchScan(store, "held")
        report = try pipeline.ingest(Array(held.prefix(9)))
        #expect(report.pending.alreadyHeld == 9)
        try Self.expectCountsMatchScan(store, "held again")
        #expect(try store.deny(source: "watch", types: [.activeEnergyBurned]) == 30)
        try Self.expectCountsMatchScan(store, "denied")
        try store.grant(source: "watch", types: [.heartRate])
        let release = try store.releaseHeld(source: "watch", types: [.heartRate], all: false, through: pipeline)
        #expect(release.released == 30)
        try Self.expectCountsMatchScan(store, "granted and brought in")

        // The bound drops the oldest held readings.
        store.pendingLimits = PendingLimits(maxRecordsPerSource: 25)
        report = try pipeline.ingest([.sample(Self.sample(.stepCount, 1, .count, at: 400_000, source: "watch", device: watch))])
        try Self.expectCountsMatchScan(store, "dropped over the bound")
        #expect(try store.pendingCounts() == ["watch": 25])
        try store.deny(source: "watch", types: [], all: true)
        try Self.expectCountsMatchScan(store, "all denied")
        #expect(try store.pendingGroups().isEmpty)

        // Statements that rewrite rows, as migrations do: the update triggers move the counts.
        try store.db.execute(sql: "UPDATE samples SET person = NULL WHERE id % 3 = 0")
        try Self.expectCountsMatchScan(store, "people rewritten")
        try store.db.execute(sql: "UPDATE samples SET end_time = end_time - 100000, device = NULL WHERE id % 5 = 0")
        try Self.expectCountsMatchScan(store, "times and devices rewritten")
        // Schema 13's rewrite run again on the counted store (every heart rate times 60).
        try store.db.execute(sql: "UPDATE samples SET value = 70 WHERE type = (SELECT id FROM types WHERE identifier = '\(QuantityType.heartRate.identifier)')")
        try store.db.transaction(.immediate) { try RatePerMinuteMigration.apply(store.db, now: Self.start) }
        #expect(try store.db.prepare("""
            SELECT COUNT(*), SUM(value = 4200) FROM samples
            WHERE type = (SELECT id FROM types WHERE identifier = '\(QuantityType.heartRate.identifier)')
            """).firstRow { $0.int(at: 0) == $0.int(at: 1) && $0.int(at: 0) == 80 } == true)
        try Self.expectCountsMatchScan(store, "rates rewritten")
    }

    /// A schema-13 store (the build before the counts) holding samples of several sources,
    /// people and devices and held records opens with counts equal to its rows.
    @Test func anOldStoreMigratesWithCountsOfItsRows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("thirteen.sqlite").path
        let schemaThirteen = Migrator(applicationID: HealthStore.applicationID,
                                      migrations: Array(HealthStore.migrator.migrations.prefix(13)))
        let old = try schemaThirteen.openDatabase(path: path, mode: .createIfMissing)
        try old.execute(sql: """
            INSERT INTO types(id, identifier) VALUES (1, '\(QuantityType.heartRate.identifier)'),
                (2, '\(QuantityType.stepCount.identifier)');
            INSERT INTO sources(id, name, created_at) VALUES (1, 'band', 0), (2, 'phone', 0);
            INSERT INTO devices(id, name, identity) VALUES (1, 'Band', '{"name":"Band"}');
            INSERT INTO people(id, name, created_at) VALUES (2, 'alice', 0);
            """)
        let insert = try old.prepare("""
            INSERT INTO samples(uuid, type, value, start_time, end_time, source, device, person) VALUES (?, ?, 1, ?, ?, ?, ?, ?)
            """)
        for index in 0..<40 {
            try withUnsafeBytes(of: UUID().uuid) { try insert.bind(Array($0), at: 1) }
            try insert.bind(Int64(1 + index % 2), at: 2)
            try insert.bind(Double(index), at: 3)
            try insert.bind(Double(index) + 30, at: 4)
            try insert.bind(Int64(1 + index % 3 / 2), at: 5)
            if index % 4 == 0 { try insert.bindNull(at: 6) } else { try insert.bind(Int64(1), at: 6) }
            if index % 5 == 0 { try insert.bindNull(at: 7) } else { try insert.bind(Int64(1 + index % 2), at: 7) }
            try insert.execute()
        }
        let now = Date().timeIntervalSince1970
        try old.execute(sql: """
            INSERT INTO pending(source, type, device, identity, start_time, end_time, record, size, held_at) VALUES
                ('watch', 'a', 'W', 'i1', 10, 20, '{}', 2, \(now)), ('watch', 'a', 'W', 'i2', 5, 8, '{}', 2, \(now)),
                ('watch', 'b', '', 'i3', 1, 2, '{}', 2, \(now)), ('ring', 'a', '', 'i4', 3, 4, '{}', 2, \(now));
            INSERT INTO pending_sources(source, first_held) VALUES ('watch', \(now)), ('ring', \(now));
            """)
        old.close()

        let store = try HealthStore(path: path)
        defer { store.close() }
        #expect(try store.db.prepare("PRAGMA user_version").firstRow { $0.int(at: 0) } == Int(HealthStore.migrator.latestVersion))
        #expect(try store.db.prepare("SELECT SUM(count) FROM sample_counts").firstRow { $0.int(at: 0) } == 40)
        #expect(try store.pendingCounts() == ["watch": 3, "ring": 1])
        try Self.expectCountsMatchScan(store, "migrated")
        // The migrated store keeps counting.
        let pipeline = try Pipeline(store: store, now: { Self.start })
        try store.grant(source: "phone", types: [], all: true)
        _ = try pipeline.ingest([.sample(Self.sample(.stepCount, 5, .count, at: 0, source: "phone"))])
        try Self.expectCountsMatchScan(store, "written after migrating")
    }
}

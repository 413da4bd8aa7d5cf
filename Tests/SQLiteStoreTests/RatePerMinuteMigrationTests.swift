import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Schema 13 (issue 29): a schema-12 store holding heart and respiratory rates in count/s, written
/// as the build before wrote them (its own unit conversion), opens with them in count/min, exact;
/// the same readings arriving again are duplicates, held ones are held once and come in exact.
@Suite struct RatePerMinuteMigrationTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)

    /// What the build before stored for `perMinute`: its conversion to count/s.
    static func stored(_ perMinute: Double) throws -> Double {
        try HealthModel.Unit.countPerMinute.convert(perMinute, to: .countPerSecond)
    }

    @Test func ratesBecomePerMinuteExactlyAndTheirReadingsStillMeetThemselves() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("twelve.sqlite").path
        let schemaTwelve = Migrator(applicationID: HealthStore.applicationID,
                                    migrations: Array(HealthStore.migrator.migrations.prefix(12)))
        let old = try schemaTwelve.openDatabase(path: path, mode: .createIfMissing)
        try old.execute(sql: """
            INSERT INTO types(id, identifier) VALUES (1, '\(QuantityType.heartRate.identifier)'),
                (2, '\(QuantityType.respiratoryRate.identifier)'), (3, '\(QuantityType.stepCount.identifier)');
            INSERT INTO sources(id, name, created_at) VALUES (1, 'band', 0);
            """)
        let insert = try old.prepare("""
            INSERT INTO samples(uuid, type, value, start_time, end_time, source, device_local_id, sync_id, sync_version)
            VALUES (?, ?, ?, ?, ?, 1, 'AA', ?, ?)
            """)
        func add(_ uuid: UUID, type: Int64, value: Double, at offset: Double, sync: String? = nil) throws {
            try withUnsafeBytes(of: uuid.uuid) { try insert.bind(Array($0), at: 1) }
            try insert.bind(type, at: 2)
            try insert.bind(value, at: 3)
            try insert.bind(Self.start.timeIntervalSince1970 + offset, at: 4)
            try insert.bind(Self.start.timeIntervalSince1970 + offset, at: 5)
            if let sync { try insert.bind(sync, at: 6); try insert.bind(1, at: 7) } else { try insert.bindNull(at: 6); try insert.bindNull(at: 7) }
            try insert.execute()
        }
        let (sixtyTwo, eightyFive, twin, fast, slow, steps) = (UUID(), UUID(), UUID(), UUID(), UUID(), UUID())
        // 62 bpm: stored as 1.0333333333333334, which times 60 is 62.00000000000001.
        let sixtyTwoStored = try Self.stored(62)
        #expect(sixtyTwoStored * 60 != 62, "the case the rounding is for")
        try add(sixtyTwo, type: 1, value: sixtyTwoStored, at: 0)
        try add(eightyFive, type: 1, value: try Self.stored(85), at: 60, sync: "hr-85")
        // The same reading once more, a bit off in the last digit: after the change it is 62 too.
        try add(twin, type: 1, value: sixtyTwoStored.nextUp, at: 0)
        // 90 and 1.5 breaths a minute: 1.5 and 0.025 count/s (the two units' values overlap).
        try add(fast, type: 2, value: 1.5, at: 0)
        try add(slow, type: 2, value: 0.025, at: 60)
        try add(steps, type: 3, value: 1.5, at: 0)
        // A held heart rate of an undecided source, as the build before held it.
        let held = QuantitySample(type: .heartRate, quantity: Quantity(value: try Self.stored(62), unit: .countPerSecond),
                                  start: Self.start, end: Self.start, source: "watch", device: Device(name: "Watch", localIdentifier: "W1"))
        let text = HealthRecordEncoder().encode(held)
        let hold = try old.prepare("""
            INSERT INTO pending(source, type, device, identity, sync_version, start_time, end_time, record, size, held_at)
            VALUES ('watch', ?, 'Watch (W1)', ?, 0, ?, ?, ?, ?, ?)
            """)
        try hold.bind(QuantityType.heartRate.identifier, at: 1)
        try hold.bind(HealthStore.pendingKey(.sample(held), policy: nil).identity, at: 2)
        try hold.bind(Self.start.timeIntervalSince1970, at: 3)
        try hold.bind(Self.start.timeIntervalSince1970, at: 4)
        try hold.bind(text, at: 5)
        try hold.bind(text.utf8.count, at: 6)
        // Held just now: the pending area's retention keeps it.
        let now = Date().timeIntervalSince1970
        try hold.bind(now, at: 7)
        try hold.execute()
        try old.execute(sql: "INSERT INTO pending_sources(source, first_held) VALUES ('watch', \(now))")
        old.close()

        let store = try HealthStore(path: path)
        defer { store.close() }
        #expect(try store.db.prepare("PRAGMA user_version").firstRow { $0.int(at: 0) } == 14)
        let rates = try store.samples(type: .heartRate)
        #expect(Dictionary(uniqueKeysWithValues: rates.map { ($0.uuid, $0.quantity.value) }) == [sixtyTwo: 62, eightyFive: 85])
        #expect(rates.allSatisfy { $0.quantity.unit == .countPerMinute })
        let breaths = try store.samples(type: .respiratoryRate)
        #expect(Dictionary(uniqueKeysWithValues: breaths.map { ($0.uuid, $0.quantity.value) }) == [fast: 90, slow: 1.5])
        #expect(try store.samples(type: .stepCount).map(\.quantity.value) == [1.5])
        // The twin is gone, and the feed says so after everything that was there.
        let deleted = try store.changes(since: 0).entries.compactMap { entry -> (UUID, Int64)? in
            if case .deleted(let uuid, _, let anchor) = entry { (uuid, anchor) } else { nil }
        }
        #expect(deleted.map(\.0) == [twin])
        #expect((deleted.first?.1 ?? 0) > 6)

        // The same readings arriving again are the stored ones.
        let pipeline = try Pipeline(store: store, now: { Self.start.addingTimeInterval(3600) })
        try store.grant(source: "band", types: [.heartRate])
        let again = QuantitySample(type: .heartRate, quantity: Quantity(value: 62, unit: .countPerMinute), start: Self.start,
                                   end: Self.start, source: "band", device: Device(localIdentifier: "AA"))
        let report = try pipeline.ingest([.sample(again)])
        #expect(report.totals.duplicate == 1 && report.totals.written == 0, "\(report.totals)")
        // The held reading, held again, is held once; granted, it comes in as 62 exactly.
        let heldAgain = QuantitySample(type: .heartRate, quantity: Quantity(value: 62, unit: .countPerMinute), start: Self.start,
                                       end: Self.start, source: "watch", device: Device(name: "Watch", localIdentifier: "W1"))
        let heldReport = try pipeline.ingest([.sample(heldAgain)])
        #expect(heldReport.pending.alreadyHeld == 1 && heldReport.pending.newlyHeld == 0, "\(heldReport.pending)")
        try store.grant(source: "watch", types: [.heartRate])
        let release = try store.releaseHeld(source: "watch", types: [.heartRate], all: false, through: pipeline)
        #expect(release.released == 1 && release.report.totals.written == 1)
        #expect(try store.samples(type: .heartRate).filter { $0.source == "watch" }.map(\.quantity.value) == [62])
    }
}

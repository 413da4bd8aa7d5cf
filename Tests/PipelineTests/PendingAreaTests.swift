import Foundation
import Testing
import HealthModel
import Pipeline
import SQLiteStore

/// The pending area: samples of undecided (source, type) pairs wait there, invisible, until a grant
/// brings them in through the pipeline or a denial discards them; retention and per-source bounds.
@Suite struct PendingAreaTests {
    let temp: TemporaryStore
    let pipeline: Pipeline

    init() throws {
        temp = try TemporaryStore()
        pipeline = try Pipeline(store: temp.store, now: { noon })
    }

    private func weighings(_ count: Int, source: String = "scale") throws -> [HealthRecord] {
        try (0..<count).map { index in
            .sample(try sample(.bodyMass, 70 + Double(index) / 10, "kg",
                               start: ISO8601DateTime.string(from: noon.addingTimeInterval(Double(index - count) * 3600)),
                               source: source, device: Device(name: "Scale", localIdentifier: "AA:BB"),
                               sync: ("weighing-\(index)", 1)))
        }
    }

    @Test func heldSamplesAreInvisibleAndAGrantBringsThemInWithTheirTimesOnce() throws {
        let records = try weighings(3)
        let report = try pipeline.ingest(records)
        #expect(report.totals.held == 3)
        #expect(report.pending.newlyHeld == 3)
        #expect(try temp.store.samples(type: .bodyMass).isEmpty)
        #expect(try temp.store.changes(since: 0).entries.isEmpty)
        let groups = try temp.store.pendingGroups()
        #expect(groups.count == 1)
        #expect(groups.first?.count == 3)
        #expect(groups.first?.device == "Scale (AA:BB)")
        #expect(groups.first?.firstStart == noon.addingTimeInterval(-3 * 3600))
        #expect(groups.first?.lastEnd == noon.addingTimeInterval(-1 * 3600))

        // Held twice is held once (deduplicated like samples).
        let again = try pipeline.ingest(records)
        #expect(again.pending.alreadyHeld == 3 && again.pending.newlyHeld == 0)
        #expect(try temp.store.pendingCounts() == ["scale": 3])

        try temp.store.grant(source: "scale", types: [.bodyMass])
        let release = try temp.store.releaseHeld(source: "scale", types: [.bodyMass], all: false,
                                                 through: try Pipeline(store: temp.store, now: { noon }))
        #expect(release.released == 3)
        #expect(release.report.totals.written == 3)
        #expect(release.report.events.map(\.count) == [3])
        let stored = try temp.store.samples(type: .bodyMass)
        #expect(Set(stored.map(\.start)) == Set(records.flatMap { $0.samples.map(\.start) }))
        #expect(Set(stored.map(\.uuid)) == Set(records.flatMap { $0.samples.map(\.uuid) }))
        #expect(try temp.store.changes(since: 0).entries.count == 3)
        #expect(try temp.store.pendingCounts().isEmpty)

        let second = try temp.store.releaseHeld(source: "scale", types: [.bodyMass], all: false,
                                                through: try Pipeline(store: temp.store, now: { noon }))
        #expect(second.released == 0)
        #expect(try temp.store.samples(type: .bodyMass).count == 3)
    }

    /// A running daemon's pipeline read the grants at start; a grant given since (by `ingestd auth
    /// grant`, another connection) applies to its next sample instead of holding it.
    @Test func aGrantFromAnotherConnectionAppliesToTheNextSampleWithoutReload() throws {
        let other = try HealthStore(path: temp.path)
        try other.grant(source: "scale", types: [.bodyMass])
        other.close()
        let report = try pipeline.ingest(try weighings(1))
        #expect(report.totals.written == 1)
        #expect(report.totals.held == 0)
        #expect(try temp.store.pendingCounts().isEmpty)
    }

    @Test func aGrantBringsInOnlyTheGrantedTypes() throws {
        let steps = try sample(.stepCount, 500, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T09:00:00Z")
        _ = try pipeline.ingest(try weighings(2) + [.sample(steps)])
        try temp.store.grant(source: "scale", types: [.stepCount])
        let release = try temp.store.releaseHeld(source: "scale", types: [.stepCount], all: false,
                                                 through: try Pipeline(store: temp.store, now: { noon }))
        #expect(release.report.totals.written == 1)
        #expect(try temp.store.samples(type: .stepCount).count == 1)
        #expect(try temp.store.samples(type: .bodyMass).isEmpty)
        #expect(try temp.store.pendingCounts() == ["scale": 2])
    }

    /// A blood pressure whose systolic type is granted and diastolic undecided waits whole, filed under
    /// the diastolic type: granting that type brings the correlation in.
    @Test func aHeldCorrelationComesInWhenItsUndecidedTypeIsGranted() throws {
        try temp.store.grant(source: "cuff", types: [.bloodPressureSystolic])
        try pipeline.reloadAuthorization()
        let at = "2026-11-29T07:30:00Z"
        let systolic = try sample(.bloodPressureSystolic, 120, "mmHg", start: at, source: "cuff")
        let diastolic = try sample(.bloodPressureDiastolic, 80, "mmHg", start: at, source: "cuff")
        let correlation = Correlation(type: .bloodPressure, start: systolic.start, end: systolic.end,
                                      objects: [systolic, diastolic], source: "cuff")
        #expect(try pipeline.ingest([.correlation(correlation)]).totals.held == 2)
        #expect(try temp.store.pendingGroups().map(\.type) == [QuantityType.bloodPressureDiastolic.identifier])
        try temp.store.grant(source: "cuff", types: [.bloodPressureDiastolic])
        let release = try temp.store.releaseHeld(source: "cuff", types: [.bloodPressureDiastolic], all: false,
                                                 through: try Pipeline(store: temp.store, now: { noon }))
        #expect(release.report.totals.written == 2)
        #expect(try temp.store.samples(type: .bloodPressureDiastolic).map(\.quantity.value) == [80])
        #expect(try temp.store.pendingCounts().isEmpty)
    }

    /// A damaged pending row does not stop a grant: it is counted, named and left in place; the rest comes in.
    @Test func anUnreadableHeldRecordIsReportedAndTheRestComesIn() throws {
        _ = try pipeline.ingest(try weighings(3))
        let connection = try Connection(path: temp.path)
        try connection.execute(sql: "UPDATE pending SET record = '{\"type\":' WHERE id = (SELECT MIN(id) FROM pending)")
        connection.close()
        try temp.store.grant(source: "scale", types: [.bodyMass])
        let release = try temp.store.releaseHeld(source: "scale", types: [.bodyMass], all: false,
                                                 through: try Pipeline(store: temp.store, now: { noon }))
        #expect(release.released == 2)
        #expect(release.unreadable == 1)
        #expect(release.firstUnreadableError?.hasPrefix("pending row 1: ") == true)
        #expect(try temp.store.samples(type: .bodyMass).count == 2)
        #expect(try temp.store.pendingCounts() == ["scale": 1])
    }

    @Test func aHigherSyncVersionReplacesAHeldRecord() throws {
        let first = try sample(.stepCount, 100, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T09:00:00Z",
                               sync: ("hour-8", 100))
        var grown = try sample(.stepCount, 250, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T09:00:00Z",
                               sync: ("hour-8", 250))
        grown.uuid = UUID()
        _ = try pipeline.ingest([.sample(first)])
        #expect(try pipeline.ingest([.sample(grown)]).pending.newlyHeld == 1)
        #expect(try pipeline.ingest([.sample(first)]).pending.alreadyHeld == 1)
        try temp.store.grant(source: "scale", types: [], all: true)
        _ = try temp.store.releaseHeld(source: "scale", types: [], all: true, through: try Pipeline(store: temp.store, now: { noon }))
        #expect(try temp.store.samples(type: .stepCount).map(\.quantity.value) == [250])
    }

    @Test func aDenialDiscardsWhatIsHeldAndLaterReadingsAreNotHeld() throws {
        _ = try pipeline.ingest(try weighings(3) + weighings(1, source: "neighbour"))
        #expect(try temp.store.deny(source: "scale", types: [], all: true) == 3)
        #expect(try temp.store.pendingCounts() == ["neighbour": 1])
        try pipeline.reloadAuthorization()
        let later = try pipeline.ingest(try weighings(2))
        #expect(later.totals.denied == 2)
        #expect(later.totals.held == 0)
        #expect(try temp.store.pendingCounts() == ["neighbour": 1])
        #expect(try temp.store.samples(type: .bodyMass).isEmpty)
    }

    @Test func heldRecordsExpireAfterTheRetentionPeriod() throws {
        _ = try pipeline.ingest(try weighings(2))
        #expect(try temp.store.purgeExpiredPending(now: Date().addingTimeInterval(29 * 86_400)).isEmpty)
        #expect(try temp.store.pendingCounts() == ["scale": 2])
        #expect(try temp.store.purgeExpiredPending(now: Date().addingTimeInterval(31 * 86_400)) == ["scale": 2])
        #expect(try temp.store.pendingCounts().isEmpty)
        #expect(try temp.store.pendingLosses()["scale"]?.expired == 2)

        temp.store.pendingLimits.retention = 86_400
        _ = try pipeline.ingest(try weighings(1))
        #expect(try temp.store.purgeExpiredPending(now: Date().addingTimeInterval(2 * 86_400)) == ["scale": 1])
    }

    @Test func theCountBoundDropsTheOldestReadingsOfThatSourceOnly() throws {
        temp.store.pendingLimits.maxRecordsPerSource = 4
        _ = try pipeline.ingest(try weighings(2, source: "neighbour"))
        let report = try pipeline.ingest(try weighings(6))
        #expect(report.pending.dropped == ["scale": 2])
        #expect(try temp.store.pendingCounts() == ["scale": 4, "neighbour": 2])
        let scale = try #require(try temp.store.pendingGroups().first { $0.source == "scale" })
        // weighings(6) starts 6 h before noon; the two oldest (-6 h, -5 h) are gone.
        #expect(scale.firstStart == noon.addingTimeInterval(-4 * 3600))
        #expect(try temp.store.pendingLosses()["scale"]?.dropped == 2)
    }

    @Test func theSizeBoundDropsTheOldestReadings() throws {
        // Room for two or three records' JSON lines (each 250-350 bytes), not five.
        temp.store.pendingLimits.maxBytesPerSource = 700
        let report = try pipeline.ingest(try weighings(5))
        let kept = try temp.store.pendingCounts()["scale"] ?? 0
        #expect(kept >= 2 && kept <= 3)
        #expect(report.pending.dropped["scale"] == 5 - kept)
        let scale = try #require(try temp.store.pendingGroups().first)
        #expect(scale.lastEnd == noon.addingTimeInterval(-1 * 3600), "the newest reading is kept")
    }
}

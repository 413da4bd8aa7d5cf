import Foundation
import Testing
import HealthModel
import Pipeline
import SQLiteStore

fileprivate typealias Unit = HealthModel.Unit

/// A fresh store in its own temporary directory.
final class TemporaryStore {
    let directory: URL
    let path: String
    let store: HealthStore

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("health.sqlite").path
        store = try HealthStore(path: path)
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

let noon = ISO8601DateTime.date(from: "2026-11-29T12:00:00Z")!

func sample(_ type: QuantityType, _ value: Double, _ unit: String, start: String, end: String? = nil,
            source: String = "scale", device: Device? = nil, sync: (String, Int)? = nil) throws -> QuantitySample {
    var metadata = Metadata()
    if let sync {
        metadata.syncIdentifier = sync.0
        metadata.syncVersion = sync.1
    }
    let startDate = try #require(ISO8601DateTime.date(from: start))
    let endDate = try #require(ISO8601DateTime.date(from: end ?? start))
    return QuantitySample(type: type, quantity: Quantity(value: value, unit: try Unit(from: unit)),
                          start: startDate, end: endDate, source: source, device: device, metadata: metadata)
}

@Suite struct PipelineTests {
    let temp: TemporaryStore
    let pipeline: Pipeline

    init() throws {
        temp = try TemporaryStore()
        try temp.store.grant(source: "scale", types: [.bodyMass, .heartRate, .bloodPressureSystolic, .bloodPressureDiastolic])
        try temp.store.grant(source: "watch", types: [], all: true)
        pipeline = try Pipeline(store: temp.store, now: { noon })
    }

    @Test func replayingTheSameBatchTwiceChangesNothing() throws {
        let batch: [HealthRecord] = [
            .sample(try sample(.bodyMass, 72.35, "kg", start: "2026-11-29T08:00:00Z")),
            .sample(try sample(.heartRate, 72, "count/min", start: "2026-11-29T08:00:00Z")),
        ]
        let first = try pipeline.ingest(batch)
        #expect(first.totals.written == 2)
        let second = try pipeline.ingest(batch)
        #expect(second.totals.written == 0)
        #expect(second.totals.duplicate == 2)
        #expect(try temp.store.samples(type: .bodyMass).count == 1)
    }

    @Test func identityWithoutSyncIdentifierIgnoresTheUUID() throws {
        let a = try sample(.bodyMass, 72.35, "kg", start: "2026-11-29T08:00:00Z")
        var b = a
        b.uuid = UUID()
        var otherDevice = a
        otherDevice.uuid = UUID()
        otherDevice.device = Device(localIdentifier: "C8:47:8C:00:11:22")
        let report = try pipeline.ingest([.sample(a), .sample(b), .sample(otherDevice)])
        #expect(report.perType[QuantityType.bodyMass.identifier]?.written == 2)
        #expect(report.perType[QuantityType.bodyMass.identifier]?.duplicate == 1)
    }

    @Test func valuesAreStoredInTheCanonicalUnit() throws {
        _ = try pipeline.ingest([.sample(try sample(.bodyMass, 160, "lb", start: "2026-11-29T08:00:00Z"))])
        let stored = try temp.store.samples(type: .bodyMass)
        #expect(stored.count == 1)
        #expect(stored.first?.quantity.unit == Unit.kilogram)
        #expect(stored.first?.quantity.value == 72.5747792)
    }

    @Test func higherSyncVersionReplacesAndLeavesATombstone() throws {
        let v1 = try sample(.bodyMass, 80, "kg", start: "2026-11-29T08:00:00Z", sync: ("reading-1", 1))
        let v2 = try sample(.bodyMass, 79.5, "kg", start: "2026-11-29T08:00:00Z", sync: ("reading-1", 2))
        #expect(try pipeline.ingest([.sample(v1)]).totals.written == 1)
        let (_, anchorAfterV1) = try temp.store.changes(since: 0)
        #expect(try pipeline.ingest([.sample(v1)]).totals.duplicate == 1)
        #expect(try pipeline.ingest([.sample(v2)]).totals.replaced == 1)
        // An older version arriving late is a duplicate, not a rollback.
        #expect(try pipeline.ingest([.sample(v1)]).totals.duplicate == 1)
        let stored = try temp.store.samples(type: .bodyMass)
        #expect(stored.map(\.quantity.value) == [79.5])
        #expect(stored.first?.uuid == v2.uuid)
        let (changes, _) = try temp.store.changes(since: anchorAfterV1)
        #expect(changes.count == 2)
        guard case .deleted(let deletedUUID, let type, _) = changes.first else {
            Issue.record("expected a tombstone first, got \(changes)")
            return
        }
        #expect(deletedUUID == v1.uuid)
        #expect(type == QuantityType.bodyMass.identifier)
        guard case .added(let added, _) = changes.last else {
            Issue.record("expected the replacement last")
            return
        }
        #expect(added.uuid == v2.uuid)
    }

    /// A device reading whose samples of different types share one sync identifier (a weight with
    /// its heart rate, a blood pressure with its pulse) keeps every type.
    @Test func oneSyncIdentifierAcrossTypesKeepsEveryType() throws {
        let weight = try sample(.bodyMass, 80, "kg", start: "2026-11-29T08:00:00Z", sync: ("reading-7", 1))
        let pulse = try sample(.heartRate, 60, "count/min", start: "2026-11-29T08:00:00Z", sync: ("reading-7", 1))
        let report = try pipeline.ingest([.sample(weight), .sample(pulse)])
        #expect(report.totals.written == 2)
        #expect(try pipeline.ingest([.sample(weight), .sample(pulse)]).totals.duplicate == 2)
    }

    @Test func undecidedTypesAreHeldNotWrittenAndTheHintNamesTheCommand() throws {
        let steps = try sample(.stepCount, 100, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T08:10:00Z")
        let report = try pipeline.ingest([.sample(steps), .sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z"))])
        #expect(report.perType[QuantityType.stepCount.identifier]?.held == 1)
        #expect(report.perType[QuantityType.stepCount.identifier]?.denied == 0)
        #expect(report.perType[QuantityType.bodyMass.identifier]?.written == 1)
        #expect(report.grantHints == ["ingestd auth grant scale stepCount"])
        #expect(try temp.store.samples(type: .stepCount).isEmpty)
        #expect(try temp.store.pendingCounts() == ["scale": 1])
    }

    @Test func explicitlyDeniedTypesAreRefusedAndCounted() throws {
        try temp.store.deny(source: "scale", types: [.stepCount])
        try pipeline.reloadAuthorization()
        let steps = try sample(.stepCount, 100, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T08:10:00Z")
        let report = try pipeline.ingest([.sample(steps)])
        #expect(report.perType[QuantityType.stepCount.identifier]?.denied == 1)
        #expect(report.perType[QuantityType.stepCount.identifier]?.held == 0)
        #expect(try temp.store.samples(type: .stepCount).isEmpty)
        #expect(try temp.store.pendingCounts().isEmpty)
        let recorded = try temp.store.rejections(since: noon.addingTimeInterval(-86400 * 365))
        #expect(recorded[RejectionKey(source: "scale", type: QuantityType.stepCount.identifier, reason: "denied")] == 1)
    }

    /// Revoking a grant makes the pair undecided again: later samples are held, not written.
    @Test func revokedGrantsTakeEffectAfterReload() throws {
        try temp.store.revoke(source: "scale", types: [.bodyMass])
        try pipeline.reloadAuthorization()
        let report = try pipeline.ingest([.sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z"))])
        #expect(report.totals.held == 1)
        #expect(report.totals.written == 0)
        #expect(try temp.store.samples(type: .bodyMass).isEmpty)
    }

    @Test func invalidSamplesAreCountedAndDoNotBlockTheBatch() throws {
        let records: [HealthRecord] = [
            .sample(try sample(.bodyMass, 900, "kg", start: "2026-11-29T08:00:00Z")),
            .sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T09:00:00Z", end: "2026-11-29T08:00:00Z")),
            .sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T12:30:00Z")),
            .sample(try sample(.bodyMass, 70, "m", start: "2026-11-29T08:00:00Z")),
            .sample(try sample(.bodyMass, .nan, "kg", start: "2026-11-29T08:00:00Z")),
            .sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T12:05:00Z")),
        ]
        let report = try pipeline.ingest(records)
        #expect(report.perType[QuantityType.bodyMass.identifier]?.invalid == 5)
        #expect(report.perType[QuantityType.bodyMass.identifier]?.written == 1)
        let reasons = Set(report.rejections.keys.map(\.reason))
        #expect(reasons == ["out-of-range", "end-before-start", "in-future", "incompatible-unit", "non-finite"])
    }

    @Test func bloodPressureCorrelationIsStoredWhole() throws {
        let at = "2026-11-29T07:30:00Z"
        let systolic = try sample(.bloodPressureSystolic, 120, "mmHg", start: at)
        let diastolic = try sample(.bloodPressureDiastolic, 80, "mmHg", start: at)
        let correlation = Correlation(type: .bloodPressure, start: systolic.start, end: systolic.end,
                                      objects: [systolic, diastolic], source: "scale")
        let report = try pipeline.ingest([.correlation(correlation)])
        #expect(report.totals.written == 2)
        #expect(try temp.store.samples(type: .bloodPressureSystolic).map(\.quantity.value) == [120])
        #expect(try pipeline.ingest([.correlation(correlation)]).totals.duplicate == 2)
    }

    @Test func correlationWithAnUndecidedMemberIsHeldWholeAndWithADeniedOneRefused() throws {
        let at = "2026-11-29T07:30:00Z"
        let systolic = try sample(.bloodPressureSystolic, 120, "mmHg", start: at, source: "cuff")
        let diastolic = try sample(.bloodPressureDiastolic, 80, "mmHg", start: at, source: "cuff")
        try temp.store.grant(source: "cuff", types: [.bloodPressureSystolic])
        try pipeline.reloadAuthorization()
        let correlation = Correlation(type: .bloodPressure, start: systolic.start, end: systolic.end,
                                      objects: [systolic, diastolic], source: "cuff")
        let report = try pipeline.ingest([.correlation(correlation)])
        #expect(report.totals.written == 0)
        #expect(report.totals.held == 2)
        #expect(report.held == ["cuff": [QuantityType.bloodPressureDiastolic.identifier]])
        #expect(try temp.store.samples(type: .bloodPressureSystolic).isEmpty)
        #expect(try temp.store.pendingCounts() == ["cuff": 1])

        try temp.store.deny(source: "cuff", types: [.bloodPressureDiastolic])
        try pipeline.reloadAuthorization()
        let refused = try pipeline.ingest([.correlation(correlation)])
        #expect(refused.totals.denied == 2)
        #expect(refused.totals.held == 0)
        #expect(try temp.store.samples(type: .bloodPressureSystolic).isEmpty)
    }

    @Test func invalidCorrelationIsRejected() throws {
        let systolic = try sample(.bloodPressureSystolic, 120, "mmHg", start: "2026-11-29T07:30:00Z")
        let correlation = Correlation(type: .bloodPressure, start: systolic.start, end: systolic.end,
                                      objects: [systolic], source: "scale")
        let report = try pipeline.ingest([.correlation(correlation)])
        #expect(report.totals.invalid == 1)
        #expect(report.rejections.keys.map(\.reason) == ["invalid-correlation"])
    }

    @Test func commitsEmitRecordsProcessedEvents() throws {
        let received = EventBox()
        pipeline.onRecordsProcessed = { events in received.append(events) }
        _ = try pipeline.ingest([
            .sample(try sample(.heartRate, 60, "count/min", start: "2026-11-29T08:00:00Z", source: "watch")),
            .sample(try sample(.heartRate, 61, "count/min", start: "2026-11-29T08:01:00Z", source: "watch")),
            .sample(try sample(.stepCount, 10, "count", start: "2026-11-29T08:00:00Z", end: "2026-11-29T08:01:00Z", source: "watch")),
        ])
        let events = received.events
        #expect(events.map(\.count).sorted() == [1, 2])
        #expect(Set(events.map(\.type)) == [QuantityType.heartRate.identifier, QuantityType.stepCount.identifier])
        #expect(events.allSatisfy { $0.source == "watch" })
        // Nothing new, nothing announced.
        _ = try pipeline.ingest([.sample(try sample(.heartRate, 60, "count/min", start: "2026-11-29T08:00:00Z", source: "watch"))])
        #expect(received.events.count == 2)
    }
}

/// Collects events from the pipeline's callback.
final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [RecordsProcessed] = []
    func append(_ events: [RecordsProcessed]) { lock.withLock { stored += events } }
    var events: [RecordsProcessed] { lock.withLock { stored } }
}

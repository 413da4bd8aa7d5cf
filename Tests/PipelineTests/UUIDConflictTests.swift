import Foundation
import Testing
import HealthModel
import Pipeline

/// Issue 10 finding 4: a uuid names one sample; reusing it for another is a conflict, never a duplicate.
@Suite struct UUIDConflictTests {
    let temp: TemporaryStore
    let pipeline: Pipeline
    let shared = UUID(uuidString: "4E8A5E8E-5F7C-4C4F-9C3B-7C3A2B1D0E9F")!

    init() throws {
        temp = try TemporaryStore()
        try temp.store.grant(source: "scale", types: [.bodyMass])
        pipeline = try Pipeline(store: temp.store, now: { noon })
    }

    private func weighing(_ kilograms: Double, sync: (String, Int)? = nil) throws -> HealthRecord {
        var reading = try sample(.bodyMass, kilograms, "kg", start: "2026-11-29T08:00:00Z", sync: sync)
        reading.uuid = shared
        return .sample(reading)
    }

    @Test func differentContentUnderAStoredUUIDIsAConflictReportedWithItsRecord() throws {
        _ = try pipeline.ingest([try weighing(70)])
        let report = try pipeline.ingest([try weighing(70), try weighing(71)])
        let counts = try #require(report.perType[QuantityType.bodyMass.identifier])
        #expect(counts.duplicate == 1)
        #expect(counts.invalid == 1)
        #expect(counts.written == 0)
        #expect(report.conflicts.map(\.record) == [1])
        #expect(report.rejections[RejectionKey(source: "scale", type: QuantityType.bodyMass.identifier, reason: "uuid-conflict")] == 1)
    }

    @Test func aNewSyncVersionThatReusesAnotherSamplesUUIDLeavesTheOldVersionInPlace() throws {
        _ = try pipeline.ingest([try weighing(70)])  // holds the uuid, no sync identifier
        var first = try sample(.bodyMass, 72, "kg", start: "2026-11-29T09:00:00Z", sync: ("reading-1", 1))
        first.uuid = UUID()
        _ = try pipeline.ingest([.sample(first)])
        // Version 2 of reading-1 arrives under the first sample's uuid: refused, version 1 kept.
        let report = try pipeline.ingest([try weighing(73, sync: ("reading-1", 2))])
        #expect(report.perType[QuantityType.bodyMass.identifier]?.invalid == 1)
        #expect(report.perType[QuantityType.bodyMass.identifier]?.replaced == 0)
        let values = try temp.store.samples(type: .bodyMass).map(\.quantity.value).sorted()
        #expect(values == [70, 72])
    }

    @Test func anEmptySyncIdentifierMadeInCodeIsRejectedByThePipeline() throws {
        let report = try pipeline.ingest([.sample(try sample(.bodyMass, 70, "kg", start: "2026-11-29T08:00:00Z", sync: ("", 1))),
                                          .sample(try sample(.bodyMass, 71, "kg", start: "2026-11-29T08:01:00Z", sync: ("", 1)))])
        #expect(report.perType[QuantityType.bodyMass.identifier]?.invalid == 2)
        #expect(report.rejections[RejectionKey(source: "scale", type: QuantityType.bodyMass.identifier, reason: "empty-sync-identifier")] == 2)
    }
}

import Foundation
import Testing
import HealthModel
import Pipeline
import SQLiteStore

/// Issue 23: an import's held history is never dropped (past a bound the batch is refused and
/// rolled back), the number of sources holding records is bounded, and a sync version re-sent
/// with another value is a conflict, never a duplicate.
@Suite struct HeldHistoryAndSyncConflictTests {
    let temp: TemporaryStore
    let pipeline: Pipeline

    init() throws {
        temp = try TemporaryStore()
        pipeline = try Pipeline(store: temp.store, now: { noon })
    }

    private func weighings(_ count: Int, source: String = "scale", from first: Int = 0) throws -> [HealthRecord] {
        try (first..<(first + count)).map { index in
            .sample(try sample(.bodyMass, 70 + Double(index) / 10, "kg",
                               start: ISO8601DateTime.string(from: noon.addingTimeInterval(Double(index - 1_000) * 3600)),
                               source: source, sync: ("weighing-\(index)", 1)))
        }
    }

    @Test func refusingPastTheRecordBoundRollsTheBatchBackAndDropsNothing() throws {
        temp.store.pendingLimits = PendingLimits(maxRecordsPerSource: 4, overflow: .refuse)
        #expect(try pipeline.ingest(try weighings(3)).totals.held == 3)
        #expect(throws: PendingBoundExceeded(source: "scale", bound: .records, limit: 4)) {
            _ = try pipeline.ingest(try weighings(3, from: 3))
        }
        // The three held before stay, none of the refused batch is there, nothing counted as dropped.
        #expect(try temp.store.pendingCounts() == ["scale": 3])
        #expect(try temp.store.pendingLosses().isEmpty)
    }

    @Test func theNumberOfSourcesHoldingRecordsIsBounded() throws {
        temp.store.pendingLimits = PendingLimits(maxSources: 3, overflow: .refuse)
        for index in 0..<3 { _ = try pipeline.ingest(try weighings(1, source: "scale \(index)")) }
        #expect(throws: PendingBoundExceeded(source: "scale 3", bound: .sources, limit: 3)) {
            _ = try pipeline.ingest(try weighings(1, source: "scale 0", from: 5) + weighings(1, source: "scale 3"))
        }
        #expect(try temp.store.pendingCounts().count == 3)
        // A daemon (dropOldest) keeps going: the new source's records are not held, and counted.
        temp.store.pendingLimits = PendingLimits(maxSources: 3)
        let report = try pipeline.ingest(try weighings(1, source: "scale 0", from: 5) + weighings(2, source: "scale 4"))
        #expect(report.pending.dropped == ["scale 4": 2])
        #expect(try temp.store.pendingCounts() == ["scale 0": 2, "scale 1": 1, "scale 2": 1])
    }

    @Test func theSameSyncVersionWithAnotherValueIsAConflictNotADuplicate() throws {
        let stored = try sample(.bodyMass, 80, "kg", start: "2026-11-29T08:00:00Z", sync: ("reading-1", 3))
        let changed = try sample(.bodyMass, 90, "kg", start: "2026-11-29T08:00:00Z", sync: ("reading-1", 3))
        let same = try sample(.bodyMass, 80, "kg", start: "2026-11-29T08:00:00Z", sync: ("reading-1", 3))
        try temp.store.grant(source: "scale", types: [.bodyMass])
        try pipeline.reloadAuthorization()
        #expect(try pipeline.ingest([.sample(stored)]).totals.written == 1)
        let report = try pipeline.ingest([.sample(same), .sample(changed)])
        #expect(report.totals.duplicate == 1)
        #expect(report.totals.invalid == 1)
        #expect(report.rejections.keys.map(\.reason) == ["sync-version-conflict"])
        #expect(report.conflicts.map(\.record) == [1])
        #expect(report.conflicts.first?.reason == .syncVersionConflict(syncIdentifier: "reading-1", version: 3))
        #expect(try temp.store.samples(type: .bodyMass).map(\.quantity.value) == [80])
    }
}

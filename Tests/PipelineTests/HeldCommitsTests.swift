import Foundation
import Testing
import HealthModel
import Pipeline
import SQLiteStore

/// Held commits (an import's first batches stored while its archive is verified): kept or
/// discarded together, and a discarded hold leaves no remembered ids of rows it added.
@Suite struct HeldCommitsTests {
    let temp: TemporaryStore
    let pipeline: Pipeline

    init() throws {
        temp = try TemporaryStore()
        for source in ["phone", "watch"] { try temp.store.grant(source: source, types: [.stepCount]) }
        pipeline = try Pipeline(store: temp.store, now: { noon })
    }

    private func steps(_ count: Double, _ source: String, at start: String) throws -> HealthRecord {
        .sample(try sample(.stepCount, count, "count", start: start, end: start, source: source))
    }

    /// The same store as another process sees it (its own connection).
    private func storedSources() throws -> [String] {
        let other = try HealthStore(path: temp.path)
        defer { other.close() }
        return try other.samples(type: .stepCount).map(\.source)
    }

    @Test func heldBatchesAreInvisibleUntilKeptThenAllThere() throws {
        try temp.store.holdCommits()
        _ = try pipeline.ingest([try steps(10, "phone", at: "2026-11-29T08:00:00Z")])
        _ = try pipeline.ingest([try steps(20, "watch", at: "2026-11-29T09:00:00Z")])
        #expect(try storedSources().isEmpty)
        try temp.store.endHeldCommits(keep: true)
        #expect(try storedSources() == ["phone", "watch"])
    }

    @Test func aDiscardedHoldStoresNothingAndForgetsTheIdsItAdded() throws {
        try temp.store.holdCommits()
        // "phone" is a new source: its row (and id) exist only inside the held transaction.
        let held = try pipeline.ingest([try steps(10, "phone", at: "2026-11-29T08:00:00Z")])
        #expect(held.perType[QuantityType.stepCount.identifier]?.written == 1)
        try temp.store.endHeldCommits(keep: false)
        #expect(try storedSources().isEmpty)
        // "watch" now gets the id "phone" had; a remembered id would file phone's steps under it.
        _ = try pipeline.ingest([try steps(20, "watch", at: "2026-11-29T09:00:00Z")])
        _ = try pipeline.ingest([try steps(30, "phone", at: "2026-11-29T10:00:00Z")])
        #expect(try storedSources() == ["watch", "phone"])
        #expect(try temp.store.samples(type: .stepCount).map(\.quantity.value) == [20, 30])
    }

    @Test func aBatchRefusedInsideAHoldLeavesTheOthersHeld() throws {
        try temp.store.holdCommits()
        _ = try pipeline.ingest([try steps(10, "phone", at: "2026-11-29T08:00:00Z")])
        // A batch that fails rolls back to its own savepoint: the batch before it stays held.
        temp.store.pendingLimits = PendingLimits(maxRecordsPerSource: 0, overflow: .refuse)
        #expect(throws: PendingBoundExceeded.self) {
            try pipeline.ingest([try steps(5, "tablet", at: "2026-11-29T08:30:00Z")])
        }
        try temp.store.endHeldCommits(keep: true)
        #expect(try storedSources() == ["phone"])
    }
}

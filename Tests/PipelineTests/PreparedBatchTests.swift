import Foundation
import Testing
import HealthModel
@testable import Pipeline
import SQLiteStore

/// Batches taken through the first stages ahead of their write, on another thread
/// (`Pipeline.preparation`, what `import` does on its reading thread): one taken under the
/// grants the pipeline has when it writes it is written as taken; one taken under other grants
/// (changed before its write, or another pipeline's) is taken again, so a denial or a grant in
/// between always decides.
@Suite struct PreparedBatchTests {
    let temp: TemporaryStore

    init() throws {
        temp = try TemporaryStore()
    }

    private func weighings(_ count: Int, from first: Int = 0) throws -> [HealthRecord] {
        try (first..<first + count).map { index in
            .sample(try sample(.bodyMass, 70 + Double(index) / 10, "kg",
                               start: ISO8601DateTime.string(from: noon.addingTimeInterval(Double(index - 100) * 3600)),
                               source: "scale"))
        }
    }

    /// Takes `records` on a thread of its own, as the import's reader does.
    private func takenElsewhere(_ records: [HealthRecord], by preparation: BatchPreparation) async -> PreparedBatch {
        await Task.detached { preparation.prepare(records) }.value
    }

    @Test func aBatchTakenUnderTheGrantsInForceIsWrittenAsTaken() async throws {
        _ = try temp.store.grant(source: "scale", types: [.bodyMass])
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        let prepared = await takenElsewhere(try weighings(5), by: pipeline.preparation)
        let report = try pipeline.ingest(prepared)
        #expect(report.totals.written == 5)
        #expect(pipeline.batchesTakenAgain == 0)
        #expect(try temp.store.samples(type: .bodyMass).count == 5)
        // The same grants read again (as a grant of nothing new does) keep batches as taken.
        try pipeline.reloadAuthorization()
        let next = await takenElsewhere(try weighings(5, from: 5), by: pipeline.preparation)
        try pipeline.reloadAuthorization()
        #expect(try pipeline.ingest(next).totals.written == 5)
        #expect(pipeline.batchesTakenAgain == 0)
    }

    @Test func aDenialBetweenTakingAndWritingWins() async throws {
        _ = try temp.store.grant(source: "scale", types: [.bodyMass])
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        let prepared = await takenElsewhere(try weighings(4), by: pipeline.preparation)
        _ = try temp.store.deny(source: "scale", types: [.bodyMass])
        try pipeline.reloadAuthorization()
        let report = try pipeline.ingest(prepared)
        #expect(report.totals.written == 0)
        #expect(report.totals.denied == 4)
        #expect(pipeline.batchesTakenAgain == 1)
        #expect(try temp.store.samples(type: .bodyMass).isEmpty)
    }

    @Test func aGrantBetweenTakingAndWritingStoresWhatWouldHaveBeenHeld() async throws {
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        let prepared = await takenElsewhere(try weighings(3), by: pipeline.preparation)
        // Taken while the pair was undecided: the preparation would hold them.
        _ = try temp.store.grant(source: "scale", types: [.bodyMass])
        try pipeline.reloadAuthorization()
        let report = try pipeline.ingest(prepared)
        #expect(report.totals.written == 3 && report.totals.held == 0)
        #expect(pipeline.batchesTakenAgain == 1)
        #expect(try temp.store.pendingCounts().isEmpty)
    }

    @Test func anotherPipelinesBatchIsTakenAgainOnlyWhenItsGrantsDiffer() async throws {
        _ = try temp.store.grant(source: "scale", types: [.bodyMass])
        let same = try Pipeline(store: temp.store, now: { noon })
        let pipeline = try Pipeline(store: temp.store, now: { noon })
        // Read before the denial: other grants than the pipeline's once it re-reads them.
        let stale = try Pipeline(store: temp.store, now: { noon })
        let underSameGrants = await takenElsewhere(try weighings(2), by: same.preparation)
        #expect(try pipeline.ingest(underSameGrants).totals.written == 2)
        #expect(pipeline.batchesTakenAgain == 0)
        _ = try temp.store.deny(source: "scale", types: [.bodyMass])
        try pipeline.reloadAuthorization()
        let underOldGrants = await takenElsewhere(try weighings(2, from: 2), by: stale.preparation)
        let report = try pipeline.ingest(underOldGrants)
        #expect(report.totals.written == 0 && report.totals.denied == 2)
        #expect(pipeline.batchesTakenAgain == 1)
        // Not taken at all: taken here, not counted as taken again.
        #expect(try pipeline.ingest(PreparedBatch(untaken: try weighings(2, from: 4))).totals.denied == 2)
        #expect(pipeline.batchesTakenAgain == 1)
    }
}

import Foundation
import HealthModel
import Pipeline
import SQLiteStore
import Testing

/// The anchor `changes` hands out belongs to the snapshot its changes were read from: a commit
/// that another connection (the daemon) makes while a reader walks the feed is in the reader's
/// next call, never passed over.
@Suite struct ChangeFeedSnapshotTests {
    @Test(arguments: [0, 1_000])
    func aCommitDuringTheReadIsInTheNextRead(limit: Int) throws {
        let temp = try TemporaryStore()
        try temp.store.grant(source: "scale", types: [.bodyMass])
        let reader = try Pipeline(store: temp.store, now: { noon })
        _ = try reader.ingest([.sample(try sample(.bodyMass, 72.1, "kg", start: "2026-11-29T08:00:00Z")),
                               .sample(try sample(.bodyMass, 72.2, "kg", start: "2026-11-29T09:00:00Z"))])
        // The writer: another connection to the same file, as the daemon beside `ingestd changes`.
        let other = try HealthStore(path: temp.path)
        defer { other.close() }
        let writer = try Pipeline(store: other, now: { noon })
        var seen: [Double] = []
        var wrote = false
        let anchor = try temp.store.forEachChange(since: 0, limit: limit) { entry in
            if case .added(let reading, _) = entry { seen.append(reading.quantity.value) }
            if !wrote {
                wrote = true
                _ = try writer.ingest([.sample(try sample(.bodyMass, 72.3, "kg", start: "2026-11-29T10:00:00Z"))])
            }
        }
        #expect(seen == [72.1, 72.2])
        let next = try temp.store.changes(since: anchor).entries.compactMap { entry -> Double? in
            if case .added(let reading, _) = entry { return reading.quantity.value }
            return nil
        }
        #expect(next == [72.3], "the commit made during the first read, after anchor \(anchor)")
    }
}

import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Issue 31: a sum over a given range is summed as the rows are read (`StreamingSum`); where the
/// sources overlap it is the priority merge of all the samples, as the engine computes it.
@Suite struct StreamingStatisticsTests {
    /// The start of an hour (UTC).
    static let start = Date(timeIntervalSince1970: 1_779_998_400)
    static let utc = TimeZone(identifier: "UTC") ?? .current

    /// A store holding `samples` (start minute, minutes, steps, source), written in that order
    /// (so "band" ranks before "phone" when it writes first).
    static func makeStore(_ directory: TemporaryDirectory, _ samples: [(Int, Int, Double, String)]) throws -> HealthStore {
        let store = try HealthStore(path: directory.url.appendingPathComponent("streaming.sqlite").path)
        for source in ["band", "phone"] { try store.grant(source: source, types: [], all: true) }
        let pipeline = try Pipeline(store: store, now: { start.addingTimeInterval(10_000_000) })
        for (minute, minutes, steps, source) in samples {
            let begin = start.addingTimeInterval(Double(minute * 60))
            let record = HealthRecord.sample(QuantitySample(
                type: .stepCount, quantity: Quantity(value: steps, unit: .count), start: begin,
                end: begin.addingTimeInterval(Double(minutes * 60)), source: source))
            #expect(try pipeline.ingest([record]).totals.written == 1)
        }
        return store
    }

    /// The store's hourly sums over the first six hours, and the engine's over the same samples.
    static func sums(_ store: HealthStore) throws -> (store: [StatisticsBucket], engine: [StatisticsBucket]) {
        let to = start.addingTimeInterval(6 * 3600)
        let buckets = try CalendarBuckets(from: start, to: to, granularity: .hour, timeZone: utc)
        let samples = try store.statisticsSamples(type: .stepCount, from: start, to: to)
        return (try store.statistics(.sum, type: .stepCount, from: start, to: to, granularity: .hour, zone: utc),
                try StatisticsEngine().sum(of: samples, in: buckets))
    }

    @Test func overlappingSourcesAreMergedByPriority() throws {
        let directory = try TemporaryDirectory()
        // The band (first to write, so first in priority) 60 minutes from minute 30, the phone 60 from minute 60.
        let store = try Self.makeStore(directory, [(30, 60, 1000, "band"), (60, 60, 600, "phone"), (200, 20, 7, "phone")])
        defer { store.close() }
        let (sums, engine) = try Self.sums(store)
        // The phone's first half hour lies under the band's: 500 + 500 + 300, then 7.
        #expect(sums.map(\.value) == [500, 800, nil, 7, nil, nil])
        #expect(sums == engine)
    }

    @Test func sourcesTakingTurnsAreSummedWhole() throws {
        let directory = try TemporaryDirectory()
        // Every nine minutes a sample of one to eight minutes, the band every third.
        let turns: [(Int, Int, Double, String)] = (0..<40).map { (i: Int) -> (Int, Int, Double, String) in
            let steps = Double(1 + i * 37 % 101)
            return (i * 9, 1 + i % 8, steps, i % 3 == 0 ? "band" : "phone")
        }
        let store = try Self.makeStore(directory, turns)
        defer { store.close() }
        let (sums, engine) = try Self.sums(store)
        #expect(sums == engine && sums.map { $0.value?.bitPattern } == engine.map { $0.value?.bitPattern })
        let summed: Double = sums.compactMap(\.value).reduce(0, +)
        let stored: Double = turns.map(\.2).reduce(0, +)
        #expect(abs(summed - stored) < 1e-9)
    }
}

import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Schema 16 (issue 31): a query for the samples overlapping `[from, to)` reads the time index
/// from `from` less the type's longest sample, not every older sample, and still finds a long
/// sample that began before `from`.
@Suite struct OverlapBoundTests {
    static let start = Date(timeIntervalSince1970: 1_780_000_000)

    /// A day of minute steps, one 6-hour sleep-length step sample beginning at minute 600, and a
    /// store at the latest schema.
    static func makeStore(_ directory: TemporaryDirectory) throws -> HealthStore {
        let store = try HealthStore(path: directory.url.appendingPathComponent("overlap.sqlite").path)
        try store.grant(source: "band", types: [], all: true)
        let pipeline = try Pipeline(store: store, now: { start.addingTimeInterval(1_000_000) })
        var batch: [HealthRecord] = (0..<1440).map { minute in
            let begin = start.addingTimeInterval(Double(minute) * 60)
            return .sample(QuantitySample(type: .stepCount, quantity: Quantity(value: 10, unit: .count), start: begin,
                                          end: begin.addingTimeInterval(60), source: "band"))
        }
        let longBegin = start.addingTimeInterval(600 * 60)
        batch.append(.sample(QuantitySample(type: .stepCount, quantity: Quantity(value: 360, unit: .count), start: longBegin,
                                            end: longBegin.addingTimeInterval(6 * 3600), source: "band")))
        #expect(try pipeline.ingest(batch).totals.written == 1441)
        return store
    }

    @Test func aLongSampleBeganBeforeTheRangeIsFoundAndCountedByItsShare() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(directory)
        defer { store.close() }
        let person = try #require(try store.people().first).id
        #expect(try store.db.prepare("SELECT MAX(longest) FROM sample_counts").firstRow { $0.double(at: 0) } == 6 * 3600)
        // From minute 900 to 960: the long sample (minutes 600-960) overlaps with its last hour.
        let from = Self.start.addingTimeInterval(900 * 60), to = Self.start.addingTimeInterval(960 * 60)
        for scope in [PersonScope.everyone, .person(person)] {
            let found = try store.samples(type: .stepCount, from: from, to: to, person: scope)
            #expect(found.count == 61, "\(scope): 60 minutes and the long sample")
            #expect(found.contains { $0.quantity.value == 360 })
            let newest = try store.newestSamples(type: .stepCount, from: from, to: to, person: scope, count: 100)
            #expect(newest.count == 61)
            let sum = try store.statistics(.sum, type: .stepCount, from: from, to: to, granularity: nil,
                                           zone: TimeZone(identifier: "UTC") ?? .current, person: scope)
            // 60 minutes of 10 steps, and a sixth of the long sample's 360.
            #expect(sum.first?.value.map { ($0 * 1000).rounded() / 1000 } == 660, "\(scope)")
        }
    }

    @Test func theOverlapQueryReadsABoundedRangeOfATimeIndex() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(directory)
        defer { store.close() }
        let from = Self.start.addingTimeInterval(900 * 60), to = Self.start.addingTimeInterval(960 * 60)
        // The first person's samples are read through the type index (schema 20), another
        // person's through the person index.
        let first = try #require(try store.people().first).id
        let second = try store.addPerson(name: "ana", profile: UserProfile(), bodyMassKilograms: 60).id
        for (scope, index) in [(PersonScope.everyone, "samples_by_type_time"), (.person(first), "samples_by_type_time"),
                               (.person(second), "samples_by_person_type_time")] {
            let statement = try #require(try store.pointsStatement(type: .stepCount, from: from, to: to, person: scope))
            let plan = try store.db.prepare("EXPLAIN QUERY PLAN " + statement.sql).mapRows { $0.string(at: 3) ?? "" }
                .joined(separator: "; ")
            // Schema 19: read from the index alone (it carries end, value, source and person).
            #expect(plan.contains("USING COVERING INDEX \(index)") && plan.contains("start_time>? AND start_time<?"), "\(scope): \(plan)")
            // Before schema 16 the range was open below: every sample of the type that began before `from` was read.
            let open = statement.sql.replacingOccurrences(of: "x.start_time >= ?4 AND ", with: "")
            let openPlan = try store.db.prepare("EXPLAIN QUERY PLAN " + open).mapRows { $0.string(at: 3) ?? "" }
                .joined(separator: "; ")
            #expect(openPlan.contains("start_time<?") && !openPlan.contains("start_time>?"), "\(scope): \(openPlan)")
        }
    }
}

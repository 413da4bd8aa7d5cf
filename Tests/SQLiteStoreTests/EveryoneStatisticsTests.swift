import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Issue 31: the statistics of every person (and of several operations for one person) over a
/// given range sum as the rows are read, and answer what materializing every sample answered:
/// the old path is written out here and compared bit for bit on a store of two people whose
/// band and phone overlap.
@Suite struct EveryoneStatisticsTests {
    /// The start of an hour (UTC).
    static let start = Date(timeIntervalSince1970: 1_779_998_400)
    static let utc = TimeZone(identifier: "UTC") ?? .current

    /// Two people ("me" wears band-1 and carries phone-1, "ana" band-2 and phone-2) and an unowned
    /// strap: every seventh minute a band sample of 1 to 40 minutes, every eleventh a phone
    /// sample of 1 to 25, every nineteenth a strap reading (instantaneous). Ana's band and phone
    /// overlap throughout (the priority merge); mine take turns (band before minute 280, phone
    /// from minute 330), so my sums are taken as the rows are read.
    static func makeStore(_ directory: TemporaryDirectory) throws -> HealthStore {
        let store = try HealthStore(path: directory.url.appendingPathComponent("everyone.sqlite").path)
        let me = try store.person(named: HealthStore.firstPersonName)
        let ana = try store.addPerson(name: "ana", profile: UserProfile(), bodyMassKilograms: 60)
        try store.assignDevice("band-1", to: me)
        try store.assignDevice("phone-1", to: me)
        try store.assignDevice("band-2", to: ana)
        try store.assignDevice("phone-2", to: ana)
        for source in ["band", "phone", "strap"] { _ = try store.grant(source: source, types: [], all: true) }
        let pipeline = try Pipeline(store: store, now: { start.addingTimeInterval(10_000_000) })
        func steps(_ minute: Int, _ minutes: Int, _ value: Double, _ source: String, _ device: String) -> HealthRecord {
            let begin = start.addingTimeInterval(Double(minute * 60))
            return .sample(QuantitySample(
                type: .stepCount, quantity: Quantity(value: value, unit: .count), start: begin,
                end: begin.addingTimeInterval(Double(minutes * 60)), source: source,
                device: Device(name: source, localIdentifier: device)))
        }
        var records: [HealthRecord] = []
        for minute in 0..<600 {
            let person = minute % 2 == 0 ? "1" : "2"
            if person == "1", (280..<330).contains(minute) { continue }
            if person == "1", minute < 280, minute % 11 == 0 { continue }
            if person == "1", minute >= 330, minute % 7 == 0 { continue }
            if minute % 7 == 0 { records.append(steps(minute, 1 + minute % 40, Double(10 + minute % 97), "band", "band-" + person)) }
            if minute % 11 == 0 { records.append(steps(minute, 1 + minute % 25, Double(3 + minute % 53), "phone", "phone-" + person)) }
            if minute % 19 == 0 { records.append(steps(minute, 0, Double(1 + minute % 9), "strap", "strap-9")) }
        }
        let report = try pipeline.ingest(records)
        try #require(report.totals.written == records.count)
        try #require(report.unassigned > 0)
        return store
    }

    /// The everyone path as it was: the buckets from every sample found, then each person's and
    /// the unassigned samples' statistics by the engine over all their samples, combined.
    static func materialized(_ store: HealthStore, _ operation: StatisticsOperation, from: Date?, to: Date?,
                             granularity: BucketGranularity?) throws -> [StatisticsBucket] {
        guard let buckets = try StatisticsRange.buckets(
            from: from, to: to, granularity: granularity, zone: utc,
            extent: SampleExtent(try store.statisticsSamples(type: .stepCount, from: from, to: to, person: .everyone)))
        else { return [] }
        let scopes = try store.people().map { PersonScope.person($0.id) } + [.unassigned]
        return StatisticsCombination.combine(operation, try scopes.map {
            try StatisticsEngine().statistics(
                operation, of: try store.statisticsSamples(type: .stepCount, from: from, to: to, person: $0), in: buckets)
        })
    }

    /// Equal buckets with equal bits in every value.
    static func same(_ a: [StatisticsBucket], _ b: [StatisticsBucket]) -> Bool {
        a == b && a.map { $0.value?.bitPattern } == b.map { $0.value?.bitPattern }
    }

    static let ranges: [(from: Date?, to: Date?)] = [
        (start, start.addingTimeInterval(8 * 3600)),
        (start.addingTimeInterval(95 * 60), start.addingTimeInterval(7 * 3600 + 13 * 60)),
        (start.addingTimeInterval(95 * 60), nil),
        (nil, start.addingTimeInterval(5 * 3600 + 7 * 60)),
        (nil, nil),
    ]

    @Test func everyonesStatisticsAreTheMaterializedOnes() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(directory)
        defer { store.close() }
        for (from, to) in Self.ranges {
            for granularity in [BucketGranularity.hour, nil] {
                for operation in [StatisticsOperation.sum, .maximum] {
                    let answer = try store.statistics(operation, type: .stepCount, from: from, to: to, granularity: granularity,
                                                      zone: Self.utc, scope: QueryScope())
                    let old = try Self.materialized(store, operation, from: from, to: to, granularity: granularity)
                    #expect(Self.same(answer, old), "\(operation) \(String(describing: from))–\(String(describing: to)) by \(String(describing: granularity))")
                    #expect(answer.contains { $0.value != nil })
                }
            }
        }
        // Ana's sources overlap: the priority merge drops part of what was stored.
        let stored: Double = try store.statisticsSamples(type: .stepCount, from: nil, to: nil, person: .everyone).map(\.value)
            .reduce(0, +)
        let summed = try store.statistics(.sum, type: .stepCount, from: nil, to: nil, granularity: nil, zone: Self.utc,
                                          scope: QueryScope()).first?.value ?? 0
        #expect(summed < stored - 1)
    }

    /// My sum is taken as the rows are read (no samples read), Ana's needs the engine's merge.
    @Test func onlyOverlappingSourcesReadTheSamples() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(directory)
        defer { store.close() }
        let (from, to) = (Self.start, Self.start.addingTimeInterval(12 * 3600))
        let buckets = try CalendarBuckets(from: from, to: to, granularity: .hour, timeZone: Self.utc)
        for (name, streamed) in [(HealthStore.firstPersonName, true), ("ana", false)] {
            let person = PersonScope.person(try store.person(named: name).id)
            var samples: [StatisticsSample]?
            let sum = try store.statistics(.sum, type: .stepCount, from: from, to: to, in: buckets, person: person,
                                           samples: &samples)
            #expect((samples == nil) == streamed, "\(name)")
            let all = try store.statisticsSamples(type: .stepCount, from: from, to: to, person: person)
            #expect(Self.same(sum, try StatisticsEngine().sum(of: all, in: buckets)), "\(name)")
        }
    }

    @Test func severalOperationsOfOnePersonAreTheMaterializedOnes() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(directory)
        defer { store.close() }
        for name in [HealthStore.firstPersonName, "ana"] {
            let person = try store.person(named: name)
            for (from, to) in Self.ranges {
                let samples = try store.statisticsSamples(type: .stepCount, from: from, to: to, person: .person(person.id))
                let buckets = try #require(try StatisticsRange.buckets(from: from, to: to, granularity: .hour, zone: Self.utc,
                                                                       extent: SampleExtent(samples)))
                let operations: [StatisticsOperation] = [.sum, .maximum, .sum]
                let answers = try store.statistics(operations, type: .stepCount, from: from, to: to, granularity: .hour,
                                                   zone: Self.utc, scope: QueryScope(people: .named(name)))
                for (operation, answer) in zip(operations, answers) {
                    #expect(Self.same(answer, try StatisticsEngine().statistics(operation, of: samples, in: buckets)))
                }
                let sumOnly = try store.statistics([.sum], type: .stepCount, from: from, to: to, granularity: .hour,
                                                   zone: Self.utc, scope: QueryScope(people: .named(name)))
                #expect(sumOnly.count == 1 && Self.same(sumOnly[0], answers[0]))
            }
        }
    }

    /// Over a given range every person's rows are read for that person only: no statement reads
    /// every person's samples to find the range.
    @Test func everyoneOverARangeReadsEachPersonsRowsOnly() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.makeStore(directory)
        defer { store.close() }
        let log = IndexUsersTests.StatementLog()
        store.db.traceStatements { log.record($0) }
        _ = try store.statistics(.sum, type: .stepCount, from: Self.start, to: Self.start.addingTimeInterval(3600),
                                 granularity: .hour, zone: Self.utc, scope: QueryScope())
        store.db.traceStatements(nil)
        let reads = log.statements.filter { $0.contains("FROM samples x WHERE x.type") }
        #expect(reads.count == 3, "\(reads)")
        #expect(reads.allSatisfy { $0.contains("x.person") }, "\(reads)")
    }
}

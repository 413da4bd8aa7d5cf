import Delivery
import Foundation
import HealthModel
import LocalPostgres
import Pipeline
import PostgresStore
import SQLiteStore
import Testing

/// One statistics suite run against both stores through the `QueryStore` port: gateway stores
/// (SQLite) are delivered by their `postgresql://` sinks into one database, then every query is
/// asked of each gateway's SQLite store and of the PostgreSQL store narrowed to that gateway, and
/// across gateways; the answers must agree (values to 1e-9 relative: sums are added in another order).
@Suite(.serialized, .offCooperativePool) struct StatisticsParityTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2026-03-29 is the spring-forward day in Berlin (23 hours).
    static let dstDay = Date(timeIntervalSince1970: 1_774_738_800)  // 2026-03-28T23:00:00Z = 00:00 Berlin

    /// Gateway "ward-a": steps from two overlapping sources (phone, watch) so sums merge by priority,
    /// intervals crossing hour edges and the DST jump, heart rate readings, body mass readings.
    static func fillOverlapping(_ fixture: StoreFixture) throws {
        try fixture.withStore { store in
            for source in ["watch", "scale"] { try store.grant(source: source, types: [], all: true) }
        }
        var records: [HealthRecord] = []
        let steps = QuantityType.stepCount
        for index in 0..<200 {
            let start = dstDay.addingTimeInterval(Double(index) * 1234 - 3600 * 5)
            records.append(.sample(QuantitySample(type: steps, quantity: Quantity(value: Double(100 + index % 37), unit: steps.canonicalUnit),
                                                  start: start, end: start.addingTimeInterval(900), source: "phone")))
            if index % 3 == 0 {
                let watchStart = start.addingTimeInterval(300)
                records.append(.sample(QuantitySample(type: steps, quantity: Quantity(value: Double(80 + index % 11), unit: steps.canonicalUnit),
                                                      start: watchStart, end: watchStart.addingTimeInterval(1800), source: "watch")))
            }
            let reading = dstDay.addingTimeInterval(Double(index) * 977)
            records.append(.sample(QuantitySample(type: .heartRate, quantity: Quantity(value: Double(60 + index % 40), unit: QuantityType.heartRate.canonicalUnit),
                                                  start: reading, end: reading, source: index % 2 == 0 ? "phone" : "watch")))
            if index % 10 == 0 {
                records.append(.sample(QuantitySample(type: .bodyMass, quantity: Quantity(value: 70 + Double(index) / 100, unit: QuantityType.bodyMass.canonicalUnit),
                                                      start: reading, end: reading, source: "scale")))
            }
        }
        try fixture.ingest(records)
    }

    /// Gateway "ward-b": steps from one source only (the SQL path), some of them instantaneous.
    static func fillSingleSource(_ fixture: StoreFixture) throws {
        try fixture.withStore { store in
            for source in ["band", "scale"] { try store.grant(source: source, types: [], all: true) }
        }
        var records: [HealthRecord] = []
        for index in 0..<300 {
            let start = dstDay.addingTimeInterval(Double(index) * 731 - 3600 * 2)
            let end = index % 7 == 0 ? start : start.addingTimeInterval(Double(60 + index % 5 * 600))
            records.append(.sample(QuantitySample(type: .stepCount, quantity: Quantity(value: Double(10 + index % 13), unit: QuantityType.stepCount.canonicalUnit),
                                                  start: start, end: end, source: "band")))
            if index % 15 == 0 {
                records.append(.sample(QuantitySample(type: .bodyMass, quantity: Quantity(value: 85 - Double(index) / 100, unit: QuantityType.bodyMass.canonicalUnit),
                                                      start: start, end: start, source: "scale")))
            }
        }
        try fixture.ingest(records)
    }

    struct Query: CustomStringConvertible {
        var operation: StatisticsOperation
        var type: QuantityType
        var from: Date?
        var to: Date?
        var granularity: BucketGranularity?
        var zone: TimeZone
        var description: String { "\(operation) \(type.shortName) \(from.map { "\($0)" } ?? "-")…\(to.map { "\($0)" } ?? "-") by \(granularity?.rawValue ?? "none") in \(zone.identifier)" }
    }

    static var queries: [Query] {
        var list: [Query] = []
        let zones = [berlin, TimeZone(identifier: "America/New_York")!, TimeZone(identifier: "UTC")!]
        let ranges: [(Date?, Date?)] = [(nil, nil), (dstDay.addingTimeInterval(-86_400), dstDay.addingTimeInterval(3 * 86_400)),
                                        (dstDay.addingTimeInterval(3600 * 1.5), dstDay.addingTimeInterval(3600 * 7.25)), (dstDay, nil)]
        let operations: [(StatisticsOperation, QuantityType)] = [
            (.sum, .stepCount), (.average(.temporal), .heartRate), (.minimum, .heartRate), (.maximum, .bodyMass),
            (.average(.arithmetic), .bodyMass), (.latest, .bodyMass), (.latest, .heartRate),
        ]
        for zone in zones {
            for (from, to) in ranges {
                for granularity in [nil, BucketGranularity.hour, .day, .week, .month] {
                    for (operation, type) in operations {
                        list.append(Query(operation: operation, type: type, from: from, to: to, granularity: granularity, zone: zone))
                    }
                }
            }
        }
        return list
    }

    static func same(_ a: [StatisticsBucket], _ b: [StatisticsBucket]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            guard x.start == y.start, x.end == y.end, x.sampleCount == y.sampleCount else { return false }
            switch (x.value, y.value) {
            case (nil, nil): break
            case (let p?, let q?): guard abs(p - q) <= 1e-9 * max(1, abs(p), abs(q)) else { return false }
            default: return false
            }
            return x.latestInterval == y.latestInterval
        }
    }

    @Test func bothStoresGiveTheSameStatistics() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let directoryA = try TemporaryDirectory("parity-a")
        let directoryB = try TemporaryDirectory("parity-b")
        let gatewayA = try StoreFixture(directory: directoryA)
        let gatewayB = try StoreFixture(directory: directoryB)
        try Self.fillOverlapping(gatewayA)
        try Self.fillSingleSource(gatewayB)
        for (fixture, gateway) in [(gatewayA, "ward-a"), (gatewayB, "ward-b")] {
            var options = PostgresSinkOptions()
            options.gatewayID = gateway
            options.batchSize = 97
            let sink = try fixture.addSink("fleet", url: server.url(), types: nil, options: options)
            #expect(try fixture.deliver(sink) == .caughtUp(delivered: try fixture.withStore { try $0.backlogCount(after: 0, types: ["*"]) },
                                                           deadLettered: 0))
        }
        let fleet = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { fleet.close() }
        let local = [try HealthStore(path: gatewayA.path), try HealthStore(path: gatewayB.path)]
        defer { local.forEach { $0.close() } }
        var compared = 0
        var failures: [String] = []
        for query in Self.queries {
            var parts: [[StatisticsBucket]] = []
            for (store, gateway) in zip(local, ["ward-a", "ward-b"]) {
                let expected = try store.statistics(query.operation, type: query.type, from: query.from, to: query.to,
                                                    granularity: query.granularity, zone: query.zone, scope: QueryScope(people: .named("me")))
                let actual = try fleet.statistics(query.operation, type: query.type, from: query.from, to: query.to,
                                                  granularity: query.granularity, zone: query.zone,
                                                  scope: QueryScope(people: .named("me"), gateway: gateway))
                if !Self.same(expected, actual) { failures.append("\(gateway) \(query): sqlite \(expected) postgres \(actual)") }
                parts.append(expected)
                compared += 1
            }
            // Across gateways (ranges given: both gateways bucket the same range).
            if query.from != nil, query.to != nil, query.operation == .sum || query.operation == .minimum || query.operation == .maximum {
                let across = try fleet.statistics(query.operation, type: query.type, from: query.from, to: query.to,
                                                  granularity: query.granularity, zone: query.zone, scope: QueryScope())
                let combined = StatisticsCombination.combine(query.operation, parts)
                if !Self.same(combined, across) { failures.append("fleet \(query): sqlite \(combined) postgres \(across)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(compared) differ; first: \(failures.prefix(3).joined(separator: "\n"))")
        #expect(compared == Self.queries.count * 2)
        // The sums really had data, and ward-a's steps really overlap (the priority merge mattered).
        let total = try fleet.statistics(.sum, type: .stepCount, from: nil, to: nil, granularity: nil, zone: Self.berlin,
                                         scope: QueryScope(people: .named("me"), gateway: "ward-a"))
        let naive = try local[0].samples(type: .stepCount, from: nil, to: nil, source: nil, scope: QueryScope(people: .named("me")), limit: 0)
            .reduce(0) { $0 + $1.quantity.value }
        #expect((total.first?.value ?? 0) > 0 && (total.first?.value ?? 0) < naive)
    }

    @Test func theStatsCommandAnswersAcrossGatewaysAndNarrowsToOne() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let directoryA = try TemporaryDirectory("cli-a")
        let directoryB = try TemporaryDirectory("cli-b")
        let stores = [try StoreFixture(directory: directoryA), try StoreFixture(directory: directoryB)]
        let start = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28T20:26:40Z
        try stores[0].addSteps(100, start: start, value: 10)
        try stores[1].addSteps(50, start: start, value: 20)
        for (store, gateway) in zip(stores, ["ward-a", "ward-b"]) {
            let add = try IngestdBinary.run(["sinks", "add", "fleet", server.url(), "--all-types", "--gateway-id", gateway,
                                             "--store", store.path])
            #expect(add.status == 0, "\(add.stderr)")
            #expect(try IngestdBinary.run(["sinks", "deliver", "--store", store.path]).status == 0)
        }
        let local = try stores.map { store in
            try IngestdBinary.run(["stats", "stepCount", "--sum", "--from", "2026-05-28", "--to", "2026-05-30", "--tz", "UTC",
                                   "--json", "--store", store.path]).stdout
        }
        let across = try IngestdBinary.run(["stats", "stepCount", "--sum", "--from", "2026-05-28", "--to", "2026-05-30", "--tz", "UTC",
                                            "--json", "--store", server.url()])
        #expect(across.status == 0, "\(across.stderr)")
        func value(_ line: String) -> Double? {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["value"] as? Double
        }
        let totals = local.map { value($0.split(separator: "\n").first.map(String.init) ?? "") ?? -1 }
        #expect(value(across.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == totals[0] + totals[1])
        let narrowed = try IngestdBinary.run(["stats", "stepCount", "--sum", "--from", "2026-05-28", "--to", "2026-05-30", "--tz", "UTC",
                                              "--json", "--store", server.url(), "--gateway", "ward-b"])
        #expect(narrowed.stdout == local[1])
        let samples = try IngestdBinary.run(["samples", "stepCount", "--json", "--store", server.url(), "--gateway", "ward-a"])
        #expect(samples.stdout.split(separator: "\n").count == 100)
        let misuse = try IngestdBinary.run(["stats", "stepCount", "--sum", "--gateway", "ward-a", "--store", stores[0].path])
        #expect(misuse.status == 64)
        let noSchema = try IngestdBinary.run(["stats", "stepCount", "--sum", "--store", server.url(), "--schema", "elsewhere"])
        #expect(noSchema.status == 1 && noSchema.stderr.contains("no ingestd schema 'elsewhere'"))
    }
}

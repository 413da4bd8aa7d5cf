import Foundation
import HealthModel
import LocalPostgres
import Pipeline
import PostgresStore
import SQLiteStore
import TestSupport
import Testing

/// The read port's export cursor, changes and watch on a fleet's database, against the same
/// questions asked of the store file whose sink fed it (a real PostgreSQL, a real sink).
@Suite(.serialized, .offCooperativePool) struct FleetReadPortTests {
    /// Every record the export cursor hands over, as JSON lines, in order.
    private func exported(_ store: any QueryStore, types: [QuantityType]? = nil, from: Date? = nil, to: Date? = nil,
                          scope: QueryScope = QueryScope()) throws -> [String] {
        var lines: [String] = []
        let encoder = HealthRecordEncoder()
        try store.forEachRecord(types: types, from: from, to: to, scope: scope) { record in
            switch record {
            case .sample(let sample): lines.append(encoder.encode(sample))
            case .correlation(let correlation): lines += correlation.objects.map { encoder.encode($0) }
            }
        }
        return lines
    }

    /// The uuids `changes` hands over ("+" added, "-" deleted) and the next anchor.
    private func changes(_ store: any QueryStore, since anchor: ChangeAnchor) throws -> (Set<String>, ChangeAnchor) {
        var seen: Set<String> = []
        let next = try store.changes(since: anchor, type: nil, scope: QueryScope(), limit: 0) { entry in
            switch entry {
            case .added(let sample, _): seen.insert("+" + sample.uuid.uuidString)
            case .deleted(let uuid, _, _): seen.insert("-" + uuid.uuidString)
            }
        }
        return (seen, next)
    }

    @Test func exportChangesAndWatchReadTheFleetAsTheyReadTheStoreFile() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let directory = try TemporaryDirectory("fleet-read-port")
        let gateway = try StoreFixture(directory: directory)
        let date = Date(timeIntervalSince1970: 1_780_100_000)
        _ = try gateway.addSteps(6)
        let weightV1 = try gateway.add(.bodyMass, 70.5, at: date, metadata: Metadata(syncIdentifier: "w", syncVersion: 1))
        let sink = try gateway.addSink("fleet", url: server.url(), types: nil, options: FleetChangesTests.options(gateway: "ward-3"))
        #expect(try gateway.deliver(sink) == .caughtUp(delivered: 7, deadLettered: 0))
        let url = server.url()

        let local = try HealthStore(path: gateway.path, readOnly: true)
        defer { local.close() }
        let fleet = try PostgresQueryStore(url: url, schema: try PostgresSchema())
        defer { fleet.close() }

        // The export cursor: the same samples in the same order from both stores, selected alike.
        let all = try exported(local)
        #expect(all.count == 7)
        #expect(try exported(fleet) == all)
        #expect(try exported(fleet, types: [.bodyMass]) == exported(local, types: [.bodyMass]))
        #expect(try exported(fleet, types: [.bodyMass]).count == 1)
        let window = (Date(timeIntervalSince1970: 1_780_000_060), Date(timeIntervalSince1970: 1_780_000_180))
        #expect(try exported(fleet, from: window.0, to: window.1) == exported(local, from: window.0, to: window.1))
        #expect(try exported(fleet, from: window.0, to: window.1).count == 2)
        let person = try #require(try local.queryPeopleNames().first)
        #expect(try exported(fleet, scope: QueryScope(people: .named(person))) == all)
        #expect(try exported(fleet, scope: QueryScope(gateway: "ward-9")).isEmpty)
        #expect(try exported(fleet, types: []).isEmpty)

        // Changes through the port: the same uuids; each store refuses the other's anchor.
        let (localChanges, localAnchor) = try changes(local, since: .beginning)
        let (fleetChanges, fleetAnchor) = try changes(fleet, since: .beginning)
        #expect(fleetChanges == localChanges)
        #expect(localChanges.count == 7)
        #expect(throws: ChangeAnchorError.self) { try fleet.changes(since: localAnchor, type: nil, scope: QueryScope(), limit: 0) { _ in } }
        #expect(throws: ChangeAnchorError.self) { try local.changes(since: fleetAnchor, type: nil, scope: QueryScope(), limit: 0) { _ in } }

        // Watch from now: nothing yet; a new delivery is one event per (gateway, type, source), then nothing.
        let start = try fleet.watchStart(after: nil)
        #expect(try fleet.watchEvents(after: start, scope: QueryScope()).events.isEmpty)
        _ = try gateway.addSteps(3, start: date.addingTimeInterval(86_400))
        let weightV2 = try gateway.add(.bodyMass, 70.7, at: date, metadata: Metadata(syncIdentifier: "w", syncVersion: 2))
        #expect(try gateway.deliver(sink) == .caughtUp(delivered: 5, deadLettered: 0))
        let (events, next) = try fleet.watchEvents(after: start, scope: QueryScope())
        let committed = events.compactMap { event -> String? in
            guard case .committed(let type, let source, let count, _, let gateway) = event else { return nil }
            return "\(gateway ?? "-") \(type) \(source) \(count)"
        }
        #expect(committed.sorted() == ["ward-3 HKQuantityTypeIdentifierBodyMass phone 1", "ward-3 HKQuantityTypeIdentifierStepCount phone 3"])
        #expect(try fleet.watchEvents(after: next, scope: QueryScope()).events.isEmpty)
        #expect(try fleet.watchEvents(after: start, scope: QueryScope(gateway: "ward-9")).events.isEmpty)
        // The replaced weight is a deletion in changes, not a commit in watch.
        let (after, _) = try changes(fleet, since: fleetAnchor)
        #expect(after.contains("-" + weightV1.uuidString) && after.contains("+" + weightV2.uuidString))

        // The commands: export and watch accept the fleet's URL and answer as for the file.
        let fromFleet = try IngestdProcess.runBlocking(["export", "--format", "jsonl", "--store", url])
        #expect(fromFleet.status == 0, "\(fromFleet.stderr)")
        let fromFile = try IngestdProcess.runBlocking(["export", "--format", "jsonl", "--store", gateway.path])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFleet.lines == fromFile.lines)
        #expect(fromFleet.lines.count == 10)
        let csv = try IngestdProcess.runBlocking(["export", "--format", "csv", "--types", "bodyMass", "--store", url, "--gateway", "ward-3"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let fileCSV = try IngestdProcess.runBlocking(["export", "--format", "csv", "--types", "bodyMass", "--store", gateway.path])
        #expect(csv.lines == fileCSV.lines)
        #expect(csv.lines.count == 1)
        #expect(csv.stdout.contains("70.7"))

        let watched = try IngestdProcess.runBlocking(["watch", "--since", "0", "--count", "2", "--store", url])
        #expect(watched.status == 0, "\(watched.stderr)")
        let objects = try watched.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.count == 2)
        #expect(objects.allSatisfy { $0["gateway"] as? String == "ward-3" && $0["source"] as? String == "phone" })
        #expect(Set(objects.compactMap { $0["type"] as? String })
                == ["HKQuantityTypeIdentifierStepCount", "HKQuantityTypeIdentifierBodyMass"])
        let number = try IngestdProcess.runBlocking(["watch", "--since", "12", "--count", "1", "--store", url])
        #expect(number.status == 64)
        #expect(number.stderr.contains("--since"))
    }

    /// `forEachSample` hands over what `samples` returns, in the same order, from both stores:
    /// on the fleet's database across many small keyset pages, with samples of equal start
    /// and end from two sources and two gateways (the order's ties), and with limits that end
    /// inside a page.
    @Test func streamedSamplesAreTheSamplesInTheirOrderAcrossPages() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        var locals: [StoreFixture] = []
        let directories = try (0..<2).map { try TemporaryDirectory("fleet-stream-\($0)") }
        for (index, name) in ["ward-1", "ward-2"].enumerated() {
            let gateway = try StoreFixture(directory: directories[index])
            _ = try gateway.addSteps(40, start: start)
            // The same minutes from a second source: equal start and end, other rows.
            _ = try gateway.withStore { try $0.grant(source: "watch", types: [.stepCount]) }
            try gateway.ingest((0..<15).map { minute in
                .sample(QuantitySample(type: .stepCount, quantity: Quantity(value: 7, unit: QuantityType.stepCount.canonicalUnit),
                                       start: start.addingTimeInterval(Double(minute) * 60),
                                       end: start.addingTimeInterval(Double(minute) * 60 + 30), source: "watch"))
            })
            let sink = try gateway.addSink("fleet", url: server.url(), types: nil, options: FleetChangesTests.options(gateway: name))
            #expect(try gateway.deliver(sink) == .caughtUp(delivered: 55, deadLettered: 0))
            locals.append(gateway)
        }
        let fleet = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { fleet.close() }
        fleet.samplePageSize = 7
        let encoder = HealthRecordEncoder()
        func streamed(_ store: any QueryStore, from: Date? = nil, source: String? = nil, scope: QueryScope = QueryScope(),
                      limit: Int = 0) throws -> [String] {
            var lines: [String] = []
            try store.forEachSample(type: .stepCount, from: from, to: nil, source: source, scope: scope, limit: limit) {
                lines.append(encoder.encode($0))
            }
            return lines
        }
        func listed(_ store: any QueryStore, from: Date? = nil, source: String? = nil, scope: QueryScope = QueryScope(),
                    limit: Int = 0) throws -> [String] {
            try store.samples(type: .stepCount, from: from, to: nil, source: source, scope: scope, limit: limit).map { encoder.encode($0) }
        }
        let all = try streamed(fleet)
        #expect(all.count == 110)
        #expect(all == (try listed(fleet)))
        #expect(Set(all).count == 110)
        for limit in [1, 7, 10, 23, 110, 500] {
            #expect(try streamed(fleet, limit: limit) == Array(all.prefix(limit)), "limit \(limit)")
        }
        let later = start.addingTimeInterval(600)
        #expect(try streamed(fleet, from: later) == listed(fleet, from: later))
        #expect(try streamed(fleet, source: "watch") == listed(fleet, source: "watch"))
        #expect(try streamed(fleet, source: "watch").count == 30)
        #expect(try streamed(fleet, scope: QueryScope(gateway: "ward-2")).count == 55)

        // The store file: the same as its own list, which is the gateway's part of the fleet's.
        let local = try HealthStore(path: locals[0].path, readOnly: true)
        defer { local.close() }
        let mine = try streamed(local)
        let localList = try listed(local)
        #expect(mine.count == 55 && mine == localList)
        #expect(try streamed(local, limit: 9) == Array(mine.prefix(9)))
        #expect(try streamed(local, from: later) == listed(local, from: later))
        #expect(try streamed(fleet, scope: QueryScope(gateway: "ward-1")) == mine)
    }
}

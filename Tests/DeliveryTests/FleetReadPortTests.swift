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
}

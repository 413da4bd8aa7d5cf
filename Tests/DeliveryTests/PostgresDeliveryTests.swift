import Delivery
import Foundation
import HealthModel
import LocalPostgres
import PostgresStore
import TestSupport
import Testing

/// The `postgresql://` sink against a real PostgreSQL server started for each test.
@Suite(.serialized, .offCooperativePool) struct PostgresDeliveryTests {
    /// The server, or nil (and the test is skipped with the reason) when the binaries are absent.
    static func server() throws -> LocalPostgres? {
        guard LocalPostgres.binaryDirectory() != nil else {
            print("skipped: PostgreSQL server binaries are not installed (run scripts/bootstrap-tests)")
            return nil
        }
        return try LocalPostgres()
    }

    private func options(gateway: String, batchSize: Int, schema: String? = nil) -> PostgresSinkOptions {
        var options = PostgresSinkOptions()
        options.gatewayID = gateway
        options.batchSize = batchSize
        options.schema = schema
        options.timeoutSeconds = 5
        return options
    }

    @Test func twoGatewaysDeliverConcurrentlyIntoOneDatabase() throws {
        guard let server = try Self.server() else { return }
        defer { server.shutDown() }
        var directories: [TemporaryDirectory] = []
        var stores: [StoreFixture] = []
        var expected: [String: Set<String>] = [:]
        for gateway in ["room-1", "room-2"] {
            let directory = try TemporaryDirectory("pg-\(gateway)")
            let fixture = try StoreFixture(directory: directory)
            let uuids = try fixture.addSteps(3000)
            let date = Date(timeIntervalSince1970: 1_780_100_000)
            let replaced = try fixture.add(.bodyMass, 70, at: date, metadata: Metadata(syncIdentifier: "w-\(gateway)", syncVersion: 1))
            let weight = try fixture.add(.bodyMass, 70.5, at: date, metadata: Metadata(syncIdentifier: "w-\(gateway)", syncVersion: 2))
            expected[gateway] = Set((uuids + [weight]).map { $0.uuidString.lowercased() })
            expected[gateway + "-deleted"] = [replaced.uuidString.lowercased()]
            directories.append(directory)
            stores.append(fixture)
        }
        let configurations = try zip(stores, ["room-1", "room-2"]).map { store, gateway in
            try store.addSink("fleet", url: server.url(), types: nil,
                              options: options(gateway: gateway, batchSize: 250, schema: "fleet"))
        }
        let outcomes = OutcomeBox()
        let gatewayStores = stores
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            outcomes.set(index, Result { try gatewayStores[index].deliver(configurations[index]) })
        }
        for index in 0..<2 {
            let outcome = try #require(try outcomes.get(index)?.get())
            // 3000 steps + 2 weights + 1 tombstone: the replaced weight arrives, then is marked deleted
            // (or only its tombstone comes, when the replacement happened before the sink existed).
            guard case .caughtUp(let delivered, 0) = outcome else { Issue.record("gateway \(index): \(outcome)"); continue }
            #expect(delivered >= 3002)
        }
        #expect(try server.psql("SELECT max(version) FROM fleet.schema_version") == String(PostgresSchema.latestVersion))
        #expect(try server.psql("SELECT count(*) = count(DISTINCT uuid) FROM fleet.samples") == "t")
        for gateway in ["room-1", "room-2"] {
            let live = try server.psql("SELECT uuid FROM fleet.samples WHERE gateway = '\(gateway)' AND deleted_at IS NULL")
            #expect(Set(live.split(separator: "\n").map(String.init)) == expected[gateway])
            let deleted = try server.psql("SELECT uuid FROM fleet.samples WHERE gateway = '\(gateway)' AND deleted_at IS NOT NULL")
            #expect(deleted.isEmpty || Set(deleted.split(separator: "\n").map(String.init)) == expected[gateway + "-deleted"])
            // Every sample has the person it had on its gateway (a new store's first person).
            #expect(try server.psql("SELECT DISTINCT person FROM fleet.samples WHERE gateway = '\(gateway)'") == "me")
        }
        #expect(try server.psql("SELECT string_agg(id, ',' ORDER BY id) FROM fleet.gateways") == "room-1,room-2")
        _ = directories
        // The record is DESIGN.md's sample JSON, queryable in the database.
        #expect(try server.psql("SELECT DISTINCT record->>'type' FROM fleet.samples WHERE type = 'HKQuantityTypeIdentifierBodyMass'")
                == "HKQuantityTypeIdentifierBodyMass")
        // Delivering again sends nothing and changes nothing.
        let lastWrite = try server.psql("SELECT max(written_at) FROM fleet.samples")
        #expect(try stores[0].deliver(configurations[0]) == .caughtUp(delivered: 0, deadLettered: 0))
        #expect(try server.psql("SELECT max(written_at) FROM fleet.samples") == lastWrite)
    }

    @Test func aReSentBatchOverwritesItselfAndATombstoneThenReAddKeepsTheRow() throws {
        guard let server = try Self.server() else { return }
        defer { server.shutDown() }
        let connection = try PostgresConnection(url: server.url())
        let writer = try PostgresSampleWriter(connection: connection, schema: try PostgresSchema(), gateway: "g1")
        let sample = QuantitySample(type: .bodyMass, quantity: Quantity(value: 61.2, unit: QuantityType.bodyMass.canonicalUnit),
                                    start: Date(timeIntervalSince1970: 1_780_000_000), end: Date(timeIntervalSince1970: 1_780_000_000),
                                    source: "scale\twith tab \\ and backslash")
        let record = HealthRecordEncoder().encode(sample)
        #expect(try writer.write([.upsert(sample, record: record, person: nil, anchor: 1)]) == 1)
        // The same batch again (a crash before the cursor moved): no second row, nothing rewritten.
        #expect(try writer.write([.upsert(sample, record: record, person: nil, anchor: 1)]) == 0)
        // Moved to a person: delete then add in one batch leaves the row present with the person.
        #expect(try writer.write([.delete(uuid: sample.uuid, anchor: 2), .upsert(sample, record: record, person: "alice", anchor: 3)]) == 1)
        #expect(try server.psql("SELECT person, deleted_at IS NULL, source, value FROM ingestd.samples")
                == "alice|t|scale\twith tab \\ and backslash|61.2")
        #expect(try writer.write([.delete(uuid: sample.uuid, anchor: 4)]) == 1)
        #expect(try server.psql("SELECT count(*), bool_and(deleted_at IS NOT NULL) FROM ingestd.samples") == "1|t")
        // A second writer (another gateway) meets the migrated schema and leaves it at its version.
        let other = try PostgresSampleWriter(connection: try PostgresConnection(url: server.tcpURL()), schema: try PostgresSchema(), gateway: "g2")
        #expect(try PostgresSchema().currentVersion(other.connection) == PostgresSchema.latestVersion)
        #expect(throws: PostgresError.invalidSchemaName("Bad-Name")) { try PostgresSchema(name: "Bad-Name") }
    }

    @Test func theDatabaseDownForAWhileKeepsTheBacklogAndDrainsIt() throws {
        guard let server = try Self.server() else { return }
        defer { server.shutDown() }
        let directory = try TemporaryDirectory("pg-down")
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(2000)
        let configuration = try fixture.addSink("fleet", url: server.url(), types: [.stepCount],
                                                options: options(gateway: "gw", batchSize: 300))
        #expect(try fixture.deliver(configuration) == .caughtUp(delivered: 2000, deadLettered: 0))
        server.stop()
        let more = try fixture.addSteps(1500, start: Date(timeIntervalSince1970: 1_790_000_000))
        let events = EventLog()
        let outcome = try fixture.deliver(configuration, retry: RetryPolicy(maximumAttempts: 3, initialDelay: 0.05), events: events)
        guard case .unreachable(let error) = outcome else { Issue.record("expected unreachable, got \(outcome)"); return }
        #expect(error.description.contains("PostgreSQL"))
        #expect(events.failures.count == 3)
        let state = try fixture.withStore { try $0.sink(named: "fleet") }
        #expect(state.lastError?.contains("PostgreSQL") == true)
        #expect(try fixture.withStore { try $0.backlogCount(after: state.cursor, types: ["HKQuantityTypeIdentifierStepCount"]) } == 1500)

        try server.start()
        #expect(try fixture.deliver(configuration) == .caughtUp(delivered: 1500, deadLettered: 0))
        let stored = try server.psql("SELECT uuid FROM ingestd.samples").split(separator: "\n").map(String.init)
        #expect(stored.count == 3500)
        #expect(Set(stored) == Set((uuids + more).map { $0.uuidString.lowercased() }))
    }

    @Test func killedDeliveryThenDeliverAgainLosesAndDuplicatesNothing() throws {
        guard let server = try Self.server() else { return }
        defer { server.shutDown() }
        let directory = try TemporaryDirectory("pg-kill")
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(40_000)
        let add = try IngestdBinary.run(["sinks", "add", "fleet", server.url(), "--types", "stepCount", "--batch-size", "20",
                                         "--gateway-id", "ward-3", "--schema", "clinic", "--store", fixture.path])
        #expect(add.status == 0, "\(add.stderr)")
        let (first, _, _) = try IngestdBinary.start(["sinks", "deliver", "fleet", "--store", fixture.path])
        #expect(waitFor(60) { (Int((try? server.psql("SELECT count(*) FROM clinic.samples")) ?? "") ?? 0) >= 2000 })
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal)
        let partial = Int(try server.psql("SELECT count(*) FROM clinic.samples")) ?? 0
        #expect(partial > 0 && partial < 40_000)

        let second = try IngestdBinary.run(["sinks", "deliver", "fleet", "--store", fixture.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try server.psql("SELECT count(*), count(DISTINCT uuid), count(DISTINCT gateway) FROM clinic.samples") == "40000|40000|1")
        let stored = try server.psql("SELECT uuid FROM clinic.samples").split(separator: "\n").map(String.init)
        #expect(Set(stored) == Set(uuids.map { $0.uuidString.lowercased() }))
        let list = try IngestdBinary.run(["sinks", "list", "--json", "--store", fixture.path])
        #expect(list.stdout.contains("\"kind\":\"postgresql\""))
    }
}

/// Results written by concurrent workers.
final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Int: Result<BacklogOutcome, any Error>] = [:]
    func set(_ index: Int, _ result: Result<BacklogOutcome, any Error>) { lock.withLock { results[index] = result } }
    func get(_ index: Int) -> Result<BacklogOutcome, any Error>? { lock.withLock { results[index] } }
}

import Delivery
import Foundation
import HealthModel
import LocalPostgres
import Pipeline
import PostgresStore
import TestSupport
import Testing

/// `changes` and `status` on a fleet's database: the composite anchor (a position per gateway),
/// tombstones, paging, and the commands against a real PostgreSQL fed by real sinks.
@Suite(.serialized, .offCooperativePool) struct FleetChangesTests {
    /// A fleet sink's options: its gateway id, small batches, a short timeout.
    static func options(gateway: String) -> PostgresSinkOptions {
        var options = PostgresSinkOptions()
        options.gatewayID = gateway
        options.batchSize = 100
        options.timeoutSeconds = 5
        return options
    }

    /// Every change after `anchor` as "+uuid" / "-uuid" strings, and the new anchor.
    private func read(_ store: PostgresQueryStore, since anchor: FleetAnchor, type: QuantityType? = nil,
                      scope: QueryScope = QueryScope(), limit: Int = 0) throws -> (changes: [String], anchor: FleetAnchor) {
        var changes: [String] = []
        let next = try store.changes(since: anchor, type: type, scope: scope, limit: limit) { change in
            switch change {
            case .added(let sample, _, _): changes.append("+" + sample.uuid.uuidString.lowercased())
            case .deleted(let uuid, _, _, _): changes.append("-" + uuid.uuidString.lowercased())
            }
        }
        return (changes, next)
    }

    @Test func fleetChangesFollowEachGatewaysFeedWithTombstonesAndAnOpaqueAnchor() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let directories = try ["a", "b"].map { try TemporaryDirectory("fleet-changes-\($0)") }
        let gateways = try directories.map { try StoreFixture(directory: $0) }
        let date = Date(timeIntervalSince1970: 1_780_100_000)
        let stepsA = try gateways[0].addSteps(120)
        let stepsB = try gateways[1].addSteps(80, start: date)
        let weightV1 = try gateways[1].add(.bodyMass, 70, at: date, metadata: Metadata(syncIdentifier: "w", syncVersion: 1))
        let sinks = try zip(gateways, ["gw-a", "gw-b"]).map { try $0.addSink("fleet", url: server.url(), types: nil, options: Self.options(gateway: $1)) }
        #expect(try gateways[0].deliver(sinks[0]) == .caughtUp(delivered: 120, deadLettered: 0))
        #expect(try gateways[1].deliver(sinks[1]) == .caughtUp(delivered: 81, deadLettered: 0))

        let store = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { store.close() }
        let first = try read(store, since: FleetAnchor())
        let expectedFirst = (stepsA + stepsB + [weightV1]).map { "+" + $0.uuidString.lowercased() }
        #expect(first.changes.sorted() == expectedFirst.sorted())
        #expect(first.changes.count == Set(first.changes).count)
        // Gateway by gateway, each in its own feed order.
        #expect(Array(first.changes.prefix(120)) == stepsA.map { "+" + $0.uuidString.lowercased() })
        #expect(first.anchor.positions.keys.sorted() == ["gw-a", "gw-b"])
        // The token is opaque and reads back to the same position.
        #expect(first.anchor.token.hasPrefix("f1."))
        #expect(try FleetAnchor(token: first.anchor.token) == first.anchor)
        #expect(try read(store, since: first.anchor).changes.isEmpty)

        // Gateway b replaces its weight (a tombstone and a new sample) and measures more; a stays.
        let weightV2 = try gateways[1].add(.bodyMass, 70.4, at: date, metadata: Metadata(syncIdentifier: "w", syncVersion: 2))
        let moreB = try gateways[1].addSteps(3, start: date.addingTimeInterval(86_400))
        #expect(try gateways[1].deliver(sinks[1]) == .caughtUp(delivered: 5, deadLettered: 0))
        let second = try read(store, since: first.anchor)
        #expect(Set(second.changes) == Set(["-" + weightV1.uuidString.lowercased(), "+" + weightV2.uuidString.lowercased()]
                                            + moreB.map { "+" + $0.uuidString.lowercased() }))
        #expect(second.changes.count == 5)
        #expect(second.anchor.positions["gw-a"] == first.anchor.positions["gw-a"])
        #expect((second.anchor.positions["gw-b"] ?? 0) > (first.anchor.positions["gw-b"] ?? 0))
        // A type narrows what is listed; the position still moves past everything read.
        let weights = try read(store, since: first.anchor, type: .bodyMass)
        #expect(weights.changes.sorted() == ["-" + weightV1.uuidString.lowercased(), "+" + weightV2.uuidString.lowercased()].sorted())
        #expect(try read(store, since: weights.anchor).changes.isEmpty)
        // From the beginning the replaced weight is only a deletion, never re-added.
        let all = try read(store, since: FleetAnchor())
        #expect(all.changes.contains("-" + weightV1.uuidString.lowercased()))
        #expect(!all.changes.contains("+" + weightV1.uuidString.lowercased()))
        // One gateway: its position advances, the others' are kept as given.
        let onlyB = try read(store, since: FleetAnchor(), scope: QueryScope(gateway: "gw-b"))
        #expect(onlyB.changes.count == 80 + 2 + 3)
        #expect(onlyB.anchor.positions.keys.sorted() == ["gw-b"])
        // Paging with a limit hands over every change exactly once, then nothing.
        var paged: [String] = []
        var anchor = FleetAnchor()
        for _ in 0..<100 {
            let page = try read(store, since: anchor, limit: 7)
            if page.changes.isEmpty { break }
            // At most the limit, or one more to finish an anchor (a tombstone and its replacement).
            #expect(page.changes.count <= 8)
            paged += page.changes
            anchor = page.anchor
        }
        #expect(paged.sorted() == all.changes.sorted())
        #expect(anchor == all.anchor)
    }

    @Test func changesAndStatusCommandsReadTheFleetDatabase() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let directory = try TemporaryDirectory("fleet-cli")
        let gateway = try StoreFixture(directory: directory)
        let date = Date(timeIntervalSince1970: 1_780_100_000)
        let steps = try gateway.addSteps(4)
        let weightV1 = try gateway.add(.bodyMass, 70, at: date, metadata: Metadata(syncIdentifier: "w", syncVersion: 1))
        let sink = try gateway.addSink("fleet", url: server.url(), types: nil, options: Self.options(gateway: "ward-3"))
        #expect(try gateway.deliver(sink) == .caughtUp(delivered: 5, deadLettered: 0))

        let url = server.url()
        let first = try IngestdProcess.runBlocking(["changes", "--store", url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.lines.count == 6)
        let tokenLine = try #require(first.lines.last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(tokenLine.utf8)) as? [String: String])
        let token = try #require(object["anchor"])
        #expect(token.hasPrefix("f1."))
        // The lines are the samples' JSON, the same as a store file's `changes` prints.
        let local = try IngestdProcess.runBlocking(["changes", "--store", gateway.path])
        #expect(Set(first.lines.dropLast()) == Set(local.lines.dropLast()))
        #expect(first.lines.contains { $0.lowercased().contains(steps[0].uuidString.lowercased()) })

        _ = try gateway.add(.bodyMass, 70.2, at: date, metadata: Metadata(syncIdentifier: "w", syncVersion: 2))
        #expect(try gateway.deliver(sink) == .caughtUp(delivered: 2, deadLettered: 0))
        let second = try IngestdProcess.runBlocking(["changes", "--store", url, "--since", token, "--gateway", "ward-3"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.lines.count == 3)
        #expect(second.lines.contains("{\"deleted\":\"\(weightV1.uuidString.lowercased())\",\"type\":\"HKQuantityTypeIdentifierBodyMass\"}"))

        let bad = try IngestdProcess.runBlocking(["changes", "--store", url, "--since", "f1.!!!"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("f1.!!!"))
        let number = try IngestdProcess.runBlocking(["changes", "--store", url, "--since", "12"])
        #expect(number.status == 64)

        let status = try IngestdProcess.runBlocking(["status", "--json", "--store", url])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.lines.first == "{\"schema\":\"ingestd\",\"version\":\(PostgresSchema.latestVersion)}")
        let gatewayLine = try #require(status.lines.first { $0.hasPrefix("{\"gateway\":\"ward-3\",\"firstDelivery\"") })
        #expect(gatewayLine.contains("\"samples\":5,\"deleted\":1"))
        #expect(status.lines.contains { $0.contains("\"source\":\"phone\",\"type\":\"HKQuantityTypeIdentifierStepCount\",\"count\":4") })
        let text = try IngestdProcess.runBlocking(["status", "--store", url, "--gateway", "ward-3"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("ward-3"))
        #expect(text.stdout.contains("version \(PostgresSchema.latestVersion)"))
        let nobody = try IngestdProcess.runBlocking(["status", "--store", url, "--gateway", "ward-9"])
        #expect(nobody.stdout.contains("no deliveries from gateway ward-9"))
    }

    @Test func aVersion1DatabaseIsMigratedWithEachGatewaysPosition() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let writer = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()), schema: try PostgresSchema(), gateway: "g1")
        let samples = (0..<3).map { index in
            QuantitySample(type: .stepCount, quantity: Quantity(value: 5, unit: QuantityType.stepCount.canonicalUnit),
                           start: Date(timeIntervalSince1970: 1_780_000_000 + Double(index) * 60),
                           end: Date(timeIntervalSince1970: 1_780_000_030 + Double(index) * 60), source: "phone")
        }
        try writer.write(samples.enumerated().map { .upsert($1, record: HealthRecordEncoder().encode($1), person: nil, anchor: Int64(10 + $0)) })
        writer.connection.close()
        // Back to what version 1 had: no position column, no (gateway, anchor) index, keyed by uuid, no store ids.
        _ = try server.psql("""
            ALTER TABLE ingestd.gateways DROP COLUMN store_id; ALTER TABLE ingestd.samples DROP CONSTRAINT samples_pkey;
            ALTER TABLE ingestd.samples ADD PRIMARY KEY (uuid);
            DROP INDEX ingestd.samples_gateway_anchor; ALTER TABLE ingestd.gateways DROP COLUMN last_anchor;
            ALTER TABLE ingestd.samples DROP COLUMN start_epoch, DROP COLUMN end_epoch;
            DELETE FROM ingestd.schema_version WHERE version > 1
            """)
        // Queries refuse a version-1 schema with what to do rather than failing on a missing column.
        #expect(throws: PostgresError.schemaTooOld(schema: "ingestd", version: 1, needed: PostgresSchema.latestVersion)) {
            try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        }
        let connection = try PostgresConnection(url: server.url())
        #expect(try PostgresSchema().migrate(connection) == 1)
        #expect(try server.psql("SELECT last_anchor FROM ingestd.gateways WHERE id = 'g1'") == "12")
        #expect(try server.psql("SELECT count(*) FROM pg_indexes WHERE indexname = 'samples_gateway_anchor'") == "1")
        // The epoch columns of existing rows are filled from their timestamps.
        #expect(try server.psql("SELECT min(start_epoch), max(end_epoch) FROM ingestd.samples") == "1780000000|1780000150")
        let store = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { store.close() }
        let all = try read(store, since: FleetAnchor())
        #expect(all.changes.count == 3)
        #expect(all.anchor == FleetAnchor(positions: ["g1": 12]))
        #expect(throws: FleetAnchorError.self) { try FleetAnchor(token: "f1." + Data("g1\t-3\n".utf8).base64EncodedString()) }
    }
}

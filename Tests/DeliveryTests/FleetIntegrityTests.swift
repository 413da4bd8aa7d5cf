import Delivery
import Foundation
import HealthModel
import LocalPostgres
import Pipeline
@testable import PostgresStore
import TestSupport
import Testing

/// A fleet's database keeps each gateway's rows its own (issue 23, items 5 and 10) and tells a
/// misconfigured database (its encoding, a refused login) from bad data (item 12), against a real
/// PostgreSQL server.
@Suite(.serialized, .offCooperativePool) struct FleetIntegrityTests {
    private func options(gateway: String, batchSize: Int = 100) -> PostgresSinkOptions {
        var options = PostgresSinkOptions()
        options.gatewayID = gateway
        options.batchSize = batchSize
        options.timeoutSeconds = 5
        return options
    }

    /// `count` gateway stores in temporary directories (kept while the directories live).
    private func gatewayStores(_ label: String, count: Int) throws -> ([TemporaryDirectory], [StoreFixture]) {
        let directories = try (0..<count).map { try TemporaryDirectory("\(label)-\($0)") }
        return (directories, try directories.map { try StoreFixture(directory: $0) })
    }

    private func weighing(_ uuid: UUID, _ value: Double, at seconds: TimeInterval) -> QuantitySample {
        QuantitySample(uuid: uuid, type: .bodyMass, quantity: Quantity(value: value, unit: QuantityType.bodyMass.canonicalUnit),
                       start: Date(timeIntervalSince1970: seconds), end: Date(timeIntervalSince1970: seconds), source: "scale")
    }

    /// A connection to an `ingestd` schema at `version`, made with that version's migrations as
    /// the ingestd of then made it.
    private func oldFleet(_ server: LocalPostgres, version: Int) throws -> PostgresConnection {
        let old = try PostgresConnection(url: server.url())
        try old.execute("CREATE SCHEMA ingestd")
        try old.execute("CREATE TABLE ingestd.schema_version (version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        for (index, sql) in PostgresSchema.migrations.prefix(version).enumerated() {
            for statement in sql.replacingOccurrences(of: "{s}", with: "\"ingestd\"").split(separator: ";")
                where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try old.execute(String(statement))
            }
            try old.execute("INSERT INTO ingestd.schema_version (version) VALUES ($1)", [String(index + 1)])
        }
        return old
    }

    private func upsert(_ sample: QuantitySample, anchor: Int64) -> PostgresChange {
        .upsert(sample, record: HealthRecordEncoder().encode(sample), person: "me", anchor: anchor)
    }

    /// Item 5: two gateways' samples with one uuid (JSON lines and plugins may bring their own) are
    /// two rows; the second no longer replaces the first's, on the direct COPY path and the staging
    /// path, and a tombstone of one gateway leaves the other's row alone.
    @Test(arguments: [true, false]) func twoGatewaysSamplesWithOneUUIDKeepTheirOwnRows(direct: Bool) throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let uuid = UUID()
        let writers = try ["gw-a", "gw-b"].map { gateway in
            let writer = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()), schema: try PostgresSchema(),
                                                  gateway: gateway)
            writer.copiesNewSamplesDirectly = direct
            return writer
        }
        #expect(try writers[0].write([upsert(weighing(uuid, 61.5, at: 1_780_000_000), anchor: 1)]) == 1)
        #expect(try writers[1].write([upsert(weighing(uuid, 93.25, at: 1_780_003_600), anchor: 7)]) == 1)
        #expect(try server.psql("SELECT gateway, value, date_part('epoch', start_time) FROM ingestd.samples ORDER BY gateway")
                == "gw-a|61.5|1780000000\ngw-b|93.25|1780003600")
        // The queries see both, each with its gateway.
        let store = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { store.close() }
        #expect(try store.samples(type: .bodyMass, from: nil, to: nil, source: nil, scope: QueryScope(), limit: 0).map(\.quantity.value)
                == [61.5, 93.25])
        #expect(try store.samples(type: .bodyMass, from: nil, to: nil, source: nil, scope: QueryScope(gateway: "gw-b"), limit: 0)
            .map(\.quantity.value) == [93.25])
        #expect(try store.statistics(.maximum, type: .bodyMass, from: nil, to: nil, granularity: nil, zone: TimeZone(identifier: "UTC") ?? .current, scope: QueryScope())
            .first?.value == 93.25)
        var changes: [String] = []
        try store.changes(since: FleetAnchor(), type: nil, scope: QueryScope()) { change in
            if case .added(let sample, let gateway, _) = change { changes.append("\(gateway)=\(sample.quantity.value)") }
        }
        #expect(changes == ["gw-a=61.5", "gw-b=93.25"])
        #expect(try store.status(scope: QueryScope(), rejectionsSince: Date()).gateways.map(\.liveSamples) == [1, 1])
        // gw-a deletes its sample: gw-b's row is untouched.
        #expect(try writers[0].write([.delete(uuid: uuid, anchor: 2)]) == 1)
        #expect(try server.psql("SELECT gateway, deleted_at IS NULL FROM ingestd.samples ORDER BY gateway") == "gw-a|f\ngw-b|t")
        // Re-sent (a crash before the cursor moved): no new row, nothing rewritten.
        #expect(try writers[1].write([upsert(weighing(uuid, 93.25, at: 1_780_003_600), anchor: 7)]) == 0)
        #expect(try server.psql("SELECT count(*) FROM ingestd.samples") == "2")
    }

    /// Item 5, existing fleets: a version-2 schema (keyed by uuid) is migrated to the (gateway, uuid)
    /// key with its rows kept, and a second gateway's sample with a stored uuid then gets its own row.
    @Test func aVersion2FleetIsMigratedToTheGatewayAndUUIDKey() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        // A version-2 database as ingestd made it before.
        let old = try oldFleet(server, version: 2)
        let uuid = UUID()
        let record = HealthRecordEncoder().encode(weighing(uuid, 61.5, at: 1_780_000_000))
        try old.execute("""
            INSERT INTO ingestd.samples (uuid, gateway, person, type, value, unit, start_time, end_time, source, record, anchor,
                                         start_epoch, end_epoch)
            VALUES ($1, 'gw-a', 'me', 'HKQuantityTypeIdentifierBodyMass', 61.5, 'kg', to_timestamp(1780000000), to_timestamp(1780000000),
                    'scale', $2::jsonb, 1, 1780000000, 1780000000)
            """, [uuid.uuidString, record])
        try old.execute("INSERT INTO ingestd.gateways (id, last_anchor) VALUES ('gw-a', 1)")
        old.close()

        // The next gateway to deliver migrates it; gw-a's row stays and gw-b's sample is a row of its own.
        let writer = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()), schema: try PostgresSchema(),
                                              gateway: "gw-b")
        #expect(try PostgresSchema().currentVersion(writer.connection) == PostgresSchema.latestVersion)
        #expect(try server.psql("""
            SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM pg_index i
            CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indrelid = 'ingestd.samples'::regclass AND i.indisprimary
            """) == "gateway,uuid")
        #expect(try writer.write([upsert(weighing(uuid, 93.25, at: 1_780_003_600), anchor: 3)]) == 1)
        #expect(try server.psql("SELECT gateway, value FROM ingestd.samples ORDER BY gateway") == "gw-a|61.5\ngw-b|93.25")
        let store = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { store.close() }
        #expect(try store.samples(type: .bodyMass, from: nil, to: nil, source: nil, scope: QueryScope(), limit: 0).count == 2)
    }

    /// Version 4 (issue 29): a version-3 fleet's heart and respiratory rates, in count/s as gateways
    /// wrote them, become count/min in the value column and the record, exact (62 bpm had been
    /// 1.0333333333333334 count/s); other types are untouched; the fleet's queries read them per minute.
    @Test func aVersion3FleetsRatesBecomePerMinute() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let old = try oldFleet(server, version: 3)
        let perSecond = HealthModel.Unit.countPerSecond
        let rows: [(QuantityType, Double, HealthModel.Unit, TimeInterval)] = [
            (.heartRate, try HealthModel.Unit.countPerMinute.convert(62, to: perSecond), perSecond, 1_780_000_000),
            (.respiratoryRate, 0.25, perSecond, 1_780_000_060),
            (.bodyMass, 61.5, QuantityType.bodyMass.canonicalUnit, 1_780_000_120),
        ]
        for (index, row) in rows.enumerated() {
            let sample = QuantitySample(type: row.0, quantity: Quantity(value: row.1, unit: row.2), start: Date(timeIntervalSince1970: row.3),
                                        end: Date(timeIntervalSince1970: row.3), source: "band")
            try old.execute("""
                INSERT INTO ingestd.samples (uuid, gateway, person, type, value, unit, start_time, end_time, source, record, anchor,
                                             start_epoch, end_epoch)
                VALUES ($1, 'gw-a', 'me', $2, $3, $4, to_timestamp($5), to_timestamp($5), 'band', $6::jsonb, $7, $5, $5)
                """, [sample.uuid.uuidString, row.0.identifier, String(row.1), row.2.description, String(row.3),
                      HealthRecordEncoder().encode(sample), String(index + 1)])
        }
        try old.execute("INSERT INTO ingestd.gateways (id, last_anchor, store_id) VALUES ('gw-a', 3, 'x')")
        old.close()

        let writer = try PostgresSampleWriter(connection: try PostgresConnection(url: server.url()), schema: try PostgresSchema(),
                                              gateway: "gw-b")
        #expect(try PostgresSchema().currentVersion(writer.connection) == 4)
        #expect(try server.psql("""
            SELECT type, value, unit, record->>'value', record->>'unit' FROM ingestd.samples ORDER BY start_time
            """) == """
            HKQuantityTypeIdentifierHeartRate|62|count/min|62|count/min
            HKQuantityTypeIdentifierRespiratoryRate|15|count/min|15|count/min
            HKQuantityTypeIdentifierBodyMass|61.5|kg|61.5|kg
            """)
        let store = try PostgresQueryStore(url: server.url(), schema: try PostgresSchema())
        defer { store.close() }
        let rates = try store.samples(type: .heartRate, from: nil, to: nil, source: nil, scope: QueryScope(), limit: 0)
        #expect(rates.map(\.quantity.value) == [62] && rates.map(\.quantity.unit) == [.countPerMinute])
    }

    /// Item 10: a second store delivering under a gateway id another store already uses (every
    /// Raspberry Pi is `raspberrypi`) is refused with the command to pick another id, retried and
    /// never dead-lettered; its samples stay queued and go out under its own id. Two sinks of one
    /// store under one id are one gateway.
    @Test func aSecondStoreUnderATakenGatewayIDIsRefusedWithTheCommandToPickAnother() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let (directories, stores) = try gatewayStores("fleet-id", count: 2)
        defer { _ = directories }
        try stores[0].addSteps(30)
        try stores[1].addSteps(20, start: Date(timeIntervalSince1970: 1_780_500_000))
        let first = try stores[0].addSink("fleet", url: server.url(), types: [.stepCount], options: options(gateway: "raspberrypi"))
        #expect(try stores[0].deliver(first) == .caughtUp(delivered: 30, deadLettered: 0))
        // The same store's second sink under that id is the same gateway.
        try stores[0].add(.bodyMass, 70, at: Date(timeIntervalSince1970: 1_780_000_000))
        let weights = try stores[0].addSink("weights", url: server.url(), types: [.bodyMass], options: options(gateway: "raspberrypi"))
        #expect(try stores[0].deliver(weights) == .caughtUp(delivered: 1, deadLettered: 0))

        let second = try stores[1].addSink("fleet", url: server.url(), types: [.stepCount], options: options(gateway: "raspberrypi"))
        let outcome = try stores[1].deliver(second, retry: RetryPolicy(maximumAttempts: 2, initialDelay: 0.05))
        guard case .unreachable(let error) = outcome else {
            Issue.record("expected a configuration error, got \(outcome)")
            return
        }
        #expect(error.description.contains("configuration error"))
        #expect(error.description.contains("'raspberrypi' is already used"))
        #expect(error.description.contains("ingestd sinks remove fleet") && error.description.contains("--gateway-id"))
        let state = try stores[1].withStore { try $0.sink(named: "fleet") }
        #expect(state.deadLetters == 0 && state.cursor == 0)
        #expect(state.lastError?.contains("--gateway-id") == true)
        #expect(try server.psql("SELECT gateway, count(*) FROM ingestd.samples GROUP BY 1") == "raspberrypi|31")
        // With its own id the second store's samples go out.
        try stores[1].withStore { try $0.removeSink(named: "fleet") }
        let renamed = try stores[1].addSink("fleet", url: server.url(), types: [.stepCount], options: options(gateway: "raspberrypi-2"))
        #expect(try stores[1].deliver(renamed) == .caughtUp(delivered: 20, deadLettered: 0))
        #expect(try server.psql("SELECT gateway, count(*) FROM ingestd.samples GROUP BY 1 ORDER BY 1") == "raspberrypi|31\nraspberrypi-2|20")
        // A gateway row from before store ids (schema version 2) is claimed by the first store that
        // delivers under it; another store is then refused.
        try server.psql("INSERT INTO ingestd.gateways (id) VALUES ('ward-3')")
        let third = try TemporaryDirectory("fleet-id-third")
        let claiming = try StoreFixture(directory: third)
        try claiming.addSteps(3, start: Date(timeIntervalSince1970: 1_780_900_000))
        #expect(try claiming.deliver(claiming.addSink("fleet", url: server.url(), types: [.stepCount], options: options(gateway: "ward-3")))
                == .caughtUp(delivered: 3, deadLettered: 0))
        // The store's identity: 128 random bits in hex, the same for each of its sinks.
        #expect(try server.psql("SELECT store_id ~ '^[0-9a-f]{32}$' FROM ingestd.gateways WHERE id = 'ward-3'") == "t")
        #expect(try server.psql("SELECT count(DISTINCT store_id) FROM ingestd.gateways WHERE id LIKE 'raspberrypi%'") == "2")
        let late = try stores[0].addSink("ward", url: server.url(), types: [.stepCount], options: options(gateway: "ward-3"))
        guard case .unreachable = try stores[0].deliver(late, retry: RetryPolicy(maximumAttempts: 1, initialDelay: 0.05)) else {
            Issue.record("a second store under the claimed id ward-3 was accepted")
            return
        }
    }

    /// Item 12: in a LATIN1 database one character it cannot hold (U+2019 in a source name) is a
    /// configuration error: reported, retried, `sinks deliver` exits non-zero, nothing dead-lettered.
    @Test func aLatin1DatabaseIsAConfigurationErrorThatDeadLettersNothing() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        try server.psql("CREATE DATABASE fleet_latin1 ENCODING 'LATIN1' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'")
        #expect(try server.psql("SHOW server_encoding", database: "fleet_latin1") == "LATIN1")
        let directory = try TemporaryDirectory("fleet-latin1")
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(5000)
        let watch = "Jana\u{2019}s Watch"
        try fixture.withStore { try $0.grant(source: watch, types: [], all: true) }
        try fixture.ingest((0..<4).map { index in
            .sample(QuantitySample(type: .bodyMass, quantity: Quantity(value: 60 + Double(index), unit: QuantityType.bodyMass.canonicalUnit),
                                   start: Date(timeIntervalSince1970: 1_780_000_000 + Double(index) * 60),
                                   end: Date(timeIntervalSince1970: 1_780_000_000 + Double(index) * 60), source: watch))
        })
        let sink = try fixture.addSink("fleet", url: server.url(database: "fleet_latin1"), types: nil,
                                       options: options(gateway: "gw", batchSize: 10_000))
        let outcome = try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 2, initialDelay: 0.05))
        guard case .unreachable(let error) = outcome else {
            Issue.record("expected a configuration error, got \(outcome)")
            return
        }
        #expect(error.description.contains("configuration error") && error.description.contains("22P05"))
        #expect(error.description.contains("UTF8 database"))
        let state = try fixture.withStore { try $0.sink(named: "fleet") }
        #expect(state.deadLetters == 0 && state.cursor == 0)
        #expect(try server.psql("SELECT count(*) FROM ingestd.samples", database: "fleet_latin1") == "0")
        // The command line reports it and exits non-zero (69: the sink could not deliver), not "caught up".
        let deliver = try IngestdBinary.run(["sinks", "deliver", "fleet", "--retries", "1", "--store", fixture.path])
        #expect(deliver.status == 69, "\(deliver.stderr)")
        #expect(deliver.stderr.contains("configuration error") && !deliver.stderr.contains("caught up"))
        #expect(try fixture.withStore { try $0.sink(named: "fleet") }.deadLetters == 0)
    }

    /// Authentication: a refused login (a wrong password, an unknown role) is a configuration
    /// error, retried and reported, never a dead letter, and the password is not printed.
    @Test func aRefusedLoginIsAConfigurationErrorNeverADeadLetter() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        try server.psql("CREATE ROLE fleet LOGIN PASSWORD 'right-horse-battery'; GRANT CREATE ON DATABASE postgres TO fleet")
        try "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
            .write(toFile: server.directory + "/data/pg_hba.conf", atomically: false, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()")
        Thread.sleep(forTimeInterval: 0.5)
        let directory = try TemporaryDirectory("fleet-login")
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(10)
        for (name, user) in [("wrong", "fleet:wrong-staple"), ("nobody", "nobody:x")] {
            let sink = try fixture.addSink(name, url: "postgresql://\(user)@127.0.0.1:\(server.port)/postgres", types: nil,
                                           options: options(gateway: "gw"))
            let outcome = try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 2, initialDelay: 0.05))
            guard case .unreachable(let error) = outcome else {
                Issue.record("\(name): expected a configuration error, got \(outcome)")
                continue
            }
            #expect(error.description.contains("configuration error") && error.description.contains("refused the login"))
            #expect(!error.description.contains("wrong-staple"))
            let state = try fixture.withStore { try $0.sink(named: name) }
            #expect(state.deadLetters == 0 && state.cursor == 0)
        }
        let right = try fixture.addSink("right", url: "postgresql://fleet:right-horse-battery@127.0.0.1:\(server.port)/postgres",
                                        types: nil, options: options(gateway: "gw"))
        #expect(try fixture.deliver(right) == .caughtUp(delivered: 10, deadLettered: 0))
    }

    /// PostgreSQL's NOTICEs ("schema … already exists, skipping") never reach stderr.
    @Test func theServersNoticesAreNotPrinted() throws {
        guard let server = try PostgresDeliveryTests.server() else { return }
        defer { server.shutDown() }
        let (directories, stores) = try gatewayStores("fleet-notice", count: 2)
        defer { _ = directories }
        try stores[0].addSteps(5)
        #expect(try stores[0].deliver(stores[0].addSink("fleet", url: server.url(), types: nil, options: options(gateway: "gw-a")))
                == .caughtUp(delivered: 5, deadLettered: 0))
        // The second gateway meets an existing schema: the server sends NOTICEs on its statements.
        try stores[1].addSteps(5)
        _ = try stores[1].addSink("fleet", url: server.url(), types: nil, options: options(gateway: "gw-b"))
        let deliver = try IngestdBinary.run(["sinks", "deliver", "fleet", "--store", stores[1].path])
        #expect(deliver.status == 0, "\(deliver.stderr)")
        #expect(!deliver.stderr.contains("NOTICE"), "\(deliver.stderr)")
        #expect(try server.psql("SELECT count(*) FROM ingestd.samples WHERE gateway = 'gw-b'") == "5")
    }
}

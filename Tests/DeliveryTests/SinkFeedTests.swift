import Delivery
import Foundation
import HealthModel
import Testing

/// The feed as sinks read it, configuration parsing and secrets; no receivers.
@Suite(.offCooperativePool) struct SinkFeedTests {
    @Test func batchesNeverSplitAnAnchorAndCarryDeletionsOfGrantedTypesOnly() throws {
        let directory = try TemporaryDirectory("feed")
        let fixture = try StoreFixture(directory: directory)
        let date = Date(timeIntervalSince1970: 1_780_000_000)
        let first = try fixture.add(.bodyMass, 70, at: date, metadata: Metadata(syncIdentifier: "reading-1", syncVersion: 1))
        try fixture.addSteps(3)
        // A higher sync version replaces the weight: a tombstone and the new sample share one anchor.
        let second = try fixture.add(.bodyMass, 70.5, at: date, metadata: Metadata(syncIdentifier: "reading-1", syncVersion: 2))

        try fixture.withStore { store in
            // The replaced sample left the store; its tombstone and its replacement share one
            // anchor, and even a page of one entry carries both (deletion first).
            let page = try store.feedBatch(after: 0, types: [QuantityType.bodyMass.identifier], limit: 1)
            var seen: [String] = []
            for entry in page.entries {
                switch entry {
                case .added(let sample, _): seen.append("+\(sample.uuid == second ? "second" : "?")")
                case .deleted(let uuid, _, _): seen.append("-\(uuid == first ? "first" : "?")")
                }
            }
            #expect(seen == ["-first", "+second"])
            let latest = try store.latestAnchor()
            #expect(page.throughAnchor == latest)
            #expect(try store.feedBatch(after: page.throughAnchor, types: ["*"], limit: 10).entries.isEmpty)
            // Steps only: three samples, paged two at a time on anchor boundaries.
            let steps = try store.feedBatch(after: 0, types: [QuantityType.stepCount.identifier], limit: 2)
            #expect(steps.entries.count == 2)
            let rest = try store.feedBatch(after: steps.throughAnchor, types: [QuantityType.stepCount.identifier], limit: 2)
            #expect(rest.entries.count == 1)
            #expect(try store.backlogCount(after: 0, types: [QuantityType.bodyMass.identifier]) == 2)
            #expect(try store.backlogCount(after: 0, types: ["*"]) == 5)
            #expect(try store.backlogCount(after: 0, types: [QuantityType.heartRate.identifier]) == 0)
            // A stretch with nothing granted moves the cursor past it.
            let none = try store.feedBatch(after: 0, types: [QuantityType.heartRate.identifier], limit: 10)
            #expect(none.entries.isEmpty && none.throughAnchor == latest)
        }
    }

    @Test func urlsAreParsedAndSecretsNeverShown() throws {
        let target = try SinkTarget(url: "mqtts://gateway:hunter2@broker.example:8884")
        #expect(target.kind == .mqtt && target.usesTLS && target.port == 8884 && target.host == "broker.example")
        #expect(target.username == "gateway" && target.password == "hunter2")
        #expect(target.urlWithoutCredentials == "mqtts://broker.example:8884")
        #expect(SinkTarget.redacted("https://u:hunter2@x.example/in") == "https://u:[redacted]@x.example/in")
        #expect(try SinkTarget(url: "mqtt://127.0.0.1").port == 1883)
        #expect(throws: SinkConfigurationError.unsupportedScheme("ftp", reason: "use mqtt://, mqtts://, http://, https://, postgresql://, ws:// or wss://")) {
            try SinkTarget(url: "ftp://x.example")
        }
        let database = try SinkTarget(url: "postgresql://ingestd:hunter2@db.example:5433/health?sslmode=require")
        #expect(database.kind == .postgresql && database.port == 5433 && database.username == "ingestd" && database.password == "hunter2")
        #expect(database.urlWithoutCredentials == "postgresql://ingestd@db.example:5433/health?sslmode=require")
        #expect(SinkTarget.redacted("postgresql://ingestd:hunter2@db.example/health") == "postgresql://ingestd:[redacted]@db.example/health")
        #expect(try SinkTarget(url: "postgresql:///health?host=/run/postgresql").kind == .postgresql)
        #expect(throws: SinkConfigurationError.invalidURL("http://u:[redacted]@:80", reason: "no host")) {
            try SinkTarget(url: "http://u:hunter2@:80")
        }
        #expect(throws: SinkConfigurationError.invalidName("bad name")) { try SinkConfigurationError.validateName("bad name") }
    }

    @Test func secretReferencesResolveFromFilesAndEnvironment() throws {
        let directory = try TemporaryDirectory("secrets")
        try "token-123\n".write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
        let resolver = SecretResolver(environment: ["MQTT_PASSWORD": "from-env"])
        #expect(try resolver.resolve("@" + directory.path("token")) == "token-123")
        #expect(try resolver.resolve("env:MQTT_PASSWORD") == "from-env")
        #expect(try resolver.resolve("literal") == "literal")
        #expect(try resolver.resolveHeader("Authorization: Bearer @\(directory.path("token"))") == "Authorization: Bearer token-123")
        #expect(throws: SinkConfigurationError.secretEnvironmentMissing("NOPE")) { try resolver.resolve("env:NOPE") }
        #expect(throws: SinkConfigurationError.secretFileUnreadable(path: directory.path("missing"), reason: "no such file")) {
            try resolver.resolve("@" + directory.path("missing"))
        }
        let big = String(repeating: "x", count: SecretResolver.maximumFileSize + 1)
        try big.write(toFile: directory.path("big"), atomically: true, encoding: .utf8)
        #expect(throws: SinkConfigurationError.secretFileUnreadable(path: directory.path("big"), reason: "larger than 65536 bytes")) {
            try resolver.resolve("@" + directory.path("big"))
        }
    }

    @Test func backoffDoublesUpToTheCapWithJitter() {
        let policy = RetryPolicy(maximumAttempts: nil, initialDelay: 1, maximumDelay: 60)
        #expect(policy.delay(afterFailures: 1, random: 1) == 1)
        #expect(policy.delay(afterFailures: 4, random: 1) == 8)
        #expect(policy.delay(afterFailures: 4, random: 0.5) == 4)
        #expect(policy.delay(afterFailures: 10, random: 1) == 60)
        #expect(policy.delay(afterFailures: 1_000, random: 1) == 60)
    }

    @Test func samplesBodyCarriesSamplesAndDeletions() throws {
        let date = Date(timeIntervalSince1970: 1_780_000_000)
        let uuid = try #require(UUID(uuidString: "11111111-2222-3333-4444-555555555555"))
        let gone = try #require(UUID(uuidString: "AAAAAAAA-2222-3333-4444-555555555555"))
        let sample = QuantitySample(uuid: uuid, type: .bodyMass, quantity: Quantity(value: 72.35, unit: QuantityType.bodyMass.canonicalUnit),
                                    start: date, end: date, source: "scale")
        let records = [OutgoingRecord(.added(sample, anchor: 7)),
                       OutgoingRecord(.deleted(uuid: gone, type: QuantityType.bodyMass.identifier, anchor: 7))]
        #expect(HTTPBody.samples(records) == """
            {"samples":[{"uuid":"11111111-2222-3333-4444-555555555555","type":"HKQuantityTypeIdentifierBodyMass","value":72.35,\
            "unit":"kg","start":"2026-05-28T20:26:40Z","end":"2026-05-28T20:26:40Z","source":"scale"}],\
            "deleted":[{"uuid":"aaaaaaaa-2222-3333-4444-555555555555","type":"HKQuantityTypeIdentifierBodyMass"}]}
            """)
        #expect(records[1].json == #"{"deleted":"aaaaaaaa-2222-3333-4444-555555555555","type":"HKQuantityTypeIdentifierBodyMass"}"#)
    }
}

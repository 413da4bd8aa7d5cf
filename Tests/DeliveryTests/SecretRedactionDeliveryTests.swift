import Delivery
import Foundation
import Pipeline
import Redaction
import Testing

/// Items 16, 17 and the HTTP half of the authentication item of issue 23: a receiver echoing the
/// request headers (a real Python `http.server` on 127.0.0.1) never gets a secret into an error,
/// a dead letter, the store or a printed line; 401/403 are retried, never dead-lettered.
@Suite(.serialized, .offCooperativePool) struct SecretRedactionDeliveryTests {
    private func options(batchSize: Int, headers: [String] = []) -> HTTPSinkOptions {
        var options = HTTPSinkOptions()
        options.batchSize = batchSize
        options.headers = headers
        return options
    }

    /// Everything ingestd keeps or says about a sink's failures.
    private func everythingSaid(_ fixture: StoreFixture, sink: String, events: EventLog) throws -> [String] {
        let state = try fixture.withStore { try $0.sink(named: sink) }
        let dead = try fixture.withStore { try $0.deadLetters(sink: sink) }
        return events.failures.map(\.description) + [state.lastError ?? ""] + dead.map(\.reason)
            + events.events.compactMap { if case .deadLettered(_, _, let reason) = $0 { reason } else { nil } }
    }

    @Test func aReceiverEchoingTheHeadersNeverGetsTheSecretIntoErrorsDeadLettersOrTheStore() throws {
        let directory = try TemporaryDirectory("http-echo")
        let token = "tok-\(UUID().uuidString)"
        let tokenFile = directory.path("token")
        try (token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let receiver = try HTTPReceiver(plan: ["echo500", "echo400", "200"], directory: directory)
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(20)
        let sink = try fixture.addSink("echo", url: receiver.url, types: [.stepCount],
                                       options: options(batchSize: 10, headers: ["Authorization: Bearer @\(tokenFile)"]))
        let events = EventLog()
        #expect(try fixture.deliver(sink, events: events) == .caughtUp(delivered: 10, deadLettered: 10))
        #expect(receiver.requests().first?.auth == "Bearer \(token)")
        let said = try everythingSaid(fixture, sink: "echo", events: events)
        #expect(said.contains { $0.contains("you sent:") && $0.contains(SecretRedactor.marker) }, "\(said)")
        #expect(!said.contains { $0.contains(token) }, "\(said)")

        // Basic credentials from the URL's user information: the echoed header is their base64.
        let basic = try HTTPReceiver(plan: ["echo500", "200"], directory: directory)
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let basicSink = try fixture.addSink("basic", url: "http://ingest:\(password)@127.0.0.1:\(basic.port)/ingest", types: [.stepCount],
                                            options: options(batchSize: 100))
        let basicEvents = EventLog()
        #expect(try fixture.deliver(basicSink, events: basicEvents) == .caughtUp(delivered: 20, deadLettered: 0))
        let encoded = Data("ingest:\(password)".utf8).base64EncodedString()
        #expect(basic.requests().first?.auth == "Basic \(encoded)")
        let basicSaid = try everythingSaid(fixture, sink: "basic", events: basicEvents)
        #expect(!basicSaid.contains { $0.contains(encoded) || $0.contains(password) }, "\(basicSaid)")
        #expect(basicSaid.contains { $0.contains("Authorization: Basic \(SecretRedactor.marker)") }, "\(basicSaid)")
    }

    @Test func unauthorizedAndForbiddenAreRetriedAndReportedNeverDeadLettered() throws {
        let directory = try TemporaryDirectory("http-auth")
        let receiver = try HTTPReceiver(plan: ["401", "403", "200"], directory: directory)
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(10)
        let sink = try fixture.addSink("auth", url: receiver.url, types: [.stepCount], options: options(batchSize: 10))
        let events = EventLog()
        #expect(try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 3, initialDelay: 0.05), events: events)
                == .caughtUp(delivered: 10, deadLettered: 0))
        let target = "HTTP receiver \(receiver.url)"
        #expect(events.failures == [.misconfigured(target: target, reason: "refused the credentials: HTTP 401: refused: bad record",
                                                   fix: SinkDeliveryError.refusedCredentialsFix),
                                    .misconfigured(target: target, reason: "refused the credentials: HTTP 403: refused: bad record",
                                                   fix: SinkDeliveryError.refusedCredentialsFix)])
        #expect(try fixture.withStore { try $0.deadLetters(sink: "auth") }.isEmpty)

        // A receiver that keeps refusing: `sinks deliver` gives up with a non-zero exit, the backlog stays.
        let refusing = try HTTPReceiver(plan: Array(repeating: "401", count: 20), directory: directory)
        try fixture.withStore { store in
            try store.addSink(SinkDefinition(name: "refused", url: refusing.url, options: options(batchSize: 10).encoded(), every: nil,
                                             readTypes: ["*"]))
        }
        let run = try IngestdBinary.run(["sinks", "deliver", "refused", "--retries", "2", "--backoff", "0", "--store", fixture.path])
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("refused the credentials: HTTP 401"), "\(run.stderr)")
        let state = try fixture.withStore { try $0.sink(named: "refused") }
        #expect(state.deadLetters == 0 && state.cursor == 0)
        #expect(state.lastError?.contains("HTTP 401") == true)
    }

    /// Item 17: `?password=` and `?token=` in a sink URL are never printed by `sinks add`,
    /// `sinks list` (text and JSON) or an error line.
    @Test func credentialParametersInSinkURLsAreNeverPrinted() throws {
        let directory = try TemporaryDirectory("url-secrets")
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(3)
        let secret = "pgpw-\(UUID().uuidString.prefix(8))"
        let token = "tk-\(UUID().uuidString.prefix(8))"
        let added = try IngestdBinary.run(["sinks", "add", "fleet", "postgresql://ingest@127.0.0.1:1/health?password=\(secret)&connect_timeout=1",
                                           "--all-types", "--store", fixture.path])
        #expect(added.status == 0, "\(added.stderr)")
        let http = try IngestdBinary.run(["sinks", "add", "hook", "http://127.0.0.1:1/in?token=\(token)", "--all-types", "--store", fixture.path])
        #expect(http.status == 0, "\(http.stderr)")
        let listed = try IngestdBinary.run(["sinks", "list", "--store", fixture.path])
        let json = try IngestdBinary.run(["sinks", "list", "--json", "--store", fixture.path])
        let delivered = try IngestdBinary.run(["sinks", "deliver", "--retries", "1", "--backoff", "0", "--store", fixture.path])
        #expect(delivered.status == 69)
        for output in [added.stderr, http.stderr, listed.stdout, json.stdout, delivered.stderr, json.stdout] {
            #expect(!output.contains(secret) && !output.contains(token), "\(output)")
        }
        #expect(listed.stdout.contains("password=\(SecretRedactor.marker)") && listed.stdout.contains("token=\(SecretRedactor.marker)"))
        let state = try fixture.withStore { try $0.sink(named: "hook") }
        #expect(state.lastError.map { !$0.contains(token) } == true)
    }

    /// Item 20 at entry: a gateway id or prefix with MQTT's special characters is refused by
    /// `sinks add`; a person whose topic level another person has is refused by `people add`.
    @Test func idsAndNamesAreCheckedWhereTheyEnter() throws {
        let directory = try TemporaryDirectory("entry")
        let fixture = try StoreFixture(directory: directory)
        for arguments in [["--gateway-id", "a+b"], ["--gateway-id", "a#b"], ["--gateway-id", "a/b"], ["--prefix", "home/+/x"],
                          ["--prefix", "home/#"], ["--discovery-prefix", "ha/#"]] {
            let run = try IngestdBinary.run(["sinks", "add", "m", "mqtt://127.0.0.1:1", "--all-types", "--store", fixture.path] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
        }
        let spaced = try IngestdBinary.run(["sinks", "add", "m", "mqtt://127.0.0.1:1", "--all-types", "--gateway-id", "x y",
                                            "--store", fixture.path])
        #expect(spaced.status == 0, "\(spaced.stderr)")
        #expect(spaced.stderr.contains("topics ingestd/\(MQTTTopicName.level("x y"))/"), "\(spaced.stderr)")
        #expect(try IngestdBinary.run(["people", "add", "Zoë", "--store", fixture.path]).status == 0)
        #expect(try IngestdBinary.run(["people", "add", "Zoé", "--store", fixture.path]).status == 0)
        let twin = try IngestdBinary.run(["people", "add", MQTTTopicName.level("Zoë"), "--store", fixture.path])
        #expect(twin.status == 64 && twin.stderr.contains("MQTT topic level"), "\(twin.stderr)")
    }
}

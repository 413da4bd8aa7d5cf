import Delivery
import Foundation
import Testing

/// HTTP sinks against a real Python `http.server` receiver on 127.0.0.1.
@Suite(.serialized, .offCooperativePool) struct HTTPDeliveryTests {
    private func options(batchSize: Int, timeout: Double = 30) -> HTTPSinkOptions {
        var options = HTTPSinkOptions()
        options.batchSize = batchSize
        options.timeoutSeconds = timeout
        return options
    }

    @Test func serverErrorsAndTimeoutsAreRetriedWithBackoff() throws {
        let directory = try TemporaryDirectory("http-retry")
        let receiver = try HTTPReceiver(plan: ["500", "500", "timeout", "200", "503"], directory: directory)
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(250)
        let sink = try fixture.addSink("server", url: receiver.url, types: [.stepCount], options: options(batchSize: 100, timeout: 1))
        let events = EventLog()

        let outcome = try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 4, initialDelay: 0.05, maximumDelay: 0.2), events: events)
        #expect(outcome == .caughtUp(delivered: 250, deadLettered: 0))
        let target = "HTTP receiver \(receiver.url)"
        #expect(events.failures == [
            .serverError(target: target, status: 500, body: "ok"),
            .serverError(target: target, status: 500, body: "ok"),
            .timedOut(target: target, seconds: 1, waitingFor: "HTTP response"),
            .serverError(target: target, status: 503, body: "ok"),
        ])
        // Every uuid once per accepted request, none lost; the first batch was sent four times
        // before it was acknowledged, and only acknowledged requests count.
        let accepted = receiver.acceptedUUIDs()
        #expect(accepted.count == 250)
        #expect(Set(accepted).symmetricDifference(uuids.map { $0.uuidString.lowercased() }).isEmpty)
        #expect(receiver.requests().map(\.status) == [500, 500, 200, 503, 200, 200])
    }

    @Test func aPermanentRejectionGoesToDeadLettersAndTheNextBatchGoesOn() throws {
        let directory = try TemporaryDirectory("http-dead")
        let receiver = try HTTPReceiver(plan: ["200", "400", "200"], directory: directory)
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(30)
        let sink = try fixture.addSink("server", url: receiver.url, types: [.stepCount], options: options(batchSize: 10))
        let events = EventLog()

        #expect(try fixture.deliver(sink, events: events) == .caughtUp(delivered: 20, deadLettered: 10))
        let requests = receiver.requests()
        #expect(requests.map(\.status) == [200, 400, 200])
        let refused = Set(requests[1].uuids)
        let dead = try fixture.withStore { try $0.deadLetters(sink: "server") }
        #expect(dead.count == 10)
        #expect(Set(dead.map { $0.uuid.uuidString.lowercased() }) == refused)
        #expect(dead.allSatisfy { $0.reason == "HTTP 400: refused: bad record" && !$0.retrying })
        #expect(Set(receiver.acceptedUUIDs()).symmetricDifference(Set(uuids.map { $0.uuidString.lowercased() }).subtracting(refused)).isEmpty)
        let state = try fixture.withStore { try $0.sink(named: "server") }
        #expect(state.deadLetters == 10 && state.lastError == nil)

        // `sinks retry`: sent again (the receiver now accepts), removed from the dead letters.
        #expect(try fixture.withStore { try $0.retryDeadLetters(sink: "server") } == 10)
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 10, deadLettered: 0))
        #expect(try fixture.withStore { try $0.deadLetters(sink: "server") }.isEmpty)
        #expect(Set(receiver.acceptedUUIDs()).symmetricDifference(uuids.map { $0.uuidString.lowercased() }).isEmpty)
        #expect(receiver.requests().last?.uuids.count == 10)
    }

    @Test func redirectsAreRefusedNotFollowed() throws {
        let directory = try TemporaryDirectory("http-redirect")
        let receiver = try HTTPReceiver(plan: ["301"], directory: directory)
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(3)
        let sink = try fixture.addSink("server", url: receiver.url, types: [.stepCount], options: options(batchSize: 10))
        let outcome = try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 1))
        #expect(outcome == .unreachable(.redirectRefused(target: "HTTP receiver \(receiver.url)", status: 301,
                                                         location: "http://127.0.0.1:1/elsewhere")))
        #expect(receiver.requests().count == 1)
        let state = try fixture.withStore { try $0.sink(named: "server") }
        #expect(state.cursor == 0 && state.lastError?.contains("redirects are refused") == true)
    }

    @Test func killedDeliveryResumesWithoutGaps() throws {
        let directory = try TemporaryDirectory("http-kill")
        let receiver = try HTTPReceiver(plan: Array(repeating: "slow", count: 400), directory: directory)
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(20_000)
        try "s3cret-token\n".write(toFile: directory.path("token"), atomically: true, encoding: .utf8)
        let add = try IngestdBinary.run(["sinks", "add", "server", receiver.url, "--types", "stepCount", "--batch-size", "100",
                                         "--header", "Authorization: Bearer @\(directory.path("token"))", "--store", fixture.path])
        #expect(add.status == 0)

        let (first, _, _) = try IngestdBinary.start(["sinks", "deliver", "server", "--store", fixture.path])
        #expect(waitFor(30) { receiver.requests().count >= 40 })
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal)
        let partial = receiver.acceptedUUIDs().count
        #expect(partial < 20_000)

        let second = try IngestdBinary.run(["sinks", "deliver", "server", "--store", fixture.path])
        #expect(second.status == 0)
        let accepted = receiver.acceptedUUIDs()
        #expect(Set(accepted).symmetricDifference(uuids.map { $0.uuidString.lowercased() }).isEmpty)
        // At-least-once: only the batch in flight at the kill may come twice.
        #expect(accepted.count - 20_000 <= 100)
        #expect(receiver.requests().allSatisfy { $0.auth == "Bearer s3cret-token" })
        #expect(!second.stderr.contains("s3cret-token"))
    }

    @Test func healthAutoExportBodyIsWhatTheAppSends() throws {
        let directory = try TemporaryDirectory("http-hae")
        let receiver = try HTTPReceiver(plan: [], directory: directory)
        let fixture = try StoreFixture(directory: directory)
        let date = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28T20:26:40Z
        let weight = try fixture.add(.bodyMass, 72.35, at: date)
        let heart = try fixture.add(.heartRate, 72, at: date)
        var options = options(batchSize: 100)
        options.format = .healthAutoExport
        let sink = try fixture.addSink("hae", url: receiver.url, types: nil, options: options)
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 2, deadLettered: 0))
        #expect(Set(receiver.acceptedUUIDs()) == [weight.uuidString.lowercased(), heart.uuidString.lowercased()])

        let records = try fixture.withStore { try $0.feedBatch(after: 0, types: ["*"], limit: 10) }.entries.map { OutgoingRecord($0) }
        let body = HTTPBody.healthAutoExport(records)
        #expect(body == """
            {"data":{"metrics":[{"name":"weight_body_mass","units":"kg","data":[{"qty":72.35,"date":"2026-05-28 20:26:40 +0000",\
            "source":"phone","uuid":"\(weight.uuidString.lowercased())"}]},{"name":"heart_rate","units":"count/min","data":[{"qty":72,\
            "date":"2026-05-28 20:26:40 +0000","source":"phone","uuid":"\(heart.uuidString.lowercased())"}]}]}}
            """)
    }
}

@testable import Delivery
import Foundation
import HealthModel
import Pipeline
import Testing
import TestSupport

/// A TCP proxy (Receivers/cutting_proxy.py) in front of a broker that cuts every connection after
/// `cut` bytes from the client.
final class CuttingProxy {
    let port: Int
    let log: String
    private let process: Process

    init(upstream: Int, cut: Int, directory: TemporaryDirectory) throws {
        port = try freePort()
        log = directory.path("proxy-\(port).log")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Receivers/cutting_proxy.py").path
        process = unmaskedProcess("/usr/bin/env", ["python3", script, String(port), String(upstream), String(cut), log])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try #require(waitFor(60) { isListening(port) }, "the cutting proxy did not start")
    }

    /// Connections accepted so far (the readiness probe's included).
    var connections: Int {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// MQTT sinks against hostile set-ups, names and links (issue 23), with a real Mosquitto on 127.0.0.1.
@Suite(.serialized, .offCooperativePool) struct HostileMQTTTests {
    /// Item 1: a client whose set-up libmosquitto refuses (a last will on a topic with a wildcard,
    /// a CA file that is gone) was destroyed twice: the fifth such attempt in one process aborted
    /// with "double free or corruption". Forty attempts of each kind in this process.
    @Test func aRefusedClientSetUpRepeatedManyTimesInOneProcessFreesItsHandleOnce() throws {
        let directory = try TemporaryDirectory("mqtt-setup")
        let broker = try MosquittoBroker()
        let missingCA = directory.path("gone-ca.pem")
        for attempt in 0..<40 {
            let will = MosquittoClient.Settings(clientID: "setup-will-\(attempt)", version: .v311, username: "u", password: "p",
                                                caFile: nil, useTLS: false, will: ("ingestd/a+b/status", "offline"))
            #expect(throws: SinkDeliveryError.self) { _ = try MosquittoClient(settings: will, target: "broker") }
            let tls = MosquittoClient.Settings(clientID: "setup-tls-\(attempt)", version: .v5, username: nil, password: nil,
                                               caFile: missingCA, useTLS: true, will: ("ingestd/gw/status", "offline"))
            #expect(throws: SinkDeliveryError.self) { _ = try MosquittoClient(settings: tls, target: "broker") }
        }
        // The same through a sink whose --ca-file was removed after `sinks add`: every attempt fails
        // cleanly and says why, and a good client still works afterwards in this process.
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(3)
        var options = MQTTSinkOptions()
        options.caFile = missingCA
        let sink = try fixture.addSink("tls", url: "mqtts://127.0.0.1:\(broker.port)", types: [.stepCount], options: options)
        for _ in 0..<5 {
            let outcome = try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 4, initialDelay: 0))
            guard case .unreachable(let error) = outcome else { Issue.record("delivered through a missing CA file: \(outcome)"); continue }
            #expect(error.description.contains("setting up TLS"), "\(error)")
        }
        let plain = try fixture.addSink("plain", url: "mqtt://127.0.0.1:\(broker.port)", types: [.stepCount])
        #expect(try fixture.deliver(plain) == .caughtUp(delivered: 3, deadLettered: 0))
    }

    /// Item 20: names that used to become the same topic level (`a/b`, `a+b`, `a#b` → `a_b`;
    /// `Zoë`, `Zoé` → `Zo_`; `Иван`, `Олег` → `____`) get levels, topics and Home Assistant ids of
    /// their own; a gateway id with a space never reaches a topic raw; simple names keep theirs.
    @Test func namesThatSanitisedAlikeGetTopicsAndEntitiesOfTheirOwn() throws {
        let names = ["a/b", "a+b", "a#b", "Zoë", "Zoé", "Иван", "Олег", "x y", "alice"]
        let levels = names.map(MQTTTopicName.level)
        #expect(Set(levels).count == names.count, "\(levels)")
        #expect(MQTTTopicName.level("alice") == "alice" && MQTTTopicName.level("raspberry-pi_2") == "raspberry-pi_2")
        #expect(levels.allSatisfy { $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") } })
        #expect(MQTTTopicName.level("Zoë") == "Zo_-" + MQTTTopicName.hash("Zoë"))
        #expect(MQTTTopicName.problem(withPerson: "Zo_-" + MQTTTopicName.hash("Zoë"), among: ["Zoë"]) != nil)
        #expect(MQTTTopicName.problem(withPerson: "Zoé", among: ["Zoë", "alice"]) == nil)

        let directory = try TemporaryDirectory("mqtt-names")
        let broker = try MosquittoBroker()
        let fixture = try StoreFixture(directory: directory)
        let people = ["a/b", "a+b", "a#b", "Zoë", "Zoé", "Иван", "Олег", "alice"]
        let start = Date().addingTimeInterval(-3600)
        var weights: [String: String] = [:]
        try fixture.withStore { store in
            for (index, name) in people.enumerated() {
                let person = try store.addPerson(name: name, bodyMassKilograms: 50 + Double(index))
                try store.assignDevice("scale-\(index)", to: person)
            }
            try store.removePerson(named: "me", samples: .refuse)
        }
        for (index, name) in people.enumerated() {
            let sample = QuantitySample(type: .bodyMass, quantity: Quantity(value: 50 + Double(index), unit: .kilogram),
                                        start: start.addingTimeInterval(Double(index)), end: start.addingTimeInterval(Double(index)),
                                        source: "phone", device: Device(name: "Scale", localIdentifier: "scale-\(index)"))
            try fixture.ingest([.sample(sample)])
            weights[name] = sample.uuid.uuidString.lowercased()
        }
        var options = MQTTSinkOptions()
        options.gatewayID = "x y"
        options.homeAssistant = true
        let definition = SinkDefinition(name: "house", url: "mqtt://127.0.0.1:\(broker.port)", options: options.encoded(), every: nil,
                                        readTypes: [QuantityType.bodyMass.identifier], person: nil)
        try fixture.withStore { try $0.addSink(definition) }
        let prefix = "ingestd/" + MQTTTopicName.level("x y")
        #expect(prefix.hasPrefix("ingestd/x_y-"))
        let subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/#", clientID: "test-names", output: directory.path("all.txt"))
        #expect(try fixture.deliver(try SinkConfiguration(definition)) == .caughtUp(delivered: people.count, deadLettered: 0))
        #expect(waitFor(60) { subscriber.lines().filter { $0.contains("\"uuid\"") }.count >= people.count })
        let lines = subscriber.lines()
        #expect(!lines.contains { $0.hasPrefix("ingestd/x y") }, "a raw id with a space reached a topic")
        var topicOfPerson: [String: String] = [:]
        for line in lines {
            guard let space = line.firstIndex(of: " "), let uuid = uuidOfMessage(String(line[line.index(after: space)...])),
                  let person = weights.first(where: { $0.value == uuid })?.key else { continue }
            topicOfPerson[person] = String(line[..<space])
        }
        #expect(topicOfPerson.count == people.count)
        #expect(Set(topicOfPerson.values).count == people.count, "two people share a topic: \(topicOfPerson)")
        #expect(topicOfPerson["alice"] == "\(prefix)/alice/bodyMass")
        #expect(topicOfPerson.values.allSatisfy { !$0.contains(" ") && !$0.contains("+") && !$0.contains("#") })
        // One Home Assistant device and entity per person.
        let configs = try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#")
        var uniqueIDs: Set<String> = []
        for text in configs.values {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            uniqueIDs.insert(try #require(object["unique_id"] as? String))
        }
        #expect(configs.count == people.count && uniqueIDs.count == people.count, "\(configs.keys.sorted())")
        #expect(uniqueIDs.contains("ingestd_\(MQTTTopicName.level("x y"))_alice_bodyMass"))
    }

    /// A process holding many descriptors (a busy daemon, the test process itself) gets a socket
    /// numbered 1024 or above; libmosquitto's own loop waits with select(2) and refused such a socket
    /// ("Invalid function arguments provided", CI's intermittent red). The client polls instead.
    @Test func aSocketNumberedAbove1024StillDeliversEveryMessage() throws {
        let directory = try TemporaryDirectory("mqtt-fds")
        let broker = try MosquittoBroker()
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(50)
        let sink = try fixture.addSink("high", url: "mqtt://127.0.0.1:\(broker.port)", types: [.stepCount])
        let subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/#", clientID: "test-fds", output: directory.path("fds.txt"))
        // Every descriptor below 1100 is taken, so the client's socket is numbered above it.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        while held.count < 1200 {
            let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            try #require(descriptor >= 0, "cannot open /dev/null: errno \(errno)")
            held.append(descriptor)
            if descriptor >= 1100 { break }
        }
        try #require((held.last ?? 0) >= 1100, "the descriptor limit is below 1100")
        let outcome = try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 1, initialDelay: 0, maximumDelay: 0))
        held.forEach { close($0) }
        held.removeAll()
        #expect(outcome == .caughtUp(delivered: 50, deadLettered: 0))
        let expected = Set(uuids.map { $0.uuidString.lowercased() })
        #expect(waitFor(60) { Set(subscriber.sampleUUIDs()) == expected })
    }

    /// mqtts:// with the broker's CA (`caFile`): 600 messages, many windows of PUBACKs read through
    /// TLS by the client's poll loop, all arrive; without the CA the broker's certificate is refused
    /// and nothing is delivered.
    @Test func aTLSBrokerGetsEveryMessageAndAnUnknownCertificateIsRefused() throws {
        let directory = try TemporaryDirectory("mqtt-tls")
        let broker = try MosquittoBroker(tls: true)
        let tls = try #require(broker.tls)
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(600)
        let url = "mqtts://127.0.0.1:\(broker.port)"
        let subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/#", clientID: "test-tls", output: directory.path("tls.txt"),
                                            caFile: tls.caFile)
        // The system's CAs do not know the test CA: refused, and said so.
        let stranger = try fixture.addSink("stranger", url: url, types: [.stepCount])
        let refused = try fixture.deliver(stranger, retry: RetryPolicy(maximumAttempts: 1, initialDelay: 0, maximumDelay: 0))
        guard case .unreachable = refused else { Issue.record("delivered to a broker with an unknown certificate: \(refused)"); return }
        var options = MQTTSinkOptions()
        options.caFile = tls.caFile
        options.batchSize = 600
        let sink = try fixture.addSink("tls", url: url, types: [.stepCount], options: options)
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 600, deadLettered: 0))
        let expected = Set(uuids.map { $0.uuidString.lowercased() })
        #expect(waitFor(60) { Set(subscriber.sampleUUIDs()) == expected })
    }

    /// Item 11: a link that breaks every 60 KB used to re-send every batch from its start on every
    /// reconnect (the cursor never moved: 600 records of one batch never got through). Now the
    /// cursor moves past the highest contiguous acknowledged message before each retry; the
    /// repeats are at most the messages in flight (the window) per cut.
    @Test func aLinkCutEvery60KBStillAdvancesTheCursorWithBoundedRepeats() throws {
        let directory = try TemporaryDirectory("mqtt-cut")
        let broker = try MosquittoBroker()
        let proxy = try CuttingProxy(upstream: broker.port, cut: 60_000, directory: directory)
        let fixture = try StoreFixture(directory: directory)
        let uuids = try fixture.addSteps(600)
        var options = MQTTSinkOptions()
        options.batchSize = 600
        let sink = try fixture.addSink("cut", url: "mqtt://127.0.0.1:\(proxy.port)", types: [.stepCount], options: options)
        let subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/#", clientID: "test-cut", output: directory.path("cut.txt"))
        let events = EventLog()
        let outcome = try fixture.deliver(sink, retry: RetryPolicy(maximumAttempts: 3, initialDelay: 0.05, maximumDelay: 0.2), events: events)
        #expect(outcome == .caughtUp(delivered: 600, deadLettered: 0))
        let cursor = try fixture.withStore { try $0.sink(named: "cut").cursor }
        let lastAnchor = try fixture.withStore { try $0.latestAnchor() }
        #expect(cursor == lastAnchor)
        // The cursor moved during the attempts, not only at the end.
        let anchors = events.events.compactMap { event -> Int64? in if case .delivered(_, _, _, let anchor) = event { anchor } else { nil } }
        #expect(anchors.count >= 2 && anchors == anchors.sorted(), "\(anchors)")
        #expect(!events.failures.isEmpty, "the proxy never cut the link")
        let expected = Set(uuids.map { $0.uuidString.lowercased() })
        let receivedUUIDs = subscriber.sampleUUIDs
        #expect(waitFor(60) { Set(receivedUUIDs()) == expected },
                "\(expected.subtracting(receivedUUIDs()).count) of \(expected.count) never arrived, \(Set(receivedUUIDs()).subtracting(expected).count) unknown")
        let received = receivedUUIDs()
        let cuts = events.failures.count
        #expect(received.count - expected.count <= cuts * MosquittoClient.window,
                "\(received.count - expected.count) repeats over \(cuts) cuts")
        _ = proxy.connections
    }
}

import Delivery
import Foundation
import HealthModel
import SQLiteStore
import Testing

/// MQTT sinks against a real Mosquitto broker on 127.0.0.1.
@Suite(.serialized, .offCooperativePool) struct MQTTDeliveryTests {
    private func options(prefix: String = "ingestd/gw", homeAssistant: Bool = false, batchSize: Int = 50) -> MQTTSinkOptions {
        var options = MQTTSinkOptions()
        options.gatewayID = "gw"
        options.topicPrefix = prefix
        options.homeAssistant = homeAssistant
        options.batchSize = batchSize
        return options
    }

    @Test func everyCommittedSampleArrivesOncePerUUIDAndOnlyGrantedTypes() throws {
        let directory = try TemporaryDirectory("mqtt-once")
        let broker = try MosquittoBroker()
        let fixture = try StoreFixture(directory: directory)
        let steps = try fixture.addSteps(300)
        for minute in 0..<20 { try fixture.add(.bodyMass, 70 + Double(minute) / 10, at: Date(timeIntervalSince1970: 1_780_000_000 + Double(minute) * 3600)) }
        let subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/gw/#", clientID: "test-once", output: directory.path("sub.txt"))
        let sink = try fixture.addSink("steps-only", url: "mqtt://127.0.0.1:\(broker.port)", types: [.stepCount], options: options())

        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 300, deadLettered: 0))
        #expect(waitFor(60) { subscriber.lines().filter { $0.hasPrefix("ingestd/gw/me/stepCount ") }.count >= 300 })
        Thread.sleep(forTimeInterval: 0.3)
        let lines = subscriber.lines()
        let sampleLines = lines.filter { $0.hasPrefix("ingestd/gw/me/stepCount ") }
        let received = sampleLines.compactMap { uuidOfMessage(String($0.dropFirst("ingestd/gw/me/stepCount ".count))) }
        #expect(received.count == 300)
        #expect(Set(received).symmetricDifference(steps.map { $0.uuidString.lowercased() }).isEmpty)
        // Read authorization: a sink granted stepCount never sends bodyMass.
        #expect(!lines.contains { $0.contains("BodyMass") || $0.hasPrefix("ingestd/gw/me/bodyMass") })
        // Birth and (on close) the retained offline status.
        #expect(lines.contains("ingestd/gw/status online"))
        #expect(try retainedMessages(port: broker.port, topic: "ingestd/gw/status") == ["ingestd/gw/status": "offline"])
        // The delivered log (`ingestd watch`) and the cursor.
        let (events, state, backlog) = try fixture.withStore { store in
            let state = try store.sink(named: "steps-only")
            return (try store.deliveredEvents(afterID: 0), state, try store.backlogCount(after: state.cursor, types: state.definition.readTypes))
        }
        #expect(events.map(\.count).reduce(0, +) == 300)
        #expect(Set(events.map(\.type)) == ["HKQuantityTypeIdentifierStepCount"])
        #expect(backlog == 0 && state.lastError == nil && state.lastSuccess != nil)
        // Nothing new: a second run sends nothing.
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 0, deadLettered: 0))
        subscriber.stop()
        broker.stop()
    }

    @Test func brokerStoppedMidStreamLosesNothing() throws {
        let directory = try TemporaryDirectory("mqtt-restart")
        let broker = try MosquittoBroker()
        let fixture = try StoreFixture(directory: directory)
        var expected = try fixture.addSteps(200)
        _ = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: [.stepCount], options: options(batchSize: 20))
        // A persistent subscriber session: the broker keeps its messages across the restart.
        var subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/gw/me/stepCount", clientID: "test-restart",
                                            output: directory.path("sub.txt"))
        let events = EventLog()
        let service = DeliveryService(openFeed: { [path = fixture.path] in try HealthStore(path: path) }, softwareVersion: "test",
                                      retry: RetryPolicy(maximumAttempts: nil, initialDelay: 0.1, maximumDelay: 0.5),
                                      onEvent: { events.append($0) }, onProblem: { Issue.record("delivery problem: \($0)") })
        #expect(try service.start() == ["ha"])
        defer { service.stop() }
        #expect(waitFor(60) { subscriber.lines().count >= 200 })

        subscriber.stop()
        broker.stop()
        // Commits go on while the broker is away; the backlog grows in the store.
        let more = try fixture.addSteps(300, start: Date(timeIntervalSince1970: 1_790_000_000))
        expected += more
        #expect(waitFor(60) { !events.failures.isEmpty })
        let (backlog, lastError) = try fixture.withStore { store in
            let state = try store.sink(named: "ha")
            return (try store.backlogCount(after: state.cursor, types: state.definition.readTypes), state.lastError)
        }
        #expect(backlog == 300)
        #expect(lastError?.contains("127.0.0.1:\(broker.port)") == true)

        try broker.start()
        let before = subscriber.lines()
        subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/gw/me/stepCount", clientID: "test-restart",
                                        output: directory.path("sub-after-restart.txt"))
        let drained = try waitFor(30) {
            try fixture.withStore { store in
                let state = try store.sink(named: "ha")
                return try store.backlogCount(after: state.cursor, types: state.definition.readTypes) == 0
            }
        }
        #expect(drained)
        let uuids = { (lines: [String]) in Set(lines.compactMap { uuidOfMessage(String($0.dropFirst("ingestd/gw/me/stepCount ".count))) }) }
        #expect(waitFor(60) { uuids(before + subscriber.lines()).count >= 500 })
        let received = uuids(before + subscriber.lines())
        #expect(received.symmetricDifference(expected.map { $0.uuidString.lowercased() }).isEmpty)
        service.stop()
        subscriber.stop()
        broker.stop()
    }

    @Test func homeAssistantDiscoveryConfigsAreRetainedAndResentWhenHomeAssistantComesOnline() throws {
        let directory = try TemporaryDirectory("mqtt-ha")
        let broker = try MosquittoBroker()
        let fixture = try StoreFixture(directory: directory)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let today = calendar.startOfDay(for: Date())
        try fixture.add(.stepCount, 1200, at: today.addingTimeInterval(60))
        try fixture.add(.stepCount, 300, at: today.addingTimeInterval(120))
        try fixture.add(.distanceWalkingRunning, 950, at: today.addingTimeInterval(120))
        try fixture.add(.bodyMass, 72.4, at: today.addingTimeInterval(-3600))
        try fixture.add(.bodyMass, 72.35, at: today.addingTimeInterval(30))
        try fixture.add(.heartRate, 72, at: today.addingTimeInterval(40))  // 72 /min
        let types: [QuantityType] = [.stepCount, .distanceWalkingRunning, .bodyMass, .heartRate]
        let sink = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: types, options: options(homeAssistant: true))

        let outcome = try fixture.deliver(sink) { deliverer in
            // Home Assistant restarts: its configs are gone until it says online.
            let configs = try retainedMessages(port: broker.port, topic: "homeassistant/#")
            #expect(configs.count == 5)  // the gateway's connectivity and me's four types
            for topic in configs.keys {
                try runTool("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-r", "-n"])
            }
            #expect(try retainedMessages(port: broker.port, topic: "homeassistant/+/+/+/config").isEmpty)
            try runTool("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "homeassistant/status", "-m", "online"])
            #expect(waitFor(60) {
                deliverer.idle(milliseconds: 50)
                return ((try? retainedMessages(port: broker.port, topic: "homeassistant/+/+/+/config").count) ?? 0) == 5
            })
        }
        #expect(outcome == .caughtUp(delivered: 6, deadLettered: 0))

        var configs = try retainedMessages(port: broker.port, topic: "homeassistant/#")
        let gatewayConfig = configs.removeValue(forKey: "homeassistant/binary_sensor/ingestd_gw/status/config")
        let gatewayText = try #require(gatewayConfig)
        let gateway = try #require(try JSONSerialization.jsonObject(with: Data(gatewayText.utf8)) as? [String: Any])
        #expect(gateway["state_topic"] as? String == "ingestd/gw/status" && gateway["device_class"] as? String == "connectivity")
        #expect((gateway["device"] as? [String: Any])?["identifiers"] as? [String] == ["ingestd_gw"])
        var byType: [String: [String: Any]] = [:]
        for (topic, payload) in configs {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any], "not JSON: \(payload)")
            #expect(topic.hasPrefix("homeassistant/sensor/ingestd_gw_me/") && topic.hasSuffix("/config"))
            let device = try #require(object["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["ingestd_gw_me"])
            #expect(device["via_device"] as? String == "ingestd_gw")
            // Availability is not the gateway process's: a one-shot delivery leaves them available.
            #expect(object["availability_topic"] == nil && object["expire_after"] == nil)
            #expect(object["json_attributes_topic"] as? String == (object["state_topic"] as? String).map { $0 + "/attributes" })
            #expect((object["unique_id"] as? String)?.hasPrefix("ingestd_gw_me_") == true)
            byType[topic.split(separator: "/")[3].description] = object
        }
        let steps = try #require(byType["stepCount"])
        #expect(steps["state_class"] as? String == "total" && steps["unit_of_measurement"] as? String == "steps")
        #expect(steps["last_reset_value_template"] as? String == "{{ state_attr(entity_id, 'day_start') }}")
        #expect(steps["name"] as? String == "Steps today" && steps["suggested_display_precision"] as? Int == 0)
        #expect(steps["force_update"] == nil && steps["expire_after"] == nil)
        let distance = try #require(byType["distanceWalkingRunning"])
        #expect(distance["device_class"] as? String == "distance" && distance["unit_of_measurement"] as? String == "km")
        #expect(distance["state_class"] as? String == "total" && distance["name"] as? String == "Walking and running distance today")
        let weight = try #require(byType["bodyMass"])
        #expect(weight["device_class"] as? String == "weight" && weight["unit_of_measurement"] as? String == "kg")
        #expect(weight["state_class"] as? String == "measurement" && weight["force_update"] as? Bool == true)
        #expect(weight["expire_after"] == nil)
        let heart = try #require(byType["heartRate"])
        #expect(heart["unit_of_measurement"] as? String == "bpm" && heart["name"] as? String == "Heart rate")

        // States, retained: today's steps and distance in km, the latest weight and heart rate.
        let states = try retainedMessages(port: broker.port, topic: "ingestd/gw/me/+/state")
        #expect(states["ingestd/gw/me/stepCount/state"] == "1500")
        #expect(states["ingestd/gw/me/distanceWalkingRunning/state"] == "0.95")
        #expect(states["ingestd/gw/me/bodyMass/state"] == "72.35")
        #expect(states["ingestd/gw/me/heartRate/state"] == "72")
        broker.stop()
    }

    @Test func wrongPasswordIsAClearErrorTheSinkShows() throws {
        let directory = try TemporaryDirectory("mqtt-auth")
        let broker = try MosquittoBroker(user: ("gateway", "right-horse-battery"))
        let fixture = try StoreFixture(directory: directory)
        try fixture.addSteps(5)
        try "wrong-staple-9\n".write(toFile: directory.path("password"), atomically: true, encoding: .utf8)
        var options = options()
        options.username = "gateway"
        options.password = "@" + directory.path("password")
        _ = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: [.stepCount], options: options)

        let deliver = try IngestdBinary.run(["sinks", "deliver", "ha", "--retries", "2", "--backoff", "0.05", "--store", fixture.path])
        #expect(deliver.status == 69)
        #expect(deliver.stderr.contains("refused the connection: Connection Refused: not authorised."))
        #expect(!deliver.stderr.contains("wrong-staple-9"))
        let list = try IngestdBinary.run(["sinks", "list", "--json", "--store", fixture.path])
        #expect(list.status == 0)
        #expect(list.stdout.contains("\"lastError\":\"MQTT broker 127.0.0.1:\(broker.port) refused the connection: Connection Refused: not authorised. (code 5)\""))
        #expect(list.stdout.contains("\"backlog\":5"))
        #expect(!list.stdout.contains("wrong-staple-9") && !list.stdout.contains("right-horse-battery"))

        // The right password from the environment: delivered, the error cleared.
        let fixed = try IngestdBinary.run(["sinks", "remove", "ha", "--store", fixture.path])
        #expect(fixed.status == 0)
        let add = try IngestdBinary.run(["sinks", "add", "ha", "mqtt://127.0.0.1:\(broker.port)", "--types", "stepCount",
                                         "--username", "gateway", "--password", "env:TEST_MQTT_PASSWORD", "--mqtt-version", "5",
                                         "--gateway-id", "gw", "--store", fixture.path])
        #expect(add.status == 0)
        let ok = try IngestdBinary.run(["sinks", "deliver", "--store", fixture.path],
                                       environment: ["TEST_MQTT_PASSWORD": "right-horse-battery"])
        #expect(ok.status == 0)
        #expect(ok.stderr.contains("sink ha: delivered 5, dead letters 0"))
        broker.stop()
    }
}

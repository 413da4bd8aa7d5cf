import Delivery
import Foundation
import HealthModel
import Pipeline
import SQLiteStore
import Testing

/// Sinks in a household (issue 15) against a real Mosquitto broker: a sink reading one person
/// sends only that person's samples, a sink reading everybody puts each person on their own
/// topics and Home Assistant device, and a move between people (`assign`) reaches both.
@Suite(.serialized, .offCooperativePool) struct HouseholdDeliveryTests {
    /// alice and bob (instead of `me`), each with a band; steps of both today, and a 72 kg weighing nobody owns.
    private func household(_ fixture: StoreFixture) throws -> (alice: [UUID], bob: [UUID], weight: UUID) {
        try fixture.withStore { store in
            let alice = try store.addPerson(name: "alice", bodyMassKilograms: 60)
            let bob = try store.addPerson(name: "bob", bodyMassKilograms: 85)
            try store.removePerson(named: "me", samples: .refuse)
            try store.assignDevice("band-a", to: alice)
            try store.assignDevice("band-b", to: bob)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        // Minutes after midnight: run just after midnight, every sample still ends within the
        // pipeline's allowed clock skew (10 minutes ahead), and all count as today's.
        let today = calendar.startOfDay(for: Date())
        func steps(_ device: String, _ values: [Double]) -> [QuantitySample] {
            values.enumerated().map { index, value in
                QuantitySample(type: .stepCount, quantity: Quantity(value: value, unit: QuantityType.stepCount.canonicalUnit),
                               start: today.addingTimeInterval(Double(index) * 60), end: today.addingTimeInterval(Double(index) * 60 + 30),
                               source: "phone", device: Device(name: "Band", localIdentifier: device))
            }
        }
        let alices = steps("band-a", [100, 100, 100])
        let bobs = steps("band-b", [250, 250])
        let weight = QuantitySample(type: .bodyMass, quantity: Quantity(value: 72, unit: .kilogram), start: today.addingTimeInterval(60),
                                    end: today.addingTimeInterval(60), source: "phone")
        try fixture.ingest((alices + bobs + [weight]).map(HealthRecord.sample))
        return (alices.map(\.uuid), bobs.map(\.uuid), weight.uuid)
    }

    private func addSink(_ fixture: StoreFixture, _ name: String, port: Int, gateway: String, person: String?,
                         homeAssistant: Bool) throws -> SinkConfiguration {
        var options = MQTTSinkOptions()
        options.gatewayID = gateway
        options.homeAssistant = homeAssistant
        let definition = SinkDefinition(name: name, url: "mqtt://127.0.0.1:\(port)", options: options.encoded(), every: nil,
                                        readTypes: [QuantityType.stepCount.identifier, QuantityType.bodyMass.identifier],
                                        person: person)
        try fixture.withStore { try $0.addSink(definition) }
        return try SinkConfiguration(definition)
    }

    /// (topic, uuid) of every message a subscriber received on sample topics.
    private func messages(_ subscriber: MQTTSubscriber) -> [(topic: String, uuid: String, deleted: Bool)] {
        subscriber.lines().compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            let payload = String(line[line.index(after: space)...])
            guard let uuid = uuidOfMessage(payload) else { return nil }
            return (String(line[..<space]), uuid, payload.hasPrefix("{\"deleted\""))
        }
    }

    @Test func aSinkOfOnePersonSendsOnlyTheirsAndEverybodysSinkGivesEachPersonTheirOwnDevice() throws {
        let directory = try TemporaryDirectory("mqtt-household")
        let broker = try MosquittoBroker()
        let fixture = try StoreFixture(directory: directory)
        let (alices, bobs, weight) = try household(fixture)
        let lower = { (uuids: [UUID]) in Set(uuids.map { $0.uuidString.lowercased() }) }
        let aliceSubscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/gw/#", clientID: "test-alice",
                                                 output: directory.path("alice.txt"))
        let houseSubscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/house/#", clientID: "test-house",
                                                 output: directory.path("house.txt"))
        let aliceSink = try addSink(fixture, "alice", port: broker.port, gateway: "gw", person: "alice", homeAssistant: false)
        let houseSink = try addSink(fixture, "house", port: broker.port, gateway: "house", person: nil, homeAssistant: true)

        #expect(try fixture.deliver(aliceSink) == .caughtUp(delivered: 3, deadLettered: 0))
        #expect(try fixture.deliver(houseSink) == .caughtUp(delivered: 5, deadLettered: 0))
        #expect(waitFor(60) { messages(aliceSubscriber).count >= 3 && messages(houseSubscriber).count >= 5 })
        Thread.sleep(forTimeInterval: 0.3)
        let toAlice = messages(aliceSubscriber)
        #expect(toAlice.allSatisfy { $0.topic == "ingestd/gw/alice/stepCount" })
        #expect(Set(toAlice.map(\.uuid)) == lower(alices))
        let toHouse = messages(houseSubscriber)
        #expect(Set(toHouse.filter { $0.topic == "ingestd/house/alice/stepCount" }.map(\.uuid)) == lower(alices))
        #expect(Set(toHouse.filter { $0.topic == "ingestd/house/bob/stepCount" }.map(\.uuid)) == lower(bobs))
        #expect(toHouse.count == 5)  // the unassigned weighing is nobody's: not sent

        // Home Assistant: the gateway's device, and one device per person connected through it,
        // with entities only for the types that person has data of (the weighing is nobody's yet).
        var configs = try retainedMessages(port: broker.port, topic: "homeassistant/#")
        #expect(configs.count == 3, "\(configs.keys.sorted())")
        #expect(configs["homeassistant/binary_sensor/ingestd_house/status/config"] != nil)
        var uniqueIDs: Set<String> = []
        for person in ["alice", "bob"] {
            for type in ["stepCount"] {
                let text = try #require(configs["homeassistant/sensor/ingestd_house_\(person)/\(type)/config"])
                let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                let device = try #require(object["device"] as? [String: Any])
                #expect(device["identifiers"] as? [String] == ["ingestd_house_\(person)"])
                #expect(device["name"] as? String == person)
                #expect(device["via_device"] as? String == "ingestd_house")
                #expect(object["state_topic"] as? String == "ingestd/house/\(person)/\(type)/state")
                uniqueIDs.insert(try #require(object["unique_id"] as? String))
            }
        }
        #expect(uniqueIDs.count == 2)
        // Today's steps per person, never merged.
        let states = try retainedMessages(port: broker.port, topic: "ingestd/house/+/+/state")
        #expect(states == ["ingestd/house/alice/stepCount/state": "300", "ingestd/house/bob/stepCount/state": "500"])

        // The weighing is given to bob: only the household sink sends it, on bob's topic.
        try fixture.withStore { store in _ = try store.assign([weight], to: try store.person(named: "bob")) }
        #expect(try fixture.deliver(aliceSink) == .caughtUp(delivered: 0, deadLettered: 0))
        #expect(try fixture.deliver(houseSink) == .caughtUp(delivered: 1, deadLettered: 0))
        // Then moved to alice: her sink gets it; the household sink deletes it from bob and adds it to alice.
        try fixture.withStore { store in _ = try store.assign([weight], to: try store.person(named: "alice")) }
        #expect(try fixture.deliver(aliceSink) == .caughtUp(delivered: 1, deadLettered: 0))
        #expect(try fixture.deliver(houseSink) == .caughtUp(delivered: 2, deadLettered: 0))
        let weightUUID = weight.uuidString.lowercased()
        #expect(waitFor(60) { messages(houseSubscriber).filter { $0.uuid == weightUUID }.count >= 3 })
        Thread.sleep(forTimeInterval: 0.3)
        let weightMessages = messages(houseSubscriber).filter { $0.uuid == weightUUID }.map { "\($0.topic) \($0.deleted)" }
        #expect(weightMessages == ["ingestd/house/bob/bodyMass false", "ingestd/house/bob/bodyMass true",
                                   "ingestd/house/alice/bodyMass false"])
        #expect(messages(aliceSubscriber).filter { $0.uuid == weightUUID }.map { "\($0.topic) \($0.deleted)" }
                    == ["ingestd/gw/alice/bodyMass false"])
        let weights = try retainedMessages(port: broker.port, topic: "ingestd/house/+/bodyMass/state")
        #expect(weights["ingestd/house/alice/bodyMass/state"] == "72")
        // The weight entity appeared with alice's weighing; bob's went with his only weighing
        // (an empty retained config: Home Assistant deletes the entity).
        configs = try retainedMessages(port: broker.port, topic: "homeassistant/#")
        #expect(configs["homeassistant/sensor/ingestd_house_bob/bodyMass/config"] == nil)
        #expect(try retainedMessages(port: broker.port, topic: "ingestd/house/bob/bodyMass/state").isEmpty)
        #expect(configs["homeassistant/sensor/ingestd_house_alice/bodyMass/config"] != nil)
        #expect(configs.count == 4, "\(configs.keys.sorted())")

        // Sinks list and people remove know whose samples a sink reads.
        let (alicePerson, housePerson, removal) = try fixture.withStore { store in
            let removal: PeopleError?
            do {
                try store.removePerson(named: "alice", samples: .delete)
                removal = nil
            } catch let error as PeopleError {
                removal = error
            }
            return (try store.sink(named: "alice").definition.person, try store.sink(named: "house").definition.person, removal)
        }
        #expect(alicePerson == "alice" && housePerson == nil)
        #expect(removal == .readBySinks("alice", sinks: ["alice"]))
        aliceSubscriber.stop()
        houseSubscriber.stop()
        broker.stop()
    }
}

import Delivery
import Foundation
import HealthModel
import Pipeline
import SQLiteStore
import Testing

/// What a Home Assistant user sees of the MQTT sink, checked on the retained messages of a real
/// Mosquitto on 127.0.0.1: the newest reading as the state whatever the delivery order, its
/// attributes, only entities with data, names and units from the table, availability.
@Suite(.serialized, .offCooperativePool) struct HomeAssistantStateTests {
    private func options(batchSize: Int = 50) -> MQTTSinkOptions {
        var options = MQTTSinkOptions()
        options.gatewayID = "gw"
        options.topicPrefix = "ingestd/gw"
        options.homeAssistant = true
        options.batchSize = batchSize
        return options
    }

    private static let in2025 = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15
    private static let in2023 = Date(timeIntervalSince1970: 1_690_000_000)  // 2023-07-22

    @Test func theNewestReadingIsTheStateWhateverTheDeliveryOrderAndAcrossRestarts() throws {
        let directory = try TemporaryDirectory("ha-newest")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        let sink = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: [.heartRate, .bodyMass],
                                       options: options())
        // One batch, committed newest first: the 2025 reading stays the state.
        try fixture.add(.heartRate, 75, at: Self.in2025)  // 75 /min
        try fixture.add(.heartRate, 90, at: Self.in2023)   // 90 /min
        try fixture.add(.bodyMass, 71.2, at: Self.in2025)
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 3, deadLettered: 0))
        var states = try retainedMessages(port: broker.port, topic: "ingestd/gw/me/+/state")
        #expect(states["ingestd/gw/me/heartRate/state"] == "75")
        #expect(states["ingestd/gw/me/bodyMass/state"] == "71.2")

        // A later run (a new process: the published end times come from the store): an old
        // capture replayed goes out as a sample, never as the state.
        let subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/gw/me/#", clientID: "ha-newest",
                                            output: directory.path("sub.txt"))
        defer { subscriber.stop() }
        let oldWeighing = try fixture.add(.bodyMass, 80.5, at: Self.in2023)
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 1, deadLettered: 0))
        #expect(waitFor(60) { subscriber.lines().contains { $0.hasPrefix("ingestd/gw/me/bodyMass ") } })
        let sampleLine = try #require(subscriber.lines().first { $0.hasPrefix("ingestd/gw/me/bodyMass ") })
        #expect(uuidOfMessage(String(sampleLine.dropFirst("ingestd/gw/me/bodyMass ".count))) == oldWeighing.uuidString.lowercased())
        #expect(sampleLine.contains("\"start\":\"2023-07-22T04:26:40Z\""))
        states = try retainedMessages(port: broker.port, topic: "ingestd/gw/me/+/state")
        #expect(states["ingestd/gw/me/bodyMass/state"] == "71.2")
        #expect(states["ingestd/gw/me/heartRate/state"] == "75")
        let published = try fixture.withStore { try $0.publishedStates(sink: "ha") }
        #expect(Set(published) == [PublishedState(person: "me", type: QuantityType.bodyMass.identifier, end: Self.in2025),
                                   PublishedState(person: "me", type: QuantityType.heartRate.identifier, end: Self.in2025)])

        // A reading as new as the shown one replaces it; a newer one too.
        try fixture.add(.bodyMass, 71.0, at: Self.in2025.addingTimeInterval(86_400))
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 1, deadLettered: 0))
        states = try retainedMessages(port: broker.port, topic: "ingestd/gw/me/+/state")
        #expect(states["ingestd/gw/me/bodyMass/state"] == "71")
    }

    private func json(_ text: String?) throws -> [String: Any] {
        let text = try #require(text)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not JSON: \(text)")
    }

    @Test func eachStateCarriesWhenWhereAndWhatMeasuredItAndTodaysTotalsTheirDay() throws {
        let directory = try TemporaryDirectory("ha-attributes")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        let today = startOfLocalToday()
        let strap = QuantitySample(type: .heartRate, quantity: Quantity(value: 72, unit: QuantityType.heartRate.canonicalUnit),
                                   start: Self.in2025, end: Self.in2025, source: "phone",
                                   device: Device(name: "Polar H10 1A2B3C4D", manufacturer: "Polar"))
        try fixture.ingest([.sample(strap)])
        try fixture.add(.stepCount, 1200, at: today.addingTimeInterval(60))
        let sink = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: [.heartRate, .stepCount], options: options())
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 2, deadLettered: 0))

        let retained = try retainedMessages(port: broker.port, topic: "ingestd/gw/me/#")
        let heart = try json(retained["ingestd/gw/me/heartRate/state/attributes"])
        let measuredAt = try #require(heart["measured_at"] as? String)
        #expect(ISO8601DateTime.date(from: measuredAt) == Self.in2025)
        #expect(measuredAt.hasSuffix("Z") || measuredAt.dropLast(6).count == 19, "no offset: \(measuredAt)")
        #expect(heart["source"] as? String == "phone" && heart["device"] as? String == "Polar H10 1A2B3C4D")
        #expect(heart["day_start"] == nil)
        let steps = try json(retained["ingestd/gw/me/stepCount/state/attributes"])
        #expect((steps["day_start"] as? String).flatMap { ISO8601DateTime.date(from: $0) } == today)
        #expect(steps["source"] as? String == "phone" && steps["device"] is NSNull)
        #expect(retained["ingestd/gw/me/stepCount/state"] == "1200")

        // The offset is the one the zone has at that moment (summer time in Berlin).
        let discovery = HomeAssistantDiscovery(discoveryPrefix: "homeassistant", topicPrefix: "ingestd/gw", gatewayID: "gw", softwareVersion: "t")
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let text = discovery.attributesPayload(reading: strap, measuredAt: Self.in2025, dayStart: nil, zone: berlin)
        #expect(text == #"{"measured_at":"2025-06-15T17:06:40+02:00","source":"phone","device":"Polar H10 1A2B3C4D"}"#)
        let winterDay = Date(timeIntervalSince1970: 1_767_222_000)  // 2026-01-01T00:00:00+01:00
        let daily = discovery.attributesPayload(reading: strap, measuredAt: Self.in2025, dayStart: winterDay, zone: berlin)
        #expect(daily.hasSuffix(#","day_start":"2026-01-01T00:00:00+01:00","day":"2026-01-01"}"#))
    }

    /// `last_reset` of a daily total: the same midnight all day, a new one a minute after local
    /// midnight, and after a time-zone change the midnight of the new zone's day (with its offset).
    @Test func aDailyTotalsLastResetMovesAtLocalMidnightAndWithTheZone() throws {
        let discovery = HomeAssistantDiscovery(discoveryPrefix: "homeassistant", topicPrefix: "ingestd/gw", gatewayID: "gw", softwareVersion: "t")
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let beforeMidnight = Date(timeIntervalSince1970: 1_750_024_740)  // 2025-06-15T23:59:00+02:00
        let afterMidnight = beforeMidnight.addingTimeInterval(120)       // 2025-06-16T00:01:00+02:00
        func dayStart(_ now: Date, _ zone: TimeZone) throws -> String {
            let strap = QuantitySample(type: .stepCount, quantity: Quantity(value: 10, unit: QuantityType.stepCount.canonicalUnit),
                                       start: now, end: now, source: "phone")
            let payload = discovery.attributesPayload(reading: strap, measuredAt: now,
                                                      dayStart: HomeAssistantDiscovery.dayStart(at: now, zone: zone), zone: zone)
            return try #require(json(payload)["day_start"] as? String)
        }
        #expect(try dayStart(beforeMidnight.addingTimeInterval(-86_000), berlin) == "2025-06-15T00:00:00+02:00")
        #expect(try dayStart(beforeMidnight, berlin) == "2025-06-15T00:00:00+02:00")
        #expect(try dayStart(afterMidnight, berlin) == "2025-06-16T00:00:00+02:00")
        // Flown to New York at 00:01 Berlin time: it is still the 15th there (18:01), whose midnight is at -04:00.
        #expect(try dayStart(afterMidnight, newYork) == "2025-06-15T00:00:00-04:00")
        // Across the autumn change (Berlin 2025-10-26 03:00 CEST -> 02:00 CET): the midnight keeps the +02:00 it had.
        let autumnNoon = Date(timeIntervalSince1970: 1_761_476_400)  // 2025-10-26T12:00:00+01:00
        #expect(try dayStart(autumnNoon, berlin) == "2025-10-26T00:00:00+02:00")
    }

    /// An entity goes when its data goes (issue 28 item 3): a weighing moved to another person
    /// leaves the first person's weight entity without samples, so its config, state and
    /// attributes become empty retained messages (Home Assistant deletes the entity), the new
    /// owner's entity appears, and the sink forgets the old published state; removing a person
    /// with their samples removes all of their entities.
    @Test func anEntityWhoseLastSampleGoesIsRemovedWithAnEmptyRetainedConfig() throws {
        let directory = try TemporaryDirectory("ha-retire")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        let weighing = try fixture.add(.bodyMass, 71.2, at: Self.in2025)
        try fixture.add(.heartRate, 75, at: Self.in2025)
        let sink = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: [.heartRate, .bodyMass],
                                       options: options())
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 2, deadLettered: 0))
        let meWeight = "homeassistant/sensor/ingestd_gw_me/bodyMass/config"
        let meHeart = "homeassistant/sensor/ingestd_gw_me/heartRate/config"
        var configs = try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#")
        #expect(Set(configs.keys) == [meWeight, meHeart])

        try fixture.withStore { store in
            let bob = try store.addPerson(name: "bob")
            #expect(try store.assign([weighing], to: bob) == 1)
        }
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 2, deadLettered: 0), "the deletion and the addition")
        configs = try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#")
        #expect(Set(configs.keys) == [meHeart, "homeassistant/sensor/ingestd_gw_bob/bodyMass/config"])
        let states = try retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/+")
        #expect(states["ingestd/gw/me/bodyMass/state"] == nil && states["ingestd/gw/me/bodyMass/attributes"] == nil, "\(states)")
        #expect(states["ingestd/gw/bob/bodyMass/state"] == "71.2")
        #expect(states["ingestd/gw/me/heartRate/state"] == "75")
        var published = try fixture.withStore { try $0.publishedStates(sink: "ha") }.map { "\($0.person)/\($0.type)" }
        #expect(Set(published) == ["me/\(QuantityType.heartRate.identifier)", "bob/\(QuantityType.bodyMass.identifier)"])

        try fixture.withStore { try $0.removePerson(named: "bob", samples: .delete) }
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 1, deadLettered: 0))
        configs = try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#")
        #expect(Set(configs.keys) == [meHeart])
        published = try fixture.withStore { try $0.publishedStates(sink: "ha") }.map { "\($0.person)/\($0.type)" }
        #expect(published == ["me/\(QuantityType.heartRate.identifier)"])
    }

    /// A type the sink stops reading (`ingestd sinks revoke ha heartRate`) loses its entity at
    /// the next delivery even when nothing new arrived: empty retained config, state and
    /// attributes; the other entity stays, and revoking a type the sink does not read is refused.
    @Test func aRevokedTypesEntityGoesAtTheNextDeliveryWithNothingNewToSend() throws {
        let directory = try TemporaryDirectory("ha-revoke")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        try fixture.add(.bodyMass, 71.2, at: Self.in2025)
        try fixture.add(.heartRate, 75, at: Self.in2025)
        _ = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: nil, options: options())
        var deliver = try IngestdBinary.run(["sinks", "deliver", "ha", "--store", fixture.path])
        #expect(deliver.status == 0, "\(deliver.stderr)")
        let meWeight = "homeassistant/sensor/ingestd_gw_me/bodyMass/config"
        let meHeart = "homeassistant/sensor/ingestd_gw_me/heartRate/config"
        #expect(Set(try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#").keys) == [meWeight, meHeart])

        let revoke = try IngestdBinary.run(["sinks", "revoke", "ha", "heartRate", "--store", fixture.path])
        #expect(revoke.status == 0, "\(revoke.stderr)")
        #expect(revoke.stderr.contains("sink ha no longer reads heartRate"), "\(revoke.stderr)")
        deliver = try IngestdBinary.run(["sinks", "deliver", "ha", "--store", fixture.path])
        #expect(deliver.status == 0, "\(deliver.stderr)")
        #expect(Set(try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#").keys) == [meWeight])
        let states = try retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/+")
        #expect(states["ingestd/gw/me/heartRate/state"] == nil && states["ingestd/gw/me/heartRate/attributes"] == nil, "\(states)")
        #expect(states["ingestd/gw/me/bodyMass/state"] == "71.2")
        let published = try fixture.withStore { try $0.publishedStates(sink: "ha") }.map(\.type)
        #expect(published == [QuantityType.bodyMass.identifier])
        let grants = try fixture.withStore { try $0.sink(named: "ha") }.definition.readTypes
        #expect(!grants.contains("*") && !grants.contains(QuantityType.heartRate.identifier) && grants.contains(QuantityType.bodyMass.identifier))

        let again = try IngestdBinary.run(["sinks", "revoke", "ha", "heartRate", "--store", fixture.path])
        #expect(again.status == 1 && again.stderr.contains("sink 'ha' does not read \(QuantityType.heartRate.identifier)"), "\(again.stderr)")
        let unknown = try IngestdBinary.run(["sinks", "revoke", "nope", "heartRate", "--store", fixture.path])
        #expect(unknown.status == 1 && unknown.stderr.contains("no sink named 'nope'"), "\(unknown.stderr)")
    }

    /// A person who reads US units (`people set P --units us`) gets their entities in lb and °F
    /// (config and state) from the next delivery, with or without new samples: a one-shot run
    /// shows the states again in the new unit, and so does a running daemon within seconds; the
    /// room sensor stays the gateway's, in °C.
    @Test func aPersonsEntitiesFollowTheirUnits() throws {
        let directory = try TemporaryDirectory("ha-units")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        try fixture.withStore { try $0.setUnits(.us, of: try $0.person(named: "me")) }
        try fixture.add(.bodyMass, 71.2, at: Self.in2025)
        try fixture.add(.bodyTemperature, 36.6, at: Self.in2025)
        try fixture.add(.ambientTemperature, 21.5, at: Self.in2025)
        let sink = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: nil, options: options())
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 3, deadLettered: 0))
        var configs = try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#")
        let weightConfig = try json(configs["homeassistant/sensor/ingestd_gw_me/bodyMass/config"])
        #expect(weightConfig["unit_of_measurement"] as? String == "lb" && weightConfig["device_class"] as? String == "weight")
        #expect(try json(configs["homeassistant/sensor/ingestd_gw_me/bodyTemperature/config"])["unit_of_measurement"] as? String == "°F")
        #expect(try json(configs["homeassistant/sensor/ingestd_gw/ambientTemperature/config"])["unit_of_measurement"] as? String == "°C")
        var states = try retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/state")
        let pounds = try #require(states["ingestd/gw/me/bodyMass/state"].flatMap(Double.init))
        #expect(abs(pounds - 71.2 / 0.45359237) < 1e-6, "\(pounds)")
        #expect(states["ingestd/gw/me/bodyTemperature/state"].flatMap(Double.init).map { abs($0 - 97.88) < 1e-9 } == true)
        #expect(states["ingestd/gw/gateway/ambientTemperature/state"] == "21.5")

        // Back to metric with nothing new to send: a one-shot run (`sinks deliver`) shows the
        // shown readings again, in kg and °C, config and state alike.
        try fixture.withStore { try $0.setUnits(nil, of: try $0.person(named: "me")) }
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 0, deadLettered: 0))
        configs = try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#")
        #expect(try json(configs["homeassistant/sensor/ingestd_gw_me/bodyMass/config"])["unit_of_measurement"] as? String == "kg")
        #expect(try json(configs["homeassistant/sensor/ingestd_gw_me/bodyTemperature/config"])["unit_of_measurement"] as? String == "°C")
        states = try retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/state")
        #expect(states["ingestd/gw/me/bodyMass/state"] == "71.2")
        #expect(states["ingestd/gw/me/bodyTemperature/state"] == "36.6")
        #expect(states["ingestd/gw/gateway/ambientTemperature/state"] == "21.5")

        // The next weighing brings kg.
        try fixture.add(.bodyMass, 71.0, at: Self.in2025.addingTimeInterval(86_400))
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 1, deadLettered: 0))
        states = try retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/state")
        #expect(states["ingestd/gw/me/bodyMass/state"] == "71")

        // A running daemon's sink sees the change of system by itself, with no sample to send.
        let service = DeliveryService(openFeed: { [path = fixture.path] in try HealthStore(path: path) }, softwareVersion: "test",
                                      retry: RetryPolicy(maximumAttempts: nil, initialDelay: 0.1, maximumDelay: 0.5),
                                      onEvent: { _ in }, onProblem: { Issue.record("delivery problem: \($0)") })
        #expect(try service.start() == ["ha"])
        defer { service.stop() }
        Thread.sleep(forTimeInterval: 1.5)
        try fixture.withStore { try $0.setUnits(.us, of: try $0.person(named: "me")) }
        let shownInPounds = waitFor(20) {
            let weight = (try? retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/state"))?["ingestd/gw/me/bodyMass/state"]
            return weight.flatMap(Double.init).map { abs($0 - 71.0 / 0.45359237) < 1e-6 } == true
        }
        #expect(shownInPounds)
        configs = try retainedMessages(port: broker.port, topic: "homeassistant/sensor/#")
        #expect(try json(configs["homeassistant/sensor/ingestd_gw_me/bodyMass/config"])["unit_of_measurement"] as? String == "lb")
    }

    @Test func onlyTypesWithDataGetEntitiesWithPlainNamesAndRoomSensorsBelongToTheGateway() throws {
        let directory = try TemporaryDirectory("ha-entities")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        try fixture.add(.bodyMass, 72.35, at: Self.in2025)
        try fixture.add(.bodyFatPercentage, 0.235, at: Self.in2025)
        try fixture.add(.bloodPressureSystolic, 121, at: Self.in2025)
        try fixture.add(.ambientTemperature, 21.5, at: Self.in2025)
        // Every type granted (`--all-types`): entities only for the four with data.
        let sink = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: nil, options: options())
        let deliver = try IngestdBinary.run(["sinks", "deliver", "ha", "--store", fixture.path])
        #expect(deliver.status == 0, "\(deliver.stderr)")

        var configs = try retainedMessages(port: broker.port, topic: "homeassistant/#")
        #expect(Set(configs.keys) == ["homeassistant/binary_sensor/ingestd_gw/status/config",
                                      "homeassistant/sensor/ingestd_gw_me/bodyMass/config",
                                      "homeassistant/sensor/ingestd_gw_me/bodyFatPercentage/config",
                                      "homeassistant/sensor/ingestd_gw_me/bloodPressureSystolic/config",
                                      "homeassistant/sensor/ingestd_gw/ambientTemperature/config"])
        let expected: [String: (name: String, unit: String, precision: Int)] = [
            "ingestd_gw_me/bodyMass": ("Weight", "kg", 2), "ingestd_gw_me/bodyFatPercentage": ("Body fat", "%", 1),
            "ingestd_gw_me/bloodPressureSystolic": ("Blood pressure systolic", "mmHg", 0),
            "ingestd_gw/ambientTemperature": ("Room temperature", "°C", 1),
        ]
        for (path, entity) in expected {
            let config = try json(configs["homeassistant/sensor/\(path)/config"])
            #expect(config["name"] as? String == entity.name && config["unit_of_measurement"] as? String == entity.unit)
            #expect(config["suggested_display_precision"] as? Int == entity.precision)
            #expect(config["availability_topic"] == nil && config["availability"] == nil && config["expire_after"] == nil)
            let device = try #require(config["device"] as? [String: Any])
            if path.hasPrefix("ingestd_gw_me/") {
                #expect(device["name"] as? String == "me" && device["via_device"] as? String == "ingestd_gw")
                #expect(device["identifiers"] as? [String] == ["ingestd_gw_me"])
            } else {
                // A room thermometer is the gateway's, never a person's.
                #expect(device["identifiers"] as? [String] == ["ingestd_gw"] && device["via_device"] == nil)
                #expect(config["state_topic"] as? String == "ingestd/gw/gateway/ambientTemperature/state")
            }
        }
        let states = try retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/state")
        #expect(states == ["ingestd/gw/me/bodyMass/state": "72.35", "ingestd/gw/me/bodyFatPercentage/state": "23.5",
                           "ingestd/gw/me/bloodPressureSystolic/state": "121",
                           "ingestd/gw/gateway/ambientTemperature/state": "21.5"])
        // The one-shot run ends with the gateway offline (its connectivity sensor), and no entity
        // depends on that: nothing shows unavailable until the next run.
        #expect(try retainedMessages(port: broker.port, topic: "ingestd/gw/status") == ["ingestd/gw/status": "offline"])

        // A new type's first sample brings its entity; a later run (Home Assistant restarted
        // and lost its configs) re-announces every entity that has a state.
        for topic in configs.keys {
            try runTool("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-t", topic, "-r", "-n"])
        }
        try fixture.add(.heartRate, 75, at: Self.in2025)
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 1, deadLettered: 0))
        configs = try retainedMessages(port: broker.port, topic: "homeassistant/#")
        #expect(configs.count == 6, "\(configs.keys.sorted())")
        #expect(configs["homeassistant/sensor/ingestd_gw_me/heartRate/config"] != nil)
    }

    @Test func bodyCompositionTypesGetPlainNamesAndUnitsPerPerson() throws {
        let directory = try TemporaryDirectory("ha-body")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        // The values the Mi capture's weighing derives (BodyCompositionPipelineTests).
        try fixture.add(.bodyWaterPercentage, 0.5115, at: Self.in2025)
        try fixture.add(.skeletalMuscleMass, 37.15, at: Self.in2025)
        try fixture.add(.boneMass, 3.24, at: Self.in2025)
        try fixture.add(.visceralFatRating, 11.4, at: Self.in2025)
        try fixture.add(.basalMetabolicRate, 1748, at: Self.in2025)
        _ = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: nil, options: options())
        let deliver = try IngestdBinary.run(["sinks", "deliver", "ha", "--store", fixture.path])
        #expect(deliver.status == 0, "\(deliver.stderr)")
        let configs = try retainedMessages(port: broker.port, topic: "homeassistant/#")
        let expected: [String: (name: String, unit: String?, precision: Int, state: String)] = [
            "bodyWaterPercentage": ("Body water", "%", 1, "51.15"),
            "skeletalMuscleMass": ("Skeletal muscle mass", "kg", 1, "37.15"),
            "boneMass": ("Bone mass", "kg", 1, "3.24"),
            "visceralFatRating": ("Visceral fat rating", nil, 0, "11.4"),
            "basalMetabolicRate": ("Basal metabolic rate", "kcal/d", 0, "1748"),
        ]
        let states = try retainedMessages(port: broker.port, topic: "ingestd/gw/+/+/state")
        for (type, entity) in expected {
            let config = try json(configs["homeassistant/sensor/ingestd_gw_me/\(type)/config"])
            #expect(config["name"] as? String == entity.name, "\(type)")
            #expect(config["unit_of_measurement"] as? String == entity.unit, "\(type)")
            #expect(config["suggested_display_precision"] as? Int == entity.precision, "\(type)")
            #expect(states["ingestd/gw/me/\(type)/state"] == entity.state, "\(type): \(states)")
        }
    }

    /// A derived body-composition value names its formula in the state's attributes; a measured
    /// one does not. The real Mi Body Composition Scale weighing (85.15 kg, 428 Ω) with a profile,
    /// through the binary: Xiaomi's formula derives 25.44 % body fat.
    @Test func aDerivedBodyCompositionStateNamesItsFormula() throws {
        let directory = try TemporaryDirectory("ha-formula")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let store = directory.path("health.sqlite")
        let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AdapterTests/Captures/xiaomi-scale/mi-scale-v2.btsnoop").path
        for arguments in [["profile", "set", "--date-of-birth", "1994-06-01", "--biological-sex", "male", "--height", "180", "--unit", "cm"],
                          ["people", "set", "me", "--body-composition", "vendor"],
                          ["auth", "grant", "xiaomi-scale", "--all"], ["replay", capture],
                          ["sinks", "add", "ha", "mqtt://127.0.0.1:\(broker.port)", "--types", "bodyMass,bodyFatPercentage",
                           "--gateway-id", "gw", "--prefix", "ingestd/gw", "--home-assistant"],
                          ["sinks", "deliver", "ha"]] {
            let result = try IngestdBinary.run(arguments + ["--store", store])
            try #require(result.status == 0, "ingestd \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        let retained = try retainedMessages(port: broker.port, topic: "ingestd/gw/me/#")
        #expect(retained["ingestd/gw/me/bodyFatPercentage/state"] == "25.44", "\(retained)")
        let fat = try json(retained["ingestd/gw/me/bodyFatPercentage/state/attributes"])
        #expect(fat["formula"] as? String == "xiaomi", "\(fat)")
        #expect(fat["source"] as? String == "xiaomi-scale")
        let weight = try json(retained["ingestd/gw/me/bodyMass/state/attributes"])
        #expect(weight["formula"] == nil, "\(weight)")
        #expect(retained["ingestd/gw/me/bodyMass/state"] == "85.15")
    }

    @Test func perSampleMessagesCarryValuesInTheEntitysUnitWithoutConversionNoise() throws {
        let directory = try TemporaryDirectory("ha-values")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let fixture = try StoreFixture(directory: directory)
        try fixture.add(.heartRate, 85, at: Self.in2025)  // stored in count/min
        try fixture.add(.distanceWalkingRunning, 950, at: Self.in2025)
        try fixture.add(.bodyFatPercentage, 0.235, at: Self.in2025)
        let subscriber = try MQTTSubscriber(port: broker.port, topic: "ingestd/gw/me/#", clientID: "ha-values",
                                            output: directory.path("sub.txt"))
        defer { subscriber.stop() }
        let sink = try fixture.addSink("ha", url: "mqtt://127.0.0.1:\(broker.port)", types: nil, options: options())
        #expect(try fixture.deliver(sink) == .caughtUp(delivered: 3, deadLettered: 0))
        #expect(waitFor(60) { subscriber.lines().filter { $0.contains("\"uuid\"") }.count >= 3 })
        let lines = subscriber.lines()
        let payload = { (type: String) in lines.first { $0.hasPrefix("ingestd/gw/me/\(type) ") } ?? "" }
        #expect(payload("heartRate").contains(#""value":85,"unit":"count/min""#), "\(payload("heartRate"))")
        #expect(payload("distanceWalkingRunning").contains(#""value":0.95,"unit":"km""#))
        #expect(payload("bodyFatPercentage").contains(#""value":0.235,"unit":"%""#))
        #expect(HomeAssistantEntity.cleaned(1.41666666666667 * 60) == 85)
        #expect(HomeAssistantEntity.cleaned(0.235 * 100) == 23.5)
        #expect(HomeAssistantEntity.cleaned(72.35) == 72.35 && HomeAssistantEntity.cleaned(1e-7) == 1e-7)
    }
}

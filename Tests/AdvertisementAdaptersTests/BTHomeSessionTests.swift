import AdapterKit
import BTHome
import Foundation
import HealthModel
import TestSupport
import Testing
import Transport

@Suite("BTHomeSession")
struct BTHomeSessionTests {
    static let address = "A4:C1:38:8D:18:B2"  // the address used by the bthome-ble tests

    func makeSession(name: String = "ATC_8D18B2") throws -> BTHomeSession {
        let traits = BLEDeviceTraits(address: try #require(BLEAddress(Self.address)), name: name,
                                     serviceUUIDs: [BLEUUID(0xFCD2)])
        let context = AdapterContext(timeZone: try #require(TimeZone(identifier: "Europe/Paris")), source: BTHomeAdapter.id)
        return BTHomeSession(device: traits, context: context)
    }

    func event(_ payload: String, name: String? = "ATC_8D18B2", time: Date = Date(timeIntervalSince1970: 1_709_331_995)) throws -> TransportEvent {
        .advertisement(try makeAdvertisement(address: Self.address, name: name, serviceData: [(0xFCD2, hex(payload))], time: time))
    }

    @Test("Mass in kg (bthome-ble test_bthome_mass_kilograms) becomes BodyMass at the reception time")
    func massKilograms() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        let time = Date(timeIntervalSince1970: 1_709_331_995)
        session.receive(try event("40 06 5e 1f", time: time), into: &output)
        let sample = try #require(samples(output).first)
        #expect(samples(output).count == 1)
        #expect(sample.type == .bodyMass)
        #expect(sample.quantity == Quantity(value: 80.3, unit: .kilogram))
        #expect(sample.start == time && sample.end == time)
        #expect(sample.source == "bthome")
        #expect(sample.device == Device(name: "ATC_8D18B2", localIdentifier: "A4:C1:38:8D:18:B2"))
        #expect(sample.metadata.timeZone == "Europe/Paris")
        #expect(output.skipped.isEmpty && output.rejections.isEmpty)
    }

    @Test("Mass in lb (bthome-ble test_bthome_mass_pounds) keeps its unit and reads as 33.956 kg")
    func massPounds() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("40 07 3e 1d"), into: &output)
        let sample = try #require(samples(output).first)
        #expect(sample.type == .bodyMass)
        #expect(sample.quantity == Quantity(value: 74.86, unit: .pound))
        #expect(abs(try sample.value(in: .kilogram) - 74.86 * 0.453_592_37) < 1e-9)
    }

    @Test("Temperature is room temperature: ambient, never BodyTemperature; humidity is skipped, the battery kept for the device")
    func temperatureIsAmbient() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("40 00 09 01 5d 02 5d 09 03 b7 18"), into: &output)
        let emitted = samples(output)
        #expect(emitted.count == 1)
        #expect(emitted.allSatisfy { $0.type != .bodyTemperature })
        #expect(emitted.first?.type == .ambientTemperature)
        #expect(emitted.first?.type.identifier == "IngestQuantityTypeIdentifierAmbientTemperature")
        #expect(emitted.first?.quantity == Quantity(value: 23.97, unit: .degreeCelsius))
        #expect(output.skipped == ["object-0x03-no-health-type": 1])
        // 01 5d: 93 % (bthome-ble's expectation for this frame), with the samples' device.
        #expect(output.batteries.map(\.percent) == [93])
        #expect(output.batteries.first?.device == emitted.first?.device && output.batteries.first?.source == emitted.first?.source)
        // The same charge in the next packet is not said again within the hour.
        var next = AdapterOutput()
        session.receive(try event("40 00 0a 01 5d 02 5e 09 03 b7 18"), into: &next)
        #expect(next.batteries.isEmpty && samples(next).count == 1)
    }

    @Test("Every temperature object (0x02, 0x45, 0x57, 0x58) is ambient temperature")
    func allTemperatureObjects() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("40 02 ca 09 45 fb 00 57 15 58 3c"), into: &output)  // synthetic
        #expect(samples(output).map(\.type) == Array(repeating: QuantityType.ambientTemperature, count: 4))
        #expect(samples(output).map(\.quantity.value) == [25.06, 25.1, 21, 21])
    }

    @Test("Encrypted packets (bthome-ble test_bindkey_correct) without the device's key: refused as no-key, explained once")
    func encryptedWithoutKey() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14"), into: &output)
        #expect(samples(output).isEmpty)
        #expect(output.rejections.map(\.reason) == ["no-key"])
        #expect(output.explanations.count == 1)
    }

    @Test("A repeated packet id (bthome-ble test_identical_packet_id) is dropped; a new id is not")
    func packetIDDedup() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("40 00 09 06 5e 1f"), into: &output)
        session.receive(try event("40 00 09 06 5e 1f"), into: &output)
        session.receive(try event("40 00 09 06 5e 1f"), into: &output)
        session.receive(try event("40 00 0a 06 5e 1f"), into: &output)  // same weight, new packet
        #expect(samples(output).count == 2)
        #expect(output.skipped == ["repeated-packet-id": 2])
    }

    @Test("Without a packet id, identical consecutive payloads are one reading")
    func payloadDedup() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("40 06 5e 1f"), into: &output)
        session.receive(try event("40 06 5e 1f"), into: &output)
        session.receive(try event("40 06 60 1f"), into: &output)
        #expect(samples(output).map(\.quantity.value) == [80.3, 80.32])
        #expect(output.skipped == ["repeated-payload": 1])
    }

    @Test("An unknown object id keeps the objects before it and is rejected with id and offset")
    func unknownObject() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("40 06 5e 1f fe 5d 09"), into: &output)  // synthetic: mass, then 0xfe
        #expect(samples(output).map(\.quantity.value) == [80.3])
        let rejection = try #require(output.rejections.first)
        #expect(rejection.reason == "unknown-object")
        #expect(rejection.detail.contains("unknown object id 0xfe at offset 4"))
    }

    @Test("A truncated object is rejected; a wrong version rejects the whole packet")
    func truncatedAndWrongVersion() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try event("40 06 5e"), into: &output)
        session.receive(try event("e1 02 00 0c 04 04 13 8a 01"), into: &output)
        #expect(samples(output).isEmpty)
        #expect(output.rejections.map(\.reason) == ["truncated-object", "unsupported-version"])
        #expect(output.rejections.allSatisfy { $0.adapter == "bthome" })
    }

    @Test("The MAC in the packet identifies the device; the firmware version object fills the device")
    func deviceIdentity() throws {
        let session = try makeSession(name: "BTHome scale")
        var output = AdapterOutput()
        // synthetic: MAC 11:22:33:44:55:66, mass 80.30 kg, firmware 4.2.1.0
        session.receive(try event("42 66 55 44 33 22 11 06 5e 1f f1 00 01 02 04", name: "BTHome scale"), into: &output)
        let sample = try #require(samples(output).first)
        #expect(sample.device?.localIdentifier == "11:22:33:44:55:66")
        #expect(sample.device?.firmwareVersion == "4.2.1.0")
        #expect(sample.device?.name == "BTHome scale")
    }
}

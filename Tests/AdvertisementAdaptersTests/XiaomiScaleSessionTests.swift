import AdapterKit
import Foundation
import HealthModel
import TestSupport
import Testing
import Transport
import XiaomiScale

@Suite("XiaomiScaleSession")
struct XiaomiScaleSessionTests {
    static let scaleAddress = "50:FB:19:1B:B5:DC"  // the address used by the xiaomi-ble tests
    /// xiaomi-ble test_Xiaomi_Scale1: 86.55 kg at 2021-04-11 16:19:01 on the scale's clock.
    static let stableFrame = "22 9e 43 e5 07 04 0b 10 13 01"

    func makeSession(name: String = "MI_SCALE", zone: String = "Europe/Berlin") throws -> XiaomiScaleSession {
        let traits = BLEDeviceTraits(address: try #require(BLEAddress(Self.scaleAddress)), name: name,
                                     serviceUUIDs: [BLEUUID(0x181D)])
        let context = AdapterContext(timeZone: try #require(TimeZone(identifier: zone)), source: XiaomiScaleAdapter.id)
        return XiaomiScaleSession(device: traits, context: context)
    }

    func smartScaleAdvertisement(_ frame: String, name: String? = "MI_SCALE",
                                 time: Date = Date(timeIntervalSince1970: 1_618_150_000)) throws -> TransportEvent {
        .advertisement(try makeAdvertisement(address: Self.scaleAddress, name: name,
                                             serviceData: [(0x181D, hex(frame))], time: time))
    }

    func bodyCompositionAdvertisement(_ frame: String, time: Date = Date(timeIntervalSince1970: 1_700_000_000)) throws -> TransportEvent {
        .advertisement(try makeAdvertisement(address: Self.scaleAddress, name: "MIBFS",
                                             serviceData: [(0x181B, hex(frame))], time: time))
    }

    @Test("A stabilized frame becomes one BodyMass sample in kg at the scale's clock in the context zone")
    func stabilizedReading() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try smartScaleAdvertisement(Self.stableFrame), into: &output)
        let sample = try #require(samples(output).first)
        #expect(samples(output).count == 1)
        #expect(sample.type == .bodyMass)
        #expect(sample.quantity == Quantity(value: 86.55, unit: .kilogram))
        #expect(sample.start == (try utc(2021, 4, 11, 14, 19, 1)))  // 16:19:01 CEST
        #expect(sample.end == sample.start)
        #expect(sample.source == "xiaomi-scale")
        #expect(sample.metadata.timeZone == "Europe/Berlin")
        #expect(sample.metadata.syncIdentifier == "50:FB:19:1B:B5:DC/2021-04-11T16:19:01/17310")
        #expect(sample.metadata.syncVersion == 1)
        #expect(sample.metadata.entries.isEmpty)
        #expect(sample.device == Device(name: "MI_SCALE", manufacturer: "Xiaomi", model: "XMTZC01HM/XMTZC04HM",
                                        localIdentifier: "50:FB:19:1B:B5:DC"))
        #expect(output.rejections.isEmpty)
        #expect(output.skipped.isEmpty)
    }

    @Test("The same reading broadcast many times becomes one sample; the repeats are counted")
    func repeatedBroadcast() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        for second in 0..<6 {
            session.receive(try smartScaleAdvertisement(Self.stableFrame, time: Date(timeIntervalSince1970: 1_618_150_000 + Double(second))),
                            into: &output)
        }
        #expect(samples(output).count == 1)
        #expect(output.skipped == ["repeated-broadcast": 5])
    }

    @Test("A new weighing after the person stepped off is a new sample")
    func secondWeighing() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try smartScaleAdvertisement(Self.stableFrame), into: &output)
        session.receive(try smartScaleAdvertisement("a2 9e 43 e5 07 04 0b 10 13 01"), into: &output)  // removed
        session.receive(try smartScaleAdvertisement("22 3e 30 e6 07 02 0e 10 29 3a"), into: &output)  // research §3.1
        #expect(samples(output).map(\.quantity.value) == [86.55, 61.75])
        #expect(output.skipped == ["weight-removed": 1])
    }

    @Test("Frames that are not stabilized are ignored")
    func unstableIgnored() throws {
        let session = try makeSession(name: "MIBFS")
        var output = AdapterOutput()
        session.receive(try bodyCompositionAdvertisement("02 04 b2 07 01 01 12 10 1a 00 00 a8 52"), into: &output)
        #expect(samples(output).isEmpty)
        #expect(output.skipped == ["not-stabilized": 1])
    }

    @Test("Frames with 'weight removed' are ignored, even with the stabilized bit set")
    func weightRemovedIgnored() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try smartScaleAdvertisement("a2 20 44 b2 07 01 01 0a 1a 15"), into: &output)
        session.receive(try smartScaleAdvertisement("80 00 00 e5 07 04 0b 10 13 01"), into: &output)
        #expect(samples(output).isEmpty)
        #expect(output.skipped == ["weight-removed": 2])
    }

    @Test("Pounds and jin are stored in kilograms")
    func unitsConverted() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try smartScaleAdvertisement("23 98 3a e6 07 02 0e 10 29 3a"), into: &output)  // 150.00 lb
        session.receive(try smartScaleAdvertisement("32 3e 30 e6 07 02 0f 10 29 3a"), into: &output)  // 123.50 jin
        let values = samples(output)
        #expect(values.count == 2)
        #expect(values.allSatisfy { $0.quantity.unit == .kilogram })
        #expect(abs(values[0].quantity.value - 68.038_855_5) < 1e-9)
        #expect(values[1].quantity.value == 61.75)
    }

    @Test("Impedance goes into metadata; the later frame with impedance supersedes the one without (sync version 2)")
    func impedance() throws {
        let session = try makeSession(name: "MIBFS")
        var output = AdapterOutput()
        // research §3.2 reading, first without the impedance bit, then with it, then repeated.
        session.receive(try bodyCompositionAdvertisement("02 24 e6 07 02 0e 10 29 3a 00 00 9a 38"), into: &output)
        session.receive(try bodyCompositionAdvertisement("02 26 e6 07 02 0e 10 29 3a f7 01 9a 38"), into: &output)
        session.receive(try bodyCompositionAdvertisement("02 26 e6 07 02 0e 10 29 3a f7 01 9a 38"), into: &output)
        session.receive(try bodyCompositionAdvertisement("02 24 e6 07 02 0e 10 29 3a 00 00 9a 38"), into: &output)
        let emitted = samples(output)
        #expect(emitted.count == 2)
        #expect(emitted.allSatisfy { $0.metadata.syncIdentifier == "50:FB:19:1B:B5:DC/2022-02-14T16:41:58/14490" })
        #expect(emitted.map(\.metadata.syncVersion) == [1, 2])
        #expect(emitted[0].metadata.entries["IngestImpedanceOhm"] == nil)
        #expect(emitted[1].metadata.entries["IngestImpedanceOhm"] == .number(503))
        #expect(emitted[1].quantity.value == 72.45)
        #expect(emitted[1].device?.model == "XMTZC02HM/XMTZC05HM")
        #expect(emitted[1].device?.name == "MIBFS")
        #expect(output.skipped == ["repeated-broadcast": 2])
    }

    @Test("An unset scale clock (1970) falls back to the reception time and says so")
    func unsetClock() throws {
        let session = try makeSession(name: "MIBFS", zone: "UTC")
        var output = AdapterOutput()
        let received = Date(timeIntervalSince1970: 1_700_000_123)
        session.receive(try bodyCompositionAdvertisement("02 26 b2 07 05 04 0f 02 01 ac 01 86 42", time: received), into: &output)
        let sample = try #require(samples(output).first)
        #expect(sample.start == received)
        #expect(sample.quantity.value == 85.15)
        #expect(sample.metadata.entries["IngestDeviceClockUnset"] == .bool(true))
        #expect(sample.metadata.entries["IngestImpedanceOhm"] == .number(428))
        #expect(sample.metadata.syncIdentifier == "50:FB:19:1B:B5:DC/1970-05-04T15:02:01/17030")
    }

    @Test("A malformed frame is rejected with the reason and the bytes; other advertisements are counted")
    func malformedAndOther() throws {
        let session = try makeSession()
        var output = AdapterOutput()
        session.receive(try smartScaleAdvertisement("22 9e 43 e5 07"), into: &output)
        session.receive(.advertisement(try makeAdvertisement(address: Self.scaleAddress, name: "MI_SCALE")), into: &output)
        #expect(samples(output).isEmpty)
        let rejection = try #require(output.rejections.first)
        #expect(output.rejections.count == 1)
        #expect(rejection.adapter == "xiaomi-scale")
        #expect(rejection.reason == "short-frame")
        #expect(rejection.detail.contains("22 9e 43 e5 07"))
        #expect(rejection.detail.contains("timestamp at offset 3"))
        #expect(output.skipped == ["no-scale-service-data": 1])
    }
}

import AdapterKit
import Foundation
import HealthModel
import TestSupport
import Testing
import Transport
@testable import GATTHealthProfiles

/// Drives the adapter with synthetic transport events (advertisements through `AdapterRouter`,
/// then a connection and attribute values with their characteristic UUIDs to the session, as
/// the conversation hands them over) and compares the whole records.
struct GATTHealthSessionTests {
    typealias HUnit = HealthModel.Unit

    /// A router with only this adapter, the device's session, an output, and helpers to feed them.
    final class Harness {
        let router: AdapterRouter
        var output = AdapterOutput()
        let handle: UInt16 = 0x0040
        private let zone: TimeZone
        /// Made at the first connection event, with what the router heard advertised.
        private var deviceSession: (any BLEAdapterSession)?

        init() throws {
            zone = try berlin()
            router = try AdapterRouter(adapters: [GATTHealthAdapter()], timeZone: zone)
        }

        private var session: any BLEAdapterSession {
            if let deviceSession { return deviceSession }
            let made = GATTHealthAdapter().makeSession(
                for: router.traits(for: testAddress) ?? BLEDeviceTraits(address: testAddress),
                context: AdapterContext(timeZone: zone, source: GATTHealthAdapter.id))
            deviceSession = made
            return made
        }

        /// An advertisement of the Weight Scale service (AD: flags 0x06, 16-bit UUID 0x181D).
        func advertise(at time: Date = captureStart) {
            router.route(.advertisement(BLEAdvertisement(
                time: time, address: testAddress, addressType: .public, eventType: .advInd, rssi: -60,
                data: hex("02 01 06 03 03 1D 18"))), into: &output)
        }

        func connect(at time: Date = captureStart) {
            session.receive(.connected(BLEConnection(
                time: time, handle: handle, peerAddress: testAddress, peerAddressType: .public, role: .central)),
                into: &output)
        }

        func disconnect(at time: Date) {
            session.receive(.disconnected(BLEDisconnection(time: time, handle: handle, peerAddress: nil, reason: 0x13)),
                            into: &output)
        }

        func value(_ frame: String, characteristic: UInt16?, service: UInt16, at time: Date = captureStart,
                   kind: GATTValueKind = .indication) {
            value(hex(frame), characteristic: characteristic, service: service, at: time, kind: kind)
        }

        func value(_ value: [UInt8], characteristic: UInt16?, service: UInt16, at time: Date = captureStart,
                   kind: GATTValueKind = .indication) {
            session.receive(.gattValue(GATTValue(
                time: time, connection: handle, peerAddress: nil, serviceUUID: BLEUUID(service),
                characteristicUUID: characteristic.map(BLEUUID.init), handle: 0x0010, value: value, kind: kind)),
                into: &output)
        }

        func finish() {
            router.finish(into: &output)
            deviceSession?.finish(into: &output)
        }

        /// The records with every UUID replaced by a fixed one, for whole-value comparison.
        var records: [HealthRecord] { output.records.map(stripUUIDs) }
    }

    static let fixedUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    static let device = Device(localIdentifier: "AA:BB:CC:DD:EE:FF")

    private static func berlin() throws -> TimeZone { try #require(TimeZone(identifier: "Europe/Berlin")) }

    private static func stripUUIDs(_ record: HealthRecord) -> HealthRecord {
        switch record {
        case .sample(var sample):
            sample.uuid = fixedUUID
            return .sample(sample)
        case .correlation(var correlation):
            correlation.uuid = fixedUUID
            correlation.objects = correlation.objects.map { member in
                var member = member
                member.uuid = fixedUUID
                return member
            }
            return .correlation(correlation)
        }
    }

    private static func metadata(_ sync: String, _ entries: [String: MetadataValue] = [:], serial: String? = nil) -> Metadata {
        Metadata(syncIdentifier: "AA:BB:CC:DD:EE:FF/" + sync, syncVersion: 1, timeZone: "Europe/Berlin",
                 deviceSerialNumber: serial, entries: entries)
    }

    private static func sample(
        _ type: QuantityType, _ value: Double, _ unit: HUnit, _ start: Date, _ end: Date? = nil,
        sync: String, _ entries: [String: MetadataValue] = [:], device: Device = device
    ) -> QuantitySample {
        QuantitySample(uuid: fixedUUID, type: type, quantity: Quantity(value: value, unit: unit), start: start,
                       end: end ?? start, source: "gatt-health", device: device, metadata: metadata(sync, entries))
    }

    private func at(_ seconds: Double) -> Date { captureStart.addingTimeInterval(seconds) }

    /// 2012-12-05 11:50:27 in Berlin (CET, UTC+1).
    let nordicStamp = Date(timeIntervalSince1970: 1_354_704_627)

    // MARK: Weight scale

    @Test func weightWithEveryFieldAndResend() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("0E 8C 3C DC 07 0C 05 0B 32 1B 01 FD 00 D6 06", characteristic: 0x2A9D, service: 0x181D)
        let sync = "scale/2012-12-05T11:50:27/user-1"
        let user: [String: MetadataValue] = [GATTMetadataKey.deviceUserID: .number(1)]
        let expected: [HealthRecord] = [
            .sample(Self.sample(.bodyMass, 77.5, .kilogram, nordicStamp, sync: sync, user)),
            .sample(Self.sample(.bodyMassIndex, 25.3, .count, nordicStamp, sync: sync, user)),
            .sample(Self.sample(.height, 1.75, .meter, nordicStamp, sync: sync, user)),
        ]
        #expect(harness.records == expected)

        // The scale sends its stored reading again on the next connection: same identities.
        harness.disconnect(at: at(5))
        harness.connect(at: at(60))
        harness.value("0E 8C 3C DC 07 0C 05 0B 32 1B 01 FD 00 D6 06", characteristic: 0x2A9D, service: 0x181D, at: at(61))
        #expect(harness.records == expected + expected)
        #expect(harness.output.rejections.isEmpty)
    }

    @Test func imperialWeightWithoutTimeStampUsesReceiveTime() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("09 BE 42 FD 00 B1 02", characteristic: 0x2A9D, service: 0x181D, at: at(0.25))
        let sync = "scale/2026-03-01T08:00:00.25Z"
        #expect(harness.records == [
            .sample(Self.sample(.bodyMass, 170.86, .pound, at(0.25), sync: sync)),
            .sample(Self.sample(.bodyMassIndex, 25.3, .count, at(0.25), sync: sync)),
            .sample(Self.sample(.height, 68.9, .inch, at(0.25), sync: sync)),
        ])
        // The pipeline's conversion gives the canonical units.
        let mass = try #require(harness.output.records.first?.samples.first)
        #expect(abs(try mass.canonicalValue() - 77.500_792_338) < 1e-6)
    }

    @Test func deviceTimeInTheFutureFallsBackToReceiveTime() throws {
        let harness = try Harness()
        harness.connect()
        // 2026-03-05 09:00:00, four days after the capture's clock.
        harness.value("02 8C 3C EA 07 03 05 09 00 00", characteristic: 0x2A9D, service: 0x181D)
        #expect(harness.records == [
            .sample(Self.sample(.bodyMass, 77.5, .kilogram, captureStart, sync: "scale/2026-03-05T09:00:00",
                                [GATTMetadataKey.deviceTime: .string("2026-03-05T09:00:00")])),
        ])
    }

    /// Device Information is read before the measurements arrive; the advertised Weight Scale
    /// service has already chosen the adapter, so the session sees those reads.
    @Test func deviceInformationFillsTheDevice() throws {
        let harness = try Harness()
        harness.advertise()
        harness.connect()
        harness.value(Array("Acme Health\0".utf8), characteristic: 0x2A29, service: 0x180A, kind: .read)
        harness.value(Array("BS-440".utf8), characteristic: 0x2A24, service: 0x180A, kind: .read)
        harness.value(Array("SN 0042 ".utf8), characteristic: 0x2A25, service: 0x180A, kind: .read)
        harness.value(Array("2.1".utf8), characteristic: 0x2A26, service: 0x180A, kind: .read)
        harness.value("00 8C 3C", characteristic: 0x2A9D, service: 0x181D, at: at(1))
        let sample = try #require(harness.output.records.first?.samples.first)
        #expect(sample.device == Device(manufacturer: "Acme Health", model: "BS-440", firmwareVersion: "2.1",
                                        localIdentifier: "AA:BB:CC:DD:EE:FF"))
        #expect(sample.metadata.deviceSerialNumber == "SN 0042")
    }

    // MARK: Body composition

    @Test func splitBodyCompositionIsMerged() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("46 10 EB 00 DC 07 0C 05 0B 32 1B 01 54 2E", characteristic: 0x2A9C, service: 0x181B, at: at(1))
        #expect(harness.records.isEmpty)  // waiting for the second half
        harness.value("00 1E FF FF A6 13 8C 3C D6 06", characteristic: 0x2A9C, service: 0x181B, at: at(1.1))
        let sync = "scale/2012-12-05T11:50:27/user-1"
        let user: [String: MetadataValue] = [GATTMetadataKey.deviceUserID: .number(1)]
        var fatEntries = user
        fatEntries[GATTMetadataKey.bodyImpedance] = .number(503)
        #expect(harness.records == [
            .sample(Self.sample(.bodyFatPercentage, 0.235, .percent, nordicStamp, sync: sync, fatEntries)),
            .sample(Self.sample(.bodyMass, 77.5, .kilogram, nordicStamp, sync: sync, user)),
            .sample(Self.sample(.leanBodyMass, 59.3, .kilogram, nordicStamp, sync: sync, user)),
            .sample(Self.sample(.height, 1.75, .meter, nordicStamp, sync: sync, user)),
        ])
    }

    @Test func loneHalfIsEmittedOnDisconnectionAndAtTheEnd() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("00 10 EB 00", characteristic: 0x2A9C, service: 0x181B, at: at(1))
        harness.disconnect(at: at(2))
        #expect(harness.records == [
            .sample(Self.sample(.bodyFatPercentage, 0.235, .percent, at(1), sync: "scale/2026-03-01T08:00:01Z")),
        ])
        // A half that carries nothing usable, ended by the capture's end: rejected, not stored.
        harness.connect(at: at(10))
        harness.value("00 10 FF FF", characteristic: 0x2A9C, service: 0x181B, at: at(11))
        harness.finish()
        #expect(harness.records.count == 1)
        #expect(harness.output.rejections.map(\.reason) == ["unsuccessful-measurement"])
    }

    /// A Beurer BF788's stored history (frames of the HCI snoop in ble-scale-sync issue #229, in
    /// its tests/scales/beurer-bf720.test.ts): each weighing (2A9D) comes with an all-zero
    /// composition placeholder (2A9C, only the basal metabolism set), which yields nothing (it
    /// was stored as 0 % body fat); the one real composition frame yields 24.3 %.
    @Test func beurerBF788PlaceholderCompositionYieldsNothing() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("0e 20 5c ea 07 07 0e 17 29 20 01 40 01 80 07", characteristic: 0x2A9D, service: 0x181D, at: at(1))
        harness.value("98 03 00 00 96 23 00 00 00 00 00 00 00 00", characteristic: 0x2A9C, service: 0x181B, at: at(1.1))
        #expect(harness.records.flatMap(\.samples).map(\.type) == [.bodyMass, .bodyMassIndex, .height])
        #expect(harness.output.skipped == ["body-composition-placeholder": 1])
        #expect(harness.output.rejections.isEmpty)
        harness.value("98 03 f3 00 96 23 89 01 40 42 fa 2f 55 0f", characteristic: 0x2A9C, service: 0x181B, at: at(2))
        let fat = harness.records.flatMap(\.samples).filter { $0.type == .bodyFatPercentage }
        #expect(fat.map(\.quantity.value) == [0.243])
        #expect(fat.first?.metadata.entries[GATTMetadataKey.bodyImpedance] == .number(392.5))
    }

    @Test func singlePacketFlushesAWaitingHalfFirst() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("00 10 EB 00", characteristic: 0x2A9C, service: 0x181B, at: at(1))
        harness.value("00 00 F0 00", characteristic: 0x2A9C, service: 0x181B, at: at(2))
        #expect(harness.records == [
            .sample(Self.sample(.bodyFatPercentage, 0.235, .percent, at(1), sync: "scale/2026-03-01T08:00:01Z")),
            .sample(Self.sample(.bodyFatPercentage, 0.24, .percent, at(2), sync: "scale/2026-03-01T08:00:02Z")),
        ])
    }

    /// The real BF788 frames of ble-scale-sync's tests: the composition (no time stamp, no user)
    /// takes its weight's time and user; the zeroed placeholder after another weight gives nothing;
    /// a composition more than 10 s after its weight keeps its own receive time.
    @Test func compositionJoinsTheWeightBeforeItAndPlaceholdersGiveNothing() throws {
        let stamp = Date(timeIntervalSince1970: 1_784_065_292)  // 2026-07-14 23:41:32 in Berlin (CEST)
        func after(_ seconds: Double) -> Date { stamp.addingTimeInterval(10 + seconds) }
        let harness = try Harness()
        harness.connect(at: after(0))
        harness.value("0e 20 5c ea 07 07 0e 17 29 20 01 40 01 80 07", characteristic: 0x2A9D, service: 0x181D, at: after(1))
        harness.value("98 03 f3 00 96 23 89 01 40 42 fa 2f 55 0f", characteristic: 0x2A9C, service: 0x181B, at: after(2))
        let sync = "scale/2026-07-14T23:41:32/user-1"
        let user: [String: MetadataValue] = [GATTMetadataKey.deviceUserID: .number(1)]
        var fatEntries = user
        fatEntries[GATTMetadataKey.bodyImpedance] = .number(392.5)
        #expect(harness.records.last == .sample(Self.sample(.bodyFatPercentage, 0.243, .percent, stamp, sync: sync, fatEntries)))
        #expect(harness.records.count == 4)

        harness.value("0e 20 5c ea 07 07 0e 17 29 20 01 40 01 80 07", characteristic: 0x2A9D, service: 0x181D, at: after(3))
        harness.value("98 03 00 00 96 23 00 00 00 00 00 00 00 00", characteristic: 0x2A9C, service: 0x181B, at: after(4))
        #expect(harness.records.count == 7, "the weight again, no body fat")
        #expect(harness.output.skipped == ["body-composition-placeholder": 1])

        harness.value("0e 20 5c ea 07 07 0e 17 29 20 01 40 01 80 07", characteristic: 0x2A9D, service: 0x181D, at: after(5))
        harness.value("00 00 f3 00", characteristic: 0x2A9C, service: 0x181B, at: after(16))
        #expect(harness.records.last == .sample(Self.sample(.bodyFatPercentage, 0.243, .percent, after(16),
                                                            sync: "scale/2026-07-14T21:41:58Z")))
        #expect(harness.output.rejections.isEmpty)
    }

    // MARK: Thermometer

    @Test func thermometerNordicExample() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("06 B0 0E 00 FE DC 07 0C 05 0B 32 1B 04", characteristic: 0x2A1C, service: 0x1809)
        #expect(harness.records == [
            .sample(Self.sample(.bodyTemperature, 37.6, .degreeCelsius, nordicStamp, sync: "2A1C/2012-12-05T11:50:27",
                                [GATTMetadataKey.bodyTemperatureSensorLocation: .number(4)])),
        ])
    }

    @Test func fahrenheitTakesTheTemperatureTypeCharacteristic() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("06", characteristic: 0x2A1D, service: 0x1809, kind: .read)  // mouth
        harness.value("01 DA 03 00 FF", characteristic: 0x2A1E, service: 0x1809, at: at(1), kind: .notification)
        harness.value("01 DA 03 00 FF", characteristic: 0x2A1C, service: 0x1809, at: at(2))
        #expect(harness.records == [
            .sample(Self.sample(.bodyTemperature, 98.6, .degreeFahrenheit, at(2), sync: "2A1C/2026-03-01T08:00:02Z",
                                [GATTMetadataKey.bodyTemperatureSensorLocation: .number(6)])),
        ])
        #expect(harness.output.skipped == ["intermediate-temperature": 1])
        let celsius = try #require(harness.output.records.first?.samples.first).canonicalValue()
        #expect(abs(celsius - 37) < 1e-9)
    }

    // MARK: Heart rate

    @Test func heartRateNotifications() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("01", characteristic: 0x2A38, service: 0x180D, kind: .read)  // chest
        harness.value("1E 55 32 00 21 00", characteristic: 0x2A37, service: 0x180D, at: at(1), kind: .notification)
        harness.value("04 FF", characteristic: 0x2A37, service: 0x180D, at: at(2), kind: .notification)
        harness.value("00 00", characteristic: 0x2A37, service: 0x180D, at: at(3), kind: .notification)
        harness.value("1F 01 01 32 01 01 00 02 01 FF FF", characteristic: 0x2A37, service: 0x180D, at: at(4),
                      kind: .notification)
        let chest: [String: MetadataValue] = [GATTMetadataKey.heartRateSensorLocation: .number(1)]
        #expect(harness.records == [
            .sample(Self.sample(.heartRate, 85, .countPerMinute, at(1), sync: "2A37/2026-03-01T08:00:01Z", chest)),
            .sample(Self.sample(.heartRate, 257, .countPerMinute, at(4), sync: "2A37/2026-03-01T08:00:04Z", chest)),
        ])
        #expect(harness.output.skipped == ["no-sensor-contact": 1, "no-heart-rate": 1])
    }

    // MARK: Running speed and cadence

    /// One session fed an RSC sequence: speeds by the walking/running flag, distance from the
    /// total-distance counter (a reset gives none), steps from cadence × elapsed time.
    @Test func rscSequenceGivesSpeedDistanceAndSteps() throws {
        let harness = try Harness()
        harness.connect()
        let sequence = [
            "02 80 01 78 E8 03 00 00",  // walking 1.5 m/s, 120 /min, 1000 dm
            "06 00 03 78 F4 03 00 00",  // running 3 m/s, 120 /min, 1012 dm
            "06 00 03 B4 00 04 00 00",  // running 3 m/s, 180 /min, 1024 dm
            "06 00 03 B4 05 00 00 00",  // counter reset to 5 dm
        ]
        for (second, frame) in sequence.enumerated() {
            harness.value(frame, characteristic: 0x2A53, service: 0x1814, at: at(Double(second)), kind: .notification)
        }
        let speed = HUnit.meter.unitDivided(by: .second)
        let distance: [String: MetadataValue] = [GATTMetadataKey.derivedFrom: .string("total-distance")]
        let cadence: [String: MetadataValue] = [GATTMetadataKey.derivedFrom: .string("cadence")]
        #expect(harness.records == [
            .sample(Self.sample(.walkingSpeed, 1.5, speed, at(0), sync: "2A53/2026-03-01T08:00:00Z")),
            .sample(Self.sample(.runningSpeed, 3, speed, at(1), sync: "2A53/2026-03-01T08:00:01Z")),
            .sample(Self.sample(.distanceWalkingRunning, 1.2, .meter, at(0), at(1), sync: "2A53/2026-03-01T08:00:01Z", distance)),
            .sample(Self.sample(.stepCount, 2, .count, at(0), at(1), sync: "2A53/2026-03-01T08:00:01Z", cadence)),
            .sample(Self.sample(.runningSpeed, 3, speed, at(2), sync: "2A53/2026-03-01T08:00:02Z")),
            .sample(Self.sample(.distanceWalkingRunning, 1.2, .meter, at(1), at(2), sync: "2A53/2026-03-01T08:00:02Z", distance)),
            .sample(Self.sample(.stepCount, 3, .count, at(1), at(2), sync: "2A53/2026-03-01T08:00:02Z", cadence)),
            .sample(Self.sample(.runningSpeed, 3, speed, at(3), sync: "2A53/2026-03-01T08:00:03Z")),
            .sample(Self.sample(.stepCount, 3, .count, at(2), at(3), sync: "2A53/2026-03-01T08:00:03Z", cadence)),
        ])
        let distances = harness.output.records.flatMap(\.samples).filter { $0.type == .distanceWalkingRunning }
        #expect(distances.allSatisfy { $0.quantity.value > 0 })
    }

    // MARK: Blood pressure

    @Test func bloodPressureNordicFullExample() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("1E 8A 00 58 00 78 00 00 00 04 11 14 29 3B 3C 00 01 27 00", characteristic: 0x2A35, service: 0x1810)
        // The time stamp has year 0 (unknown), so the receive time is used.
        let sync = "2A35/2026-03-01T08:00:00Z/user-1"
        let user: [String: MetadataValue] = [GATTMetadataKey.deviceUserID: .number(1)]
        var correlationEntries = user
        correlationEntries[GATTMetadataKey.bloodPressureMeasurementStatus] = .number(0b100111)
        let expectedCorrelation = Correlation(
            uuid: Self.fixedUUID, type: .bloodPressure, start: captureStart, end: captureStart,
            objects: [
                Self.sample(.bloodPressureSystolic, 138, .millimeterOfMercury, captureStart, sync: sync, user),
                Self.sample(.bloodPressureDiastolic, 88, .millimeterOfMercury, captureStart, sync: sync, user),
            ],
            source: "gatt-health", device: Self.device, metadata: Self.metadata(sync, correlationEntries))
        #expect(harness.records == [
            .correlation(expectedCorrelation),
            .sample(Self.sample(.heartRate, 60, .countPerMinute, captureStart, sync: sync, user)),
        ])
        guard case .correlation(let correlation) = try #require(harness.output.records.first) else {
            Issue.record("first record is not a correlation")
            return
        }
        #expect(throws: Never.self) { try correlation.validate() }
    }

    @Test func bloodPressureInKilopascalsWithIntermediateCuffPressure() throws {
        let harness = try Harness()
        harness.connect()
        // Intermediate Cuff Pressure (Nordic's test layout): current cuff pressure, NaN, NaN.
        harness.value("00 8A 00 FF 07 FF 07", characteristic: 0x2A36, service: 0x1810, kind: .notification)
        harness.value("15 BD F0 0B 00 9F F0 3C 00 12 00", characteristic: 0x2A35, service: 0x1810, at: at(30))
        let kilopascal = HUnit.pascalUnit(with: .kilo)
        let sync = "2A35/2026-03-01T08:00:30Z"
        let records = harness.records
        #expect(records.count == 2)
        guard case .correlation(let correlation) = try #require(records.first) else {
            Issue.record("first record is not a correlation")
            return
        }
        #expect(correlation.objects == [
            Self.sample(.bloodPressureSystolic, 18.9, kilopascal, at(30), sync: sync),
            Self.sample(.bloodPressureDiastolic, 11, kilopascal, at(30), sync: sync),
        ])
        #expect(correlation.metadata == Self.metadata(sync, [GATTMetadataKey.bloodPressureMeasurementStatus: .number(18)]))
        #expect(records.last == .sample(Self.sample(.heartRate, 60, .countPerMinute, at(30), sync: sync)))
        #expect(harness.output.skipped == ["intermediate-cuff-pressure": 1])
        let systolic = try #require(correlation.objects.first)
        #expect(abs(try systolic.canonicalValue() - 141.762) < 0.01)
    }

    // MARK: Glucose

    @Test func glucoseRecords() throws {
        let harness = try Harness()
        harness.connect()
        // Sequence 3, 2019-02-27 11:10:30, 95 mg/dL, capillary whole blood from a finger.
        harness.value("02 03 00 E3 07 02 1B 0B 0A 1E 5F B0 11", characteristic: 0x2A18, service: 0x1808,
                      kind: .notification)
        harness.value("02 03 00 00", characteristic: 0x2A34, service: 0x1808, kind: .notification)
        // Sequence 4, offset -5 min, 5.6 mmol/L.
        harness.value("07 04 00 E3 07 02 1B 0B 0A 1E FB FF 38 C0 11", characteristic: 0x2A18, service: 0x1808,
                      kind: .notification)
        // Sequence 5 without a concentration.
        harness.value("00 05 00 E3 07 02 1B 0B 0A 1E", characteristic: 0x2A18, service: 0x1808, kind: .notification)
        let place: [String: MetadataValue] = [
            GATTMetadataKey.glucoseSampleType: .number(1), GATTMetadataKey.glucoseSampleLocation: .number(1),
        ]
        func entries(_ sequence: Double) -> [String: MetadataValue] {
            place.merging([GATTMetadataKey.glucoseSequenceNumber: .number(sequence)]) { first, _ in first }
        }
        #expect(harness.records == [
            .sample(Self.sample(.bloodGlucose, 95, .milligramsPerDeciliter, Date(timeIntervalSince1970: 1_551_262_230),
                                sync: "2A18/3/2019-02-27T11:10:30", entries(3))),
            .sample(Self.sample(.bloodGlucose, 5.6, .millimolesBloodGlucosePerLiter,
                                Date(timeIntervalSince1970: 1_551_261_930), sync: "2A18/4/2019-02-27T11:10:30", entries(4))),
        ])
        // Sequence 3 announced no context: the context for it finds no waiting record.
        #expect(harness.output.skipped == ["glucose-context-unmatched": 1, "no-glucose-concentration": 1])
    }

    /// xDrip+ and Tidepool's rules: a record announcing its context (flag 0x10) waits for it and takes
    /// its meal; a context of meal 6 makes the record a ketone reading (not glucose); a control-solution
    /// test (type 10) is not stored; a waiting record whose context never comes is kept at the end.
    @Test func glucoseContextsKetonesAndControlSolution() throws {
        let harness = try Harness()
        harness.connect()
        // Sequence 7, 2019-02-27 11:10:30, 95 mg/dL, context follows; its context: meal 2 (postprandial).
        harness.value("12 07 00 E3 07 02 1B 0B 0A 1E 5F B0 11", characteristic: 0x2A18, service: 0x1808, kind: .notification)
        #expect(harness.records.isEmpty)
        harness.value("02 07 00 02", characteristic: 0x2A34, service: 0x1808, kind: .notification)
        // Sequence 8 with context meal 6 (ketone); sequence 9 a control-solution test (type 10, location 4).
        harness.value("12 08 00 E3 07 02 1B 0B 0B 1E 0C B0 11", characteristic: 0x2A18, service: 0x1808, kind: .notification)
        harness.value("02 08 00 06", characteristic: 0x2A34, service: 0x1808, kind: .notification)
        harness.value("02 09 00 E3 07 02 1B 0B 0C 1E 6E B0 4A", characteristic: 0x2A18, service: 0x1808, kind: .notification)
        // Sequence 10 announces a context that never comes (extended flags and carbohydrate parse as well).
        harness.value("12 0A 00 E3 07 02 1B 0B 0D 1E 64 B0 11", characteristic: 0x2A18, service: 0x1808, kind: .notification)
        harness.disconnect(at: at(5))
        let place: [String: MetadataValue] = [
            GATTMetadataKey.glucoseSampleType: .number(1), GATTMetadataKey.glucoseSampleLocation: .number(1),
        ]
        #expect(harness.records == [
            .sample(Self.sample(.bloodGlucose, 95, .milligramsPerDeciliter, Date(timeIntervalSince1970: 1_551_262_230),
                                sync: "2A18/7/2019-02-27T11:10:30",
                                place.merging([GATTMetadataKey.glucoseSequenceNumber: .number(7),
                                               GATTMetadataKey.glucoseMeal: .number(2),
                                               GATTMetadataKey.bloodGlucoseMealTime: .number(2)]) { first, _ in first })),
            .sample(Self.sample(.bloodGlucose, 100, .milligramsPerDeciliter, Date(timeIntervalSince1970: 1_551_262_410),
                                sync: "2A18/10/2019-02-27T11:13:30",
                                place.merging([GATTMetadataKey.glucoseSequenceNumber: .number(10)]) { first, _ in first })),
        ])
        #expect(harness.output.skipped == ["ketone-reading": 1, "control-solution": 1])
    }

    @Test func glucoseContextLayouts() throws {
        // Extended flags, carbohydrate id 1 with 50 g (SFLOAT 0xD032 kg), meal 3 (fasting: preprandial).
        let context = try GlucoseMeasurementContext(decoding: hex("83 D3 00 00 01 32 D0 03"))
        #expect(context.sequenceNumber == 211)
        #expect(context.meal == 3)
        #expect(context.healthKitMealTime == 1)
        #expect(try GlucoseMeasurementContext(decoding: hex("00 05 00")).meal == nil)
        #expect(throws: GATTDecodeError.self) { try GlucoseMeasurementContext(decoding: hex("02 05 00")) }
        #expect(GlucoseMeterFamily(manufacturer: "Roche") == .accuChek)
        #expect(GlucoseMeterFamily(manufacturer: "Ascensia Diabetes Care") == .contour)
        #expect(GlucoseMeterFamily(manufacturer: "i-SENS") == .standard)
        #expect(GlucoseMeterFamily.accuChek.clockCharacteristics == [GATTHealthUUID.dateTime, GATTHealthUUID.currentTime])
    }

    // MARK: Pulse oximeter

    @Test func pulseOximeterSpotCheckAndContinuous() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("01 61 00 48 00 E8 07 06 0F 07 1E 00", characteristic: 0x2A5E, service: 0x1822)
        harness.value("00 62 00 3C 00", characteristic: 0x2A5F, service: 0x1822, at: at(1), kind: .notification)
        // 2024-06-15 07:30:00 in Berlin (CEST, UTC+2).
        let stamp = Date(timeIntervalSince1970: 1_718_429_400)
        #expect(harness.records == [
            .sample(Self.sample(.oxygenSaturation, 0.97, .percent, stamp, sync: "2A5E/2024-06-15T07:30:00")),
            .sample(Self.sample(.heartRate, 72, .countPerMinute, stamp, sync: "2A5E/2024-06-15T07:30:00")),
            .sample(Self.sample(.oxygenSaturation, 0.98, .percent, at(1), sync: "2A5F/2026-03-01T08:00:01Z")),
            .sample(Self.sample(.heartRate, 60, .countPerMinute, at(1), sync: "2A5F/2026-03-01T08:00:01Z")),
        ])
    }

    // MARK: Malformed values

    @Test(arguments: [
        ("00 FF FF", UInt16(0x2A9D), UInt16(0x181D), "unsuccessful-measurement",
         "2A9D Weight Measurement: weight at offset 1 is 0xFFFF (measurement unsuccessful); value 00 ff ff"),
        ("00 8C", 0x2A9D, 0x181D, "short-frame",
         "2A9D Weight Measurement: weight at offset 1 needs 2 bytes, 1 left; value 00 8c"),
        ("10 8C 3C", 0x2A9D, 0x181D, "reserved-flags",
         "2A9D Weight Measurement: flags 0x0010 set reserved bits 0x0010; value 10 8c 3c"),
        ("00 FF FF 7F 00", 0x2A1C, 0x1809, "special-value",
         "2A1C Temperature Measurement: temperature at offset 1 is NaN, not a number; value 00 ff ff 7f 00"),
        ("02 8C 3C DC 07 0D 05 0B 32 1B", 0x2A9D, 0x181D, "invalid-timestamp",
         "2A9D Weight Measurement: time-stamp at offset 3 is not a valid date and time: dc 07 0d 05 0b 32 1b; "
            + "value 02 8c 3c dc 07 0d 05 0b 32 1b"),
        ("", 0x2A37, 0x180D, "short-frame",
         "2A37 Heart Rate Measurement: flags at offset 0 needs 1 byte, 0 left; value "),
        ("00 00 FF FF", 0x2A9C, 0x181B, "unsuccessful-measurement",
         "2A9C Body Composition Measurement: body-fat-percentage at offset 2 is 0xFFFF (measurement unsuccessful); "
            + "value 00 00 ff ff"),
    ])
    func malformedValuesAreRejectedWithReasons(
        frame: String, characteristic: UInt16, service: UInt16, reason: String, detail: String
    ) throws {
        let harness = try Harness()
        harness.connect()
        harness.value(frame, characteristic: characteristic, service: service, at: at(3))
        #expect(harness.records.isEmpty)
        #expect(harness.output.rejections == [
            AdapterRejection(adapter: "gatt-health", reason: reason, detail: detail, time: at(3)),
        ])
    }

    @Test func writesUnknownAttributesAndOtherCharacteristicsAreIgnored() throws {
        let harness = try Harness()
        harness.connect()
        harness.value("00 8C 3C", characteristic: 0x2A9D, service: 0x181D, kind: .write)
        harness.value("00 8C 3C", characteristic: nil, service: 0x181D, kind: .notification)
        harness.value("64", characteristic: 0x2A19, service: 0x180F, kind: .read)  // battery level
        harness.value("01 00 00 00", characteristic: 0x2A9E, service: 0x181D, kind: .read)  // weight scale feature
        #expect(harness.records.isEmpty)
        #expect(harness.output.rejections.isEmpty)
        #expect(harness.output.skipped == ["unidentified-attribute": 1])
    }
}

import BLESimulators
import Foundation
import SQLiteStore
import Testing
import Transport

/// Issue 25's connected health families through the daemon: a BerryMed oximeter's stream, a
/// Medisana cuff's stored readings, a glucose meter whose records carry contexts.
extension ConversationDaemonTests {
    /// The oximeter streams 300 packets (five seconds at its rate) with a glitch every tenth
    /// packet, after 40 packets without a finger, then drops the link: what is stored is one
    /// reading per second of the stream, each the median (97 %, 72 /min, never the glitch),
    /// not one per packet; the second in progress when the link dropped is kept too.
    @Test func aBerryMedOximetersStreamIsStoredOncePerSecond() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "berrymed-oximeter", "oxygenSaturation", "heartRate"])
        let oximeter = SimulatedBerryMedOximeter(saturation: 97, pulse: 72, packets: 300, noFingerPackets: 40)
        try await runDaemon(store: scenario.store, name: "BM1000C", profile: SimulatedBerryMedOximeter.profile,
                            responder: oximeter, listen: .seconds(6))
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let saturations = try store.samples(type: .oxygenSaturation)
        let pulses = try store.samples(type: .heartRate)
        #expect(!saturations.isEmpty)
        #expect(saturations.count < 300 / 10, "one per second of arrival, not per packet: \(saturations.count)")
        #expect(Set(saturations.map(\.quantity.value)) == [0.97])
        #expect(Set(try pulses.map { try $0.quantity.doubleValue(for: .countPerMinute).rounded() }) == [72])
        #expect(pulses.count == saturations.count)
        let seconds = saturations.map { $0.start.timeIntervalSince1970 }
        #expect(seconds.allSatisfy { $0 == $0.rounded(.down) }, "each at its whole second")
        #expect(Set(seconds).count == seconds.count, "one reading per second")
    }

    /// A Medisana BU 530 (advertised as 1872B) indicates its two users' stored readings: each is
    /// a blood-pressure correlation and a heart rate with its user.
    @Test func aMedisanaCuffsStoredReadingsArriveWithTheirUsers() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "medisana-bp", "bloodPressureSystolic", "bloodPressureDiastolic", "heartRate"])
        // flags 0E: 128/82 mmHg, MAP 97, 2026-03-14 08:05:30, pulse 72, user 1; 141/90, MAP 107, 2026-03-15 19:42:10, 66, user 2.
        let readings: [[UInt8]] = [
            [0x0E, 0x80, 0x00, 0x52, 0x00, 0x61, 0x00, 0xEA, 0x07, 3, 14, 8, 5, 30, 0x48, 0x00, 0x01],
            [0x0E, 0x8D, 0x00, 0x5A, 0x00, 0x6B, 0x00, 0xEA, 0x07, 3, 15, 19, 42, 10, 0x42, 0x00, 0x02],
        ]
        let profile = SimulatedProfile(name: "1872B", services: [
            .init(uuid: BLEUUID(0x1810), characteristics: [
                .init(uuid: BLEUUID(0x2A35), properties: 0x20, updates: readings),
            ]),
        ])
        try await runDaemon(store: scenario.store, name: "1872B", profile: profile, responder: nil, listen: .seconds(6))
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let systolic = try store.samples(type: .bloodPressureSystolic).sorted { $0.start < $1.start }
        #expect(systolic.map(\.quantity.value) == [128, 141])
        #expect(systolic.map { $0.metadata.entries["IngestDeviceUserID"] } == [.number(1), .number(2)])
        #expect(try store.samples(type: .bloodPressureDiastolic).map(\.quantity.value).sorted() == [82, 90])
        #expect(try store.samples(type: .heartRate).map { try $0.quantity.doubleValue(for: .countPerMinute).rounded() }.sorted()
            == [66, 72])
        #expect(systolic.allSatisfy { $0.source == "medisana-bp" })
    }

    /// A Femometer Vinca II (BM-Vinca2) indicates a reading in the standard Health Thermometer
    /// layout: the reading is stored under the family's source with its sensor location.
    @Test func aFemometersReadingIsStored() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "femometer", "bodyTemperature"])
        // flags 06: 36.42 °C (FLOAT 3642 × 10^-2), 2026-03-15 06:45:10, type 6 (mouth).
        let profile = SimulatedProfile(name: "BM-Vinca2", services: [
            .init(uuid: BLEUUID(0x1809), characteristics: [
                .init(uuid: BLEUUID(0x2A1C), properties: 0x20,
                      updates: [[0x06, 0x3A, 0x0E, 0x00, 0xFE, 0xEA, 0x07, 3, 15, 6, 45, 10, 0x06]]),
            ]),
        ])
        try await runDaemon(store: scenario.store, name: "BM-Vinca2", profile: profile, responder: nil, listen: .seconds(6))
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyTemperature)
        #expect(try samples.map { try $0.quantity.doubleValue(for: .degreeCelsius) } == [36.42])
        #expect(samples.first?.source == "femometer")
        #expect(samples.first?.metadata.entries["HKBodyTemperatureSensorLocation"] == .number(6))
    }

    /// A meter whose every record announces its context drops the link after record 6, before
    /// record 6's context: records 1…5 are kept with their meal, record 6 is not half-stored, and
    /// the next contact asks from 6 on and gets 6…10 with theirs.
    @Test func aGlucoseRecordWaitingForItsContextIsAskedForAgainAfterADroppedLink() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "gatt-health", "bloodGlucose"])
        let meter = SimulatedGlucoseMeter(records: 10, withContexts: true)
        meter.dropLink(afterRecords: 6)
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6))
        #expect(try glucoseSequenceNumbers(scenario.store) == Array(1...5))
        try await runDaemon(store: scenario.store, name: "Meter", services: [0x1808], profile: SimulatedGlucoseMeter.profile,
                            responder: meter, listen: .seconds(6))
        #expect(meter.requests == [[0x01, 0x01], [0x01, 0x03, 0x01, 6, 0]])
        #expect(try glucoseSequenceNumbers(scenario.store) == Array(1...10))
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        #expect(try store.samples(type: .bloodGlucose).allSatisfy {
            $0.metadata.entries["HKBloodGlucoseMealTime"] == .number(1) && $0.metadata.entries["IngestGlucoseMeal"] == .number(1)
        })
    }
}

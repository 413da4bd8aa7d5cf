import BLESimulators
import Foundation
import HealthModel
import Logging
import SQLiteStore
import Testing

/// Omron blood-pressure monitors through the daemon: a simulated HEM-7361T (two users, its
/// memory protocol over four TX and four RX characteristics) answers the conversation.
extension ConversationDaemonTests {
    static let endSession: [UInt8] = [0x08, 0x0F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07]

    /// `count` readings of `user`: pressures and pulse varying, an hour apart from 2026-11-01 07:00.
    static func omronReadings(_ count: Int, user: Int, from start: Int = 0) -> [SimulatedOmronMonitor.Reading] {
        (start..<(start + count)).map { index in
            SimulatedOmronMonitor.Reading(systolic: 110 + index % 30 + 5 * user, diastolic: 70 + index % 15, pulse: 55 + index % 25,
                                          year: 2026, month: 11, day: 1 + index / 24, hour: index % 24, minute: 10 * user,
                                          second: 7)
        }
    }

    private func bloodPressure(_ store: String) throws -> (systolic: [QuantitySample], heartRate: [QuantitySample]) {
        let health = try HealthStore(path: store)
        defer { health.close() }
        return (try health.samples(type: .bloodPressureSystolic), try health.samples(type: .heartRate))
    }

    private func runMonitor(_ scenario: Scenario, _ monitor: SimulatedOmronMonitor, options: [String: String] = [:],
                            contacts: Int) async throws {
        try await runDaemon(store: scenario.store, name: SimulatedOmronMonitor.profile.name,
                            profile: SimulatedOmronMonitor.profile, responder: monitor,
                            options: ["omron-model": "HEM-7361T"].merging(options) { $1 },
                            until: { monitor.frames.filter { $0 == Self.endSession }.count == contacts })
    }

    /// Two users with 40 readings (25 and 15): the monitor in pairing mode takes ingestd's key,
    /// every reading arrives once as a blood-pressure correlation and a heart rate with its user
    /// slot (the household assigns by it), the clock is set, the memory stays intact. After 3 new
    /// readings the next contact reads exactly those 3. With `omron-erase=true` what was
    /// committed is erased, and only that; while the types are undecided nothing is.
    @Test func anOmronMonitorsReadingsArriveOnceEachAndItsMemoryIsKept() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "omron-bp", "--all"])
        await scenario.run(["people", "add", "ann", "--scale-user-index", "1"])
        await scenario.run(["people", "add", "bob", "--scale-user-index", "2"])
        let monitor = SimulatedOmronMonitor(readings: [Self.omronReadings(25, user: 0), Self.omronReadings(15, user: 1)])
        let before = Date()
        try await runMonitor(scenario, monitor, contacts: 1)
        let key = try #require(monitor.key, "a key programmed in pairing mode")
        #expect(key.count == 16 && key != Array("ingestd omron bp".utf8), "a random key, not the default one")
        #expect(monitor.readingReads == 40)
        var (systolic, heartRate) = try bloodPressure(scenario.store)
        #expect(systolic.count == 40 && heartRate.count == 40)
        #expect(systolic.filter { $0.metadata.entries[MetadataKey.deviceUserID] == .number(2) }.count == 15)
        let first = try #require(systolic.first { $0.metadata.syncIdentifier?.hasSuffix("/1/20261101000007") == true })
        #expect(first.quantity == Quantity(value: 110, unit: .millimeterOfMercury))
        let store = try HealthStore(path: scenario.store)
        #expect(try store.sampleCount(of: store.person(named: "bob")) == 15 * 3, "systolic, diastolic and pulse of user 2")
        store.close()
        #expect(monitor.storedSlots(user: 0).count == 25 && monitor.storedSlots(user: 1).count == 15, "memory intact")
        var berlin = Calendar(identifier: .gregorian)
        berlin.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let clock = monitor.clock
        let written = try #require(berlin.date(from: DateComponents(
            year: 2000 + Int(clock[0]), month: Int(clock[1]), day: Int(clock[2]), hour: Int(clock[3]),
            minute: Int(clock[4]), second: Int(clock[5]))))
        #expect(abs(written.timeIntervalSince(before)) < 60, "the monitor's clock set to local time: \(clock)")

        for reading in Self.omronReadings(2, user: 0, from: 25) { monitor.add(reading, user: 0) }
        monitor.add(Self.omronReadings(1, user: 1, from: 15)[0], user: 1)
        try await runMonitor(scenario, monitor, contacts: 2)
        #expect(monitor.readingReads == 43, "the second contact (unlocked with the remembered key) read exactly the 3 new readings")
        #expect(monitor.key == key)
        (systolic, heartRate) = try bloodPressure(scenario.store)
        #expect(systolic.count == 43 && heartRate.count == 43)

        let undecided = try Scenario()
        let held = SimulatedOmronMonitor(readings: [Self.omronReadings(3, user: 0), []])
        try await runMonitor(undecided, held, options: ["omron-erase": "true"], contacts: 1)
        #expect(held.storedSlots(user: 0).count == 3, "held readings are not erased")

        monitor.add(Self.omronReadings(1, user: 1, from: 16)[0], user: 1)
        try await runMonitor(scenario, monitor, options: ["omron-erase": "true"], contacts: 3)
        #expect(monitor.storedSlots(user: 1) == Array(0..<16), "only the committed new reading (slot 16) is erased")
        #expect(monitor.storedSlots(user: 0).count == 27)
        #expect(try bloodPressure(scenario.store).systolic.count == 44)
    }

    /// A monitor that knows another host's key and is not in pairing mode: nothing is read and
    /// the log says how to put it in pairing mode.
    @Test func anOmronMonitorNotInPairingModeIsReportedWithWhatToDo() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "omron-bp", "--all"])
        let monitor = SimulatedOmronMonitor(readings: [Self.omronReadings(3, user: 0), []], pairingMode: false,
                                            key: [UInt8](repeating: 0x5A, count: 16))
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: SimulatedOmronMonitor.profile.name,
                            profile: SimulatedOmronMonitor.profile, responder: monitor, options: ["omron-model": "HEM-7361T"],
                            listen: .seconds(4), log: log)
        let messages = log.records.map(\.message)
        #expect(messages.contains { $0.contains("pairing-needed") && $0.contains("until -P- blinks") }, "\(messages.joined(separator: "\n"))")
        #expect(monitor.frames.isEmpty, "its memory is not touched")
        #expect(monitor.key == [UInt8](repeating: 0x5A, count: 16))
        #expect(try bloodPressure(scenario.store).systolic.isEmpty)
    }

    /// The monitor drops the link after the 15th reading: those 15 are kept; the next contact
    /// reads the other 25 and none twice.
    @Test func anOmronLinkDroppedMidTransferKeepsTheReadingsAndTheRestComesNextTime() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "omron-bp", "--all"])
        let monitor = SimulatedOmronMonitor(readings: [Self.omronReadings(25, user: 0), Self.omronReadings(15, user: 1)])
        monitor.dropLink(afterReadingReads: 15)
        try await runDaemon(store: scenario.store, name: SimulatedOmronMonitor.profile.name,
                            profile: SimulatedOmronMonitor.profile, responder: monitor, options: ["omron-model": "HEM-7361T"],
                            listen: .seconds(6))
        #expect(try bloodPressure(scenario.store).systolic.count == 15)
        try await runMonitor(scenario, monitor, contacts: 1)
        #expect(monitor.readingReads == 40, "25 more reads: none of the first 15 again")
        let (systolic, heartRate) = try bloodPressure(scenario.store)
        #expect(systolic.count == 40 && heartRate.count == 40)
        #expect(Set(systolic.compactMap(\.metadata.syncIdentifier)).count == 40)
    }
}

import BLESimulators
import Foundation
import Logging
import SQLiteStore
import Testing

/// A Colmi R02 ring through the daemon.
extension ConversationDaemonTests {
    /// The daemon sets the ring's clock, reads today's heart-rate log, steps and hourly SpO2 and
    /// stores them; the next contact reads today again and stores nothing twice.
    @Test func aColmiRingsDayIsReadAndStoredOnce() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "colmi-ring", "heartRate", "stepCount", "distanceWalkingRunning",
                            "oxygenSaturation"])
        // The ring logs today (UTC), and the pipeline refuses readings ending more than 10 minutes
        // ahead: the slots are chosen before now. In the first 6 minutes of a UTC day no quarter
        // hour has ended yet, and in its last 2 minutes the two contacts could see two days: wait.
        func secondsIntoUTCDay() -> TimeInterval { Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) }
        let elapsed = secondsIntoUTCDay()
        if elapsed < 360 || elapsed > 86_280 {
            try await Task.sleep(for: .seconds((elapsed < 360 ? 360 - elapsed : 86_760 - elapsed).rounded(.up)))
        }
        let now = secondsIntoUTCDay()
        let slot = max(Int(now / 300), 2)          // the 5-minute slot running now (ends after now)
        let quarter = Int((now + 600) / 900) - 1   // the newest quarter hour ending by now + 10 minutes
        // SpO2 at midnight and in the hour running now (its start is before now).
        var oxygenHours: [Int: (lowest: UInt8, highest: UInt8)] = [0: (95, 98)]
        oxygenHours[Int(now / 3_600)] = (97, 97)
        let ring = SimulatedColmiRing(heartRates: [0: 58, slot - 1: 72, slot: 75],
                                      quarters: [quarter - 1: (500, 380), quarter: (120, 0)].filter { $0.key >= 0 },
                                      oxygenHours: oxygenHours)
        // Each contact runs until the ring is disconnected (polled, at most a minute), not for a fixed time.
        let firstLog = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "R02_2C08", profile: SimulatedColmiRing.profile, responder: ring,
                            log: firstLog) { firstLog.records.contains { $0.message == "disconnected" } }
        #expect(ring.commands.map { $0[0] } == [0x01, 0x15, 0x43], "\(ring.commands)")
        let today = (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        let asked = ring.commands.dropFirst().first.map { Int($0[1]) | Int($0[2]) << 8 | Int($0[3]) << 16 | Int($0[4]) << 24 }
        #expect(asked.map(TimeInterval.init) == today, "the log of today's UTC midnight")
        #expect(ring.bigDataRequests == [SimulatedColmiRing.oxygenSaturationRequest], "today's SpO2 log asked for once")

        let secondLog = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "R02_2C08", profile: SimulatedColmiRing.profile, responder: ring,
                            log: secondLog) { secondLog.records.contains { $0.message == "disconnected" } }
        #expect(ring.commands.count == 6, "the second contact reads today again: \(ring.commands)")
        #expect(ring.bigDataRequests.count == 2, "and today's SpO2 log again")
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let heartRates = try store.samples(type: .heartRate).sorted { $0.start < $1.start }
        let beats = try heartRates.map { try $0.quantity.doubleValue(for: .countPerMinute) }
        #expect(beats == [58, 72, 75])
        #expect(heartRates.first?.start == Date(timeIntervalSince1970: today))
        #expect(heartRates.last?.start == Date(timeIntervalSince1970: today + Double(slot) * 300))
        #expect(try store.samples(type: .stepCount).map(\.quantity.value).sorted() == (quarter > 0 ? [120, 500] : [120]))
        #expect(try store.samples(type: .distanceWalkingRunning).map(\.quantity.value) == (quarter > 0 ? [380] : []))
        // Each hour once, at its start (the ring's clock is UTC), the mean of its lowest and highest.
        let oxygen = try store.samples(type: .oxygenSaturation).sorted { $0.start < $1.start }
        let expected = oxygenHours.sorted { $0.key < $1.key }
        #expect(oxygen.map(\.start) == expected.map { Date(timeIntervalSince1970: today + Double($0.key) * 3_600) })
        #expect(try oxygen.map { try $0.quantity.doubleValue(for: .percent) }
                    == expected.map { Double(Int($0.value.lowest) + Int($0.value.highest)) / 200 })
    }

    /// A ring with the big-data service that never answers the SpO2 request: the contact ends
    /// normally after the 10 s wait, its heart rate is stored, and the log says why no SpO2 came.
    @Test func aRingThatKeepsNoSpO2LogStillGivesItsDay() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "colmi-ring", "heartRate", "stepCount", "distanceWalkingRunning",
                            "oxygenSaturation"])
        let ring = SimulatedColmiRing(heartRates: [0: 58], quarters: [:], answersOxygenSaturation: false)
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "R02_2C08", profile: SimulatedColmiRing.profile, responder: ring,
                            log: log) { log.records.contains { $0.message == "disconnected" } }
        #expect(ring.bigDataRequests == [SimulatedColmiRing.oxygenSaturationRequest])
        let messages = log.records.map(\.message)
        #expect(messages.contains { $0.contains("did not answer the request for its SpO2 log") }, "\(messages)")
        #expect(!log.records.contains { $0.level >= .error }, "\(log.records.filter { $0.level >= .error }.map(\.message))")
        let store = try HealthStore(path: scenario.store)
        #expect(try store.samples(type: .heartRate).count == 1)
        #expect(try store.samples(type: .oxygenSaturation).isEmpty)
        store.close()

        // The next contact asks again, but the log does not repeat what it said.
        let secondLog = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "R02_2C08", profile: SimulatedColmiRing.profile, responder: ring,
                            log: secondLog) { secondLog.records.contains { $0.message == "disconnected" } }
        #expect(ring.bigDataRequests.count == 2)
        #expect(!secondLog.records.contains { $0.message.contains("SpO2") }, "\(secondLog.records.map(\.message))")
    }
}

import BLESimulators
import Foundation
import SQLiteStore
import Testing

/// A QN-protocol scale (ES-30M dialect) through the daemon.
extension ConversationDaemonTests {
    /// The daemon answers the scale's handshake in its order (unit in pounds as configured, its
    /// clock, the user's age, the configuration answers, the start), skips the settling frames
    /// and the stable frame without impedance, stores the weighing with its impedance and only
    /// then acknowledges it.
    @Test func aQNScalesHandshakeIsAnsweredAndItsStableWeighingStored() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "qn-gatt-scale", "bodyMass"])
        let scale = SimulatedQNScale(weightTenths: 724, resistance: 512)
        let before = Date()
        try await runDaemon(store: scenario.store, name: "QN-Scale", services: [0xFFF0], profile: SimulatedQNScale.profile,
                            responder: scale, options: ["qn-unit": "lb", "qn-age": "41"],
                            until: { scale.received.contains { $0.first == 0x1F } })
        let writes = scale.received
        #expect(writes.map { $0.first ?? 0 } == [0x13, 0x20, 0xA2, 0xA0, 0xA0, 0x22, 0x1F], "\(writes)")
        #expect(writes.first == [0x13, 0x09, 0xFF, 0x02, 0x10, 0x00, 0x00, 0x00, 0x2D], "pounds on the display")
        #expect(writes.dropFirst(2).first == [0xA2, 0x06, 0x01, 0x32, 41, 0x04])
        let clock = try #require(writes.dropFirst().first)
        let seconds = UInt32(clock[3]) | UInt32(clock[4]) << 8 | UInt32(clock[5]) << 16 | UInt32(clock[6]) << 24
        #expect(abs(Double(seconds) + 946_684_800 - before.timeIntervalSince1970) < 30)
        #expect(writes.last == [0x1F, 0x05, 0xFF, 0x10, 0x33])

        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyMass)
        #expect(samples.map(\.quantity.value) == [72.4], "settling and impedance-less frames are not weighings")
        #expect(samples.first?.metadata.entries["IngestImpedanceOhm"] == .number(512))
        #expect(samples.first?.metadata.entries["IngestImpedance2Ohm"] == .number(510))
        #expect(abs((samples.first?.start ?? .distantPast).timeIntervalSince(before)) < 30)
    }
}

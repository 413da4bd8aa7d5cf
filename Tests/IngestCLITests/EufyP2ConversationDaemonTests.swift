import BLESimulators
import Foundation
import Logging
import SQLiteStore
import Testing

/// A Eufy P2 Pro through the daemon.
extension ConversationDaemonTests {
    /// The daemon completes the scale's handshake (its id encrypted under the key of the
    /// scale's address, then both ids), skips the settling frame and stores the real final
    /// frame's weighing with its impedance.
    @Test func aEufyP2ProsHandshakeIsCompletedAndItsWeighingStored() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "eufy-p2-scale", "bodyMass"])
        // A settling frame (not final) built to the layout, then the real P2 Pro frame of 87.90 kg, 436.0 ohm.
        let settling: [UInt8] = [0xCF, 0x0E, 0x00, 0xCF, 0, 0, 0x33, 0x22, 0, 0, 0, 0, 0x01, 0, 0, 0xCF ^ 0x33 ^ 0x22 ^ 0x01]
        let real: [UInt8] = [0xCF, 0x0E, 0x00, 0xCF, 0x08, 0x11, 0x56, 0x22, 0x08, 0x03, 0x88, 0, 0, 0, 0, 0x21]
        let scale = try SimulatedEufyP2Scale(address: Self.band, weightFrames: [settling, real])
        let before = Date()
        try await runDaemon(store: scenario.store, name: "eufy T9149", profile: SimulatedEufyP2Scale.profile, responder: scale,
                            listen: .seconds(8))
        #expect(scale.accepted == true, "the scale took both ids: \(scale.writes)")
        #expect(scale.clientID?.count == 15)
        #expect(scale.writes.map { $0.first ?? 0 } == [0xC0, 0xC0, 0xC2, 0xC2, 0xC2], "\(scale.writes)")

        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyMass)
        #expect(samples.map(\.quantity.value) == [87.9], "the settling frame is not a weighing")
        #expect(samples.first?.metadata.entries["IngestImpedanceOhm"] == .number(436))
        #expect(abs((samples.first?.start ?? .distantPast).timeIntervalSince(before)) < 60)
    }

    /// One weighing both ways is one sample: the P2 Pro advertises its final 87.90 kg, the daemon
    /// connects and reads the same weighing with its impedance. With both Eufy adapters granted
    /// the store holds one body mass, the connected one (the advertised weight's sync identifier,
    /// a higher version). Failed before: eufy-scale stored the advertised weight and
    /// eufy-p2-scale the connected one, two samples of one weighing.
    @Test func anAdvertisedAndConnectedP2WeighingIsStoredOnce() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "eufy-scale", "bodyMass"])
        await scenario.run(["auth", "grant", "eufy-p2-scale", "bodyMass"])
        let real: [UInt8] = [0xCF, 0x0E, 0x00, 0xCF, 0x08, 0x11, 0x56, 0x22, 0x08, 0x03, 0x88, 0, 0, 0, 0, 0x21]
        // The advertised frame of the same weighing, built to the layout (README): 87.90 kg = 0x2256, final.
        var advertised = [UInt8](repeating: 0, count: 19)
        advertised[6] = 0xCF
        advertised[9] = 0x56
        advertised[10] = 0x22
        let scale = try SimulatedEufyP2Scale(address: Self.band, weightFrames: [real])
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, name: "eufy T9149", manufacturerData: (0xFF48, advertised),
                            profile: SimulatedEufyP2Scale.profile, responder: scale, listen: .seconds(60), log: log) {
            // Both arrivals committed (before the fix one by each adapter; now the advertised weight, then its
            // replacement by the connected weighing), and the contact over.
            log.records.filter { $0.message.hasPrefix("committed 1 bodyMass from") }.count >= 2
                && log.records.contains { $0.message == "disconnected" }
        }
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyMass)
        #expect(samples.map(\.quantity.value) == [87.9], "one weighing, one sample: \(samples.map(\.source))")
        #expect(samples.map(\.source) == ["eufy-p2-scale"])
        #expect(samples.first?.metadata.entries["IngestImpedanceOhm"] == .number(436), "the connected weighing is kept")
    }
}

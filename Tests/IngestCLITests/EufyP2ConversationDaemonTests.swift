import BLESimulators
import Foundation
import HealthModel
import SQLiteStore
import Testing
@testable import IngestRuntime

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
}

import AdapterKit
import BLESimulators
import BuiltinAdapters
import Foundation
import GATTHealthProfiles
import HealthModel
import Testing
import Transport
@testable import IngestRuntime

/// A conversation recorded live (the daemon's GATT client against a simulated glucose meter,
/// written to btsnoop by `ingestd capture`'s recorder), then replayed through the same adapter
/// code: the replayed conversation writes what the live one wrote and gets the same records.
@Suite struct ConversationReplayTests {
    static let meter = BLEAddress("C0:FF:EE:00:18:08")!

    @Test func aRecordedGlucoseTransferReplaysToTheSameRecords() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("racp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("glucose.btsnoop").path
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))

        // Live: the meter's 50 records over a socketpair, recorded (a patient client: not a test of timeouts).
        let recorded = try await RecordedSimulatedConnection(path: path, peer: Self.meter, profile: SimulatedGlucoseMeter.profile,
                                                             responder: SimulatedGlucoseMeter(records: 50))
        let link = recorded.link
        let client = recorded.client
        let context = AdapterContext(timeZone: zone, source: GATTHealthAdapter.id, memory: EphemeralDeviceMemory())
        let conversation = GATTHealthAdapter().makeConversation(for: BLEDeviceTraits(address: Self.meter), context: context)
        var live: [HealthRecord] = []
        // The meter stays connected after its transfer: the link ends once the 50 records are in.
        try await conversation.run(over: link) { output in
            live += output.records
            if live.count == 50 { await client.disconnect() }
            return DeliveryReceipt(stored: output.records.count, held: 0)
        }
        try await recorded.close()
        #expect(live.count == 50)

        // Replay: the same conversation against the capture.
        let replay = CaptureReplay(adapters: BuiltinAdapters.bluetooth, forcedAdapterID: nil, timeZone: zone)
        var replayed: [HealthRecord] = []
        let summary = try await replay.run(path: path) { replayed += $0 }
        #expect(summary.conversations.count == 1)
        #expect(summary.conversations.first?.writesNotInCapture == 0, "\(summary.conversations)")
        #expect(summary.conversations.first?.failure == nil, "\(summary.conversations)")
        let sequences = replayed.compactMap { record -> Int? in
            guard case .sample(let sample) = record,
                  case .number(let sequence) = sample.metadata.entries[GATTMetadataKey.glucoseSequenceNumber] else { return nil }
            return Int(sequence)
        }
        #expect(sequences == Array(1...50))
        let livePairs = live.flatMap(\.samples).map { "\($0.start) \($0.quantity)" }
        #expect(replayed.flatMap(\.samples).map { "\($0.start) \($0.quantity)" } == livePairs)
    }
}

import AdapterKit
import BLESimulators
import CaptureFormats
import Foundation
import HealthModel
import Testing
import Transport
@testable import IngestRuntime

/// A conversation that reads a value longer than the MTU (the GATT client reads it with Read
/// Blob), recorded live by `ingestd capture`'s recorder against a simulated peripheral, then
/// replayed: the replayed read is the whole value again, so the samples are the same.
@Suite struct LongReadReplayTests {
    static let logger = BLEAddress("C0:FF:EE:00:FF:F0")!
    /// 30 step counts of 16 bits, 60 bytes: a Read Response of 22 bytes and two Read Blobs at MTU 23.
    static let log: [UInt8] = (0..<30).flatMap { index -> [UInt8] in
        let steps = UInt16(100 + index * 37)
        return [UInt8(steps & 0xFF), UInt8(steps >> 8)]
    }
    static let profile = SimulatedProfile(name: "LOG", services: [
        .init(uuid: BLEUUID(0xFFF0), characteristics: [
            .init(uuid: BLEUUID(0xFFF1), properties: 0x02, value: log),       // read: the log
            .init(uuid: BLEUUID(0xFFF2), properties: 0x08, value: [0]),       // write: a command
        ]),
    ])

    /// Answers no write (the command only precedes the read in the conversation).
    struct Silent: SimulatedResponder {
        func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] { [] }
    }

    /// Writes a command, reads the log characteristic and makes one step sample per 16-bit entry,
    /// minute by minute from a fixed start (the dates come from the bytes, not the clock).
    struct StepLogAdapter: ConversingAdapter {
        let descriptor = AdapterDescriptor(id: "step-log-test", name: "Step log", version: "1", summary: "test",
                                           matches: [.ble(BLEMatch(serviceUUIDs: [BLEUUID(0xFFF0)]))],
                                           produces: [.stepCount])
        var isAvailable: Bool { true }

        func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession { Idle() }

        func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
            Conversation(source: descriptor.id)
        }

        final class Idle: BLEAdapterSession {
            func receive(_ event: TransportEvent, into output: inout AdapterOutput) {}
        }

        final class Conversation: GATTConversation {
            let source: String
            init(source: String) { self.source = source }

            func run(over link: any GATTConversationLink,
                     deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
                _ = try await link.discover()
                try await link.write([0x01], to: BLEUUID(0xFFF2), withResponse: true)
                let value = try await link.read(BLEUUID(0xFFF1))
                var output = AdapterOutput()
                let start = Date(timeIntervalSince1970: 1_764_000_000)
                for index in 0..<(value.count / 2) {
                    let steps = Double(UInt16(value[2 * index]) | UInt16(value[2 * index + 1]) << 8)
                    let time = start.addingTimeInterval(Double(index) * 60)
                    output.records.append(.sample(QuantitySample(
                        type: .stepCount, quantity: Quantity(value: steps, unit: .count), start: time,
                        end: time.addingTimeInterval(60), source: source)))
                }
                _ = try await deliver(output)
                await link.disconnect()
            }
        }
    }

    @Test func aLongReadRecordedLiveReplaysWhole() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("longread-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("log.btsnoop").path
        let zone = try #require(TimeZone(identifier: "UTC"))
        let adapter = StepLogAdapter()

        let recorded = try await RecordedSimulatedConnection(path: path, peer: Self.logger, profile: Self.profile,
                                                             responder: Silent())
        let context = AdapterContext(timeZone: zone, source: adapter.descriptor.id)
        var live: [HealthRecord] = []
        try await adapter.makeConversation(for: BLEDeviceTraits(address: Self.logger), context: context)
            .run(over: recorded.link) { output in
                live += output.records
                return DeliveryReceipt(stored: output.records.count, held: 0)
            }
        await recorded.client.disconnect()
        try await recorded.close()
        #expect(live.count == 30)

        // The capture holds the read as a Read Response and two Read Blob Responses.
        let records = try DecodedTraceRecords(path: path)
        #expect(records.attOpcodes.filter { $0 == 0x0C }.count == 2, "\(records.attOpcodes)")
        #expect(records.attOpcodes.filter { $0 == 0x0D }.count == 2)

        let replay = CaptureReplay(adapters: [adapter], forcedAdapterID: nil, timeZone: zone)
        var replayed: [HealthRecord] = []
        let summary = try await replay.run(path: path) { replayed += $0 }
        #expect(summary.conversations.count == 1)
        #expect(summary.conversations.first?.writesNotInCapture == 0, "\(summary.conversations)")
        #expect(summary.conversations.first?.failure == nil, "\(summary.conversations)")
        let steps = { (records: [HealthRecord]) in records.flatMap(\.samples).map { "\($0.start) \($0.quantity)" } }
        #expect(steps(replayed).count == 30)
        #expect(steps(replayed) == steps(live))
    }
}

/// The ATT opcodes of a btsnoop capture's ACL records (one whole L2CAP frame per ACL packet, as
/// the recorder writes them).
struct DecodedTraceRecords {
    var attOpcodes: [UInt8] = []

    init(path: String) throws {
        let reader = try CaptureFile.open(path: path)
        while let record = try reader.next() {
            guard record.content == .hci(.acl), record.bytes.count > 8 else { continue }
            attOpcodes.append(record.bytes[record.bytes.startIndex + 8])
        }
    }
}

import AdapterKit
import BLESimulators
import BlueZTransport
import Foundation
import Testing
import Transport
@testable import IngestRuntime

/// The live conversation link keeps every notification a device bursts before the conversation
/// reads them, up to what the conversation declares it may receive in one contact; past that
/// the contact ends with a specific error and no request reaches the device any more (so
/// nothing is acknowledged or erased on it).
@Suite(.serialized) struct ConversationLinkBoundTests {
    static let meter = BLEAddress("C4:7C:8D:6A:3E:21")!

    /// A link with at most `bound` values waiting, connected to a simulated glucose meter.
    private struct Connection {
        let link: GATTClientConversationLink
        let peripheral: SimulatedPeripheral

        init(meter: SimulatedGlucoseMeter, bound: Int) async throws {
            let (clientEnd, peripheralEnd) = try SocketPair.make()
            peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: SimulatedGlucoseMeter.profile,
                                                 responder: meter)
            await peripheral.start()
            let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                    peer: GATTPeer(address: ConversationLinkBoundTests.meter, addressType: .public,
                                                   connectionHandle: 0x0040),
                                    configuration: GATTClientConfiguration(requestTimeout: .seconds(15)))
            await client.start()
            link = GATTClientConversationLink(client: client, maximumQueued: bound)
            await link.start()
        }

        /// Subscribes and asks for every stored record, then waits (bounded) until the link took
        /// `count` values or ended the contact, without reading any: the burst is all in before the conversation reads.
        func requestAllRecords(waitingFor count: Int) async throws {
            _ = try await link.discover()
            try await link.subscribe(to: SimulatedGlucoseMeter.measurement, mode: .notifications)
            try await link.subscribe(to: SimulatedGlucoseMeter.controlPoint, mode: .indications)
            try await link.write([0x01, 0x01], to: SimulatedGlucoseMeter.controlPoint, withResponse: true)
            let deadline = ContinuousClock.now + .seconds(30)
            while await link.receivedValues < count, await !link.overflowed, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// 600 records burst before the conversation reads (more than the 256 the link used to keep,
    /// when it dropped the oldest): all 600 are there, in order, then the RACP response.
    @Test func aBurstOfSixHundredRecordsIsKeptWhole() async throws {
        let meter = SimulatedGlucoseMeter(records: 600)
        let connection = try await Connection(meter: meter, bound: 1_000)
        try await connection.requestAllRecords(waitingFor: 601)
        #expect(await connection.link.receivedValues == 601)
        var sequences: [Int] = []
        for _ in 0..<600 {
            let value = try await connection.link.nextValue(timeout: .seconds(5)) {
                $0.characteristicUUID == SimulatedGlucoseMeter.measurement
            }
            sequences.append(Int(value.value[1]) | Int(value.value[2]) << 8)
        }
        #expect(sequences == Array(1...600), "first \(sequences.first ?? 0), \(sequences.count) records")
        let response = try await connection.link.nextValue(timeout: .seconds(5)) { _ in true }
        #expect(response.value == [0x06, 0x00, 0x01, 0x01], "the RACP response follows the records")
        #expect(await connection.link.refusedValues == 0)
        await connection.link.disconnect()
        await connection.peripheral.stop()
    }

    /// The same burst to a conversation that declared 100 values per contact: the contact ends
    /// with `tooManyValues(limit: 100)`, nothing queued is handed out (the rest of the burst is
    /// missing, so nothing may be taken as the whole), and a delete request written afterwards
    /// never reaches the meter.
    @Test func aBurstPastTheDeclaredBoundEndsTheContactAndNothingMoreReachesTheDevice() async throws {
        let meter = SimulatedGlucoseMeter(records: 600)
        let connection = try await Connection(meter: meter, bound: 100)
        try await connection.requestAllRecords(waitingFor: 601)
        #expect(await connection.link.overflowed)
        #expect(await connection.link.refusedValues >= 1)
        await #expect(throws: GATTConversationError.tooManyValues(limit: 100)) {
            _ = try await connection.link.nextValue(timeout: .seconds(1)) { _ in true }
        }
        await #expect(throws: GATTConversationError.tooManyValues(limit: 100)) {
            try await connection.link.write([0x02, 0x01], to: SimulatedGlucoseMeter.controlPoint, withResponse: true)
        }
        #expect(meter.requests == [[0x01, 0x01]], "the delete never reached the meter: \(meter.requests)")
        #expect(await connection.link.endReason()?.contains("more than 100 notifications") == true)
        await connection.peripheral.stop()
    }

    /// What a conversation declares is bounded: at least one value, at most the ceiling.
    @Test func theDeclaredBoundIsClamped() {
        #expect(GATTConversationLimits.queueBound(declared: 0) == 1)
        #expect(GATTConversationLimits.queueBound(declared: 600) == 600)
        #expect(GATTConversationLimits.queueBound(declared: 5_000_000) == GATTConversationLimits.ceilingValuesPerContact)
    }
}

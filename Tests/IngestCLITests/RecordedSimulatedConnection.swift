import BLESimulators
import BlueZTransport
import Foundation
import Transport
@testable import IngestRuntime

/// A live connection to a simulated peripheral over a socketpair, recorded to a btsnoop file by
/// the capture recorder `ingestd capture` uses: a conversation run over `link` is captured and
/// can then be replayed.
struct RecordedSimulatedConnection {
    let link: GATTClientConversationLink
    let client: GATTClient
    private let recorder: BluetoothCaptureRecorder
    private let connection: BluetoothCaptureRecorder.ConnectionRecorder
    private let peripheral: SimulatedPeripheral

    /// Opens the capture at `path` and connects to a peripheral serving `profile` with `responder`.
    init(path: String, peer: BLEAddress, profile: SimulatedProfile, responder: any SimulatedResponder) async throws {
        recorder = BluetoothCaptureRecorder(target: peer, now: { Date() }, onRecord: nil)
        try recorder.open(path: path)
        connection = recorder.connection(handle: 0x0040, peer: peer, addressType: .public)
        let (clientEnd, peripheralEnd) = try SocketPair.make()
        peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: profile, responder: responder)
        await peripheral.start()
        client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                peer: GATTPeer(address: peer, addressType: .public, connectionHandle: 0x0040),
                                configuration: GATTClientConfiguration(requestTimeout: .seconds(15)), tap: connection.tap)
        await client.start()
        connection.opened()
        link = GATTClientConversationLink(client: client)
        await link.start()
    }

    /// Ends the connection in the capture, stops the peripheral and closes the file.
    func close() async throws {
        connection.closed(reason: 0x16)
        await peripheral.stop()
        try recorder.close()
    }
}

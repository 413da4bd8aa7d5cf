import AdapterKit
import BLEWire
import BlueZTransport
import CaptureFormats
import Foundation
import Logging
import Synchronization
import Transport

// MARK: - Bluetooth LE

/// What a Bluetooth capture wrote.
public struct BluetoothCaptureCounts: Sendable, Equatable, CustomStringConvertible {
    /// Records written (HCI packets, synthetic events and ACL-wrapped ATT PDUs).
    var packets = 0
    /// Advertising reports kept.
    public var advertisements = 0
    /// Advertising reports left out because they came from other devices (`--ble`).
    var otherDevices = 0
    /// GATT sessions recorded.
    var connections = 0
    /// ATT PDUs recorded, and among them notifications and indications.
    var attPDUs = 0
    var notifications = 0
    var indications = 0

    public var description: String {
        "\(packets) packets, \(advertisements) advertising reports"
            + (otherDevices > 0 ? " (\(otherDevices) from other devices left out)" : "")
            + ", \(connections) connection\(connections == 1 ? "" : "s"), \(attPDUs) ATT PDUs "
            + "(\(notifications) notifications, \(indications) indications)"
    }
}

/// `capture` over Bluetooth LE: an active scan for the duration, and with a target address a
/// GATT session with that device whenever it advertises connectably and none is open.
///
/// The session is the one the daemon would hold: when an adapter of ``adapters`` takes the
/// device (by its advertisements, as the daemon's router decides) and talks to connected
/// devices, its conversation runs over the GATT client (the daemon's conversation path), so
/// the capture holds the whole exchange (commands written, replies, stored records fetched) and
/// replays to the same samples. What the conversation delivers is counted, not stored, and its
/// receipts say so (held: a conversation never erases a device for a capture); the device memory
/// (a glucose meter's last sequence number) lasts for the capture, so a second connection asks
/// for new records only, as the daemon would. A device no adapter converses with gets the
/// generic session: discovery, a read of everything readable, a subscription to everything that
/// notifies or indicates, then recording until the link ends.
public struct BluetoothCapture: Sendable {
    var link: BluetoothLink
    var controllerName: String
    /// `--ble ADDR`: keep only this device's advertisements and connect to it.
    var target: BLEAddress?
    var duration: Duration
    var progressInterval: Duration = .seconds(5)
    /// Time between the end of a GATT session (or a failed connection) and the next attempt.
    var reconnectDelay: Duration = .seconds(2)
    var gattConfiguration = GATTClientConfiguration()
    var now: @Sendable () -> Date = { Date() }
    /// Called after each record is written (tests end the capture from here).
    var onRecord: (@Sendable (BluetoothCaptureCounts) -> Void)?
    /// The adapters that may converse with the target, in the daemon's order (empty: every
    /// session is the generic one).
    public var adapters: [any BLEAdapter] = []
    /// The zone conversations read device clocks in.
    public var timeZone: TimeZone = .current
    /// Adapter configuration (`--adapter-option`), given to conversations.
    public var options: [String: String] = [:]
    /// Keys for the router that picks the target's adapter; they only ever reach sessions, never the file.
    public var keys = AdvertisementKeys()

    public init(link: BluetoothLink, controllerName: String, target: BLEAddress?, duration: Duration) {
        self.link = link
        self.controllerName = controllerName
        self.target = target
        self.duration = duration
    }

    public func run(out path: String, stop: CaptureStop, progress: @escaping @Sendable (String) -> Void,
             logger: Logger) async throws -> BluetoothCaptureCounts {
        let recorder = BluetoothCaptureRecorder(target: target, now: now, onRecord: onRecord)
        let sink = BluetoothBackend.logSink(logger)
        let scanner: HCIScanner
        do {
            scanner = try link.openScanner(BluetoothLinkOptions(log: sink, tap: recorder.scannerTap, activeScan: true))
        } catch let error as BluetoothUnavailable {
            throw RuntimeError.bluetoothUnavailable(error)
        } catch {
            throw RuntimeError.bluetoothFailed(controller: controllerName, reason: "\(error)")
        }
        do {
            try recorder.open(path: path)
        } catch {
            await scanner.stop()
            throw RuntimeError.captureNotWritten(error)
        }
        do {
            try await scanner.start()
        } catch {
            try? recorder.close()
            throw RuntimeError.bluetoothFailed(controller: controllerName, reason: "\(error)")
        }
        progress("scanning on \(controllerName) for \(duration)"
            + (target.map { ", recording \($0) and connecting to it when it advertises connectably" } ?? "")
            + "; Ctrl-C ends early")
        let started = ContinuousClock.now
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: progressInterval)
                if Task.isCancelled { return }
                let elapsed = (ContinuousClock.now - started).components.seconds
                progress("\(elapsed) s: \(recorder.counts)")
            }
        }
        let sessions = SessionGate(delay: reconnectDelay)
        let link = self.link
        let configuration = gattConfiguration
        let runState = AdapterRunState()
        let router: AdapterRouter?
        do {
            router = target == nil || adapters.isEmpty
                ? nil : try AdapterRouter(adapters: adapters, timeZone: timeZone, keys: keys, runState: runState)
        } catch {
            await scanner.stop()
            try? recorder.close()
            throw RuntimeError.adapterChoice(error)
        }
        let conversation = ConversationSettings(timeZone: timeZone, options: options, memory: EphemeralDeviceMemory(),
                                                run: runState)
        var unused = AdapterOutput()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await stop.wait(atMost: duration)
                await scanner.stop()
            }
            for await event in scanner.events {
                guard let target, case .advertisement(let advertisement) = event, advertisement.address == target else {
                    continue
                }
                // The daemon's choice of adapter: the router, fed the target's advertisements.
                router?.route(event, into: &unused)
                unused = AdapterOutput()
                guard advertisement.eventType.isConnectable, sessions.claim() else { continue }
                let handle = recorder.nextConnectionHandle()
                let conversing = router?.adapter(for: target).flatMap { $0.holdsConversations ? $0 : nil }
                    .map { ($0, router?.traits(for: target) ?? BLEDeviceTraits(address: target)) }
                group.addTask {
                    await Self.session(with: advertisement, handle: handle, link: link, recorder: recorder,
                                       configuration: configuration, conversing: conversing, settings: conversation,
                                       logger: logger, progress: progress)
                    sessions.release()
                }
            }
            group.cancelAll()
        }
        router?.finish(into: &unused)
        reporter.cancel()
        do {
            try recorder.close()
        } catch {
            throw RuntimeError.captureNotWritten(error)
        }
        return recorder.counts
    }

    /// What conversations in a capture share: the zone, the adapter options, the device memory and
    /// the run's state (the router's).
    struct ConversationSettings: Sendable {
        var timeZone: TimeZone
        var options: [String: String]
        var memory: any DeviceMemory
        var run: AdapterRunState
    }

    /// One GATT session: connect, then the adapter's conversation (`conversing`), or the generic
    /// session (discover, read what is readable, subscribe to what notifies or indicates, then
    /// wait until the link ends or the capture stops).
    private static func session(with advertisement: BLEAdvertisement, handle: UInt16, link: BluetoothLink,
                                recorder: BluetoothCaptureRecorder, configuration: GATTClientConfiguration,
                                conversing: (adapter: any BLEAdapter, traits: BLEDeviceTraits)?,
                                settings: ConversationSettings,
                                logger: Logger, progress: @Sendable (String) -> Void) async {
        let address = advertisement.address
        let connection = recorder.connection(handle: handle, peer: address, addressType: advertisement.addressType)
        let client: GATTClient
        do {
            client = try await link.connect(address, advertisement.addressType,
                                            BluetoothLinkOptions(log: BluetoothBackend.logSink(logger), tap: connection.tap))
        } catch {
            progress("connecting to \(address) failed: \(error)")
            return
        }
        connection.opened()
        if let (adapter, traits) = conversing {
            let id = adapter.descriptor.id
            progress("connected to \(address): \(id)'s conversation (what it delivers is recorded, not stored)")
            let delivered = Mutex(0)
            let context = AdapterContext(timeZone: settings.timeZone, source: id, memory: settings.memory,
                                         options: settings.options, run: settings.run)
            let succeeded = await BluetoothBackend.converse(over: client, adapter: adapter, traits: traits,
                                                            context: context, logger: logger) { output in
                delivered.withLock { $0 += output.records.count }
                // Nothing is stored: the device must keep its records.
                return DeliveryReceipt(stored: 0, held: output.records.count)
            }
            let end = await client.linkEnd ?? .closedLocally
            connection.closed(reason: Self.hciReason(for: end))
            progress("conversation with \(address) ended\(succeeded ? "" : " early (see the log)"): "
                + "\(delivered.withLock { $0 }) records delivered, none stored; disconnected (\(end))")
            return
        }
        progress("connected to \(address): discovering, reading and subscribing")
        let pump = Task { for await _ in client.events {} }
        await withTaskCancellationHandler {
            do {
                try await client.exchangeMTU()
                let services = try await client.discover()
                var subscribable = Set<BLEUUID>()
                for characteristic in services.flatMap(\.characteristics) {
                    if characteristic.properties.contains(.notify) || characteristic.properties.contains(.indicate) {
                        subscribable.insert(characteristic.uuid)
                    }
                    guard characteristic.properties.contains(.read) else { continue }
                    do {
                        _ = try await client.read(characteristic)
                    } catch GATTError.attError(_, _, let code) {
                        progress("\(address) refused reading \(characteristic.uuid): \(code)")
                    }
                }
                let outcomes = try await client.subscribeToAll(characteristics: subscribable)
                let subscribed = outcomes.filter { if case .subscribed = $0.result { true } else { false } }.count
                progress("\(address): \(services.count) services, subscribed to \(subscribed) characteristics; recording")
                _ = await client.waitUntilDisconnected()
            } catch {
                progress("GATT session with \(address) ended: \(error)")
                await client.disconnect()
            }
        } onCancel: {
            Task { await client.disconnect() }
        }
        await pump.value
        let end = await client.linkEnd ?? .closedLocally
        connection.closed(reason: Self.hciReason(for: end))
        progress("disconnected from \(address) (\(end))")
    }

    /// The HCI reason a Disconnection Complete gives for how the link ended: 0x16 closed here,
    /// 0x08 supervision timeout, 0x13 the peer ended it.
    static func hciReason(for end: PacketChannelEnd) -> UInt8 {
        switch end {
        case .closedLocally: 0x16
        case .closedByPeer: 0x13
        case .failed(let code): code == ETIMEDOUT ? 0x08 : code == ECONNABORTED ? 0x16 : 0x13
        }
    }
}

/// One GATT session at a time, and a pause between sessions.
final class SessionGate: Sendable {
    private struct State {
        var busy = false
        var notBefore = ContinuousClock.now
    }

    private let state = Mutex(State())
    private let delay: Duration

    init(delay: Duration) { self.delay = delay }

    func claim() -> Bool {
        state.withLock { state in
            guard !state.busy, ContinuousClock.now >= state.notBefore else { return false }
            state.busy = true
            return true
        }
    }

    func release() {
        state.withLock { state in
            state.busy = false
            state.notBefore = ContinuousClock.now + delay
        }
    }
}

/// Writes a Bluetooth capture as btsnoop: the scanner's HCI packets (for a target device only its
/// advertising reports), and each GATT session's ATT PDUs wrapped in ACL and L2CAP (CID 4) on a
/// made-up connection handle between a synthetic LE Connection Complete and Disconnection
/// Complete, so the HCI trace decoder rebuilds the session on replay.
///
/// The kernel's own connection events on the raw socket are left out: the ACL data they belong
/// to never reaches a raw HCI socket, and the synthetic events describe the recorded sessions.
final class BluetoothCaptureRecorder: Sendable {
    private struct State {
        var writer: BTSnoopWriter?
        var closed = false
        var counts = BluetoothCaptureCounts()
        var writeError: CaptureError?
        var nextHandle: UInt16 = 0x0040
        var openConnections: Set<UInt16> = []
    }

    private let state = Mutex(State())
    private let target: BLEAddress?
    private let now: @Sendable () -> Date
    private let onRecord: (@Sendable (BluetoothCaptureCounts) -> Void)?

    init(target: BLEAddress?, now: @escaping @Sendable () -> Date, onRecord: (@Sendable (BluetoothCaptureCounts) -> Void)?) {
        self.target = target
        self.now = now
        self.onRecord = onRecord
    }

    /// Creates the file (mode 0600).
    func open(path: String) throws(CaptureError) {
        try state.withLock { state throws(CaptureError) in state.writer = try BTSnoopWriter(path: path) }
    }

    /// Flushes and closes the file; throws the first write error of the capture.
    func close() throws(CaptureError) {
        try state.withLock { state throws(CaptureError) in
            guard !state.closed else { return }
            state.closed = true
            let writer = state.writer
            state.writer = nil
            if let error = state.writeError {
                try? writer?.close()
                throw error
            }
            try writer?.close()
        }
    }

    var counts: BluetoothCaptureCounts { state.withLock { $0.counts } }

    /// A connection handle for the next session.
    func nextConnectionHandle() -> UInt16 {
        state.withLock { state in
            defer { state.nextHandle = state.nextHandle >= 0x0EFF ? 0x0040 : state.nextHandle + 1 }
            return state.nextHandle
        }
    }

    /// The tap given to the scanner: H4 packets, indicator first.
    var scannerTap: PacketTap {
        { [self] direction, packet in
            guard let type = packet.first else { return }
            let body = Array(packet.dropFirst())
            var kept = body
            if type == HCIPacketType.event.rawValue {
                guard let filtered = AdvertisingReportFilter.filter(event: body, keeping: target) else { return }
                switch filtered {
                case .advertising(let event, let keptReports, let droppedReports):
                    state.withLock { $0.counts.otherDevices += droppedReports }
                    guard keptReports > 0 else { return }
                    kept = event
                    state.withLock { $0.counts.advertisements += keptReports }
                case .other:
                    break
                }
            }
            write(type: HCIPacketType(rawValue: type), direction: direction == .sent ? .sent : .received, packet: kept)
        }
    }

    /// The recorder of one GATT session on `handle`.
    func connection(handle: UInt16, peer: BLEAddress, addressType: BLEAddressType) -> ConnectionRecorder {
        ConnectionRecorder(recorder: self, handle: handle, peer: peer, addressType: addressType)
    }

    /// Records one GATT session: the synthetic connection events and ATT PDUs as ACL data.
    final class ConnectionRecorder: Sendable {
        private let recorder: BluetoothCaptureRecorder
        let handle: UInt16
        private let peer: BLEAddress
        private let addressType: BLEAddressType

        init(recorder: BluetoothCaptureRecorder, handle: UInt16, peer: BLEAddress, addressType: BLEAddressType) {
            self.recorder = recorder
            self.handle = handle
            self.peer = peer
            self.addressType = addressType
        }

        /// The tap given to the GATT client: bare ATT PDUs.
        var tap: PacketTap {
            { [self] direction, pdu in
                opened()
                recorder.attPDU(pdu, handle: handle, direction: direction == .sent ? .sent : .received)
            }
        }

        /// Writes the LE Connection Complete (once; the first PDU writes it too).
        func opened() {
            recorder.connectionOpened(handle: handle, peer: peer, addressType: addressType)
        }

        /// Writes the Disconnection Complete (if the connection was opened).
        func closed(reason: UInt8) {
            recorder.connectionClosed(handle: handle, reason: reason)
        }
    }

    fileprivate func connectionOpened(handle: UInt16, peer: BLEAddress, addressType: BLEAddressType) {
        let isNew = state.withLock { state -> Bool in
            guard !state.closed, state.openConnections.insert(handle).inserted else { return false }
            state.counts.connections += 1
            return true
        }
        guard isNew else { return }
        // As central, interval 30 ms, latency 0, supervision timeout 720 ms.
        write(type: .event, direction: .received,
              packet: HCIEventBuilder.leConnectionComplete(handle: handle, peerAddressType: addressType.rawValue, peer: peer))
    }

    fileprivate func connectionClosed(handle: UInt16, reason: UInt8) {
        let wasOpen = state.withLock { $0.openConnections.remove(handle) != nil }
        guard wasOpen else { return }
        write(type: .event, direction: .received, packet: HCIEventBuilder.disconnectionComplete(handle: handle, reason: reason))
    }

    fileprivate func attPDU(_ pdu: [UInt8], handle: UInt16, direction: CaptureDirection) {
        guard let first = pdu.first else { return }
        let opcode = ATTOpcode(rawValue: first)
        state.withLock { state in
            state.counts.attPDUs += 1
            if opcode == .handleValueNotification { state.counts.notifications += 1 }
            if opcode == .handleValueIndication { state.counts.indications += 1 }
        }
        // The whole L2CAP frame (CID 4) in one ACL packet, "first" as the host or the controller sends it.
        let boundary: ACLPacketBuilder.Boundary = direction == .received ? .firstFromController : .firstFromHost
        write(type: .acl, direction: direction,
              packet: ACLPacketBuilder.packet(handle: handle, boundary: boundary, ACLPacketBuilder.l2cap(pdu)))
    }

    private func write(type: HCIPacketType, direction: CaptureDirection, packet: [UInt8]) {
        let timestamp = Int64((now().timeIntervalSince1970 * 1_000_000).rounded())
        let counts = state.withLock { state -> BluetoothCaptureCounts? in
            guard let writer = state.writer, !state.closed, state.writeError == nil else { return nil }
            do throws(CaptureError) {
                try writer.write(type: type, direction: direction, timestamp: timestamp, packet: packet)
                state.counts.packets += 1
            } catch {
                state.writeError = error
            }
            return state.counts
        }
        if let counts { onRecord?(counts) }
    }
}

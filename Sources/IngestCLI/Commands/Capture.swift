import AdapterKit
import ArgumentParsing
import BLEWire
import BlueZTransport
import BuiltinAdapters
import CaptureFormats
import Foundation
import LibUSBTransport
import Logging
import Synchronization
import Transport

/// `ingestd capture --out FILE [--usb VID:PID | --ble ADDR] [--seconds N]`: records what the
/// transports see, so a user can contribute a log of a device ingestd does not support yet.
struct CaptureCommand: Command {
    static let configuration = CommandConfiguration(
        name: "capture",
        abstract: "Record what the transports see to a btsnoop (BLE) or pcapng (USB) file for a device log.",
        discussion: """
            Without --usb, scans Bluetooth LE actively (so scan responses arrive) and writes every HCI \
            packet to FILE as btsnoop (datalink 1002, as Android's HCI snoop log). With --ble ADDR only that \
            device's advertisements are kept, and ingestd connects to it when it advertises connectably: \
            GATT discovery, a read of every readable characteristic and a subscription to everything that \
            notifies or indicates; that session is written as ACL data with its connection events. With \
            --usb VID:PID the device is opened with libusb and what a session does is written as usbmon \
            (pcapng, LINKTYPE 220): the matching adapter's session, or, for a device no adapter knows, \
            reads of its interrupt and bulk IN endpoints. Either file replays with 'ingestd decode'. \
            Ctrl-C or SIGTERM ends the capture early; the file is complete either way (mode 0600).
            """)
    static let signature = Signature {
        Option("out", valueName: "FILE", help: "The capture file to write.", required: true)
        USBDeviceOption.declared(help: "Record this USB device (hex ids) instead of Bluetooth LE.")
        Option("ble", valueName: "ADDR", help: "Keep only this device's advertisements and record a GATT session with it.")
        Option("seconds", valueName: "N", help: "How long to record.", default: "30")
        ControllerOption.self
        TimeZoneOption.self
    }

    let out: String
    let usbDevice: (UInt16, UInt16)?
    let bleAddress: BLEAddress?
    let seconds: Double
    let hci: Int
    let zone: TimeZone

    init(_ arguments: ParsedValues) throws {
        out = try arguments.required("out")
        guard !out.isEmpty else { throw UsageError.invalidValue(out, argument: "--out", reason: "must name a file") }
        usbDevice = try USBDeviceOption(arguments).ids
        if let text: String = try arguments.value("ble") {
            guard let address = BLEAddress(text) else {
                throw UsageError.invalidValue(text, argument: "--ble", reason: "expected a Bluetooth address such as C8:47:8C:00:11:22")
            }
            bleAddress = address
        } else {
            bleAddress = nil
        }
        seconds = try arguments.value("seconds") ?? 30
        hci = try ControllerOption(arguments).index
        zone = try TimeZoneOption(arguments).zone
        guard usbDevice == nil || bleAddress == nil else {
            throw UsageError.invalid("--usb and --ble cannot be used together: a capture records one transport")
        }
        guard seconds > 0, seconds.isFinite else {
            throw UsageError.invalidValue(String(seconds), argument: "--seconds", reason: "must be positive")
        }
    }

    func run(_ context: CommandContext) async throws {
        let stop = CaptureStop()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        defer { signals.cancel() }
        let stderr = context.stderr
        let signalTask = Task {
            for await signal in signals.stream {
                stderr.writeLine("capture: \(signal == SIGINT ? "SIGINT" : "SIGTERM") received, closing \(out)")
                stop.stop()
                return
            }
        }
        defer { signalTask.cancel() }
        let duration = Duration.milliseconds(Int64((seconds * 1000).rounded()))
        let progress: @Sendable (String) -> Void = { stderr.writeLine("capture: " + $0) }
        if let (vendorID, productID) = usbDevice {
            let capture = USBCapture(vendorID: vendorID, productID: productID, adapters: BuiltinAdapters.usb,
                                     timeZone: zone, duration: duration)
            let summary = try await capture.run(out: out, stop: stop, progress: progress)
            stderr.writeLine("capture: wrote \(out): \(summary)")
        } else {
            let capture = BluetoothCapture(link: .controller(UInt16(hci)), controllerName: "hci\(hci)", target: bleAddress,
                                           duration: duration)
            let counts = try await capture.run(out: out, stop: stop, progress: progress, logger: context.logger)
            stderr.writeLine("capture: wrote \(out): \(counts)")
            if let bleAddress, counts.advertisements == 0 {
                stderr.writeLine("capture: no advertisement from \(bleAddress) was seen (is it advertising, and in range?)")
            }
        }
    }
}

/// Ends a capture early: Ctrl-C, SIGTERM, or a test that has seen enough.
final class CaptureStop: Sendable {
    private struct State {
        var stopped = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// Asks the capture to end; idempotent.
    func stop() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Returns when ``stop()`` was called or `duration` has passed, whichever is first.
    func wait(atMost duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await self.waitForStop() }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForStop() async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    // The cancellation flag is set before the handler runs, so checking it under the
                    // lock closes the window between the handler and this registration.
                    if state.stopped || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

// MARK: - Bluetooth LE

/// What a Bluetooth capture wrote.
struct BluetoothCaptureCounts: Sendable, Equatable, CustomStringConvertible {
    /// Records written (HCI packets, synthetic events and ACL-wrapped ATT PDUs).
    var packets = 0
    /// Advertising reports kept.
    var advertisements = 0
    /// Advertising reports left out because they came from other devices (`--ble`).
    var otherDevices = 0
    /// GATT sessions recorded.
    var connections = 0
    /// ATT PDUs recorded, and among them notifications and indications.
    var attPDUs = 0
    var notifications = 0
    var indications = 0

    var description: String {
        "\(packets) packets, \(advertisements) advertising reports"
            + (otherDevices > 0 ? " (\(otherDevices) from other devices left out)" : "")
            + ", \(connections) connection\(connections == 1 ? "" : "s"), \(attPDUs) ATT PDUs "
            + "(\(notifications) notifications, \(indications) indications)"
    }
}

/// `capture` over Bluetooth LE: an active scan for the duration, and with a target address a
/// GATT session with that device whenever it advertises connectably and none is open.
struct BluetoothCapture {
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

    func run(out path: String, stop: CaptureStop, progress: @escaping @Sendable (String) -> Void,
             logger: Logger) async throws -> BluetoothCaptureCounts {
        let recorder = BluetoothCaptureRecorder(target: target, now: now, onRecord: onRecord)
        let sink = BluetoothBackend.logSink(logger)
        let scanner: HCIScanner
        do {
            scanner = try link.openScanner(BluetoothLinkOptions(log: sink, tap: recorder.scannerTap, activeScan: true))
        } catch let error as BluetoothUnavailable {
            throw CommandFailure.failure(error.description)
        } catch {
            throw CommandFailure.failure("Bluetooth unavailable: \(controllerName): \(error)")
        }
        do {
            try recorder.open(path: path)
        } catch {
            await scanner.stop()
            throw CommandFailure.failure(error.description)
        }
        do {
            try await scanner.start()
        } catch {
            try? recorder.close()
            throw CommandFailure.failure("Bluetooth unavailable: \(controllerName): \(error)")
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
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await stop.wait(atMost: duration)
                await scanner.stop()
            }
            for await event in scanner.events {
                guard let target, case .advertisement(let advertisement) = event, advertisement.address == target,
                      advertisement.eventType.isConnectable, sessions.claim() else { continue }
                let handle = recorder.nextConnectionHandle()
                group.addTask {
                    await Self.session(with: advertisement, handle: handle, link: link, recorder: recorder,
                                       configuration: configuration, logger: logger, progress: progress)
                    sessions.release()
                }
            }
            group.cancelAll()
        }
        reporter.cancel()
        do {
            try recorder.close()
        } catch {
            throw CommandFailure.failure(error.description)
        }
        return recorder.counts
    }

    /// One GATT session: connect, discover, read what is readable, subscribe to what notifies or
    /// indicates, then wait until the link ends or the capture stops.
    private static func session(with advertisement: BLEAdvertisement, handle: UInt16, link: BluetoothLink,
                                recorder: BluetoothCaptureRecorder, configuration: GATTClientConfiguration,
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

// MARK: - USB

/// `capture --usb VID:PID`: opens the device with libusb and records a session as usbmon.
struct USBCapture {
    var vendorID: UInt16
    var productID: UInt16
    var adapters: [any USBAdapter]
    var options: [String: String] = [:]
    var timeZone: TimeZone
    var duration: Duration
    var progressInterval: Duration = .seconds(5)

    var idString: String { String(format: "%04x:%04x", vendorID, productID) }

    func run(out path: String, stop: CaptureStop, progress: @escaping @Sendable (String) -> Void) async throws -> String {
        let context: LibUSBContext
        do {
            context = try LibUSBContext()
        } catch {
            throw CommandFailure.failure("USB unavailable: \(error)")
        }
        let devices: [USBDeviceDescription]
        do {
            devices = try context.enumerate()
        } catch {
            throw CommandFailure.failure("USB unavailable: cannot list USB devices: \(error)")
        }
        guard let device = devices.first(where: { $0.vendorID == vendorID && $0.productID == productID }) else {
            throw CommandFailure("no USB device \(idString) is connected ('ingestd devices' lists those present)",
                                 exitCode: .noInput)
        }
        let handle: LibUSBDeviceHandle
        do {
            handle = try context.open(device)
        } catch {
            throw CommandFailure.failure("cannot open USB device \(device): \(error)")
        }
        defer { handle.close() }
        let writer: PcapNGWriter
        do {
            writer = try PcapNGWriter(path: path, linkType: LinkType.usbLinuxMMapped)
        } catch {
            throw CommandFailure.failure(error.description)
        }
        let recorder = USBMonRecorder(writer: writer, bus: UInt16(handle.device.bus ?? 1),
                                      address: max(1, handle.device.address ?? 1))
        let adapter = adapters.first { $0.descriptor.matches(handle.device) }
        progress("recording \(handle.device) for \(duration)"
            + (adapter.map { " through the \($0.descriptor.id) session" } ?? " (no adapter: reading its IN endpoints)")
            + "; Ctrl-C ends early")
        let deadline = ContinuousClock.now + duration
        let shouldStop: @Sendable () -> Bool = { stop.isStopped || ContinuousClock.now >= deadline }
        let started = ContinuousClock.now
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: progressInterval)
                if Task.isCancelled { return }
                progress("\((ContinuousClock.now - started).components.seconds) s: \(recorder.transfers) transfers")
            }
        }
        let session = USBCaptureSession(adapter: adapter, options: options, timeZone: timeZone)
        let outcome = await session.runOffThePool(handle, recorder: recorder, shouldStop: shouldStop, progress: progress)
        reporter.cancel()
        do {
            try recorder.close()
        } catch {
            throw CommandFailure.failure(error.description)
        }
        return "\(recorder.transfers) transfers" + (outcome.map { "; the session ended: \($0)" } ?? "")
    }
}

/// What `capture --usb` does with an opened device, recorded through a ``RecordingUSBDeviceHandle``:
/// the adapter's session, or (no adapter) reads of every interrupt and bulk IN endpoint.
struct USBCaptureSession: Sendable {
    var adapter: (any USBAdapter)?
    var options: [String: String]
    var timeZone: TimeZone
    /// The clock adapter sessions read "now" from (a replayed device's clock in tests).
    var replayClock: (@Sendable () -> Date)?
    /// Timeout of each endpoint read without an adapter.
    var readTimeout: Duration = .milliseconds(500)

    /// Records the enumeration, then runs the session on `device` until it ends or `shouldStop`.
    /// Returns why the session ended, when it ended with an error. Blocks: call on a thread of
    /// its own.
    func run(_ device: any USBDeviceHandle, recorder: USBMonRecorder, shouldStop: @escaping @Sendable () -> Bool,
             progress: @Sendable (String) -> Void) -> String? {
        recorder.recordEnumeration(of: device.device)
        let recording = RecordingUSBDeviceHandle(wrapping: device, recorder: recorder)
        guard let adapter else { return readInputs(recording, shouldStop: shouldStop) }
        let context = AdapterContext(timeZone: timeZone, source: adapter.descriptor.id, replayClock: replayClock)
        let session = adapter.makeSession(for: device.device, context: context, options: options)
        var records = 0
        do {
            try session.run(recording, deliver: { output in
                records += output.records.count
                if !output.records.isEmpty { progress("the session produced \(records) records so far (not stored)") }
                // Nothing is stored, but the capture file keeps every byte (replayable into a store), and the
                // session runs as asked (with `clear-after-sync=true` the clear is part of the recording).
                return DeliveryReceipt(stored: output.records.count, held: 0)
            }, shouldStop: shouldStop)
            return nil
        } catch USBError.replayExhausted {
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// ``run(_:recorder:shouldStop:progress:)`` on a thread of its own, awaited.
    func runOffThePool(_ device: LibUSBDeviceHandle, recorder: USBMonRecorder,
                       shouldStop: @escaping @Sendable () -> Bool,
                       progress: @escaping @Sendable (String) -> Void) async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: run(device, recorder: recorder, shouldStop: shouldStop, progress: progress))
            }
        }
    }

    /// Claims the interfaces with interrupt or bulk IN endpoints (detaching kernel drivers) and
    /// reads each such endpoint on a thread of its own until `shouldStop`.
    private func readInputs(_ device: RecordingUSBDeviceHandle, shouldStop: @escaping @Sendable () -> Bool) -> String? {
        var endpoints: [USBEndpointDescription] = []
        var claimed: [UInt8] = []
        for interface in device.device.interfaces where interface.alternateSetting == 0 {
            let inputs = interface.endpoints.filter { $0.isInput && ($0.transferType == .interrupt || $0.transferType == .bulk) }
            guard !inputs.isEmpty else { continue }
            do {
                try device.claimInterface(interface.number, detachKernelDriver: true)
            } catch {
                return "claiming interface \(interface.number) failed: \(error)"
            }
            claimed.append(interface.number)
            endpoints += inputs
        }
        defer { for number in claimed { try? device.releaseInterface(number) } }
        guard !endpoints.isEmpty else { return "the device has no interrupt or bulk IN endpoints to read" }
        let group = DispatchGroup()
        let failure = Mutex<String?>(nil)
        let timeout = readTimeout
        for endpoint in endpoints {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let length = max(64, Int(endpoint.maxPacketSize))
                while !shouldStop() {
                    do {
                        _ = try device.read(endpoint: endpoint.address, length: length, timeout: timeout)
                    } catch USBError.timeout {
                        continue
                    } catch {
                        failure.withLock { $0 = $0 ?? "reading endpoint \(String(format: "0x%02x", endpoint.address)): \(error)" }
                        return
                    }
                }
            }
        }
        group.wait()
        return failure.withLock { $0 }
    }
}

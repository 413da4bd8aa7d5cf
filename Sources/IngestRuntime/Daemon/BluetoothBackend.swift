import AdapterKit
import BLEWire
import BlueZTransport
import Foundation
import HealthModel
import Logging
import Synchronization
import Transport

/// What a ``BluetoothLink`` is asked for when it opens a scanner or connects.
public struct BluetoothLinkOptions: Sendable {
    /// Receives the engine's log records.
    public var log: BlueZLogSink
    /// Sees every packet the engine sends and receives (`ingestd capture`).
    public var tap: PacketTap?
    /// Scan actively (scan requests, so scan responses arrive) instead of passively.
    public var activeScan: Bool

    public init(log: @escaping BlueZLogSink, tap: PacketTap? = nil, activeScan: Bool = false) {
        self.log = log
        self.tap = tap
        self.activeScan = activeScan
    }

    /// The scanner configuration these options ask for.
    public var scannerConfiguration: HCIScannerConfiguration {
        HCIScannerConfiguration(parameters: LEScanParameters(scanType: activeScan ? .active : .passive))
    }
}

/// How the Bluetooth backend (and `ingestd capture`) reaches the radio: real HCI and L2CAP
/// sockets, or simulators in tests and benchmarks.
public struct BluetoothLink: Sendable {
    /// Opens the scanner (not started). Throws `BluetoothUnavailable` without a controller.
    public var openScanner: @Sendable (BluetoothLinkOptions) throws -> HCIScanner
    /// Connects to a peripheral and returns a started GATT client.
    public var connect: @Sendable (BLEAddress, BLEAddressType, BluetoothLinkOptions) async throws -> GATTClient

    public init(openScanner: @escaping @Sendable (BluetoothLinkOptions) throws -> HCIScanner,
                connect: @escaping @Sendable (BLEAddress, BLEAddressType, BluetoothLinkOptions) async throws -> GATTClient) {
        self.openScanner = openScanner
        self.connect = connect
    }

    /// The real sockets of controller `index`.
    public static func controller(_ index: UInt16) -> BluetoothLink {
        BluetoothLink(
            openScanner: { options in
                try HCIScanner.open(controller: index, configuration: options.scannerConfiguration, log: options.log,
                                    tap: options.tap)
            },
            connect: { address, type, options in
                try await GATTClient.connect(to: address, addressType: type, controller: index, log: options.log,
                                             tap: options.tap)
            })
    }
}

/// Bluetooth LE in the daemon: scans, routes advertisements through the same adapter router a
/// replayed capture uses and commits their records in small batches (see ``EventBatcher``);
/// connects to matched devices whose adapter holds conversations and runs the conversation
/// (see `BluetoothBackend+Conversation.swift`), committing each batch it delivers. No controller (or no kernel support) is logged once and
/// the daemon carries on.
///
/// Public for IngestBench, which drives it in-process over the simulators.
public struct BluetoothBackend: DeviceBackend {
    public let name = "ble"
    public var adapters: [any BLEAdapter]
    public var link: BluetoothLink
    public var controllerName: String
    public var timeZone: TimeZone
    /// With `--once`: how long to listen.
    public var onceListen: Duration
    /// After a connection ended normally, how long before connecting to the same device again.
    public var reconnectCooldown: Duration = .seconds(60)
    /// Devices served by one adapter only (`--adapter ADDRESS=ID`).
    public var pins: [BLEAddress: String] = [:]
    /// Adapter configuration (`--adapter-option`), given to conversations.
    public var options: [String: String] = [:]
    /// The keys of devices that encrypt their advertisements (the store's and `--key`), read at start.
    public var keys = AdvertisementKeys()
    /// How long the first record of a batch waits for others before the batch is committed.
    public var batchDelay: Duration = EventBatcher.defaultDelay

    public init(adapters: [any BLEAdapter], link: BluetoothLink, controllerName: String, timeZone: TimeZone,
                onceListen: Duration) {
        self.adapters = adapters
        self.link = link
        self.controllerName = controllerName
        self.timeZone = timeZone
        self.onceListen = onceListen
    }

    /// Scans and serves devices until cancelled (or, with `once`, for ``onceListen``).
    public func run(service: IngestService, logger: Logger, once: Bool) async {
        let sink = Self.logSink(logger)
        let scanner: HCIScanner
        do {
            scanner = try link.openScanner(BluetoothLinkOptions(log: sink))
            try await scanner.start()
        } catch {
            logger.warning("Bluetooth LE unavailable on \(controllerName): \(error); carrying on without it")
            return
        }
        logger.info("scanning on \(controllerName)")
        // What this run's sessions and conversations share; the next run starts without it.
        let runState = AdapterRunState()
        let router: AdapterRouter
        do {
            router = try AdapterRouter(adapters: adapters, pins: pins, timeZone: timeZone, keys: keys, runState: runState)
        } catch {
            logger.error("\(error)")
            await scanner.stop()
            return
        }
        let batcher = EventBatcher(router: router, service: service, logger: logger, delay: batchDelay)
        let connections = ConnectionTable(cooldown: reconnectCooldown)
        let advice = ControllerAdvice(controllerName: controllerName, logger: logger)
        let link = self.link
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                if once {
                    try? await Task.sleep(for: onceListen)
                } else {
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
                await scanner.stop()
            }
            for await event in scanner.events {
                await batcher.add(event)
                guard case .advertisement(let advertisement) = event, advertisement.eventType.isConnectable,
                      let adapter = await batcher.adapter(for: advertisement.address), adapter.holdsConversations,
                      connections.claim(advertisement.address) else { continue }
                var log = logger
                log[metadataKey: "device"] = "\(advertisement.address)"
                let deviceLogger = log
                let traits = await batcher.traits(for: advertisement.address)
                let timeZone = self.timeZone
                let options = self.options
                group.addTask {
                    let ok = await Self.converse(with: advertisement, adapter: adapter, traits: traits, link: link,
                                                 service: service, timeZone: timeZone, options: options, runState: runState,
                                                 advice: advice, logger: deviceLogger)
                    connections.release(advertisement.address, succeeded: ok)
                }
            }
            group.cancelAll()
        }
        await batcher.flush(finishing: true)
    }

    static func logSink(_ logger: Logger) -> BlueZLogSink {
        { record in logger.log(level: record.level, "\(record.message)") }
    }
}

/// What the controller's own state stops the daemon from doing, said once per run with the command
/// that fixes it (the harness or bluetoothd normally sets the controller up; a bare one may not be).
final class ControllerAdvice: Sendable {
    private let controllerName: String
    private let logger: Logger
    private let given = Mutex<Set<String>>([])

    init(controllerName: String, logger: Logger) {
        self.controllerName = controllerName
        self.logger = logger
    }

    /// `btmgmt` addresses a controller by index: `--index N` for `hciN`.
    private var btmgmt: String {
        if controllerName.hasPrefix("hci"), let index = Int(controllerName.dropFirst(3)) { return "btmgmt --index \(index)" }
        return "btmgmt"
    }

    /// A connection attempt failed. The kernel refuses every LE connection at once (ECONNREFUSED,
    /// before anything is sent) while LE is disabled on the controller.
    func connectFailed(_ error: any Error) {
        guard case .connectFailed(_, let code)? = error as? L2CAPConnectError, code == ECONNREFUSED,
              given.withLock({ $0.insert("le-disabled").inserted }) else { return }
        let command = "\(btmgmt) le on"
        logger.notice("\(controllerName) refused an LE connection (ECONNREFUSED): LE is probably disabled on the controller; enable it with `\(command)` (bluetoothd does this when it runs)")
    }
}

/// Which devices have a connection (or are cooling down after one), so a broadcasting device is
/// connected to once, not on every advertisement. Failures back off exponentially (5 s to 5 min).
final class ConnectionTable: Sendable {
    private struct Entry {
        var busy: Bool
        var notBefore: ContinuousClock.Instant
        var failures: Int
    }
    private let entries = Mutex<[BLEAddress: Entry]>([:])
    private let cooldown: Duration

    init(cooldown: Duration) { self.cooldown = cooldown }

    /// Marks the device busy if it may be connected to now.
    func claim(_ address: BLEAddress) -> Bool {
        entries.withLock { entries in
            let now = ContinuousClock.now
            if let entry = entries[address], entry.busy || entry.notBefore > now { return false }
            entries[address, default: Entry(busy: false, notBefore: now, failures: 0)].busy = true
            return true
        }
    }

    func release(_ address: BLEAddress, succeeded: Bool) {
        entries.withLock { entries in
            var entry = entries[address] ?? Entry(busy: false, notBefore: .now, failures: 0)
            entry.busy = false
            entry.failures = succeeded ? 0 : entry.failures + 1
            let wait: Duration = succeeded ? cooldown : .seconds(min(300, 5 * (1 << min(entry.failures - 1, 6))))
            entry.notBefore = ContinuousClock.now + wait
            entries[address] = entry
        }
    }
}

/// Routes transport events to adapter sessions and commits their records in small batches.
///
/// Records from a connected device (notifications, indications, reads) are committed at once,
/// together with whatever else waits: a connected device is in a conversation (it may wait for
/// its data to be safe) and sends little. Advertisement records wait ``delay`` (20 ms by default)
/// after the first of them for others, or until 500 wait: a busy radio (hundreds of
/// advertisements a second) gets batches of many records and at most about 50 commits a second.
/// Nothing runs while no records wait (no polling). Rejections are logged without values.
public actor EventBatcher {
    /// The default wait of a batch's first record for others.
    public static let defaultDelay: Duration = .milliseconds(20)
    /// Records that make a batch commit without waiting.
    static let maximumBatch = 500

    private let router: AdapterRouter
    private let service: IngestService
    private let logger: Logger
    private let delay: Duration
    private var output = AdapterOutput()
    private var timer: Task<Void, Never>?

    init(router: AdapterRouter, service: IngestService, logger: Logger, delay: Duration = EventBatcher.defaultDelay) {
        self.router = router
        self.service = service
        self.logger = logger
        self.delay = delay
    }

    func add(_ event: TransportEvent) async {
        let waiting = output.records.count
        router.route(event, into: &output)
        let fromConnection = if case .gattValue = event { true } else { false }
        if output.records.count >= Self.maximumBatch || (fromConnection && output.records.count > waiting) {
            await flush(finishing: false)
        } else if timer == nil, !output.records.isEmpty || !output.rejections.isEmpty || !output.batteries.isEmpty {
            let delay = self.delay
            timer = Task {
                do { try await Task.sleep(for: delay) } catch { return }
                await self.timerFired()
            }
        }
    }

    /// Ends the sessions on a thread of its own (an external adapter's process may take seconds to
    /// finish, and a flooding one prints a lot meanwhile): what they produce is committed in
    /// batches of `maximumBatch` through `ingestBlocking`, which may block that thread but never
    /// one of the cooperative pool. Returns what is left for the last commit. Called once, at
    /// shutdown, when no other event is routed any more.
    private func finishCommittingInBatches(_ pending: AdapterOutput) async -> AdapterOutput {
        let router = UncheckedRouter(router: router)
        let service = service
        let logger = logger
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var output = pending
                var batteries: [DeviceBattery] = []
                do {
                    try router.router.finish(into: &output, flushingAt: Self.maximumBatch) { batch in
                        Self.log(batch, logger)
                        batteries += batch.batteries
                        guard !batch.records.isEmpty else { return }
                        do {
                            _ = try service.ingestBlocking(batch.records, origin: "ble")
                        } catch {
                            logger.error("commit failed: \(error)")
                        }
                    }
                } catch {
                    logger.error("finishing the sessions failed: \(error)")
                }
                output.batteries += batteries
                continuation.resume(returning: output)
            }
        }
    }

    /// The router handed to the finishing thread: the batcher waits for that thread and routes
    /// nothing meanwhile, so the router is never used from two threads at once.
    private struct UncheckedRouter: @unchecked Sendable {
        let router: AdapterRouter
    }

    /// Logs rejections (without values: reasons only; those a session explains once at debug level) and the
    /// sessions' explanations (a missing or wrong key), which never hold a key.
    private static func log(_ output: AdapterOutput, _ logger: Logger) {
        for rejection in output.rejections {
            if rejection.isExplained {
                logger.debug("frame rejected by \(rejection.adapter): \(rejection.reason)")
            } else {
                logger.warning("frame rejected by \(rejection.adapter): \(rejection.reason)")
            }
        }
        for explanation in output.explanations { logger.warning("\(explanation)") }
    }

    private func timerFired() async {
        timer = nil
        await flush(finishing: false)
    }

    func adapter(for address: BLEAddress) -> (any BLEAdapter)? { router.adapter(for: address) }

    func traits(for address: BLEAddress) -> BLEDeviceTraits {
        router.traits(for: address) ?? BLEDeviceTraits(address: address)
    }

    func flush(finishing: Bool) async {
        // External adapters answer asynchronously: collect what their processes wrote meanwhile.
        router.poll(into: &output)
        if finishing { output = await finishCommittingInBatches(output) }
        timer?.cancel()
        timer = nil
        Self.log(output, logger)
        let records = output.records
        let batteries = output.batteries
        output = AdapterOutput()
        await service.recordBatteries(batteries)
        guard !records.isEmpty else { return }
        do {
            _ = try await service.ingest(records, origin: "ble")
        } catch {
            logger.error("commit failed: \(error)")
        }
    }
}

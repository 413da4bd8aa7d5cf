import AdapterKit
import Foundation
import LibUSBTransport
import Logging
import Synchronization
import Transport

/// USB in the daemon: present devices and hotplug arrivals are matched to USB adapters; each
/// matched device gets a session on its own thread. A failing session ends alone and is retried
/// with backoff (1 s doubling to 5 min) while the device is present; a session that finished its
/// work (a history device) runs again only when the device is plugged in again.
///
/// With `--once` the devices present at the start get their sessions; a session still running
/// after ``onceListen`` (a receiver such as an ANT stick, or a thermometer read periodically,
/// never finishes by itself) is then stopped: it commits what it has and ends.
struct USBBackend: DeviceBackend {
    let name = "usb"
    var adapters: [any USBAdapter]
    var options: [String: String]
    var timeZone: TimeZone
    /// With `--once`: how long sessions may run before they are stopped.
    var onceListen: Duration
    /// Devices pinned to one adapter (`--adapter VID:PID=ID`).
    var pins = AdapterPins()

    func run(service: IngestService, logger: Logger, once: Bool) async {
        let context: LibUSBContext
        do {
            context = try LibUSBContext()
        } catch {
            logger.warning("USB unavailable (\(error)); carrying on without USB")
            return
        }
        let supervisor = USBSessionSupervisor(context: context, adapters: adapters, options: options,
                                              timeZone: timeZone, service: service, logger: logger, pins: pins)
        if once {
            await withTaskCancellationHandler {
                supervisor.reconcile(present: (try? context.enumerate()) ?? [])
                if await !supervisor.waitForSessions(atMost: onceListen) {
                    logger.info("--once: listened \(onceListen.inSeconds) s (--listen); stopping the sessions still running")
                }
                supervisor.stopAll()
                await supervisor.waitForSessions()
            } onCancel: {
                supervisor.stopAll()
            }
            return
        }
        if !context.supportsHotplug {
            logger.notice("libusb has no hotplug support here: polling for devices every 2 s")
            repeat {
                supervisor.reconcile(present: (try? context.enumerate()) ?? [])
                try? await Task.sleep(for: .seconds(2))
            } while !Task.isCancelled
            supervisor.stopAll()
            await supervisor.waitForSessions()
            return
        }
        let events: AsyncStream<USBHotplugEvent>
        do {
            events = try context.hotplugEvents()
        } catch {
            logger.warning("USB hotplug failed to start (\(error)); carrying on without USB")
            return
        }
        await withTaskCancellationHandler {
            for await event in events {
                switch event {
                case .arrived(let device): supervisor.arrived(device)
                case .left(let bus, let address): supervisor.left(bus: bus, address: address)
                }
            }
        } onCancel: {
            supervisor.stopAll()
        }
        supervisor.stopAll()
        await supervisor.waitForSessions()
    }
}

/// Keeps one session per matched USB device and restarts failed ones with backoff.
final class USBSessionSupervisor: Sendable {
    private struct Key: Hashable { var bus: UInt8; var address: UInt8 }
    private struct State {
        var running: [Key: (device: USBDeviceDescription, stop: StopFlag)] = [:]
        var finished: Set<Key> = []
        var failures: [Key: Int] = [:]
        var unmatchedLogged: Set<String> = []
    }

    private let context: LibUSBContext
    private let runner: USBSessionRunner
    private let service: IngestService
    private let logger: Logger
    private let state = Mutex(State())
    private let group = DispatchGroup()

    init(context: LibUSBContext, adapters: [any USBAdapter], options: [String: String], timeZone: TimeZone,
         service: IngestService, logger: Logger, pins: AdapterPins = AdapterPins()) {
        self.context = context
        self.runner = USBSessionRunner(adapters: adapters, options: options, timeZone: timeZone, pins: pins)
        self.service = service
        self.logger = logger
    }

    /// Starts sessions for matched devices not yet served; forgets devices no longer present.
    func reconcile(present devices: [USBDeviceDescription]) {
        let keys = Set(devices.compactMap(Self.key))
        state.withLock { state in
            state.finished = state.finished.intersection(keys)
            state.failures = state.failures.filter { keys.contains($0.key) }
        }
        for device in devices { arrived(device) }
    }

    func arrived(_ device: USBDeviceDescription) {
        guard let key = Self.key(device) else { return }
        guard let adapter = runner.adapter(for: device) else {
            let first = state.withLock { $0.unmatchedLogged.insert(device.idString).inserted }
            if first { logger.debug("no adapter for USB device \(device)") }
            return
        }
        let stop = StopFlag()
        let start = state.withLock { state -> Bool in
            guard state.running[key] == nil, !state.finished.contains(key) else { return false }
            state.running[key] = (device, stop)
            return true
        }
        guard start else { return }
        var log = logger
        log[metadataKey: "device"] = "\(device.idString)@\(device.bus ?? 0)/\(device.address ?? 0)"
        log[metadataKey: "adapter"] = "\(adapter.descriptor.id)"
        log.info("\(adapter.descriptor.name) arrived: starting its session")
        group.enter()
        let sessionLogger = log
        Thread.detachNewThread { [self] in
            defer { group.leave() }
            runSession(adapter: adapter, device: device, key: key, stop: stop, logger: sessionLogger)
        }
    }

    func left(bus: UInt8, address: UInt8) {
        let key = Key(bus: bus, address: address)
        state.withLock { state in
            state.running[key]?.stop.set()
            state.finished.remove(key)
            state.failures[key] = nil
        }
    }

    func stopAll() {
        state.withLock { state in
            for entry in state.running.values { entry.stop.set() }
        }
    }

    /// Waits (off the cooperative pool) until every session thread has ended or `limit` passed;
    /// returns whether they all ended. The wait blocks a thread of its own, not a worker of
    /// Dispatch's global queues (whose width is as small as the cooperative pool's).
    func waitForSessions(atMost limit: Duration) async -> Bool {
        let seconds = limit.inSeconds
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread { [group] in
                continuation.resume(returning: group.wait(timeout: .now() + seconds) == .success)
            }
        }
    }

    /// Waits (off the cooperative pool) until every session thread has ended.
    func waitForSessions() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }

    private func runSession(adapter: any USBAdapter, device: USBDeviceDescription, key: Key, stop: StopFlag,
                            logger: Logger) {
        while !stop.isSet {
            var outcome: String
            let deliver: (AdapterOutput) throws -> DeliveryReceipt = { output in
                for rejection in output.rejections { logger.warning("frame rejected: \(rejection.reason): \(rejection.detail)") }
                guard !output.records.isEmpty else { return DeliveryReceipt(stored: 0, held: 0) }
                let report = try self.service.ingestBlocking(output.records, origin: device.idString, deviceKeys: device.ownerKeys)
                return DeliveryReceipt(report)
            }
            do {
                // An external adapter's process opens the device itself: `open` is then not called.
                var opened: LibUSBDeviceHandle?
                defer { opened?.close() }
                try runner.run(adapter, device: device, open: {
                    let handle = try self.context.open(device)
                    opened = handle
                    return handle
                }, deliver: deliver, shouldStop: { stop.isSet })
                logger.info("session finished")
                state.withLock { state in
                    state.running[key] = nil
                    state.finished.insert(key)
                    state.failures[key] = nil
                }
                return
            } catch USBError.noDevice {
                logger.info("device gone: session ended")
                break
            } catch {
                // Pulled out mid-transfer, a device often fails with an I/O error rather than "no device",
                // and before the kernel has removed it: a device that goes is not retried.
                if leaves(device, stop: stop) {
                    logger.info("device gone: session ended (\(error))")
                    break
                }
                if stop.isSet {
                    logger.info("session ended while stopping (\(error))")
                    break
                }
                outcome = "\(error)"
            }
            let failures = state.withLock { state -> Int in
                state.failures[key, default: 0] += 1
                return state.failures[key] ?? 1
            }
            let delay = min(300.0, pow(2.0, Double(failures - 1)))
            logger.warning("session failed (\(outcome)); retrying in \(Int(delay)) s")
            let deadline = Date().addingTimeInterval(delay)
            while Date() < deadline, !stop.isSet { Thread.sleep(forTimeInterval: 0.1) }
        }
        state.withLock { state in state.running[key] = nil }
    }

    /// After a failed session, whether the device turns out to be leaving: it is gone from the bus
    /// within `grace` (a failure while being pulled out comes before the kernel removes the device).
    /// False as soon as the session is asked to stop with the device still there (shutting down).
    private func leaves(_ device: USBDeviceDescription, stop: StopFlag, grace: TimeInterval = 1.5) -> Bool {
        let deadline = Date().addingTimeInterval(grace)
        while true {
            if !isPresent(device) { return true }
            if stop.isSet || Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Whether the device is still on the bus (an enumeration that fails counts as present).
    private func isPresent(_ device: USBDeviceDescription) -> Bool {
        guard let present = try? context.enumerate(readStrings: false) else { return true }
        return present.contains {
            $0.bus == device.bus && $0.address == device.address && $0.vendorID == device.vendorID
                && $0.productID == device.productID
        }
    }

    private static func key(_ device: USBDeviceDescription) -> Key? {
        guard let bus = device.bus, let address = device.address else { return nil }
        return Key(bus: bus, address: address)
    }
}

/// A flag a session's `shouldStop` reads.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

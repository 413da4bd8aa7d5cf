import Foundation
import Logging
import Pipeline
import ServiceNotification
import SQLiteStore
import Synchronization

/// Where device arrivals come from. The daemon runs each backend as one child task; a backend
/// that is unavailable (no controller, no USB support) says so once and returns, and the others
/// carry on.
public protocol DeviceBackend: Sendable {
    /// A short name for logs (`usb`, `ble`).
    var name: String { get }
    /// Runs until cancelled (or, with `once`, until the present devices are done), sending
    /// batches to `service`.
    func run(service: IngestService, logger: Logger, once: Bool) async
}

/// What `ingestd run` was asked to do.
public struct DaemonOptions: Sendable {
    var storePath: String
    var once = false
    /// Retention and per-source bounds of the pending area.
    var pendingLimits = PendingLimits()
    /// The body-mass rule's tolerance of person assignment (0.10 = ±10 %).
    var assignTolerance = PersonAssigner.defaultTolerance
    /// How long shutdown may take before the process exits anyway.
    var shutdownGrace: Duration = .milliseconds(1800)
    /// Whether a shutdown that takes longer than ``shutdownGrace`` ends the process (`ingestd run`:
    /// SIGTERM must end it even when a device call hangs). Off for a daemon run inside another
    /// program (the tests, IngestBench), which an `exit` would end with it.
    var exitsWhenShutdownHangs: Bool
    /// The service manager to tell about start-up, state, shutdown and liveness (`Type=notify`),
    /// when `NOTIFY_SOCKET` named one.
    var notifier: ServiceNotifier?

    public init(storePath: String, once: Bool = false, pendingLimits: PendingLimits = PendingLimits(),
                assignTolerance: Double = PersonAssigner.defaultTolerance, exitsWhenShutdownHangs: Bool = false,
                notifier: ServiceNotifier? = nil) {
        self.notifier = notifier
        self.storePath = storePath
        self.once = once
        self.pendingLimits = pendingLimits
        self.assignTolerance = assignTolerance
        self.exitsWhenShutdownHangs = exitsWhenShutdownHangs
    }
}

/// The daemon: runs the device backends under structured concurrency, reacts to SIGTERM/SIGINT
/// (stop sessions, flush, close the store, exit 0) and SIGHUP (re-read grants and priorities).
public struct Daemon {
    var options: DaemonOptions
    var backends: [any DeviceBackend]
    var logger: Logger

    public init(options: DaemonOptions, backends: [any DeviceBackend], logger: Logger) {
        self.options = options
        self.backends = backends
        self.logger = logger
    }

    public func run() async throws {
        let service = try IngestService(storePath: options.storePath, logger: logger, pendingLimits: options.pendingLimits,
                                        assignTolerance: options.assignTolerance)
        do { try await service.purgeExpiredPending() } catch { logger.error("removing expired held samples failed: \(error)") }
        // Watched before the start line: a service manager (or a test) that signals as soon as it
        // reads that line must not meet the default action, which kills without closing the store.
        let signals = SignalWatcher(signals: [SIGTERM, SIGINT, SIGHUP])
        defer { signals.cancel() }
        logger.notice("ingestd \(IngestdRelease.version) started; store \(options.storePath); backends: \(backends.map(\.name).joined(separator: ", "))")
        let delivery = DaemonDelivery.start(storePath: options.storePath, logger: logger)
        defer { delivery.stop() }
        let notifier = options.notifier
        let backendNames = backends.map(\.name)
        Self.notify(notifier, [.ready, .status(await Self.status(service: service, backends: backendNames))], logger: logger)

        let backendCount = backends.count
        let grace = options.shutdownGrace
        let exitsWhenShutdownHangs = options.exitsWhenShutdownHangs
        let watchdog = await withTaskGroup(of: Bool.self) { group -> ShutdownWatchdog? in
            let once = options.once
            let logger = logger
            for backend in backends {
                group.addTask {
                    var log = logger
                    log[metadataKey: "backend"] = "\(backend.name)"
                    await backend.run(service: service, logger: log, once: once)
                    return false
                }
            }
            // The signal task: SIGHUP re-reads grants; SIGTERM/SIGINT end the daemon (returns true).
            group.addTask {
                for await signal in signals.stream {
                    if signal == SIGHUP {
                        Self.notify(notifier, [.reloading], logger: logger)
                        do { try await service.reloadAuthorization() } catch { logger.error("reloading grants failed: \(error)") }
                        DaemonDelivery.reload(delivery, logger: logger)
                        Self.notify(notifier, [.ready, .status(await Self.status(service: service, backends: backendNames))], logger: logger)
                        continue
                    }
                    logger.notice("\(signal == SIGTERM ? "SIGTERM" : "SIGINT") received: stopping sessions")
                    return true
                }
                return true
            }
            // The service manager's view: the status line kept current, and the watchdog fed at half
            // its interval (a daemon whose tasks are stuck stops feeding it and is restarted).
            if let notifier {
                group.addTask {
                    let watchdog = notifier.watchdogInterval
                    let period = min(watchdog.map { $0 / 2 } ?? .seconds(15), .seconds(15))
                    var shown = ""
                    while !Task.isCancelled {
                        try? await Task.sleep(for: period)
                        if Task.isCancelled { break }
                        var messages: [ServiceNotifier.Message] = watchdog == nil ? [] : [.watchdog]
                        let status = await Self.status(service: service, backends: backendNames)
                        if status != shown { messages.append(.status(status)); shown = status }
                        if !messages.isEmpty { Self.notify(notifier, messages, logger: logger) }
                    }
                    return false
                }
            }
            // Start-up's code pages go back to the kernel once the daemon runs (not with --once:
            // its end is counted by the backends' tasks below, and it exits anyway).
            if !once {
                group.addTask {
                    try? await Task.sleep(for: StartupPages.delay)
                    if !Task.isCancelled { StartupPages.release(logger: logger) }
                    return false
                }
            }
            var finishedBackends = 0
            // With --once and no backend (`--no-usb --no-ble`) there is nothing to wait for.
            while !(once && finishedBackends == backendCount), let stopSignal = await group.next() {
                if stopSignal { break }
                // Without --once, backends that end (unavailable) leave the daemon idle until a signal.
                finishedBackends += 1
            }
            // Sessions get their cancellation; a session stuck in a device call, or a store slow to
            // close on a busy disk, must not hold the exit past the grace period: every commit is
            // atomic, so exiting then loses nothing acknowledged.
            Self.notify(notifier, [.stopping, .status("stopping sessions")], logger: logger)
            let watchdog = exitsWhenShutdownHangs ? ShutdownWatchdog(grace: grace, logger: logger) : nil
            group.cancelAll()
            signals.finish()
            while await group.next() != nil {}
            return watchdog
        }
        await service.close()
        let totals = await service.totals
        Self.notify(notifier, [.status("stopped: \(totals.written) written")], logger: logger)
        logger.notice("stopped: \(totals.written) written, \(totals.duplicate) duplicate, \(totals.replaced) replaced, \(totals.denied) denied, \(totals.invalid) invalid, \(totals.held) held")
        watchdog?.disarm()
    }

}

extension Daemon {
    /// The one-line state systemd shows (`systemctl status ingestd`): devices, samples, last commit.
    static func status(service: IngestService, backends: [String]) async -> String {
        let totals = await service.totals
        let devices = await service.deviceCount
        let last = await service.lastCommit
        var text = "\(devices) device\(devices == 1 ? "" : "s") seen, \(totals.written) sample\(totals.written == 1 ? "" : "s") written"
        if let last {
            text += "; last commit \(last.formatted(Date.ISO8601FormatStyle(timeZone: .gmt)))"
        } else {
            text += "; nothing committed yet"
        }
        return text + "; backends: " + (backends.isEmpty ? "none" : backends.joined(separator: ", "))
    }

    /// Sends `messages`, logging (at debug) a service manager that cannot be reached.
    static func notify(_ notifier: ServiceNotifier?, _ messages: [ServiceNotifier.Message], logger: Logger) {
        guard let notifier else { return }
        do { try notifier.send(messages) } catch { logger.debug("\(error)") }
    }
}

/// Exits the process if shutdown takes longer than the grace period (SIGTERM must end ingestd
/// within 2 s even when a device call hangs).
final class ShutdownWatchdog: Sendable {
    private let disarmed = StopFlag()

    init(grace: Duration, logger: Logger) {
        let disarmed = self.disarmed
        let seconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: seconds)
            if !disarmed.isSet {
                logger.warning("shutdown did not end within \(seconds) s; exiting anyway (all commits are complete)")
                exit(0)
            }
        }
    }

    func disarm() { disarmed.set() }
}

/// Turns POSIX signals into an async stream (DispatchSource; the default action is disabled
/// while watched). Unchecked Sendable: the dispatch sources are only created in `init` and
/// cancelled in `cancel`, both thread-safe dispatch calls.
public final class SignalWatcher: @unchecked Sendable {
    public let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    public init(signals: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream(bufferingPolicy: .bufferingNewest(16))
        self.stream = stream
        self.continuation = continuation
        let queue = DispatchQueue(label: "ingestd.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    private let continuation: AsyncStream<Int32>.Continuation

    /// Ends the stream (the daemon is stopping).
    func finish() { continuation.finish() }

    public func cancel() {
        for source in sources { source.cancel() }
        continuation.finish()
    }
}

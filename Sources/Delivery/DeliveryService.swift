import Foundation
import Pipeline
import Synchronization

/// The daemon's delivery: one worker thread per sink, each with its own feed connection and
/// receiver connection, delivering within ~100 ms of a commit (or on the sink's `--every`
/// schedule), retrying forever with backoff while ingestion goes on. `reload` re-reads the sinks
/// (SIGHUP); `stop` ends every worker.
public final class DeliveryService: Sendable {
    /// How often an idle worker looks for new commits.
    public static let pollInterval = 0.1
    /// Seconds between looks for a person's changed measurement system while idle.
    public static let unitsCheckInterval = 1.0
    private let openFeed: @Sendable () throws -> any DeliveryFeed
    private let secrets: SecretResolver
    private let softwareVersion: String
    private let retry: RetryPolicy
    private let onEvent: @Sendable (DeliveryEvent) -> Void
    private let onProblem: @Sendable (String) -> Void
    private let workers = Mutex<[SinkWorker]>([])

    /// `openFeed` opens a new connection to the store's feed (one per worker thread, one to list the sinks).
    public init(openFeed: @escaping @Sendable () throws -> any DeliveryFeed, secrets: SecretResolver = SecretResolver(), softwareVersion: String,
                retry: RetryPolicy = RetryPolicy(maximumAttempts: nil),
                onEvent: @escaping @Sendable (DeliveryEvent) -> Void,
                onProblem: @escaping @Sendable (String) -> Void) {
        self.openFeed = openFeed
        self.secrets = secrets
        self.softwareVersion = softwareVersion
        self.retry = retry
        self.onEvent = onEvent
        self.onProblem = onProblem
    }

    /// Starts a worker per sink in the store; returns the names of the sinks started.
    @discardableResult
    public func start() throws -> [String] {
        let store = try openFeed()
        defer { store.close() }
        var started: [SinkWorker] = []
        for state in try store.sinks() {
            do {
                let configuration = try SinkConfiguration(state.definition)
                let worker = SinkWorker(configuration: configuration, openFeed: openFeed, secrets: secrets,
                                        softwareVersion: softwareVersion, retry: retry, onEvent: onEvent, onProblem: onProblem)
                worker.start()
                started.append(worker)
            } catch {
                onProblem("sink \(state.definition.name): \(error)")
            }
        }
        workers.withLock { $0 = started }
        return started.map(\.configuration.name)
    }

    /// Stops every worker (each finishes or abandons its attempt; the cursor only ever moved on acknowledgements).
    public func stop() {
        let current = workers.withLock { list in
            defer { list = [] }
            return list
        }
        for worker in current { worker.requestStop() }
        for worker in current { worker.waitUntilStopped(timeout: 5) }
    }

    /// Re-reads the sinks: stops the workers and starts them again from the store.
    @discardableResult
    public func reload() throws -> [String] {
        stop()
        return try start()
    }
}

/// One sink's worker thread.
final class SinkWorker: Sendable {
    let configuration: SinkConfiguration
    private let openFeed: @Sendable () throws -> any DeliveryFeed
    private let secrets: SecretResolver
    private let softwareVersion: String
    private let retry: RetryPolicy
    private let onEvent: @Sendable (DeliveryEvent) -> Void
    private let onProblem: @Sendable (String) -> Void
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(configuration: SinkConfiguration, openFeed: @escaping @Sendable () throws -> any DeliveryFeed, secrets: SecretResolver, softwareVersion: String,
         retry: RetryPolicy, onEvent: @escaping @Sendable (DeliveryEvent) -> Void,
         onProblem: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.openFeed = openFeed
        self.secrets = secrets
        self.softwareVersion = softwareVersion
        self.retry = retry
        self.onEvent = onEvent
        self.onProblem = onProblem
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "ingestd.sink.\(configuration.name)"
        thread.start()
    }

    func requestStop() { stopRequested.store(true, ordering: .relaxed) }

    func waitUntilStopped(timeout: Double) {
        _ = finished.wait(timeout: .now() + timeout)
    }

    private var shouldStop: Bool { stopRequested.load(ordering: .relaxed) }

    private func run() {
        let store: any DeliveryFeed
        let deliverer: SinkDeliverer
        do {
            store = try openFeed()
            let transport = SinkTransports.make(configuration, secrets: secrets, softwareVersion: softwareVersion)
            deliverer = try SinkDeliverer(configuration: configuration, store: store, transport: transport, onEvent: onEvent)
        } catch {
            onProblem("sink \(configuration.name): \(error)")
            return
        }
        defer {
            deliverer.close()
            store.close()
        }
        var seenAnchor: Int64 = -1
        var lastRun: Date?
        var lastUnitsCheck = Date()
        while !shouldStop {
            let latest = (try? store.latestAnchor()) ?? seenAnchor
            let retryQueued = (try? store.hasDeadLettersToRetry(sink: configuration.name)) ?? false
            var due = latest != seenAnchor || retryQueued
            // A person's new measurement system (`people set P --units`) shows their states again
            // without waiting for a sample; looked for once a second.
            if !due, Date().timeIntervalSince(lastUnitsCheck) >= DeliveryService.unitsCheckInterval {
                lastUnitsCheck = Date()
                due = deliverer.unitSystemsChanged()
            }
            if let every = configuration.every, let lastRun, Date().timeIntervalSince(lastRun) < every { due = false }
            if !due {
                deliverer.idle(milliseconds: 0)
                Thread.sleep(forTimeInterval: DeliveryService.pollInterval)
                continue
            }
            lastRun = Date()
            let outcome = deliverer.deliverBacklog(retry: retry, shouldStop: { [self] in shouldStop })
            if case .caughtUp = outcome { seenAnchor = latest }
        }
    }
}

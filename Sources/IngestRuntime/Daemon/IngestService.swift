import AdapterKit
import Foundation
import HealthModel
import Logging
import Pipeline
import SQLiteStore
import Synchronization

/// The one writer of the store in the daemon: every session's batches pass through here, one
/// transaction at a time, into the front door (`Ingestion`). A batch's `ingest` returns after its commit, so a session may then
/// acknowledge the data to its device.
///
/// Public for IngestBench (commit latency through `onCommit`).
public actor IngestService {
    let ingestion: Ingestion
    private let logger: Logger
    private var closed = false
    private let onCommit: (@Sendable ([HealthRecord], IngestReport) -> Void)?
    /// Totals since start, for the shutdown log line.
    public private(set) var totals = TypeCounts()
    /// When the last batch that wrote something committed, for the service manager's status line.
    public private(set) var lastCommit: Date?
    /// The devices (origins) batches came from since start, bounded: only their count is shown.
    private var origins: Set<String> = []
    /// How many devices delivered batches since start (counted up to 10 000).
    public var deviceCount: Int { origins.count }
    /// Sources whose undecided types were already announced in the log (once per source and run).
    private var announcedUndecided: Set<String> = []

    /// Opens the store.
    /// - Parameter onCommit: called after each batch's transaction committed, with the batch and
    ///   its report (before `ingest` returns).
    /// - Parameter pendingLimits: retention and per-source bounds of the pending area.
    /// - Parameter assignTolerance: the body-mass rule's tolerance of person assignment.
    public init(storePath: String, logger: Logger, pendingLimits: PendingLimits = PendingLimits(),
                assignTolerance: Double = PersonAssigner.defaultTolerance,
                onCommit: (@Sendable (_ records: [HealthRecord], _ report: IngestReport) -> Void)? = nil) throws {
        ingestion = try Ingestion(store: try HealthStore(path: storePath), pendingLimits: pendingLimits,
                                  assignTolerance: assignTolerance)
        self.logger = logger
        self.onCommit = onCommit
    }

    /// Keeps the battery charges the devices said (sources with a grant only); a failure is logged,
    /// never fatal to the samples.
    func recordBatteries(_ batteries: [DeviceBattery]) {
        guard !closed, !batteries.isEmpty else { return }
        do {
            try ingestion.recordBatteries(batteries)
        } catch {
            logger.error("keeping \(batteries.count) battery charge\(batteries.count == 1 ? "" : "s") failed: \(error)")
        }
    }

    /// Normalizes, validates, authorizes and commits one batch. Logs counts, never values.
    /// `deviceKeys`: what the transport knows the device by (USB `VID:PID`, serial number), for device owners.
    func ingest(_ records: [HealthRecord], origin: String, deviceKeys: [String] = []) throws -> IngestReport {
        guard !closed else { throw RuntimeError.storeClosed }
        let report = try ingestion.ingest(records, deviceKeys: deviceKeys)
        onCommit?(records, report)
        totals += report.totals
        if report.totals.written > 0 { lastCommit = Date() }
        if origins.count < 10_000 { origins.insert(origin) }
        var log = logger
        log[metadataKey: "device"] = "\(origin)"
        for event in report.events {
            log.info("committed \(event.count) \(QuantityType.named(event.type)?.shortName ?? event.type) from \(PrintableText.escaped(event.source))")
        }
        for source in report.held.keys.sorted() where !announcedUndecided.contains(source) {
            announcedUndecided.insert(source)
            let types = (report.held[source] ?? []).compactMap { QuantityType.named($0) }
            let names = types.map(\.shortName).sorted().joined(separator: ", ")
            let grant = AuthorizationPolicy.grantCommand(source: source, types: types)
            let deny = AuthorizationPolicy.denyCommand(source: source, types: [])
            log.notice("new source \(PrintableText.escaped(source)) (\(names)): its samples are held until you decide; allow with: \(grant); refuse with: \(deny)")
        }
        logPendingLosses(report.pending, log: log)
        if report.unassigned > 0 {
            log.notice("\(report.unassigned) sample\(report.unassigned == 1 ? "" : "s") could not be told to belong to one person: see 'ingestd unassigned'")
        }
        for (key, count) in report.rejections.sorted(by: { $0.key < $1.key }) {
            if key.reason == "denied" {
                // Explicitly denied (`ingestd auth deny`): the user's decision, counted and logged quietly.
                log.info("\(count) \(QuantityType.named(key.type)?.shortName ?? key.type) from \(PrintableText.escaped(key.source)) refused (denied)")
            } else {
                log.warning("\(count) \(QuantityType.named(key.type)?.shortName ?? key.type) from \(PrintableText.escaped(key.source)) rejected: \(key.reason)")
            }
        }
        return report
    }

    /// One line per source for held records the bounds dropped or the retention period removed.
    private func logPendingLosses(_ pending: PendingReceipt, log: Logger) {
        for (source, count) in pending.dropped.sorted(by: { $0.key < $1.key }) {
            let grant = AuthorizationPolicy.grantCommand(source: source, types: [])
            let deny = AuthorizationPolicy.denyCommand(source: source, types: [])
            log.warning("pending area: dropped \(count) held records of \(PrintableText.escaped(source)) (over the bounds: records or bytes per source, or sources holding records); decide with: \(grant) or \(deny)")
        }
        for (source, count) in pending.expired.sorted(by: { $0.key < $1.key }) {
            log.notice("pending area: removed \(count) records of \(PrintableText.escaped(source)) held longer than the retention period")
        }
    }

    /// Removes the records held longer than the retention period (at start-up; `now` for tests),
    /// with one log line per source.
    func purgeExpiredPending(now: Date = Date()) throws {
        var receipt = PendingReceipt()
        receipt.expired = try ingestion.purgeExpiredPending(now: now)
        logPendingLosses(receipt, log: logger)
    }

    /// Re-reads grants (SIGHUP, or after `ingestd auth grant` in another process).
    func reloadAuthorization() throws {
        try ingestion.reloadAuthorization()
        logger.notice("authorization and priorities re-read")
    }

    /// Closes the store; later batches are refused.
    public func close() {
        guard !closed else { return }
        closed = true
        ingestion.close()
    }

    /// Runs `ingest` from a thread outside Swift concurrency (a USB session), blocking it until the
    /// commit is done. Never call from a task of the cooperative pool.
    nonisolated func ingestBlocking(_ records: [HealthRecord], origin: String, deviceKeys: [String] = []) throws -> IngestReport {
        let result = Mutex<Result<IngestReport, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<IngestReport, any Error>
            do { outcome = .success(try await self.ingest(records, origin: origin, deviceKeys: deviceKeys)) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        guard let outcome = result.withLock({ $0 }) else { throw RuntimeError.ingestUnfinished }
        return try outcome.get()
    }
}

extension DeliveryReceipt {
    /// The receipt of a committed batch: stored (new, replaced or duplicate) and held samples.
    public init(_ report: IngestReport) {
        let totals = report.totals
        self.init(stored: totals.written + totals.duplicate + totals.replaced, held: totals.held)
    }
}

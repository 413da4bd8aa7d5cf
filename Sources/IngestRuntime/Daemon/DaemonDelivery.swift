import Delivery
import Logging
import Foundation
import SQLiteStore

/// Wires the delivery service into the daemon: log lines for its events and problems.
enum DaemonDelivery {
    /// Starts a worker per sink of the store; logs which.
    static func start(storePath: String, logger: Logger) -> DeliveryService {
        let service = DeliveryService(
            openFeed: { try HealthStore(path: storePath) }, softwareVersion: IngestdRelease.version,
            onEvent: { event in
                switch event {
                case .delivered(let sink, let type, let count, let anchor):
                    logger.debug("sink \(sink): delivered \(count) \(type) (anchor \(anchor))")
                case .deadLettered(let sink, let count, let reason):
                    logger.warning("sink \(sink): \(count) record(s) refused for good, kept as dead letters: \(reason)")
                case .failed(let sink, let attempt, let error, let retryIn):
                    let next = retryIn.map { String(format: "retrying in %.1f s", $0) } ?? "giving up"
                    logger.warning("sink \(sink): attempt \(attempt) failed: \(error); \(next)")
                }
            },
            onProblem: { message in logger.error("\(message)") })
        reload(service, logger: logger, initial: true)
        return service
    }

    /// Re-reads the sinks (SIGHUP).
    static func reload(_ service: DeliveryService, logger: Logger, initial: Bool = false) {
        do {
            let names = initial ? try service.start() : try service.reload()
            if !names.isEmpty || !initial { logger.notice("sinks: \(names.isEmpty ? "none" : names.joined(separator: ", "))") }
        } catch {
            logger.error("reading the sinks failed: \(error)")
        }
    }
}

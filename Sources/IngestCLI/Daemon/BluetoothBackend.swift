import AdapterKit
import BlueZTransport
import Foundation
import HealthModel
import Transport

/// Bluetooth LE in the daemon: scans on an HCI socket, routes advertisements (and GATT events)
/// through the same adapter router a replayed capture uses, and commits batches about once a
/// second. No controller (or no kernel support) is logged once and the daemon carries on.
struct BluetoothBackend: DeviceBackend {
    let name = "ble"
    var adapters: [any Adapter]
    var controller: UInt16
    var timeZone: TimeZone
    /// With `--once`: how long to listen.
    var onceListen: Duration

    func run(service: IngestService, logger: Logger, once: Bool) async {
        let channel: PacketChannel
        do {
            channel = try HCISocket.open(controller: controller)
        } catch {
            logger.warning("Bluetooth LE unavailable: \(error); carrying on without it")
            return
        }
        let scanner = HCIScanner(channel: channel, log: { record in
            switch record.level {
            case .debug: logger.debug("\(record.message)")
            case .info: logger.info("\(record.message)")
            case .notice: logger.notice("\(record.message)")
            case .warning: logger.warning("\(record.message)")
            case .error: logger.error("\(record.message)")
            }
        })
        do {
            try await scanner.start()
        } catch {
            logger.warning("Bluetooth LE scanning could not start on hci\(controller): \(error); carrying on without it")
            await scanner.stop()
            return
        }
        logger.info("scanning on hci\(controller)")
        let router: AdapterRouter
        do {
            router = try AdapterRouter(adapters: adapters, timeZone: timeZone)
        } catch {
            logger.error("\(error)")
            await scanner.stop()
            return
        }
        let batcher = EventBatcher(router: router, service: service, logger: logger)
        let stopper = Task {
            if once { try? await Task.sleep(for: onceListen) } else {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            }
            await scanner.stop()
        }
        await withTaskCancellationHandler {
            for await event in scanner.events {
                await batcher.add(event)
            }
        } onCancel: {
            stopper.cancel()
        }
        await batcher.flush(finishing: true)
    }
}

/// Routes transport events to adapter sessions and commits their records in batches (at most one
/// second old, or 500 records). Rejections are logged without values.
actor EventBatcher {
    private let router: AdapterRouter
    private let service: IngestService
    private let logger: Logger
    private var output = AdapterOutput()
    private var lastFlush = ContinuousClock.now

    init(router: AdapterRouter, service: IngestService, logger: Logger) {
        self.router = router
        self.service = service
        self.logger = logger
    }

    func add(_ event: TransportEvent) async {
        router.route(event, into: &output)
        if output.records.count >= 500 || ContinuousClock.now - lastFlush >= .seconds(1) {
            await flush(finishing: false)
        }
    }

    func flush(finishing: Bool) async {
        if finishing { router.finish(into: &output) }
        lastFlush = ContinuousClock.now
        for rejection in output.rejections {
            logger.warning("frame rejected by \(rejection.adapter): \(rejection.reason)")
        }
        let records = output.records
        output = AdapterOutput()
        guard !records.isEmpty else { return }
        do {
            _ = try await service.ingest(records, origin: "ble")
        } catch {
            logger.error("commit failed: \(error)")
        }
    }
}

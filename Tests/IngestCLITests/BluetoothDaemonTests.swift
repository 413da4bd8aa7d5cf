import AdapterKit
import BLESimulators
import BLEWire
import BlueZTransport
import BuiltinAdapters
import Foundation
import HealthModel
import Logging
import SQLiteStore
import Testing
import Transport
@testable import IngestRuntime

/// The daemon's Bluetooth path end to end over socketpairs: a simulated controller advertises a
/// Mi Scale (broadcast only) and a standard weight scale (connectable); the daemon routes the
/// broadcast, connects to the weight scale, discovers it, enables indications and commits both.
@Suite(.serialized) struct BluetoothDaemonTests {
    static let miScale = BLEAddress("C8:47:8C:00:11:22")!
    static let weightScale = BLEAddress("D0:01:02:03:04:05")!

    final class Peripherals: @unchecked Sendable {
        private let lock = NSLock()
        private var started: [SimulatedPeripheral] = []
        var behaviour: SimulatedPeripheral.Behaviour = .normal
        func add(_ peripheral: SimulatedPeripheral) { lock.withLock { started.append(peripheral) } }
        var count: Int { lock.withLock { started.count } }
    }

    private func reports() -> [[UInt8]] {
        let miData = ADStructure.flags(0x06) + ADStructure.completeLocalName("MI_SCALE")
            + ADStructure.serviceData16(0x181D, [0x22, 0x3E, 0x30, 0xE6, 0x07, 0x02, 0x0E, 0x10, 0x29, 0x3A])
        let wsData = ADStructure.flags(0x06) + ADStructure.serviceUUIDs16([0x181D]) + ADStructure.completeLocalName("WS")
        return [
            AdvertisingReportBuilder.legacy(eventType: 0x03, address: Self.miScale, data: miData),
            AdvertisingReportBuilder.legacy(eventType: 0x00, address: Self.weightScale, data: wsData),
            // The same broadcasts again: one sample each, one connection.
            AdvertisingReportBuilder.legacy(eventType: 0x03, address: Self.miScale, data: miData),
            AdvertisingReportBuilder.legacy(eventType: 0x00, address: Self.weightScale, data: wsData),
        ]
    }

    @discardableResult
    /// `requestTimeout` is the GATT client's patience with the simulated peripheral: generous by
    /// default, so a loaded machine (tests run in parallel on two cores) does not fail a session
    /// that is merely slow; the test of a silent peripheral shortens it.
    /// With `until`, the daemon runs until it holds (see ``runDaemonUntil(store:backend:logger:within:until:)``);
    /// without, it runs `--once` for `listen`.
    private func runDaemon(store: String, peripherals: Peripherals, listen: Duration = .seconds(12),
                           requestTimeout: Duration = .seconds(30),
                           log: RecordingLogHandler = RecordingLogHandler(),
                           reports: [[UInt8]]? = nil, keys: AdvertisementKeys = AdvertisementKeys(),
                           until done: (@Sendable () -> Bool)? = nil) async throws -> SimulatedController {
        let (hostEnd, controllerEnd) = try SocketPair.make()
        let controller = try SimulatedController(descriptor: controllerEnd,
                                                 script: SimulatedController.Script(reportBatches: [reports ?? self.reports()]))
        await controller.start()
        let link = BluetoothLink(
            openScanner: { options in HCIScanner(channel: try PacketChannel(adopting: hostEnd), log: options.log) },
            connect: { address, type, options in
                let (clientEnd, peripheralEnd) = try SocketPair.make()
                let peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: .weightScale,
                                                         behaviour: peripherals.behaviour)
                await peripheral.start()
                peripherals.add(peripheral)
                let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                        peer: GATTPeer(address: address, addressType: type, connectionHandle: 0x0040),
                                        configuration: GATTClientConfiguration(requestTimeout: requestTimeout), log: options.log)
                await client.start()
                return client
            })
        var backend = BluetoothBackend(adapters: BuiltinAdapters.bluetooth, link: link, controllerName: "sim0",
                                       timeZone: TimeZone(identifier: "Europe/Berlin")!, onceListen: listen)
        backend.keys = keys
        let logger = Logger(label: "test", handler: log)
        if let done {
            try await runDaemonUntil(store: store, backend: backend, logger: logger, until: done)
        } else {
            let daemon = Daemon(options: DaemonOptions(storePath: store, once: true), backends: [backend], logger: logger)
            try await daemon.run()
        }
        return controller
    }

    @Test func broadcastAndConnectedScalesAreCommitted() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "xiaomi-scale", "bodyMass"])
        await scenario.run(["auth", "grant", "gatt-health", "bodyMass"])
        let peripherals = Peripherals()
        let log = RecordingLogHandler()
        _ = try await runDaemon(store: scenario.store, peripherals: peripherals, log: log) {
            let messages = log.records.map(\.message)
            return ["bodyMass from xiaomi-scale", "bodyMass from gatt-health"].allSatisfy { source in
                messages.contains { $0.hasPrefix("committed") && $0.hasSuffix(source) }
            }
        }
        #expect(peripherals.count == 1, "one connection to the weight scale, not one per advertisement")

        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyMass)
        let bySource = Dictionary(grouping: samples, by: \.source)
        #expect(bySource["xiaomi-scale"]?.map(\.quantity.value) == [61.75])
        #expect(bySource["gatt-health"]?.map(\.quantity.value) == [77.5])
        #expect(bySource["gatt-health"]?.first?.device?.localIdentifier == Self.weightScale.description)
    }

    /// The S400's encrypted broadcasts (xiaomi-ble tests/test_parser.py), each sent twice: without its key the
    /// daemon warns once with the remedy (each refused frame only at debug level) and stores nothing; with the
    /// key it commits the weighing; the key never reaches the log.
    @Test func encryptedBroadcastsAreExplainedOnceWithoutTheirKeyAndCommittedWithIt() async throws {
        let s400 = BLEAddress("8C:D0:B2:F6:BE:EF")!
        let key = "0728974d657a4b60964c1b1677f35f7c"
        let frames = ["48 59 d5 3b 0a bc 07 8f f2 34 8c 84 41 38 e9 30 22 00 00 00 9e 53 85 99",
                      "48 59 d5 3b 0b d6 ef 0b 25 db 72 78 5e 7e 2f 46 d6 00 00 00 d8 64 2d f6"]
        let reports = frames.flatMap { frame in
            let data = ADStructure.flags(0x06) + ADStructure.serviceData16(0xFE95, hexBytes(frame))
            return Array(repeating: AdvertisingReportBuilder.legacy(eventType: 0x03, address: s400, data: data), count: 2)
        }
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "xiaomi-mibeacon", "--all"])

        let withoutKey = RecordingLogHandler()
        try await runDaemon(store: scenario.store, peripherals: Peripherals(), log: withoutKey, reports: reports) {
            withoutKey.records.contains { $0.message.description.hasPrefix("no key for \(s400)") }
        }
        let messages = withoutKey.records.map(\.message.description)
        #expect(messages.filter { $0.hasPrefix("no key for \(s400): `ingestd keys add \(s400) HEX`") }.count == 1, "\(messages)")
        #expect(!withoutKey.records.contains { $0.level >= .warning && $0.message.description.hasPrefix("frame rejected") })
        do {
            let store = try HealthStore(path: scenario.store)
            defer { store.close() }
            #expect(try store.samples(type: .bodyMass).isEmpty)
        }

        let withKey = RecordingLogHandler()
        try await runDaemon(store: scenario.store, peripherals: Peripherals(), log: withKey, reports: reports,
                            keys: AdvertisementKeys([s400: try AdvertisementKey(hex: key)])) {
            withKey.records.contains { $0.message.description.hasPrefix("committed") && $0.message.description.hasSuffix("from xiaomi-mibeacon") }
        }
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        #expect(try store.samples(type: .bodyMass).map(\.quantity.value) == [69.9])
        #expect(try store.samples(type: .heartRate).count == 1)
        #expect(!(withoutKey.records + withKey.records).contains { $0.message.description.lowercased().contains(key) })
    }

    private func hexBytes(_ text: String) -> [UInt8] { text.split(separator: " ").compactMap { UInt8($0, radix: 16) } }

    /// A controller with LE disabled (found in the VM tests: nothing enables it without bluetoothd): the kernel
    /// refuses each LE connection with ECONNREFUSED. The daemon says once, not per device, which command fixes it.
    @Test func refusedLEConnectionsNameTheCommandThatEnablesLEOnce() async throws {
        let scenario = try Scenario()
        let scales = [BLEAddress("D0:01:02:03:04:05")!, BLEAddress("D0:01:02:03:04:06")!]
        let data = ADStructure.flags(0x06) + ADStructure.serviceUUIDs16([0x181D])
        let reports = scales.map { AdvertisingReportBuilder.legacy(eventType: 0x00, address: $0, data: data) }
        let (hostEnd, controllerEnd) = try SocketPair.make()
        let controller = try SimulatedController(descriptor: controllerEnd,
                                                 script: SimulatedController.Script(reportBatches: [reports]))
        await controller.start()
        let link = BluetoothLink(
            openScanner: { options in HCIScanner(channel: try PacketChannel(adopting: hostEnd), log: options.log) },
            connect: { address, _, _ in throw L2CAPConnectError.connectFailed(address, errno: ECONNREFUSED) })
        let backend = BluetoothBackend(adapters: BuiltinAdapters.bluetooth, link: link, controllerName: "hci2",
                                       timeZone: TimeZone(identifier: "UTC")!, onceListen: .seconds(2))
        let handler = RecordingLogHandler()
        let daemon = Daemon(options: DaemonOptions(storePath: scenario.store, once: true), backends: [backend],
                            logger: Logger(label: "test", handler: handler))
        try await daemon.run()
        let messages = handler.records.map(\.message)
        #expect(messages.filter { $0.contains("connecting failed") }.count == 2, "\(messages)")
        let advice = messages.filter { $0.contains("le on") }
        #expect(advice.count == 1, "\(messages)")
        #expect(advice.first?.contains("hci2 refused an LE connection (ECONNREFUSED)") == true, "\(advice)")
        #expect(advice.first?.contains("`btmgmt --index 2 le on`") == true, "\(advice)")
    }

    @Test func aPeripheralThatNeverAnswersEndsItsSessionAndTheBroadcastIsStillCommitted() async throws {
        let scenario = try Scenario()
        await scenario.run(["auth", "grant", "xiaomi-scale", "bodyMass"])
        await scenario.run(["auth", "grant", "gatt-health", "bodyMass"])
        let peripherals = Peripherals()
        peripherals.behaviour = .silent
        _ = try await runDaemon(store: scenario.store, peripherals: peripherals, listen: .seconds(4),
                                requestTimeout: .seconds(1))
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        let samples = try store.samples(type: .bodyMass)
        #expect(samples.map(\.source) == ["xiaomi-scale"])
    }

    /// No grants yet: both scales' weighings are held (nothing in the samples), and each new source
    /// is announced once in the log with its grant and deny commands.
    @Test func undecidedScalesAreHeldAndEachNewSourceIsLoggedOnce() async throws {
        let scenario = try Scenario()
        let log = RecordingLogHandler()
        try await runDaemon(store: scenario.store, peripherals: Peripherals(), listen: .seconds(12), log: log)
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        #expect(try store.samples(type: .bodyMass).isEmpty)
        #expect(try store.pendingCounts() == ["xiaomi-scale": 1, "gatt-health": 1])
        let announcements = log.records.filter { $0.message.hasPrefix("new source") }.map(\.message)
        #expect(announcements.filter { $0.contains("xiaomi-scale") } == [
            "new source xiaomi-scale (bodyMass): its samples are held until you decide; allow with: "
                + "ingestd auth grant xiaomi-scale bodyMass; refuse with: ingestd auth deny xiaomi-scale --all",
        ])
        #expect(announcements.filter { $0.contains("gatt-health") }.count == 1)
    }

    /// The announcement is per source and run, not per batch.
    @Test func theServiceAnnouncesAnUndecidedSourceOnlyOnce() async throws {
        let scenario = try Scenario()
        let log = RecordingLogHandler()
        let service = try IngestService(storePath: scenario.store, logger: Logger(label: "test", handler: log))
        func weighing(_ minute: Int) -> HealthRecord {
            .sample(QuantitySample(type: .bodyMass, quantity: Quantity(value: 70, unit: .kilogram),
                                   start: Date(timeIntervalSince1970: 1_764_000_000 + Double(minute) * 60),
                                   end: Date(timeIntervalSince1970: 1_764_000_000 + Double(minute) * 60),
                                   source: "neighbour-scale"))
        }
        for minute in 0..<3 {
            let report = try await service.ingest([weighing(minute)], origin: "test")
            #expect(report.totals.held == 1)
        }
        await service.close()
        #expect(log.records.filter { $0.message.hasPrefix("new source neighbour-scale") }.count == 1)
    }

    /// Held records past the retention period (30 days by default) are removed with one log line per source.
    @Test func expiredHeldRecordsArePurgedWithALogLine() async throws {
        let scenario = try Scenario()
        let log = RecordingLogHandler()
        let service = try IngestService(storePath: scenario.store, logger: Logger(label: "test", handler: log))
        let at = Date(timeIntervalSince1970: 1_764_000_000)
        let weighing = HealthRecord.sample(QuantitySample(type: .bodyMass, quantity: Quantity(value: 70, unit: .kilogram),
                                                          start: at, end: at, source: "neighbour-scale"))
        _ = try await service.ingest([weighing], origin: "test")
        try await service.purgeExpiredPending(now: Date().addingTimeInterval(29 * 86_400))
        #expect(!log.records.contains { $0.message.contains("retention") })
        try await service.purgeExpiredPending(now: Date().addingTimeInterval(31 * 86_400))
        await service.close()
        #expect(log.records.filter { $0.message.contains("retention") }.map(\.message)
            == ["pending area: removed 1 records of neighbour-scale held longer than the retention period"])
        let store = try HealthStore(path: scenario.store)
        defer { store.close() }
        #expect(try store.pendingCounts().isEmpty)
    }
}

import AdapterKit
import BLESimulators
import BuiltinAdapters
import BLEWire
import BlueZTransport
import CaptureFormats
import Foundation
import Logging
import Testing
import Transport
@testable import IngestRuntime

/// `ingestd capture` over Bluetooth LE against the simulators: what it writes must replay with
/// `ingestd decode` to the samples the devices sent.
@Suite(.serialized) struct BluetoothCaptureTests {
    static let miScale = BLEAddress("C8:47:8C:00:11:22")!
    static let weightScale = BLEAddress("D0:01:02:03:04:05")!
    static let miData = ADStructure.flags(0x06) + ADStructure.completeLocalName("MI_SCALE")
        + ADStructure.serviceData16(0x181D, [0x22, 0x3E, 0x30, 0xE6, 0x07, 0x02, 0x0E, 0x10, 0x29, 0x3A])
    static let weightScaleData = ADStructure.flags(0x06) + ADStructure.serviceUUIDs16([0x181D])
        + ADStructure.completeLocalName("WS")

    static func reports() -> [[UInt8]] {
        [
            AdvertisingReportBuilder.legacy(eventType: 0x03, address: miScale, data: miData),
            AdvertisingReportBuilder.legacy(eventType: 0x00, address: weightScale, data: weightScaleData),
            AdvertisingReportBuilder.legacy(eventType: 0x03, address: miScale, data: miData),
            AdvertisingReportBuilder.legacy(eventType: 0x00, address: weightScale, data: weightScaleData),
        ]
    }

    /// Peripherals the link started, so a test can wait on them.
    final class Peripherals: @unchecked Sendable {
        private let lock = NSLock()
        private var started: [SimulatedPeripheral] = []
        func add(_ peripheral: SimulatedPeripheral) { lock.withLock { started.append(peripheral) } }
        var all: [SimulatedPeripheral] { lock.withLock { started } }
    }

    /// A link to a simulated controller advertising `reports`; connections go to weight scales
    /// (or to peripherals serving `profile`, answered by `responder`).
    static func simulatedLink(reports: [[UInt8]], peripherals: Peripherals, profile: SimulatedProfile = .weightScale,
                              responder: (any SimulatedResponder)? = nil) async throws -> BluetoothLink {
        let (hostEnd, controllerEnd) = try SocketPair.make()
        let controller = try SimulatedController(descriptor: controllerEnd,
                                                 script: SimulatedController.Script(reportBatches: [reports]))
        await controller.start()
        return BluetoothLink(
            openScanner: { options in
                _ = controller
                return HCIScanner(channel: try PacketChannel(adopting: hostEnd), configuration: options.scannerConfiguration,
                                  log: options.log, tap: options.tap)
            },
            connect: { address, type, options in
                let (clientEnd, peripheralEnd) = try SocketPair.make()
                let peripheral = try SimulatedPeripheral(descriptor: peripheralEnd, profile: profile, responder: responder)
                await peripheral.start()
                peripherals.add(peripheral)
                let client = GATTClient(channel: try PacketChannel(adopting: clientEnd),
                                        peer: GATTPeer(address: address, addressType: type, connectionHandle: 0),
                                        configuration: GATTClientConfiguration(requestTimeout: .seconds(15)),  // patient: not a timeout test
                                        log: options.log, tap: options.tap)
                await client.start()
                return client
            })
    }

    static func capture(link: BluetoothLink, target: BLEAddress?, path: String, adapters: [any BLEAdapter] = [],
                        progress: @escaping @Sendable (String, CaptureStop) -> Void = { _, _ in },
                        until done: @escaping @Sendable (BluetoothCaptureCounts) -> Bool) async throws -> BluetoothCaptureCounts {
        let stop = CaptureStop()
        var capture = BluetoothCapture(link: link, controllerName: "sim0", target: target, duration: .seconds(60))
        capture.onRecord = { counts in if done(counts) { stop.stop() } }
        capture.adapters = adapters
        capture.timeZone = TimeZone(identifier: "UTC")!
        let logger = Logger(label: "test", handler: RecordingLogHandler())
        return try await capture.run(out: path, stop: stop, progress: { progress($0, stop) }, logger: logger)
    }

    /// A glucose meter gives its stored records only when asked through the Record Access
    /// Control Point. A targeted capture holds the conversation the daemon would (the adapter
    /// the router picks from the advertisements), so the capture has the request, the 12 records
    /// and the response, and decodes to the 12 readings; nothing was stored, so the meter was
    /// asked for all its records. Without the adapters, the generic session only subscribes: the
    /// meter sends nothing and the capture decodes to nothing (what captures were before).
    @Test func aTargetedCaptureOfAConversingDeviceRecordsTheConversationAndReplaysToItsRecords() async throws {
        let scenario = try Scenario()
        let meterAddress = BLEAddress("C0:FF:EE:00:18:08")!
        let advertising = ADStructure.flags(0x06) + ADStructure.serviceUUIDs16([0x1808]) + ADStructure.completeLocalName("Meter")
        let reports = Array(repeating: AdvertisingReportBuilder.legacy(eventType: 0x00, address: meterAddress, data: advertising),
                            count: 2)
        let meter = SimulatedGlucoseMeter(records: 12)
        let path = scenario.directory.appendingPathComponent("meter.btsnoop").path
        let link = try await Self.simulatedLink(reports: reports, peripherals: Peripherals(),
                                                profile: SimulatedGlucoseMeter.profile, responder: meter)
        // The conversation waits for more after the transfer, as in the daemon: stop once the
        // meter's RACP response (the capture's only indication) is recorded.
        let counts = try await Self.capture(link: link, target: meterAddress, path: path,
                                            adapters: BuiltinAdapters.bluetooth) { $0.indications >= 1 }
        #expect(counts.connections == 1)
        #expect(counts.notifications == 12)
        #expect(meter.requests == [[0x01, 0x01]], "report all stored records")

        let decoded = await scenario.run(["decode", path, "--tz", "UTC", "--json"], withStore: false)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let sequences = decoded.stdout.compactMap { line -> Int? in
            guard let range = line.range(of: #""IngestGlucoseSequenceNumber":(\d+)"#, options: .regularExpression) else { return nil }
            return Int(line[range].split(separator: ":").last ?? "")
        }
        #expect(sequences == Array(1...12), "\(decoded.stdout)")
        #expect(decoded.stdout.first?.contains("\"value\":96") == true, "\(decoded.stdout.first ?? "")")

        let genericPath = scenario.directory.appendingPathComponent("generic.btsnoop").path
        let genericMeter = SimulatedGlucoseMeter(records: 12)
        let genericLink = try await Self.simulatedLink(reports: reports, peripherals: Peripherals(),
                                                       profile: SimulatedGlucoseMeter.profile, responder: genericMeter)
        let generic = try await Self.capture(link: genericLink, target: meterAddress, path: genericPath) { counts in
            counts.connections == 1 && counts.attPDUs >= 20
        }
        #expect(generic.notifications == 0)
        #expect(genericMeter.requests.isEmpty)
    }

    @Test func aScanCaptureOfAMiScaleBroadcastDecodesToItsWeight() async throws {
        let scenario = try Scenario()
        let path = scenario.directory.appendingPathComponent("scan.btsnoop").path
        let link = try await Self.simulatedLink(reports: Self.reports(), peripherals: Peripherals())
        let counts = try await Self.capture(link: link, target: nil, path: path) { $0.advertisements >= 4 }
        #expect(counts.advertisements == 4)
        #expect(counts.connections == 0)

        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let records = try readRecords(path)
        // The scan set-up as sent (host to controller, command flag) and its answers.
        let commands = records.filter { $0.content == .hci(.command) }
        #expect(commands.allSatisfy { $0.direction == .sent })
        // LE Set Scan Parameters (0x200B) with scan type 1: an active scan, for scan responses.
        let parameters = try #require(commands.first { Array($0.bytes.prefix(2)) == [0x0B, 0x20] })
        #expect(Array(parameters.bytes)[3] == 0x01)
        #expect(records.filter { $0.content == .hci(.event) }.allSatisfy { $0.direction == .received })

        let decoded = await scenario.run(["decode", path, "--tz", "UTC"], withStore: false)
        #expect(decoded.status == 0)
        #expect(decoded.stdout.count == 1)
        #expect(decoded.stdout.first?.contains("bodyMass  61.75 kg  xiaomi-scale") == true, "\(decoded.stdout)")
    }

    @Test func aTargetedCaptureRecordsTheGATTSessionAndDecodesToTheMeasurement() async throws {
        let scenario = try Scenario()
        let path = scenario.directory.appendingPathComponent("session.btsnoop").path
        let peripherals = Peripherals()
        let link = try await Self.simulatedLink(reports: Self.reports(), peripherals: peripherals)
        let counts = try await Self.capture(link: link, target: Self.weightScale, path: path) { $0.indications >= 1 }
        #expect(peripherals.all.count == 1, "one connection, not one per advertisement")
        #expect(counts.advertisements == 2)
        #expect(counts.otherDevices == 2)
        #expect(counts.connections == 1)
        #expect(counts.indications == 1)

        let records = try readRecords(path)
        // Only the weight scale's advertising reports.
        let reports = records.filter { $0.content == .hci(.event) && Array($0.bytes.prefix(3)) == [0x3E, $0.bytes[$0.bytes.startIndex + 1], 0x02] }
        #expect(reports.count == 2)
        #expect(reports.allSatisfy { Array($0.bytes.dropFirst(6).prefix(6)) == Self.weightScale.littleEndianBytes })
        // LE Connection Complete on the made-up handle, ATT in ACL on CID 4, Disconnection Complete (local host).
        let connection = try #require(records.first { $0.content == .hci(.event) && Array($0.bytes.prefix(3)) == [0x3E, 19, 0x01] })
        #expect(Array(connection.bytes) == [0x3E, 19, 0x01, 0x00, 0x40, 0x00, 0x00, 0x00] + Self.weightScale.littleEndianBytes
            + [0x18, 0x00, 0x00, 0x00, 0x48, 0x00, 0x00])
        let acl = records.filter { $0.content == .hci(.acl) }
        #expect(acl.count == counts.attPDUs)
        let exchangeMTU = try #require(acl.first)
        #expect(exchangeMTU.direction == .sent)
        #expect(Array(exchangeMTU.bytes) == [0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x02, 0x05, 0x02])
        let indication = try #require(acl.first { $0.bytes.count > 8 && $0.bytes[$0.bytes.startIndex + 8] == 0x1D })
        #expect(indication.direction == .received)
        #expect(Array(indication.bytes.prefix(2)) == [0x40, 0x20])
        let last = try #require(records.last { $0.content == .hci(.event) && $0.bytes.first == 0x05 })
        #expect(Array(last.bytes) == [0x05, 0x04, 0x00, 0x40, 0x00, 0x16])

        let decoded = await scenario.run(["decode", path, "--tz", "UTC"], withStore: false)
        #expect(decoded.status == 0)
        #expect(decoded.stdout.count == 1)
        #expect(decoded.stdout.first?.contains("bodyMass  77.5 kg  gatt-health  D0:01:02:03:04:05") == true, "\(decoded.stdout)")
        #expect(decoded.stderr.contains { $0.contains("1 connections") }, "\(decoded.stderr)")
    }

    @Test func noControllerIsBluetoothUnavailableAndNoFileIsLeft() async throws {
        let scenario = try Scenario()
        let path = scenario.directory.appendingPathComponent("none.btsnoop").path
        let link = BluetoothLink(
            openScanner: { _ in throw BluetoothUnavailable.noController(index: 0) },
            connect: { _, _, _ in throw BluetoothUnavailable.noController(index: 0) })
        await #expect(throws: RuntimeError.bluetoothUnavailable(.noController(index: 0))) {
            _ = try await Self.capture(link: link, target: nil, path: path) { _ in true }
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func usageErrors() async throws {
        let scenario = try Scenario()
        for (arguments, message) in [
            (["capture"], "error: missing required option --out FILE"),
            (["capture", "--out", "x", "--usb", "0590:0028", "--ble", "C8:47:8C:00:11:22"],
             "error: --usb and --ble cannot be used together: a capture records one transport"),
            (["capture", "--out", "x", "--ble", "C8:47:8C"],
             "error: invalid value 'C8:47:8C' for --ble: expected a Bluetooth address such as C8:47:8C:00:11:22"),
            (["capture", "--out", "x", "--seconds", "0"], "error: invalid value '0' for --seconds: must be 0.001s...31d"),
        ] {
            let result = await scenario.run(arguments, withStore: false)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.first == message, "\(result.stderr)")
        }
    }

    private func readRecords(_ path: String) throws -> [CaptureRecord] {
        let reader = try BTSnoopReader(path: path)
        var records: [CaptureRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }
}

@Suite struct AdvertisingReportFilterTests {
    static let kept = BLEAddress("D0:01:02:03:04:05")!
    static let other = BLEAddress("C8:47:8C:00:11:22")!

    @Test func keepsOnlyTheTargetsLegacyReports() throws {
        // Two reports in one LE Advertising Report event, laid out one after the other.
        let first: [UInt8] = [0x03, 0x00] + Self.other.littleEndianBytes + [0x02, 0x01, 0x06, 0xC4]
        let second: [UInt8] = [0x00, 0x01] + Self.kept.littleEndianBytes + [0x03, 0x02, 0x0D, 0x18, 0xB0]
        let parameters = [0x02, 0x02] + first + second
        let event = [0x3E, UInt8(parameters.count)] + parameters
        #expect(AdvertisingReportFilter.filter(event: event, keeping: Self.kept)
            == .advertising(event: [0x3E, UInt8(2 + second.count), 0x02, 0x01] + second, kept: 1, dropped: 1))
        #expect(AdvertisingReportFilter.filter(event: event, keeping: nil) == .advertising(event: event, kept: 2, dropped: 0))
    }

    @Test func keepsOnlyTheTargetsExtendedReports() throws {
        let report = Array(AdvertisingReportBuilder.extended(address: Self.kept, data: [0x02, 0x01, 0x06]).dropFirst())
        let otherReport = Array(AdvertisingReportBuilder.extended(address: Self.other, data: [0x02, 0x01, 0x06]).dropFirst())
        #expect(AdvertisingReportFilter.filter(event: report, keeping: Self.kept) == .advertising(event: report, kept: 1, dropped: 0))
        #expect(AdvertisingReportFilter.filter(event: otherReport, keeping: Self.kept)
            == .advertising(event: [0x3E, 2, 0x0D, 0x00], kept: 0, dropped: 1))
    }

    @Test func connectionEventsAndMalformedReportsAreLeftOutOthersKept() {
        // The kernel's LE Connection Complete for its own connection: its ACL never reaches us.
        #expect(AdvertisingReportFilter.filter(event: [0x3E, 0x13, 0x01] + [UInt8](repeating: 0, count: 18), keeping: nil) == nil)
        // A report whose data length runs past the event.
        #expect(AdvertisingReportFilter.filter(event: [0x3E, 0x0C, 0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x20, 0x00],
                                               keeping: nil) == nil)
        // Command Complete of LE Set Scan Enable.
        #expect(AdvertisingReportFilter.filter(event: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], keeping: Self.kept) == .other)
    }
}

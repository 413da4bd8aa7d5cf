import ArgumentParsing
import BLESimulators
import BLEWire
import BlueZTransport
import BuiltinAdapters
import Foundation
import IngestRuntime
import Logging
import Testing
import Transport
@testable import IngestCLI

/// `ingestd scan` over the simulated controller of the in-process daemon tests: a Mi Scale and a
/// BTHome sensor broadcasting, and a device no adapter knows, scanned through the daemon's router.
@Suite struct ScanCommandTests {
    static let miScale = BLEAddress("C8:47:8C:00:11:22")!
    static let bthome = BLEAddress("A4:C1:38:00:00:01")!
    static let unknown = BLEAddress("F0:00:00:00:BE:EF")!

    static var reports: [[UInt8]] {
        let miData = ADStructure.flags(0x06) + ADStructure.completeLocalName("MI_SCALE")
            + ADStructure.serviceData16(0x181D, [0x22, 0x3E, 0x30, 0xE6, 0x07, 0x02, 0x0E, 0x10, 0x29, 0x3A])
        // BTHome v2, unencrypted: battery 100 %, temperature 25.06 °C.
        let bthomeData = ADStructure.flags(0x06) + ADStructure.serviceData16(0xFCD2, [0x40, 0x01, 0x64, 0x02, 0xCA, 0x09])
            + ADStructure.completeLocalName("ATC_000001")
        let unknownData = ADStructure.flags(0x06) + ADStructure.manufacturerData(company: 0x0006, [1, 2, 3, 4])
        return [
            AdvertisingReportBuilder.legacy(eventType: 0x03, address: miScale, data: miData, rssi: -70),
            AdvertisingReportBuilder.legacy(eventType: 0x03, address: bthome, data: bthomeData, rssi: -55),
            AdvertisingReportBuilder.legacy(eventType: 0x00, address: unknown, data: unknownData, rssi: -80),
            AdvertisingReportBuilder.legacy(eventType: 0x03, address: miScale, data: miData, rssi: -65),
        ]
    }

    /// Scans the simulated controller for `duration` with the built-in adapters.
    func scan(duration: Duration = .seconds(2), pins: [BLEAddress: String] = [:]) async throws -> [SurveyedDevice] {
        let (hostEnd, controllerEnd) = try SocketPair.make()
        let controller = try SimulatedController(descriptor: controllerEnd,
                                                 script: SimulatedController.Script(reportBatches: [Self.reports]))
        await controller.start()
        defer { Task { await controller.stop() } }
        let link = BluetoothLink(
            openScanner: { options in
                HCIScanner(channel: try PacketChannel(adopting: hostEnd), configuration: options.scannerConfiguration, log: options.log)
            },
            connect: { _, _, _ in throw BluetoothUnavailable.noController(index: 0) })
        let survey = try BluetoothSurvey(adapters: BuiltinAdapters.bluetooth, pins: pins, timeZone: .gmt)
        return try await survey.scan(link: link, duration: duration)
    }

    @Test func eachDeviceGetsTheDaemonsAdapterOrHowToCaptureIt() async throws {
        let devices = try await scan()
        #expect(devices.map(\.address) == [Self.bthome, Self.miScale, Self.unknown], "strongest first")
        let byAddress = Dictionary(uniqueKeysWithValues: devices.map { ($0.address, $0) })
        let mi = try #require(byAddress[Self.miScale])
        #expect(mi.adapterID == "xiaomi-scale")
        #expect(mi.name == "MI_SCALE")
        #expect(mi.reports == 2)
        #expect(mi.rssi == -65 && mi.strongestRSSI == -65)
        #expect(mi.advertises == "data 181D(10 B)")
        #expect(!mi.connectable)
        let sensor = try #require(byAddress[Self.bthome])
        #expect(sensor.adapterID == "bthome")
        #expect(sensor.advertises == "data FCD2(6 B)")
        let other = try #require(byAddress[Self.unknown])
        #expect(other.adapterID == nil)
        #expect(other.advertises == "mfr 0x0006(4 B)")
        #expect(other.connectable)

        var report = ScanReport(controller: "hci0", seconds: 2)
        report.bluetooth = .scanned(devices)
        let lines = report.text.split(separator: "\n").map(String.init)
        #expect(lines.first == "Bluetooth LE (hci0, 2 s): 3 devices")
        let unknownLine = try #require(lines.first { $0.hasPrefix(Self.unknown.description) })
        #expect(unknownLine.hasSuffix("no adapter: unsupported; record it for a bug report with "
                                      + "'ingestd capture --out device.btsnoop --ble \(Self.unknown) --seconds 60'"))
        #expect(lines.first { $0.hasPrefix(Self.miScale.description) }?.hasSuffix("  xiaomi-scale (also gatt-health)") == true, "\(lines)")
        #expect(!report.failed)
    }

    /// A pin (`--adapter`, or `adapter =` in --config) decides as it does for the daemon: the pinned
    /// adapter alone, even for a device it would not match.
    @Test func aPinnedDeviceGoesToItsAdapterAlone() async throws {
        let devices = try await scan(pins: [Self.miScale: "gatt-health", Self.unknown: "bthome"])
        let byAddress = Dictionary(uniqueKeysWithValues: devices.map { ($0.address, $0) })
        #expect(byAddress[Self.miScale]?.adapterID == "gatt-health")
        #expect(byAddress[Self.miScale]?.alsoMatching == [])
        #expect(byAddress[Self.unknown]?.adapterID == "bthome")
        #expect(byAddress[Self.bthome]?.adapterID == "bthome")
    }

    @Test func jsonIsOneObjectWithBothParts() async throws {
        var report = ScanReport(controller: "hci0", seconds: 2)
        report.bluetooth = .scanned(try await scan())
        report.usb = .unavailable("cannot list USB devices: no libusb here")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        let bluetooth = try #require(object["bluetooth"] as? [String: Any])
        #expect(bluetooth["controller"] as? String == "hci0")
        #expect(bluetooth["available"] as? Bool == true)
        let devices = try #require(bluetooth["devices"] as? [[String: Any]])
        #expect(devices.count == 3)
        let mi = try #require(devices.first { $0["address"] as? String == Self.miScale.description })
        #expect(mi["adapter"] as? String == "xiaomi-scale")
        #expect(mi["serviceData"] as? [String: String] == ["181D": "223e30e607020e10293a"])
        #expect(mi["reason"] is NSNull)
        #expect(Set(mi.keys) == ["address", "addressType", "name", "rssi", "strongestRSSI", "reports", "connectable",
                                 "serviceUUIDs", "serviceData", "manufacturerData", "adapter", "alsoMatching", "reason"])
        let other = try #require(devices.first { $0["address"] as? String == Self.unknown.description })
        #expect(other["adapter"] is NSNull)
        #expect(other["manufacturerData"] as? [String: String] == ["0x0006": "01020304"])
        #expect((other["reason"] as? String)?.contains("ingestd capture") == true)
        let usb = try #require(object["usb"] as? [String: Any])
        #expect(usb["available"] as? Bool == false)
        #expect(usb["reason"] as? String == "cannot list USB devices: no libusb here")
        #expect(report.failed)
    }

    @Test(arguments: ["0", "0.1", "601", "ten"]) func secondsOutOfBoundsIsAUsageError(_ seconds: String) async {
        let out = CapturingWriter()
        let err = CapturingWriter()
        let context = CommandContext(stdout: out, stderr: err, environment: [:], label: "ingestd")
        let status = await CommandLineRunner.run(root: ScanCommand.self, arguments: ["--seconds", seconds], context: context)
        #expect(status == 64)
        #expect(err.lines.joined().contains("--seconds"))
    }
}

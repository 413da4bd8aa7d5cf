import AdapterKit
import BlueZTransport
import Foundation
import Transport

/// One Bluetooth LE device heard by `ingestd scan`: what it advertised and which adapter takes it,
/// decided by the same ``AdapterRouter`` the daemon routes advertisements through.
public struct SurveyedDevice: Sendable, Hashable {
    public var address: BLEAddress
    public var addressType: BLEAddressType
    /// The latest local name heard (advertisement or scan response).
    public var name: String?
    /// The latest RSSI in dBm, and the strongest.
    public var rssi: Int8?
    public var strongestRSSI: Int8?
    /// How many advertising reports (and scan responses) were heard.
    public var reports: Int
    /// Whether it advertised connectably at least once.
    public var connectable: Bool
    /// Listed service UUIDs, sorted.
    public var serviceUUIDs: [BLEUUID]
    /// The latest service data per UUID.
    public var serviceData: [BLEUUID: [UInt8]]
    /// The latest manufacturer data per company id.
    public var manufacturerData: [UInt16: [UInt8]]
    /// The adapter `ingestd run` would give the device's connections to; nil when none matches.
    public var adapterID: String?
    /// The other adapters that match too, in precedence order.
    public var alsoMatching: [String]

    /// What it advertises in short form: `services 181D,FE95; data 181D(13 B); mfr 0x0157(12 B)`,
    /// or `nothing` for an empty advertisement.
    public var advertises: String {
        var parts: [String] = []
        let listed = serviceUUIDs.filter { serviceData[$0] == nil }
        if !listed.isEmpty { parts.append("services " + listed.map(\.description).joined(separator: ",")) }
        if !serviceData.isEmpty {
            parts.append("data " + serviceData.keys.sorted().map { "\($0)(\(serviceData[$0]?.count ?? 0) B)" }
                .joined(separator: ","))
        }
        if !manufacturerData.isEmpty {
            parts.append("mfr " + manufacturerData.keys.sorted().map {
                String(format: "0x%04X", $0) + "(\(manufacturerData[$0]?.count ?? 0) B)"
            }.joined(separator: ","))
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }
}

/// Collects advertisements for `ingestd scan` and matches their devices to adapters through the
/// daemon's own ``AdapterRouter`` (registry order, exact before generic, external before built-in,
/// pins), so the adapter named is the one `run` would use. Nothing is stored: what sessions produce
/// is dropped. Bounded: at most ``maximumDevices`` devices are kept.
public final class BluetoothSurvey {
    private let router: AdapterRouter
    private var devices: [BLEAddress: SurveyedDevice] = [:]
    /// Devices heard past ``maximumDevices`` (not listed).
    public private(set) var devicesNotListed = 0
    public let maximumDevices: Int

    public init(adapters: [any BLEAdapter], pins: [BLEAddress: String] = [:], timeZone: TimeZone,
                keys: AdvertisementKeys = AdvertisementKeys(), maximumDevices: Int = 1_024) throws(AdapterRouterError) {
        router = try AdapterRouter(adapters: adapters, pins: pins, timeZone: timeZone,
                                   maximumUnmatchedDevices: maximumDevices, maximumMatchedDevices: maximumDevices, keys: keys)
        self.maximumDevices = max(1, maximumDevices)
    }

    /// Takes one transport event (only advertisements count).
    public func add(_ event: TransportEvent) {
        guard case .advertisement(let advertisement) = event else { return }
        let address = advertisement.address
        if devices[address] == nil, devices.count >= maximumDevices {
            devicesNotListed += 1
            return
        }
        var output = AdapterOutput()
        router.route(event, into: &output)
        var device = devices[address] ?? SurveyedDevice(
            address: address, addressType: advertisement.addressType, name: nil, rssi: nil, strongestRSSI: nil, reports: 0,
            connectable: false, serviceUUIDs: [], serviceData: [:], manufacturerData: [:], adapterID: nil, alsoMatching: [])
        device.reports += 1
        if let name = advertisement.localName { device.name = name }
        if let rssi = advertisement.rssi {
            device.rssi = rssi
            device.strongestRSSI = max(device.strongestRSSI ?? rssi, rssi)
        }
        device.connectable = device.connectable || advertisement.eventType.isConnectable
        device.serviceUUIDs = Array(Set(device.serviceUUIDs).union(advertisement.serviceUUIDs)).sorted()
        device.serviceData.merge(advertisement.serviceData) { _, new in new }
        device.manufacturerData.merge(advertisement.manufacturerData) { _, new in new }
        devices[address] = device
    }

    /// The devices heard, strongest signal first (then by address), each with its adapter.
    public var surveyed: [SurveyedDevice] {
        var output = AdapterOutput()
        router.poll(into: &output)
        let primary = router.matchedDevices
        let matching = router.matchingAdapters
        return devices.values.map { device in
            var device = device
            device.adapterID = primary[device.address]
            device.alsoMatching = (matching[device.address] ?? []).filter { $0 != device.adapterID }
            return device
        }.sorted { ($0.strongestRSSI ?? -128, $1.address) > ($1.strongestRSSI ?? -128, $0.address) }
    }

    /// Ends the adapters' sessions (their output is dropped: a scan stores nothing).
    public func finish() {
        var output = AdapterOutput()
        router.finish(into: &output)
    }

    /// Scans with `link` for `duration` (actively, so scan responses with names arrive) and
    /// returns the devices heard.
    /// - Throws: what opening or starting the scanner threw (``BluetoothUnavailable`` without a
    ///   controller, `HCIScannerError` when the controller refuses to scan).
    public func scan(link: BluetoothLink, duration: Duration, log: @escaping BlueZLogSink = { _ in }) async throws
        -> [SurveyedDevice]
    {
        let scanner = try link.openScanner(BluetoothLinkOptions(log: log, activeScan: true))
        try await scanner.start()
        let timer = Task {
            try? await Task.sleep(for: duration)
            await scanner.stop()
        }
        for await event in scanner.events { add(event) }
        timer.cancel()
        await scanner.stop()
        defer { finish() }
        return surveyed
    }
}

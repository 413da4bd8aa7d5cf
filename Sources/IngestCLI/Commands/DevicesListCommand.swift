import ArgumentParsing
import Foundation
import HealthModel
import IngestRuntime
import LibUSBTransport
import Transport

/// `ingestd devices [list]`: the USB devices present and which adapter takes each, chosen as the daemon
/// chooses (``USBSessionRunner``: external adapters before built-in ones).
struct DevicesListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "list",
        abstract: "List the USB devices present: VID:PID, bus/address, strings and the adapter that matches each.",
        discussion: """
            Strings come from sysfs, or from the device when it can be opened; a device the user may \
            not open still shows its ids and adapter (see 'ingestd udev-rules' for access). The adapter \
            is the one 'ingestd run' would use: external adapters (--plugins DIR, else the default \
            plugin directories) before built-in ones.
            """,
        examples: [
            "ingestd devices list",
            "ingestd devices list --json",
        ]
    )
    static let signature = Signature {
        PluginsOption.self
        JSONOption.self
    }

    let plugins: [String]
    let json: Bool

    init(_ arguments: ParsedValues) throws {
        plugins = try PluginsOption(arguments).directories
        json = try JSONOption(arguments).isOn
    }

    func run(_ context: CommandContext) async throws {
        let devices: [USBDeviceDescription]
        do {
            devices = try LibUSBContext().enumerate()
        } catch {
            throw CommandError.usbUnlistable(reason: "\(error)")
        }
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: plugins, context: context)
        let runner = USBSessionRunner(adapters: ExternalAdapterSupport.usbAdapters(catalogue), options: [:],
                                      timeZone: .current)
        let rows = DeviceListing.rows(devices: devices, runner: runner)
        if json {
            for row in rows { context.stdout.writeLine(row.json) }
            return
        }
        if rows.isEmpty {
            context.stdout.writeLine("no USB devices found")
            return
        }
        context.stdout.write(Table(header: ["VID:PID", "BUS/ADDR", "MANUFACTURER", "PRODUCT", "SERIAL", "ADAPTER"],
                                   rows: rows.map(\.cells)).rendered)
    }
}

/// What `ingestd devices` says about one USB device.
struct DeviceListingRow: Equatable, Sendable {
    var device: USBDeviceDescription
    /// The id of the adapter the session runner picks for the device (external before built-in).
    var adapterID: String?
    /// Why no adapter takes the device; nil when one does.
    var reason: String?
    /// The other adapters that match the device too (overlapping claims), in precedence order:
    /// the device goes to the next of them when the first is broken or in restart back-off.
    var alsoMatching: [String] = []

    /// The table cells: missing strings show as "-", the adapter column gives the id or the reason.
    var cells: [String] {
        [device.idString, place, device.manufacturer ?? "-", device.product ?? "-", device.serialNumber ?? "-",
         adapterID.map { $0 + (alsoMatching.isEmpty ? "" : " (also " + alsoMatching.joined(separator: ", ") + ")") }
             ?? reason ?? "-"]
    }

    /// `001/002` as lsusb shows it, or `-` when unknown.
    var place: String {
        guard let bus = device.bus, let address = device.address else { return "-" }
        return String(format: "%03d/%03d", bus, address)
    }

    /// One JSON object: `usb`, `vendorID`, `productID`, `bus`, `address`, `manufacturer`,
    /// `product`, `serial`, `class`, `adapter` (null when none), `alsoMatching` (the other
    /// adapters that match) and `reason` (null when matched).
    var json: String {
        func string(_ value: String?) -> String { value.map(JSONText.quoted) ?? "null" }
        func number(_ value: UInt8?) -> String { value.map { String($0) } ?? "null" }
        var line = "{\"usb\":" + JSONText.quoted(device.idString)
        line += ",\"vendorID\":" + JSONText.quoted(String(format: "%04x", device.vendorID))
        line += ",\"productID\":" + JSONText.quoted(String(format: "%04x", device.productID))
        line += ",\"bus\":" + number(device.bus) + ",\"address\":" + number(device.address)
        line += ",\"manufacturer\":" + string(device.manufacturer) + ",\"product\":" + string(device.product)
        line += ",\"serial\":" + string(device.serialNumber) + ",\"class\":" + String(device.deviceClass)
        line += ",\"adapter\":" + string(adapterID)
        line += ",\"alsoMatching\":[" + alsoMatching.map(JSONText.quoted).joined(separator: ",") + "]"
        line += ",\"reason\":" + string(reason) + "}"
        return line
    }
}

/// Matches enumerated USB devices to adapters for `ingestd devices`, through the one USB session
/// runner's matching.
enum DeviceListing {
    /// One row per device, ordered by bus and address; each names the adapter `runner` would run
    /// on it and the others that match too, or why none matches (hubs are named as such).
    static func rows(devices: [USBDeviceDescription], runner: USBSessionRunner) -> [DeviceListingRow] {
        devices.sorted { ($0.bus ?? 0, $0.address ?? 0, $0.idString) < ($1.bus ?? 0, $1.address ?? 0, $1.idString) }
            .map { device in
                if let adapter = runner.adapter(for: device) {
                    let others = runner.adapters.filter { $0.descriptor.id != adapter.descriptor.id && $0.descriptor.matches(device) }
                    return DeviceListingRow(device: device, adapterID: adapter.descriptor.id, reason: nil,
                                            alsoMatching: others.map(\.descriptor.id))
                }
                let reason = device.deviceClass == 0x09
                    ? "a USB hub (no adapter needed)"
                    : "no adapter matches \(device.idString)"
                return DeviceListingRow(device: device, adapterID: nil, reason: reason)
            }
    }
}

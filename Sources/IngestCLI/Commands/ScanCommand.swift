import AdapterKit
import ArgumentParsing
import BlueZTransport
import Foundation
import HealthModel
import IngestRuntime
import LibUSBTransport
import Transport

/// `ingestd scan [--seconds N] [--json]`: the Bluetooth LE devices in range and the USB devices
/// present, each with the adapter `ingestd run` would give it (or how to capture an unsupported one).
struct ScanCommand: Command {
    static let configuration = CommandConfiguration(
        name: "scan",
        abstract: "List the Bluetooth LE devices in range and the USB devices present, with the adapter that takes each.",
        discussion: """
            Scans Bluetooth LE actively (so scan responses with names arrive) for --seconds, then lists each \
            device heard: address, name, RSSI (latest and strongest), what it advertises (service UUIDs, \
            service data and manufacturer data by company id, with their lengths) and the adapter 'ingestd run' \
            would use for it, matched by the daemon's own router (pins from --config and --adapter, external adapters before \
            built-in ones). A device no adapter takes says how to record it for a bug report with 'ingestd \
            capture'. The USB devices follow, as 'ingestd devices' lists them. Nothing is stored. Without a \
            Bluetooth controller the USB devices are still listed and the command exits 1 naming the reason.
            """,
        examples: [
            "ingestd scan",
            "ingestd scan --seconds 30 --json",
            "ingestd scan --hci 1 --config /etc/ingestd/ingestd.conf",
        ]
    )
    static let secondsOption = TypedOption<Duration>(Option(
        "seconds", valueName: "N", help: "How long to listen to Bluetooth LE (0.5 to 600 s).", default: "10"))
    static let pinOption = TypedOption<String>(Option(
        "adapter", valueName: "DEVICE=ID", help: "Pin a device to one adapter, as 'ingestd run --adapter' (repeatable).", repeatable: true))
    static let noUSBFlag = TypedFlag(Flag("no-usb", help: "Do not list USB devices."))
    static let noBLEFlag = TypedFlag(Flag("no-ble", help: "Do not scan Bluetooth LE."))
    static let signature = Signature {
        Self.secondsOption
        ControllerOption.self
        PluginsOption.self
        KeyOption.self
        Self.pinOption
        ConfigFileOption.file.withHelp(
            "Read the configuration (pins: adapter = DEVICE=ID) from FILE instead of /etc/ingestd/ingestd.conf and ~/.config/ingestd/config, as 'ingestd run --config' does; --adapter wins.")
        Self.noUSBFlag
        Self.noBLEFlag
        JSONOption.self
    }

    /// `--seconds`' bounds: long enough to hear a device advertising every few seconds, short
    /// enough that a forgotten scan ends.
    static let secondsRange = 0.5...600.0

    let seconds: Double
    let hci: Int
    let plugins: [String]
    let keys: AdvertisementKeys
    let pins: AdapterPins
    let noUSB: Bool
    let noBLE: Bool
    let json: Bool

    init(_ arguments: ParsedValues) throws {
        seconds = try arguments.seconds(Self.secondsOption, in: Self.secondsRange) ?? 10
        hci = try ControllerOption(arguments).index
        plugins = try PluginsOption(arguments).directories
        keys = try KeyOption(arguments).keys
        // The configuration's pins come first (ParsedValues.supply), so --adapter wins for the same device.
        let pinValues = try arguments.values(Self.pinOption)
        do {
            pins = try AdapterPins(parsing: pinValues)
        } catch {
            throw UsageError.invalidValue(pinValues.joined(separator: " "), argument: Self.pinOption.spelling, reason: error.description)
        }
        noUSB = arguments.flag(Self.noUSBFlag)
        noBLE = arguments.flag(Self.noBLEFlag)
        json = try JSONOption(arguments).isOn
    }

    func run(_ context: CommandContext) async throws {
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: plugins, context: context)
        var report = ScanReport(controller: "hci\(hci)", seconds: seconds)
        if !noBLE {
            if !json { context.stderr.writeLine("scan: listening on hci\(hci) for \(JSONNumber.format(seconds)) s…") }
            do {
                let survey = try BluetoothSurvey(adapters: ExternalAdapterSupport.bluetoothAdapters(catalogue),
                                                 pins: pins.bluetooth, timeZone: .current,
                                                 keys: AdvertisementKeyArguments.storedInDefaultStore(context: context).merging(keys))
                let logger = context.logger
                report.bluetooth = .scanned(try await survey.scan(
                    link: .controller(UInt16(hci)), duration: .milliseconds(Int64((seconds * 1000).rounded())),
                    log: { record in logger.log(level: record.level, "\(record.message)") }))
            } catch let error as AdapterRouterError {
                throw CommandError.adapterChoice(error)
            } catch {
                report.bluetooth = .unavailable("\(error)")
            }
        }
        if !noUSB {
            do {
                let runner = USBSessionRunner(adapters: ExternalAdapterSupport.usbAdapters(catalogue), options: [:],
                                              timeZone: .current, pins: pins)
                report.usb = .scanned(DeviceListing.rows(devices: try LibUSBContext().enumerate(), runner: runner))
            } catch {
                report.usb = .unavailable("cannot list USB devices: \(error)")
            }
        }
        context.stdout.write(json ? report.json + "\n" : report.text)
        if report.failed { throw ExitCode.failure }
    }
}

/// What `ingestd scan` found, rendered as text or one JSON object.
struct ScanReport: Sendable {
    /// The outcome of one half of the scan.
    enum Part<Row: Sendable>: Sendable {
        case skipped
        case scanned([Row])
        case unavailable(String)

        var rows: [Row] {
            switch self {
            case .scanned(let rows): rows
            case .skipped, .unavailable: []
            }
        }

        var reason: String? {
            switch self {
            case .unavailable(let reason): reason
            case .skipped, .scanned: nil
            }
        }

        var wasAsked: Bool {
            switch self {
            case .skipped: false
            case .scanned, .unavailable: true
            }
        }
    }

    var controller: String
    var seconds: Double
    var bluetooth: Part<SurveyedDevice> = .skipped
    var usb: Part<DeviceListingRow> = .skipped

    /// Whether a part that was asked for could not be done (exit 1).
    var failed: Bool { bluetooth.reason != nil || usb.reason != nil }

    /// What the ADAPTER column says of a device no adapter takes.
    static func noAdapter(_ device: SurveyedDevice) -> String {
        "no adapter: unsupported; record it for a bug report with "
            + "'ingestd capture --out device.btsnoop --ble \(device.address) --seconds 60'"
    }

    static func adapterCell(_ device: SurveyedDevice) -> String {
        guard let adapter = device.adapterID else { return noAdapter(device) }
        return adapter + (device.alsoMatching.isEmpty ? "" : " (also " + device.alsoMatching.joined(separator: ", ") + ")")
    }

    static func rssi(_ value: Int8?) -> String { value.map { "\($0)" } ?? "-" }

    var text: String {
        var text = ""
        switch bluetooth {
        case .skipped: break
        case .unavailable(let reason):
            text += "Bluetooth LE (\(controller)): \(reason)\n"
        case .scanned(let devices):
            text += "Bluetooth LE (\(controller), \(JSONNumber.format(seconds)) s): \(devices.count) device\(devices.count == 1 ? "" : "s")\n"
            if !devices.isEmpty {
                text += Table(header: ["ADDRESS", "RSSI", "NAME", "ADVERTISES", "ADAPTER"], rows: devices.map { device in
                    [device.address.description, Self.rssi(device.rssi), device.name.map(PrintableText.escaped) ?? "-",
                     device.advertises, Self.adapterCell(device)]
                }).rendered
            }
        }
        switch usb {
        case .skipped: break
        case .unavailable(let reason):
            text += (text.isEmpty ? "" : "\n") + "USB: \(reason)\n"
        case .scanned(let rows):
            text += (text.isEmpty ? "" : "\n") + "USB: \(rows.count) device\(rows.count == 1 ? "" : "s")\n"
            if !rows.isEmpty {
                text += Table(header: ["VID:PID", "BUS/ADDR", "MANUFACTURER", "PRODUCT", "SERIAL", "ADAPTER"],
                              rows: rows.map(\.cells)).rendered
            }
        }
        return text
    }

    /// `{"bluetooth":{"controller","seconds","available","reason","devices":[…]},"usb":{"available","reason","devices":[…]}}`;
    /// a part not asked for is null. A Bluetooth device: `address`, `addressType`, `name`, `rssi`,
    /// `strongestRSSI`, `reports`, `connectable`, `serviceUUIDs`, `serviceData` and
    /// `manufacturerData` (hex by UUID / company id), `adapter` (null when none), `alsoMatching`,
    /// `reason` (null when matched). USB devices as `ingestd devices --json` gives them.
    var json: String {
        func string(_ value: String?) -> String { value.map(JSONText.quoted) ?? "null" }
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        var bluetoothJSON = "null"
        if bluetooth.wasAsked {
            let devices = bluetooth.rows.map { device in
                "{\"address\":" + JSONText.quoted(device.address.description)
                    + ",\"addressType\":" + JSONText.quoted("\(device.addressType)")
                    + ",\"name\":" + string(device.name)
                    + ",\"rssi\":" + (device.rssi.map { "\($0)" } ?? "null")
                    + ",\"strongestRSSI\":" + (device.strongestRSSI.map { "\($0)" } ?? "null")
                    + ",\"reports\":\(device.reports),\"connectable\":\(device.connectable)"
                    + ",\"serviceUUIDs\":[" + device.serviceUUIDs.map { JSONText.quoted($0.description) }.joined(separator: ",") + "]"
                    + ",\"serviceData\":{" + device.serviceData.keys.sorted().map {
                        JSONText.quoted($0.description) + ":" + JSONText.quoted(hex(device.serviceData[$0] ?? []))
                    }.joined(separator: ",") + "}"
                    + ",\"manufacturerData\":{" + device.manufacturerData.keys.sorted().map {
                        JSONText.quoted(String(format: "0x%04X", $0)) + ":" + JSONText.quoted(hex(device.manufacturerData[$0] ?? []))
                    }.joined(separator: ",") + "}"
                    + ",\"adapter\":" + string(device.adapterID)
                    + ",\"alsoMatching\":[" + device.alsoMatching.map(JSONText.quoted).joined(separator: ",") + "]"
                    + ",\"reason\":" + string(device.adapterID == nil ? Self.noAdapter(device) : nil) + "}"
            }
            bluetoothJSON = "{\"controller\":" + JSONText.quoted(controller) + ",\"seconds\":" + JSONNumber.format(seconds)
                + ",\"available\":\(bluetooth.reason == nil),\"reason\":" + string(bluetooth.reason)
                + ",\"devices\":[" + devices.joined(separator: ",") + "]}"
        }
        var usbJSON = "null"
        if usb.wasAsked {
            usbJSON = "{\"available\":\(usb.reason == nil),\"reason\":" + string(usb.reason)
                + ",\"devices\":[" + usb.rows.map(\.json).joined(separator: ",") + "]}"
        }
        return "{\"bluetooth\":" + bluetoothJSON + ",\"usb\":" + usbJSON + "}"
    }
}

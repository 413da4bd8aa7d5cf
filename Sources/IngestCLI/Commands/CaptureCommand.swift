import AdapterKit
import ArgumentParsing
import BuiltinAdapters
import Foundation
import IngestRuntime
import Synchronization
import Transport

/// `ingestd capture --out FILE [--usb VID:PID | --ble ADDR] [--seconds N]`: records what the
/// transports see, so a user can contribute a log of a device ingestd does not support yet.
struct CaptureCommand: Command {
    static let configuration = CommandConfiguration(
        name: "capture",
        abstract: "Record what the transports see to a btsnoop (BLE) or pcapng (USB) file for a device log.",
        discussion: """
            Without --usb, scans Bluetooth LE actively (so scan responses arrive) and writes every HCI \
            packet to FILE as btsnoop (datalink 1002, as Android's HCI snoop log). With --ble ADDR only that \
            device's advertisements are kept, and ingestd connects to it when it advertises connectably and \
            holds the session the daemon would: when an adapter (external or built-in, as 'ingestd run' \
            chooses) takes the device and talks to connected devices, that adapter's conversation (commands, \
            replies, stored records fetched; nothing is stored and nothing is erased), otherwise GATT \
            discovery, a read of every readable characteristic and a subscription to everything that \
            notifies or indicates; the session is written as ACL data with its connection events. With \
            --usb VID:PID the device is opened with libusb and what a session does is written as usbmon \
            (pcapng, LINKTYPE 220): the matching adapter's session, or, for a device no adapter knows, \
            reads of its interrupt and bulk IN endpoints. Either file replays with 'ingestd decode'. \
            Ctrl-C or SIGTERM ends the capture early; the file is complete either way (mode 0600).
            """,
        examples: [
            "ingestd capture --out scale.btsnoop --ble AA:BB:CC:DD:EE:FF --seconds 60",
        ]
    )
    static let outOption = TypedOption<String>(Option("out", valueName: "FILE", help: "The capture file to write.", required: true))
    static let bleOption = TypedOption<String>(Option(
        "ble", valueName: "ADDR", help: "Keep only this device's advertisements and record a GATT session with it."))
    static let secondsOption = TypedOption<Duration>(Option("seconds", valueName: "N", help: "How long to record.", default: "30"))
    static let signature = Signature {
        Self.outOption
        USBDeviceOption.declared(help: "Record this USB device (hex ids) instead of Bluetooth LE.")
        Self.bleOption
        Self.secondsOption
        ControllerOption.self
        TimeZoneOption.self
        AdapterSettingsOption.self
        KeyOption.self
        PluginsOption.self
    }

    let out: String
    let usbDevice: (UInt16, UInt16)?
    let bleAddress: BLEAddress?
    let seconds: Double
    let hci: Int
    let zone: TimeZone
    let adapterSettings: [String: String]
    let keys: AdvertisementKeys
    let pluginDirectories: [String]

    init(_ arguments: ParsedValues) throws {
        out = try arguments.required(Self.outOption)
        guard !out.isEmpty else { throw UsageError.invalidValue(out, argument: "--out", reason: "must name a file") }
        usbDevice = try USBDeviceOption(arguments).ids
        if let text = try arguments.value(Self.bleOption) {
            guard let address = BLEAddress(text) else {
                throw UsageError.invalidValue(text, argument: "--ble", reason: "expected a Bluetooth address such as C8:47:8C:00:11:22")
            }
            bleAddress = address
        } else {
            bleAddress = nil
        }
        seconds = try arguments.seconds(Self.secondsOption, in: 0.001...(31 * 86_400)) ?? 30
        hci = try ControllerOption(arguments).index
        zone = try TimeZoneOption(arguments).zone
        adapterSettings = try AdapterSettingsOption(arguments).settings
        pluginDirectories = try PluginsOption(arguments).directories
        keys = try KeyOption(arguments).keys
        guard usbDevice == nil || bleAddress == nil else {
            throw UsageError.invalid("--usb and --ble cannot be used together: a capture records one transport")
        }
    }

    func run(_ context: CommandContext) async throws {
        let stop = CaptureStop()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        defer { signals.cancel() }
        let stderr = context.stderr
        let signalTask = Task {
            for await signal in signals.stream {
                stderr.writeLine("capture: \(signal == SIGINT ? "SIGINT" : "SIGTERM") received, closing \(out)")
                stop.stop()
                return
            }
        }
        defer { signalTask.cancel() }
        let duration = Duration.milliseconds(Int64((seconds * 1000).rounded()))
        let progress: @Sendable (String) -> Void = { stderr.writeLine("capture: " + $0) }
        if let (vendorID, productID) = usbDevice {
            let capture = USBCapture(vendorID: vendorID, productID: productID, adapters: BuiltinAdapters.usb,
                                     timeZone: zone, duration: duration)
            let summary = try await capture.run(out: out, stop: stop, progress: progress)
            stderr.writeLine("capture: wrote \(out): \(summary)")
        } else {
            var capture = BluetoothCapture(link: .controller(UInt16(hci)), controllerName: "hci\(hci)", target: bleAddress,
                                           duration: duration)
            if bleAddress != nil {
                let catalogue = ExternalAdapterSupport.loadCatalogue(directories: pluginDirectories, context: context)
                capture.adapters = ExternalAdapterSupport.bluetoothAdapters(catalogue)
            }
            capture.timeZone = zone
            capture.options = adapterSettings
            capture.keys = AdvertisementKeyArguments.storedInDefaultStore(context: context).merging(keys)
            let counts = try await capture.run(out: out, stop: stop, progress: progress, logger: context.logger)
            stderr.writeLine("capture: wrote \(out): \(counts)")
            if let bleAddress, counts.advertisements == 0 {
                stderr.writeLine("capture: no advertisement from \(bleAddress) was seen (is it advertising, and in range?)")
            }
        }
    }
}

import AdapterKit
import ArgumentParsing
import Foundation

/// `--plugins DIR` (repeatable): the directories of external adapters.
struct PluginsOption: OptionGroup {
    static let plugins = TypedOption<String>(Option(
        "plugins", valueName: "DIR",
        help: "Directory of external adapters (repeatable; default ~/.local/lib/ingestd/adapters and /usr/lib/ingestd/adapters).",
        repeatable: true))

    static var arguments: [ArgumentElement] { [plugins.element] }

    /// The directories given; empty means the default directories.
    let directories: [String]

    init(_ values: ParsedValues) throws {
        directories = try values.values(Self.plugins)
    }
}

/// `--adapter-option KEY=VALUE` (repeatable): adapter configuration.
struct AdapterSettingsOption: OptionGroup {
    static let setting = TypedOption<String>(Option(
        "adapter-option", valueName: "KEY=VALUE",
        help: "Adapter configuration, e.g. clear-after-sync=true or ant-network-key=HEX (repeatable).",
        repeatable: true))

    static var arguments: [ArgumentElement] { [setting.element] }

    /// The pairs given, by key (a later pair wins).
    let settings: [String: String]

    init(_ values: ParsedValues) throws {
        settings = try CommonArguments.adapterOptions(try values.values(Self.setting))
    }
}

/// `--usb VID:PID`: USB ids in hex, e.g. `0590:0028`.
struct USBDeviceOption: OptionGroup {
    static let usb = TypedOption<String>(Option(
        "usb", valueName: "VID:PID", help: "For usbmon captures without descriptors: the device's ids (hex)."))

    static var arguments: [ArgumentElement] { [usb.element] }

    /// The option with another help text (e.g. `capture`: "Record this USB device …").
    static func declared(help: String) -> [ArgumentElement] {
        [usb.withHelp(help).element]
    }

    /// Vendor and product id; nil when `--usb` is not given.
    let ids: (UInt16, UInt16)?

    init(_ values: ParsedValues) throws {
        ids = try CommonArguments.usbIDs(try values.value(Self.usb))
    }
}

/// `--hci N`: the Bluetooth controller index.
struct ControllerOption: OptionGroup {
    static let hci = TypedOption<Int>(Option("hci", valueName: "N", help: "Bluetooth controller index (hciN).", default: "0"))

    static var arguments: [ArgumentElement] { [hci.element] }

    /// The N of hciN, 0...63.
    let index: Int

    init(_ values: ParsedValues) throws {
        index = try values.value(Self.hci) ?? 0
        guard index >= 0, index < 64 else {
            throw UsageError.invalidValue(String(index), argument: Self.hci.spelling, reason: "not a controller index")
        }
    }
}

/// How captures are decoded (`decode`, `replay`): `--adapter`, `--tz`, `--usb`,
/// `--adapter-option`, `--key` and `--plugins`.
struct CaptureDecodingOptions: OptionGroup {
    static var arguments: [ArgumentElement] {
        declared(adapterHelp: "Use this adapter for every device ('ingestd adapters' lists them).")
    }

    /// `--adapter ID` (its help is the command's).
    static let adapterOption = TypedOption<String>(Option("adapter", valueName: "ID"))

    /// The group with another help text for `--adapter`.
    static func declared(adapterHelp: String) -> [ArgumentElement] {
        [adapterOption.withHelp(adapterHelp).element]
            + TimeZoneOption.arguments + USBDeviceOption.arguments + AdapterSettingsOption.arguments + KeyOption.arguments
            + PluginsOption.arguments
    }

    /// The adapter id of `--adapter`; nil lets the router choose per device.
    let adapter: String?
    let zone: TimeZone
    let usbDevice: (UInt16, UInt16)?
    let adapterSettings: [String: String]
    let pluginDirectories: [String]
    /// The keys of `--key` (the store's are added by the command).
    let keys: AdvertisementKeys

    init(_ values: ParsedValues) throws {
        adapter = try values.value(Self.adapterOption)
        keys = try KeyOption(values).keys
        zone = try TimeZoneOption(values).zone
        usbDevice = try USBDeviceOption(values).ids
        adapterSettings = try AdapterSettingsOption(values).settings
        pluginDirectories = try PluginsOption(values).directories
    }
}

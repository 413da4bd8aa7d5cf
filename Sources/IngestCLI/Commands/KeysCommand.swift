import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import Transport

/// `ingestd keys`: the keys of devices that encrypt their advertisements.
struct KeysCommand: Command {
    static let configuration = CommandConfiguration(
        name: "keys", abstract: "Add, list and remove the keys of devices that encrypt their advertisements.",
        discussion: """
            Xiaomi MiBeacon v4/v5 devices (the S400 and S200 scales) and encrypted BTHome devices encrypt what they \
            broadcast with a per-device key (a "bindkey", 32 hex digits). Keys are kept in the store file (mode 0600) \
            and are never printed or logged; 'keys list' shows the addresses and the adapters that read them. \
            'decode', 'replay', 'run' and 'capture' also take --key ADDRESS=HEX (or ADDRESS=@PATH).
            """,
        subcommands: [KeysAddCommand.self, KeysListCommand.self, KeysRemoveCommand.self],
        defaultSubcommand: KeysListCommand.self,
        examples: [
            "ingestd keys add 8C:D0:B2:F6:BE:EF @s400.key",
            "ingestd keys list",
        ]
    )

    init(_ arguments: ParsedValues) throws {}
}

/// `ingestd keys add ADDRESS HEX`: stores (replaces) a device's key.
struct KeysAddCommand: Command {
    static let configuration = CommandConfiguration(
        name: "add", abstract: "Store a device's key (HEX, @PATH to read it from a file, or - for standard input).",
        usage: "ADDRESS HEX|@PATH|-",
        examples: [
            "ingestd keys add 8C:D0:B2:F6:BE:EF @s400.key",
        ]
    )
    static let addressArgument = TypedPositional<String>(Positional("ADDRESS", help: "The device's Bluetooth address, AA:BB:CC:DD:EE:FF."))
    static let keyArgument = TypedPositional<String>(Positional("KEY", help: "32 hex digits; @PATH or - keep it out of the process arguments."))
    static let signature = Signature {
        Self.addressArgument
        Self.keyArgument
        StoreOption.self
    }
    let address: BLEAddress
    let keyText: String
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        address = try AdvertisementKeyArguments.address(try arguments.required(Self.addressArgument), argument: Self.addressArgument.label)
        keyText = try arguments.required(Self.keyArgument)
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let key = try AdvertisementKeyArguments.key(keyText, for: address, argument: "KEY")
        let store = try storeFile.openKeys(context)
        defer { store.close() }
        try store.setAdvertisementKey(key.bytes, address: address.description)
        context.stderr.writeLine("stored the key for \(address) (the daemon reads keys when it starts)")
    }
}

/// `ingestd keys list [--json]`: the addresses with a key and the adapters that read them; never a key.
struct KeysListCommand: StoreReportCommand {
    static let configuration = CommandConfiguration(name: "list", abstract: "List the devices with a key (never the keys).",
        examples: [
            "ingestd keys list",
            "ingestd keys list --json",
        ]
    )
    let options: StoreReportOptions

    func run(_ context: CommandContext) async throws {
        let store = try options.store.openKeys(context, readOnly: true)
        defer { store.close() }
        let listing = try store.advertisementKeyListing()
        if json {
            for entry in listing {
                let address = JSONText.quoted(entry.address)
                let added = JSONText.quoted(ISO8601DateTime.string(from: entry.addedAt))
                let adapters = entry.sources.map(JSONText.quoted).joined(separator: ",")
                context.stdout.writeLine("{\"address\":\(address),\"addedAt\":\(added),\"adapters\":[\(adapters)]}")
            }
            return
        }
        let rows = listing.map { entry in
            [entry.address, ISO8601DateTime.string(from: entry.addedAt),
             entry.sources.isEmpty ? "- (nothing read from it yet)" : entry.sources.joined(separator: " ")]
        }
        context.stdout.write(Table(header: ["ADDRESS", "ADDED", "ADAPTERS"], rows: rows).rendered)
    }
}

/// `ingestd keys remove ADDRESS`.
struct KeysRemoveCommand: Command {
    static let configuration = CommandConfiguration(name: "remove", abstract: "Remove a device's key.", usage: "ADDRESS",
        examples: [
            "ingestd keys remove 8C:D0:B2:F6:BE:EF",
        ]
    )
    static let addressArgument = TypedPositional<String>(Positional("ADDRESS", help: "The device's Bluetooth address."))
    static let signature = Signature {
        Self.addressArgument
        StoreOption.self
    }
    let address: BLEAddress
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        address = try AdvertisementKeyArguments.address(try arguments.required(Self.addressArgument), argument: Self.addressArgument.label)
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openKeys(context)
        defer { store.close() }
        guard try store.removeAdvertisementKey(address: address.description) else {
            throw CommandError.noKey(address: "\(address)")
        }
        context.stderr.writeLine("removed the key for \(address)")
    }
}

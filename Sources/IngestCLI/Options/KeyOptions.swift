import AdapterKit
import ArgumentParsing
import Foundation
import IngestRuntime
import Pipeline
import Transport

/// `--key ADDRESS=HEX` or `--key ADDRESS=@PATH` (repeatable): keys of devices that encrypt their
/// advertisements, in addition to the store's (`ingestd keys`). A key file keeps the key out of
/// the process arguments. Errors name the address and what is wrong, never the key.
struct KeyOption: OptionGroup {
    static let key = TypedOption<String>(Option(
        "key", valueName: "ADDRESS=HEX",
        help: "A device's key for its encrypted advertisements, 32 hex digits, or ADDRESS=@PATH to read it from a file (repeatable).",
        repeatable: true))

    static var arguments: [ArgumentElement] { [key.element] }

    let keys: AdvertisementKeys

    init(_ values: ParsedValues) throws {
        var keys: [BLEAddress: AdvertisementKey] = [:]
        for pair in try values.values(Self.key) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw UsageError.invalidValue("…", argument: "--key", reason: "expected ADDRESS=HEX or ADDRESS=@PATH")
            }
            let address = try AdvertisementKeyArguments.address(String(pair[..<equals]), argument: "--key")
            keys[address] = try AdvertisementKeyArguments.key(String(pair[pair.index(after: equals)...]), for: address,
                                                              argument: "--key")
        }
        self.keys = AdvertisementKeys(keys)
    }
}

/// Key text from the command line (`HEX`, `@PATH`, `-` for stdin) and the store's keys, as the
/// runtime's ``AdvertisementKeys``.
enum AdvertisementKeyArguments {
    /// A key file is read up to this size (a key with its newline is 33 bytes).
    static let maximumKeyFileBytes = 4_096

    static func address(_ text: String, argument: String) throws -> BLEAddress {
        guard let address = BLEAddress(text) else {
            throw UsageError.invalidValue(text, argument: argument, reason: "not a Bluetooth address AA:BB:CC:DD:EE:FF")
        }
        return address
    }

    /// The key `text` gives: hex digits, `@PATH` (a file holding them) or `-` (standard input).
    static func key(_ text: String, for address: BLEAddress, argument: String) throws -> AdvertisementKey {
        let hex: String
        if text == "-" {
            hex = try read(FileHandle.standardInput, what: "standard input")
        } else if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw CommandError.unreadable(path: path, reason: "cannot read the key file for \(address)")
            }
            defer { try? handle.close() }
            hex = try read(handle, what: path)
        } else {
            hex = text
        }
        do {
            return try AdvertisementKey(hex: hex)
        } catch {
            throw UsageError.invalidValue("\(address)=…", argument: argument, reason: error.description)
        }
    }

    private static func read(_ handle: FileHandle, what: String) throws -> String {
        let data = (try? handle.read(upToCount: maximumKeyFileBytes + 1)) ?? Data()
        guard data.count <= maximumKeyFileBytes else {
            throw CommandError.oversizedKeyFile(source: what, limit: maximumKeyFileBytes)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The store's keys; a stored key that is no longer valid (written by hand) is left out and said.
    static func stored(in store: any AdvertisementKeyStore, context: CommandContext) throws -> AdvertisementKeys {
        var keys: [BLEAddress: AdvertisementKey] = [:]
        for (text, bytes) in try store.advertisementKeys() {
            guard let address = BLEAddress(text), let key = try? AdvertisementKey(bytes: bytes) else {
                context.logger.warning("the stored key for \(text) is not a 16-byte key for a Bluetooth address; ignored ('ingestd keys remove \(text)')")
                continue
            }
            keys[address] = key
        }
        return AdvertisementKeys(keys)
    }

    /// The default store's keys for a command that opens no store otherwise (`decode`, `capture`); none when
    /// there is no store yet, and none (with a warning) when it cannot be read: decoding does not need the store.
    static func storedInDefaultStore(context: CommandContext) -> AdvertisementKeys {
        let path = StoreFile.defaultPath(environment: context.environment)
        guard FileManager.default.fileExists(atPath: path) else { return AdvertisementKeys() }
        do {
            let store = try StoreOption.openKeys(path, context: context)
            defer { store.close() }
            return try stored(in: store, context: context)
        } catch {
            context.logger.warning("the keys of \(path) were not read (\(error)); only --key is used")
            return AdvertisementKeys()
        }
    }
}

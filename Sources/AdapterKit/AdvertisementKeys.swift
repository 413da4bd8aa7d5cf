import Foundation
import Transport

/// A device's key for its encrypted advertisements (a Xiaomi "bindkey", a BTHome key): 16 bytes.
///
/// Its description never shows the bytes: a key printed, logged or interpolated by mistake
/// reads `<key>` and nothing more. Only ``bytes`` hands them out, to the
/// decryption of one frame.
public struct AdvertisementKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The length of every key ingestd takes (AES-128).
    public static let byteCount = 16

    public let bytes: [UInt8]

    /// - Throws: ``AdvertisementKeyError/wrongLength(_:)`` unless there are 16 bytes.
    public init(bytes: [UInt8]) throws(AdvertisementKeyError) {
        guard bytes.count == Self.byteCount else { throw .wrongLength(bytes.count) }
        self.bytes = bytes
    }

    /// Parses 32 hexadecimal digits (either case; spaces, colons and a trailing newline as a key file has
    /// them are ignored). The errors say what is wrong and where, never the digits.
    public init(hex text: String) throws(AdvertisementKeyError) {
        var bytes: [UInt8] = []
        var high: UInt8?
        var position = 0
        for character in text.unicodeScalars {
            position += 1
            if character == " " || character == ":" || character == "\n" || character == "\r" || character == "\t" { continue }
            guard let nibble = Self.nibble(character) else { throw .notHex(position: position) }
            if let value = high {
                bytes.append(value << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        if text.isEmpty || (bytes.isEmpty && high == nil) { throw .empty }
        if high != nil { throw .oddDigitCount(bytes.count * 2 + 1) }
        try self.init(bytes: bytes)
    }

    private static func nibble(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x30...0x39: UInt8(scalar.value - 0x30)
        case 0x41...0x46: UInt8(scalar.value - 0x41 + 10)
        case 0x61...0x66: UInt8(scalar.value - 0x61 + 10)
        default: nil
        }
    }

    public var description: String { "<key>" }
    public var debugDescription: String { "<key>" }
}

/// Why text is not a key. No case carries the key's characters.
public enum AdvertisementKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    /// The character at this 1-based position is not a hexadecimal digit.
    case notHex(position: Int)
    case oddDigitCount(Int)
    /// The key has this many bytes, not 16.
    case wrongLength(Int)

    public var description: String {
        switch self {
        case .empty: "the key is empty (expected 32 hexadecimal digits)"
        case .notHex(let position): "character \(position) of the key is not a hexadecimal digit (expected 32 of them)"
        case .oddDigitCount(let count): "the key has an odd number of hexadecimal digits (\(count); expected 32)"
        case .wrongLength(let count):
            "the key has \(count) bytes (\(count * 2) hexadecimal digits); expected \(AdvertisementKey.byteCount) bytes (32 digits)"
                + (count == 12 ? " (a 12-byte key is a MiBeacon v2/v3 legacy key, which ingestd does not take)" : "")
        }
    }
}

/// The keys adapters may use, by device address: the adapters' only way to a key (they never see
/// the key store). Built by the runtime from the store's keys and `--key ADDRESS=HEX`.
public struct AdvertisementKeys: Sendable {
    private var keys: [BLEAddress: AdvertisementKey]

    public init(_ keys: [BLEAddress: AdvertisementKey] = [:]) { self.keys = keys }

    /// The key for the device at `address`, nil when there is none.
    public func key(for address: BLEAddress) -> AdvertisementKey? { keys[address] }

    /// Whether there is no key at all.
    public var isEmpty: Bool { keys.isEmpty }

    /// The addresses that have a key.
    public var addresses: [BLEAddress] { keys.keys.sorted() }

    /// These keys with `other`'s added; `other` wins for an address both have (the command line over the store).
    public func merging(_ other: AdvertisementKeys) -> AdvertisementKeys {
        AdvertisementKeys(keys.merging(other.keys) { _, new in new })
    }
}

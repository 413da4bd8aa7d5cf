import Foundation

/// A sample's metadata: the keys ingestd interprets as typed fields, plus free-form entries.
///
/// The typed fields are stored under HealthKit's raw keys (`MetadataKey`). `entries` holds every
/// other key; an entry under one of the typed keys is ignored when encoding, so set typed values
/// through the properties or `set(_:forKey:)`.
public struct Metadata: Hashable, Sendable {
    /// `HKMetadataKeySyncIdentifier`: identity of the logical measurement across re-sends.
    public var syncIdentifier: String?
    /// `HKMetadataKeySyncVersion`: a higher version replaces the stored sample.
    public var syncVersion: Int?
    /// `HKExternalUUID`: the writer's own record id.
    public var externalUUID: String?
    /// `HKWasUserEntered`: entered by hand rather than measured.
    public var wasUserEntered: Bool?
    /// `HKTimeZone`: IANA time zone name where the sample was recorded.
    public var timeZone: String?
    /// `HKDeviceSerialNumber`: serial number of the measuring device.
    public var deviceSerialNumber: String?
    /// Every other key.
    public var entries: [String: MetadataValue]

    public init(
        syncIdentifier: String? = nil,
        syncVersion: Int? = nil,
        externalUUID: String? = nil,
        wasUserEntered: Bool? = nil,
        timeZone: String? = nil,
        deviceSerialNumber: String? = nil,
        entries: [String: MetadataValue] = [:]
    ) {
        self.syncIdentifier = syncIdentifier
        self.syncVersion = syncVersion
        self.externalUUID = externalUUID
        self.wasUserEntered = wasUserEntered
        self.timeZone = timeZone
        self.deviceSerialNumber = deviceSerialNumber
        self.entries = entries
    }

    /// Whether there is nothing to encode.
    public var isEmpty: Bool {
        syncIdentifier == nil && syncVersion == nil && externalUUID == nil && wasUserEntered == nil
            && timeZone == nil && deviceSerialNumber == nil
            && entries.keys.allSatisfy { Self.typedKeys.contains(MetadataKey.canonical($0)) }
    }

    /// The keys handled by typed fields (raw spellings).
    static let typedKeys: Set<String> = [
        MetadataKey.syncIdentifier, MetadataKey.syncVersion, MetadataKey.externalUUID,
        MetadataKey.wasUserEntered, MetadataKey.timeZone, MetadataKey.deviceSerialNumber,
    ]

    /// All key/value pairs in encoding order: typed fields in a fixed order, then the other
    /// entries sorted by key. Entries shadowed by a typed key (in any spelling) are left out.
    public var orderedEntries: [(key: String, value: MetadataValue)] {
        var result: [(key: String, value: MetadataValue)] = []
        if let syncIdentifier { result.append((MetadataKey.syncIdentifier, .string(syncIdentifier))) }
        if let syncVersion { result.append((MetadataKey.syncVersion, .number(Double(syncVersion)))) }
        if let externalUUID { result.append((MetadataKey.externalUUID, .string(externalUUID))) }
        if let wasUserEntered { result.append((MetadataKey.wasUserEntered, .bool(wasUserEntered))) }
        if let timeZone { result.append((MetadataKey.timeZone, .string(timeZone))) }
        if let deviceSerialNumber { result.append((MetadataKey.deviceSerialNumber, .string(deviceSerialNumber))) }
        return result + untypedEntries
    }

    /// The entries no typed field shadows (in any spelling), sorted by key: the tail of `orderedEntries`.
    var untypedEntries: [(key: String, value: MetadataValue)] {
        var result: [(key: String, value: MetadataValue)] = []
        for key in entries.keys.sorted() where !Self.typedKeys.contains(MetadataKey.canonical(key)) {
            if let value = entries[key] { result.append((key, value)) }
        }
        return result
    }

    /// The value stored under `key` (typed fields included; long spellings accepted).
    public subscript(key: String) -> MetadataValue? {
        switch MetadataKey.canonical(key) {
        case MetadataKey.syncIdentifier: syncIdentifier.map(MetadataValue.string)
        case MetadataKey.syncVersion: syncVersion.map { .number(Double($0)) }
        case MetadataKey.externalUUID: externalUUID.map(MetadataValue.string)
        case MetadataKey.wasUserEntered: wasUserEntered.map(MetadataValue.bool)
        case MetadataKey.timeZone: timeZone.map(MetadataValue.string)
        case MetadataKey.deviceSerialNumber: deviceSerialNumber.map(MetadataValue.string)
        default: entries[key]
        }
    }

    /// Stores `value` under `key`, into the typed field when the key is one ingestd interprets
    /// (long spellings accepted), after checking the value has that field's type.
    public mutating func set(_ value: MetadataValue, forKey key: String) throws(MetadataError) {
        let canonicalKey = MetadataKey.canonical(key)
        switch canonicalKey {
        case MetadataKey.syncIdentifier:
            let identifier = try Self.string(value, key: canonicalKey)
            // An empty identifier would make every sample that carries one "the same" measurement.
            guard !identifier.isEmpty else { throw .emptySyncIdentifier }
            syncIdentifier = identifier
        case MetadataKey.syncVersion:
            guard case .number(let number) = value, let version = Int(exactly: number) else {
                throw .wrongValueType(key: canonicalKey, expected: "an integer", found: value)
            }
            syncVersion = version
        case MetadataKey.externalUUID:
            externalUUID = try Self.string(value, key: canonicalKey)
        case MetadataKey.wasUserEntered:
            // HealthKit stores this as a number 0/1; accept both spellings.
            switch value {
            case .bool(let bool): wasUserEntered = bool
            case .number(0): wasUserEntered = false
            case .number(1): wasUserEntered = true
            default: throw .wrongValueType(key: canonicalKey, expected: "a boolean", found: value)
            }
        case MetadataKey.timeZone:
            let name = try Self.string(value, key: canonicalKey)
            guard TimeZone(identifier: name) != nil else { throw .unknownTimeZone(name) }
            timeZone = name
        case MetadataKey.deviceSerialNumber:
            deviceSerialNumber = try Self.string(value, key: canonicalKey)
        default:
            entries[key] = value
        }
    }

    private static func string(_ value: MetadataValue, key: String) throws(MetadataError) -> String {
        guard case .string(let string) = value else {
            throw .wrongValueType(key: key, expected: "a string", found: value)
        }
        return string
    }
}

/// Why a metadata value was refused.
public enum MetadataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A typed key carried a value of the wrong kind.
    case wrongValueType(key: String, expected: String, found: MetadataValue)
    /// `HKTimeZone` named no known IANA time zone.
    case unknownTimeZone(String)
    /// `HKMetadataKeySyncIdentifier` was the empty string (leave the key out instead).
    case emptySyncIdentifier

    public var description: String {
        switch self {
        case .wrongValueType(let key, let expected, let found):
            "metadata \"\(key)\" must be \(expected), found \(found)"
        case .unknownTimeZone(let name):
            "metadata \"\(MetadataKey.timeZone)\" names no known time zone: \"\(name)\""
        case .emptySyncIdentifier:
            "metadata \"\(MetadataKey.syncIdentifier)\" is empty (leave the key out for a sample without one)"
        }
    }
}

extension Metadata: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes a flat JSON object of metadata keys, with the same checks as `set(_:forKey:)`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var metadata = Metadata()
        for key in container.allKeys {
            let value = try container.decode(MetadataValue.self, forKey: key)
            do {
                try metadata.set(value, forKey: key.stringValue)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: error.description)
            }
        }
        self = metadata
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, value) in orderedEntries {
            if key == MetadataKey.syncVersion, let syncVersion {
                try container.encode(syncVersion, forKey: Key(stringValue: key))
            } else {
                try container.encode(value, forKey: Key(stringValue: key))
            }
        }
    }
}

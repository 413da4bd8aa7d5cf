import Foundation

/// A sample's metadata: the keys ingestd interprets as typed fields, plus free-form entries.
///
/// The typed fields are stored under HealthKit's raw keys (`MetadataKey`). `entries` holds every
/// other key; an entry under one of the typed keys is ignored when encoding, so set typed values
/// through the properties or `set(_:forKey:)`.
public struct Metadata: Hashable, Sendable {
    /// The fields, in one box that copies share until one changes a field. Empty metadata
    /// shares one box.
    private var storage: CopyOnWriteBox<Fields>

    private struct Fields: Equatable, Hashable, Sendable {
        var syncIdentifier: String? = nil
        var syncVersion: Int? = nil
        var externalUUID: String? = nil
        var wasUserEntered: Bool? = nil
        var timeZone: String? = nil
        var deviceSerialNumber: String? = nil
        var entries: [String: MetadataValue] = [:]
    }

    private static let emptyStorage = CopyOnWriteBox(Fields())

    /// `HKMetadataKeySyncIdentifier`: identity of the logical measurement across re-sends.
    public var syncIdentifier: String? { get { storage.value.syncIdentifier } set { CopyOnWriteBox.change(&storage) { $0.syncIdentifier = newValue } } }
    /// `HKMetadataKeySyncVersion`: a higher version replaces the stored sample.
    public var syncVersion: Int? { get { storage.value.syncVersion } set { CopyOnWriteBox.change(&storage) { $0.syncVersion = newValue } } }
    /// `HKExternalUUID`: the writer's own record id.
    public var externalUUID: String? { get { storage.value.externalUUID } set { CopyOnWriteBox.change(&storage) { $0.externalUUID = newValue } } }
    /// `HKWasUserEntered`: entered by hand rather than measured.
    public var wasUserEntered: Bool? { get { storage.value.wasUserEntered } set { CopyOnWriteBox.change(&storage) { $0.wasUserEntered = newValue } } }
    /// `HKTimeZone`: IANA time zone name where the sample was recorded.
    public var timeZone: String? { get { storage.value.timeZone } set { CopyOnWriteBox.change(&storage) { $0.timeZone = newValue } } }
    /// `HKDeviceSerialNumber`: serial number of the measuring device.
    public var deviceSerialNumber: String? { get { storage.value.deviceSerialNumber } set { CopyOnWriteBox.change(&storage) { $0.deviceSerialNumber = newValue } } }
    /// Every other key.
    public var entries: [String: MetadataValue] {
        get { storage.value.entries }
        _modify {
            CopyOnWriteBox.makeUnique(&storage)
            yield &storage.value.entries
        }
        set {
            CopyOnWriteBox.makeUnique(&storage)
            storage.value.entries = newValue
        }
    }

    public init(
        syncIdentifier: String? = nil,
        syncVersion: Int? = nil,
        externalUUID: String? = nil,
        wasUserEntered: Bool? = nil,
        timeZone: String? = nil,
        deviceSerialNumber: String? = nil,
        entries: [String: MetadataValue] = [:]
    ) {
        if syncIdentifier == nil, syncVersion == nil, externalUUID == nil, wasUserEntered == nil, timeZone == nil,
           deviceSerialNumber == nil, entries.isEmpty {
            storage = Self.emptyStorage
        } else {
            storage = CopyOnWriteBox(Fields(syncIdentifier: syncIdentifier, syncVersion: syncVersion, externalUUID: externalUUID, wasUserEntered: wasUserEntered, timeZone: timeZone, deviceSerialNumber: deviceSerialNumber, entries: entries))
        }
    }

    public static func == (lhs: Metadata, rhs: Metadata) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.value == rhs.storage.value
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(storage.value) }

    /// Whether two values share their storage (then they are equal without comparing fields).
    public func sharesStorage(with other: Metadata) -> Bool { storage === other.storage }

    /// Whether two values certainly encode to the same JSON: equal typed fields and byte-equal
    /// strings (`==` also matches canonically equivalent spellings, which encode differently).
    /// Entry tables of more than 8 entries are taken as different (a few entries, as an
    /// import's `sourceVersion` and `utcOffset`, are what repeats).
    public func isSpelledAlike(_ other: Metadata) -> Bool {
        if storage === other.storage { return true }
        let a = storage.value, b = other.storage.value
        return a.syncVersion == b.syncVersion && a.wasUserEntered == b.wasUserEntered
            && a.syncIdentifier.hasSameUTF8(as: b.syncIdentifier) && a.externalUUID.hasSameUTF8(as: b.externalUUID)
            && a.timeZone.hasSameUTF8(as: b.timeZone) && a.deviceSerialNumber.hasSameUTF8(as: b.deviceSerialNumber)
            && Self.sameEntries(a.entries, b.entries)
    }

    private static func sameEntries(_ a: [String: MetadataValue], _ b: [String: MetadataValue]) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count <= 8 else { return false }
        for (key, value) in a {
            // A linear search of a few entries costs less than hashing the key.
            guard let other = b.first(where: { $0.key.hasSameUTF8(as: key) }) else { return false }
            switch (value, other.value) {
            case let (.string(x), .string(y)): guard x.hasSameUTF8(as: y) else { return false }
            case let (.number(x), .number(y)): guard x.bitPattern == y.bitPattern else { return false }
            case let (.bool(x), .bool(y)): guard x == y else { return false }
            default: return false
            }
        }
        return true
    }

    /// Whether there is nothing to encode.
    public var isEmpty: Bool {
        if storage === Self.emptyStorage { return true }
        return syncIdentifier == nil && syncVersion == nil && externalUUID == nil && wasUserEntered == nil
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
        forEachTypedField { key, value in
            switch value {
            case .string(let string): result.append((key, .string(string)))
            case .integer(let integer): result.append((key, .number(Double(integer))))
            case .bool(let bool): result.append((key, .bool(bool)))
            }
        }
        return result + untypedEntries
    }

    /// The value of a typed field, as its type has it (a sync version is an exact integer).
    enum TypedFieldValue {
        case string(String)
        case integer(Int)
        case bool(Bool)
    }

    /// Calls `body` with each typed field that is set, its key and its value, in encoding order:
    /// the one place that order is written (`orderedEntries` and the encoder follow it).
    func forEachTypedField(_ body: (_ key: String, _ value: TypedFieldValue) -> Void) {
        if let syncIdentifier { body(MetadataKey.syncIdentifier, .string(syncIdentifier)) }
        if let syncVersion { body(MetadataKey.syncVersion, .integer(syncVersion)) }
        if let externalUUID { body(MetadataKey.externalUUID, .string(externalUUID)) }
        if let wasUserEntered { body(MetadataKey.wasUserEntered, .bool(wasUserEntered)) }
        if let timeZone { body(MetadataKey.timeZone, .string(timeZone)) }
        if let deviceSerialNumber { body(MetadataKey.deviceSerialNumber, .string(deviceSerialNumber)) }
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

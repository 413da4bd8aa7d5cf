import Foundation

/// Reads ingestd's JSON lines (the format `HealthRecordEncoder` writes) into records.
///
/// Input is untrusted: every problem is a `RecordDecodingError` naming the field. On input,
/// `type` may be the full identifier or the short name; `uuid` is optional (a fresh one is made
/// by `makeUUID`); `source` is optional (`defaultSource` is used; a correlation's members inherit
/// the correlation's source). Unknown fields are errors. Semantic checks (start <= end, plausible
/// ranges, unit fits the type, correlation rules) are the pipeline's job, not the decoder's.
public struct HealthRecordDecoder: Sendable {
    /// The source id for records that do not name one.
    public var defaultSource: String
    /// Makes the uuid of records that do not carry one.
    public var makeUUID: @Sendable () -> UUID
    /// The field values of recent plain sample lines, shared by copies of this decoder.
    private let recent = RecentSampleFields()

    public init(
        defaultSource: String,
        makeUUID: @escaping @Sendable () -> UUID = { SampleIdentifierGenerator.shared.next() }
    ) {
        self.defaultSource = defaultSource
        self.makeUUID = makeUUID
    }

    /// Decodes one line (surrounding whitespace and a trailing newline are allowed).
    public func decodeLine(_ line: some StringProtocol) throws(RecordDecodingError) -> HealthRecord {
        var text = String(line)
        let result = text.withUTF8 { bytes in
            Result { () throws(RecordDecodingError) -> HealthRecord in try decodeLine(bytes) }
        }
        return try result.get()
    }

    /// Decodes one line of UTF-8 bytes.
    public func decodeLine(_ line: Data) throws(RecordDecodingError) -> HealthRecord {
        let result = line.withUnsafeBytes { raw in
            Result { () throws(RecordDecodingError) -> HealthRecord in try decodeLine(raw.bindMemory(to: UInt8.self)) }
        }
        return try result.get()
    }

    /// Decodes one line of UTF-8 bytes: a plain sample line in one pass over the bytes
    /// (`SampleLineFastDecoder`), anything else (correlations, escapes, every error) through the
    /// JSON tree, so both ways give the same records and the same errors.
    public func decodeLine(_ bytes: UnsafeBufferPointer<UInt8>) throws(RecordDecodingError) -> HealthRecord {
        if let record = SampleLineFastDecoder.decodeRecord(bytes, defaultSource: defaultSource, makeUUID: makeUUID, recent: recent) {
            return record
        }
        return try decodeLineThroughTree(bytes)
    }

    /// The sample of a plain sample line (what `decodeLine` reads in one pass), or nil when the
    /// line is anything else and needs `decodeLine` (a correlation, another message, an error).
    public func decodePlainSample(_ line: [UInt8]) -> QuantitySample? {
        line.withUnsafeBufferPointer { SampleLineFastDecoder.decode($0, defaultSource: defaultSource, makeUUID: makeUUID, recent: recent) }
    }

    /// The reference decoding: the whole line parsed into a JSON tree, then read field by field
    /// (what `decodeLine` falls back to; public for the equivalence checks of tests and fuzzing).
    public func decodeLineThroughTree(_ bytes: UnsafeBufferPointer<UInt8>) throws(RecordDecodingError) -> HealthRecord {
        try decodeRecord(Self.parseJSON(bytes))
    }

    /// Decodes a device object as written by `HealthRecordEncoder.encode(_: Device)`.
    public func decodeDevice(_ json: some StringProtocol) throws(RecordDecodingError) -> Device {
        try decodeDevice(Self.parseJSON(json), field: "device")
    }

    /// Decodes a metadata object as written by `HealthRecordEncoder.encode(_: Metadata)`.
    public func decodeMetadata(_ json: some StringProtocol) throws(RecordDecodingError) -> Metadata {
        try decodeMetadata(Self.parseJSON(json), field: "metadata")
    }

    // MARK: JSON

    private static func parseJSON(_ text: some StringProtocol) throws(RecordDecodingError) -> JSONValue {
        var string = String(text)
        let result = string.withUTF8 { bytes in
            Result { () throws(RecordDecodingError) -> JSONValue in try parseJSON(bytes) }
        }
        return try result.get()
    }

    private static func parseJSON(_ bytes: UnsafeBufferPointer<UInt8>) throws(RecordDecodingError) -> JSONValue {
        guard bytes.contains(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }) else {
            throw .emptyLine
        }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw .invalidJSON(offset: error.offset, reason: error.reason)
        }
    }

    // MARK: Records

    private func decodeRecord(_ value: JSONValue) throws(RecordDecodingError) -> HealthRecord {
        guard case .object(let members) = value else { throw .notAnObject(found: value.kind) }
        let object = FieldReader(members: members, path: "")
        if object.has("correlation") {
            return .correlation(try decodeCorrelation(object))
        }
        return .sample(try decodeSample(object, inheritedSource: nil))
    }

    private static let sampleFields: Set<String> = [
        "uuid", "type", "value", "unit", "start", "end", "source", "device", "metadata",
    ]
    private static let correlationFields: Set<String> = [
        "correlation", "uuid", "start", "end", "source", "device", "metadata", "objects",
    ]

    private func decodeSample(_ object: FieldReader, inheritedSource: String?) throws(RecordDecodingError) -> QuantitySample {
        try object.rejectUnknownFields(allowed: Self.sampleFields)
        let uuid = try decodeUUID(object)
        let typeName = try object.requiredString("type")
        guard let type = QuantityType.named(typeName) else {
            throw .unknownType(field: object.path("type"), name: typeName)
        }
        let value = try object.requiredFiniteNumber("value")
        let unitString = try object.requiredString("unit")
        let unit: Unit
        do {
            unit = try Unit(from: unitString)
        } catch {
            throw .invalidUnit(field: object.path("unit"), unit: unitString, error: error)
        }
        return QuantitySample(
            uuid: uuid,
            type: type,
            quantity: Quantity(value: value, unit: unit),
            start: try object.requiredDate("start"),
            end: try object.requiredDate("end"),
            source: try decodeSource(object, inheritedSource: inheritedSource),
            device: try object.optional("device").map { (device) throws(RecordDecodingError) in
                try decodeDevice(device, field: object.path("device"))
            },
            metadata: try object.optional("metadata").map { (metadata) throws(RecordDecodingError) in
                try decodeMetadata(metadata, field: object.path("metadata"))
            } ?? Metadata()
        )
    }

    private func decodeCorrelation(_ object: FieldReader) throws(RecordDecodingError) -> Correlation {
        try object.rejectUnknownFields(allowed: Self.correlationFields)
        let typeName = try object.requiredString("correlation")
        guard let type = CorrelationType.named(typeName) else { throw .unknownCorrelationType(typeName) }
        let uuid = try decodeUUID(object)
        let start = try object.requiredDate("start")
        let end = try object.requiredDate("end")
        let source = try decodeSource(object, inheritedSource: nil)
        let device = try object.optional("device").map { (device) throws(RecordDecodingError) in
            try decodeDevice(device, field: "device")
        }
        let metadata = try object.optional("metadata").map { (metadata) throws(RecordDecodingError) in
            try decodeMetadata(metadata, field: "metadata")
        } ?? Metadata()
        guard let objectsValue = object.optional("objects") else { throw .missingField("objects") }
        guard case .array(let elements) = objectsValue else {
            throw .wrongFieldType(field: "objects", expected: "an array", found: objectsValue.excerpt)
        }
        var objects: [QuantitySample] = []
        objects.reserveCapacity(elements.count)
        for (position, element) in elements.enumerated() {
            let path = "objects[\(position)]"
            guard case .object(let members) = element else {
                throw .wrongFieldType(field: path, expected: "an object", found: element.excerpt)
            }
            objects.append(try decodeSample(FieldReader(members: members, path: path), inheritedSource: source))
        }
        return Correlation(
            uuid: uuid, type: type, start: start, end: end, objects: objects,
            source: source, device: device, metadata: metadata)
    }

    private func decodeUUID(_ object: FieldReader) throws(RecordDecodingError) -> UUID {
        guard let text = try object.optionalString("uuid") else { return makeUUID() }
        guard let uuid = UUID(uuidString: text) else { throw .invalidUUID(field: object.path("uuid"), text: text) }
        return uuid
    }

    private func decodeSource(_ object: FieldReader, inheritedSource: String?) throws(RecordDecodingError) -> String {
        guard let source = try object.optionalString("source") else { return inheritedSource ?? defaultSource }
        guard !source.isEmpty else { throw .emptySource(field: object.path("source")) }
        if let control = source.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw .controlCharacterInSource(field: object.path("source"), scalar: control.value)
        }
        return source
    }

    private static let deviceFields: Set<String> = Set(Device.Field.allCases.map(\.rawValue))

    private func decodeDevice(_ value: JSONValue, field: String) throws(RecordDecodingError) -> Device {
        guard case .object(let members) = value else {
            throw .wrongFieldType(field: field, expected: "an object", found: value.excerpt)
        }
        let object = FieldReader(members: members, path: field + ".")
        try object.rejectUnknownFields(allowed: Self.deviceFields)
        var device = Device()
        for deviceField in Device.Field.allCases { device[deviceField] = try object.optionalString(deviceField.rawValue) }
        return device
    }

    private func decodeMetadata(_ value: JSONValue, field: String) throws(RecordDecodingError) -> Metadata {
        guard case .object(let members) = value else {
            throw .wrongFieldType(field: field, expected: "an object", found: value.excerpt)
        }
        var metadata = Metadata()
        for (key, member) in members {
            let keyPath = field + "." + key
            let metadataValue: MetadataValue
            switch member {
            case .string(let string): metadataValue = .string(string)
            case .bool(let bool): metadataValue = .bool(bool)
            case .number(_, let text) where MetadataKey.canonical(key) == MetadataKey.syncVersion && Int(text) != nil:
                // Exact, from the digits: a Double cannot hold every Int (9223372036854775807).
                metadata.syncVersion = Int(text)
                continue
            case .number(let number, let text):
                guard number.isFinite else { throw .notAFiniteNumber(field: keyPath, found: text) }
                metadataValue = .number(number)
            case .null, .array, .object:
                throw .unsupportedMetadataValue(field: keyPath, found: member.kind)
            }
            do {
                try metadata.set(metadataValue, forKey: key)
            } catch {
                throw .invalidMetadata(field: keyPath, error: error)
            }
        }
        return metadata
    }
}

/// Typed access to one JSON object's members, producing errors that name the field's path.
/// A member whose value is `null` counts as absent.
private struct FieldReader {
    let members: [(key: String, value: JSONValue)]
    /// Prefix for field names in errors, e.g. `objects[0].` (empty at top level).
    let prefix: String

    init(members: [(key: String, value: JSONValue)], path: String) {
        self.members = members
        self.prefix = path.isEmpty || path.hasSuffix(".") ? path : path + "."
    }

    func path(_ key: String) -> String { prefix + key }

    func has(_ key: String) -> Bool { members.contains { $0.key == key } }

    func optional(_ key: String) -> JSONValue? {
        guard let member = members.first(where: { $0.key == key }), member.value != .null else { return nil }
        return member.value
    }

    func rejectUnknownFields(allowed: Set<String>) throws(RecordDecodingError) {
        if let unknown = members.first(where: { !allowed.contains($0.key) }) {
            throw .unknownField(path(unknown.key))
        }
    }

    func optionalString(_ key: String) throws(RecordDecodingError) -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let string) = value else {
            throw .wrongFieldType(field: path(key), expected: "a string", found: value.excerpt)
        }
        return string
    }

    func requiredString(_ key: String) throws(RecordDecodingError) -> String {
        guard let string = try optionalString(key) else { throw .missingField(path(key)) }
        return string
    }

    func requiredFiniteNumber(_ key: String) throws(RecordDecodingError) -> Double {
        guard let value = optional(key) else { throw .missingField(path(key)) }
        guard case .number(let number, _) = value, number.isFinite else {
            throw .notAFiniteNumber(field: path(key), found: value.excerpt)
        }
        return number
    }

    func requiredDate(_ key: String) throws(RecordDecodingError) -> Date {
        let text = try requiredString(key)
        guard let date = ISO8601DateTime.date(from: text) else { throw .invalidDate(field: path(key), text: text) }
        return date
    }
}

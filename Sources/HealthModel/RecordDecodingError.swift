/// Why a JSON line is not a valid sample or correlation. Field names are paths into the line,
/// e.g. `start`, `device.name`, `objects[1].unit`, `metadata.HKMetadataKeySyncVersion`.
public enum RecordDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The line holds nothing but whitespace.
    case emptyLine
    /// The line is not JSON; `offset` is the byte offset of the problem.
    case invalidJSON(offset: Int, reason: String)
    /// The line is JSON but not an object (`found` is its kind, e.g. `an array`).
    case notAnObject(found: String)
    case missingField(String)
    /// A field holds the wrong kind of JSON value.
    case wrongFieldType(field: String, expected: String, found: String)
    /// A field this format does not have (often a typo).
    case unknownField(String)
    /// The quantity type is neither a known identifier nor a short name.
    case unknownType(field: String, name: String)
    case unknownCorrelationType(String)
    /// A value that is not a number, or a number too large for a Double (`found` as written).
    case notAFiniteNumber(field: String, found: String)
    case invalidUnit(field: String, unit: String, error: UnitError)
    case invalidDate(field: String, text: String)
    case invalidUUID(field: String, text: String)
    /// `source` is present but empty.
    case emptySource(field: String)
    /// `source` holds a control character (NUL, a newline, …), given as its code point.
    case controlCharacterInSource(field: String, scalar: UInt32)
    /// A metadata value that is not a string, number or boolean (`found` is its kind).
    case unsupportedMetadataValue(field: String, found: String)
    /// A typed metadata key with a value of the wrong type or an unknown time zone.
    case invalidMetadata(field: String, error: MetadataError)

    public var description: String {
        switch self {
        case .emptyLine:
            "empty line"
        case .invalidJSON(let offset, let reason):
            "invalid JSON at byte \(offset): \(reason)"
        case .notAnObject(let found):
            "expected a JSON object, found \(found)"
        case .missingField(let field):
            "missing field \"\(field)\""
        case .wrongFieldType(let field, let expected, let found):
            "\(field) must be \(expected), found \(found)"
        case .unknownField(let field):
            "unknown field \"\(field)\""
        case .unknownType(let field, let name):
            field == "type" ? "unknown type \"\(name)\"" : "\(field): unknown type \"\(name)\""
        case .unknownCorrelationType(let name):
            "unknown correlation type \"\(name)\""
        case .notAFiniteNumber(let field, let found):
            "\(field) is not a finite number: \(found)"
        case .invalidUnit(let field, let unit, let error):
            "\(field) \"\(unit)\" is not a valid unit: \(error)"
        case .invalidDate(let field, let text):
            "\(field) \"\(text)\" is not an ISO 8601 date-time with Z or an offset"
        case .invalidUUID(let field, let text):
            "\(field) \"\(text)\" is not a UUID"
        case .emptySource(let field):
            "\(field) is empty"
        case .controlCharacterInSource(let field, let scalar):
            "\(field) contains the control character U+\(String(scalar, radix: 16, uppercase: true).leftPadded(to: 4)); source ids are printable text"
        case .unsupportedMetadataValue(let field, let found):
            "\(field) must be a string, number or boolean, found \(found)"
        case .invalidMetadata(let field, let error):
            "\(field): \(error)"
        }
    }
}

extension String {
    /// The string with zeros in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

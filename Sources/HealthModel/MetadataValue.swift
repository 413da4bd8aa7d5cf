/// One metadata value: HealthKit metadata values are strings, numbers or booleans
/// (dates and quantities travel as strings).
public enum MetadataValue: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)

    /// The value as JSON text would show it: strings quoted, numbers shortest round-trip.
    public var description: String {
        switch self {
        case .string(let string): JSONText.quoted(string)
        case .number(let number): JSONNumber.format(number)
        case .bool(let bool): bool ? "true" : "false"
        }
    }
}

extension MetadataValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let string): try container.encode(string)
        case .number(let number): try container.encode(number)
        case .bool(let bool): try container.encode(bool)
        }
    }
}

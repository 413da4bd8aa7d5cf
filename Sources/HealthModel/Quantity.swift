/// An amount in a unit (HealthKit's `HKQuantity`). It can be read in any compatible unit.
public struct Quantity: Hashable, Sendable, CustomStringConvertible {
    /// The amount, expressed in `unit`.
    public var value: Double
    /// The unit `value` is expressed in.
    public var unit: Unit

    public init(value: Double, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// The amount expressed in `target`; throws when the units measure different dimensions.
    public func doubleValue(for target: Unit) throws(UnitError) -> Double {
        try unit.convert(value, to: target)
    }

    /// The same amount expressed in `target`.
    public func converted(to target: Unit) throws(UnitError) -> Quantity {
        Quantity(value: try doubleValue(for: target), unit: target)
    }

    /// Whether this quantity can be read in `other`.
    public func isCompatible(with other: Unit) -> Bool { unit.isCompatible(with: other) }

    /// E.g. `72.35 kg`.
    public var description: String { "\(JSONNumber.format(value)) \(unit.unitString)" }
}

extension Quantity: Codable {
    private enum CodingKeys: String, CodingKey { case value, unit }

    /// Decodes `{"value": 1.8, "unit": "m"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let value = try container.decode(Double.self, forKey: .value)
        guard value.isFinite else {
            throw DecodingError.dataCorruptedError(forKey: .value, in: container, debugDescription: "value is not a finite number")
        }
        let unitString = try container.decode(String.self, forKey: .unit)
        do {
            self.init(value: value, unit: try Unit(from: unitString))
        } catch {
            throw DecodingError.dataCorruptedError(
                forKey: .unit, in: container, debugDescription: "unit \"\(unitString)\" is not valid: \(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        try container.encode(unit.unitString, forKey: .unit)
    }
}

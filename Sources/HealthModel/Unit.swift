// STUB: the real implementation is being written; signatures are final.

/// A unit of measure in HealthKit's `HKUnit` string grammar (`kg`, `count/min`, `mmol<180.15588000005408>/L`).
public struct Unit: Hashable, Sendable, CustomStringConvertible {
    /// Parses an HKUnit string.
    public init(from string: String) throws(UnitError) { fatalError("stub") }
    /// The canonical unit string; `Unit(from: u.unitString) == u`.
    public var unitString: String { fatalError("stub") }
    public var description: String { unitString }
    /// Whether a value in this unit can be converted to `other` (same dimension).
    public func isCompatible(with other: Unit) -> Bool { fatalError("stub") }
    /// Converts `value` expressed in this unit into `target`.
    public func convert(_ value: Double, to target: Unit) throws(UnitError) -> Double { fatalError("stub") }

    public static var count: Unit { fatalError("stub") }
    public static var percent: Unit { fatalError("stub") }
}

/// Why a unit string could not be parsed or two units could not be converted.
public enum UnitError: Error, Equatable, Sendable {
    case empty
    case incompatible(from: String, to: String)
}

/// How values of a quantity type combine over time (HealthKit's `HKQuantityAggregationStyle`).
///
/// The style decides which statistics are legal: cumulative types can only be summed, discrete
/// types support average, minimum, maximum and most recent.
public enum AggregationStyle: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Values add up over time (steps, distance, energy). Raw value 0, as in HealthKit.
    case cumulative = 0
    /// Independent measurements averaged with a plain arithmetic mean (body mass, blood pressure).
    case discreteArithmetic = 1
    /// Measurements averaged weighted by how long each value applied (heart rate).
    case discreteTemporallyWeighted = 2
    /// Sound levels combined as an equivalent continuous level (Leq), never averaged arithmetically.
    case discreteEquivalentContinuousLevel = 3

    /// Whether values of this style add up (only `sum` is a legal statistic).
    public var isCumulative: Bool { self == .cumulative }

    /// The case name, e.g. `discreteArithmetic`.
    public var description: String {
        switch self {
        case .cumulative: "cumulative"
        case .discreteArithmetic: "discreteArithmetic"
        case .discreteTemporallyWeighted: "discreteTemporallyWeighted"
        case .discreteEquivalentContinuousLevel: "discreteEquivalentContinuousLevel"
        }
    }
}

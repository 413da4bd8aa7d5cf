/// One line of ingestd's JSON-lines format: a quantity sample or a correlation.
public enum HealthRecord: Hashable, Sendable {
    case sample(QuantitySample)
    case correlation(Correlation)

    /// The quantity samples in this record: the sample itself, or the correlation's members.
    public var samples: [QuantitySample] {
        switch self {
        case .sample(let sample): [sample]
        case .correlation(let correlation): correlation.objects
        }
    }
}

import Foundation

/// One measurement of a quantity over an interval (HealthKit's `HKQuantitySample`).
///
/// Samples are immutable facts: a change is a new sample. Instantaneous readings have
/// `start == end`; cumulative values belong to the whole interval. `start <= end` is checked by
/// the pipeline, not here, so that a bad sample can be reported rather than lost.
public struct QuantitySample: Hashable, Sendable {
    /// Identity assigned when the sample was first created or decoded.
    public var uuid: UUID
    /// What was measured.
    public var type: QuantityType
    /// The measured amount; the pipeline normalises it to `type.canonicalUnit`.
    public var quantity: Quantity
    public var start: Date
    public var end: Date
    /// The id of the source (adapter instance) that produced the sample, e.g. `gatt-weight-scale`.
    public var source: String
    /// The physical device that measured it, when known.
    public var device: Device?
    public var metadata: Metadata

    public init(
        uuid: UUID = SampleIdentifierGenerator.shared.next(),
        type: QuantityType,
        quantity: Quantity,
        start: Date,
        end: Date,
        source: String,
        device: Device? = nil,
        metadata: Metadata = Metadata()
    ) {
        self.uuid = uuid
        self.type = type
        self.quantity = quantity
        self.start = start
        self.end = end
        self.source = source
        self.device = device
        self.metadata = metadata
    }

    /// The value read in `unit`; throws when `unit` does not fit the sample's quantity.
    public func value(in unit: Unit) throws(UnitError) -> Double {
        try quantity.doubleValue(for: unit)
    }

    /// The value in the type's canonical unit.
    public func canonicalValue() throws(UnitError) -> Double {
        try quantity.doubleValue(for: type.canonicalUnit)
    }

    /// The same sample with its quantity expressed in `unit`.
    public func converted(to unit: Unit) throws(UnitError) -> QuantitySample {
        var copy = self
        copy.quantity = try quantity.converted(to: unit)
        return copy
    }

    /// Whether the sample is a point in time.
    public var isInstantaneous: Bool { start == end }

    /// The length of the sample's interval in seconds.
    public var duration: TimeInterval { end.timeIntervalSince(start) }
}

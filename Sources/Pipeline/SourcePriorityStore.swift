import HealthModel

/// The source order of each type a store keeps, as `ingestd priority` shows and sets it: where
/// sources overlap, the first one counts.
public protocol SourcePriorityStore: StoreConnection {
    /// Sets the source order for `type`: the first source wins where sources overlap.
    func setPriority(type: QuantityType, sources: [String]) throws
    /// The sources of `type` in priority order: the explicit order first, then the others by
    /// when they first wrote that type.
    func priority(for type: QuantityType) throws -> [String]
}

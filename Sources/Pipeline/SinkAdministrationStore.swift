import Foundation

/// The sinks as `ingestd sinks` manages them (added, listed, narrowed, removed, their backlog
/// and dead letters), beside the feed a delivery reads and the people a sink may be bound to:
/// the port the sink commands work through, so they never see which store they opened.
public protocol SinkAdministrationStore: DeliveryFeed, PeopleStore {
    /// Adds a sink with its read grants; `SinkStoreError.sinkExists` when the name is taken.
    func addSink(_ sink: SinkDefinition, now: Date) throws
    /// Removes a sink with its read grants, cursor and dead letters.
    func removeSink(named name: String) throws
    /// Stops a sink reading `types`; returns the identifiers it no longer reads.
    func revokeSinkTypes(sink: String, types: [String], catalogue: [String], now: Date) throws -> [String]
    /// Records after `cursor` of `types` that a sink reading `person`'s samples (nil: every
    /// person's) has still to deliver.
    func backlogCount(after cursor: Int64, types: [String], sinkPerson person: String?) throws -> Int
    /// Marks a sink's dead letters for the next delivery; returns how many.
    func retryDeadLetters(sink: String) throws -> Int
}

extension SinkAdministrationStore {
    /// Adds a sink now.
    public func addSink(_ sink: SinkDefinition) throws { try addSink(sink, now: Date()) }
    /// Stops a sink reading `types` now.
    @discardableResult
    public func revokeSinkTypes(sink: String, types: [String], catalogue: [String]) throws -> [String] {
        try revokeSinkTypes(sink: sink, types: types, catalogue: catalogue, now: Date())
    }
}

import Foundation
import HealthModel
import Pipeline

/// The local store as the query commands' port. It is one gateway: a gateway filter is ignored.
extension HealthStore: QueryStore {
    public func queryPeopleNames() throws -> [String] {
        try people().map(\.name)
    }

    /// The store's person scope of `scope` (an unknown name is an error naming the people).
    func personScope(_ scope: QueryScope) throws -> PersonScope {
        switch scope.people {
        case .everyone: .everyone
        case .unassigned: .unassigned
        case .named(let name): .person(try person(named: name).id)
        }
    }

    public func sourceSummaries(scope: QueryScope) throws -> [SourceSummary] {
        try sources()
    }

    public func heldSampleCounts() throws -> [String: Int] {
        try pendingCounts()
    }

    public func samples(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, limit: Int) throws
        -> [QuantitySample] {
        try samples(type: type, from: from, to: to, source: source, person: personScope(scope), limit: limit)
    }

    /// One read of one person's samples for all `operations` (everyone: each operation as `statistics` computes it).
    public func statistics(_ operations: [StatisticsOperation], type: QuantityType, from: Date?, to: Date?,
                           granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [[StatisticsBucket]] {
        guard scope.people != .everyone else {
            return try operations.map {
                try statistics($0, type: type, from: from, to: to, granularity: granularity, zone: zone, scope: scope)
            }
        }
        let samples = try statisticsSamples(type: type, from: from, to: to, person: personScope(scope))
        guard let buckets = try StatisticsRange.buckets(from: from, to: to, granularity: granularity, zone: zone,
                                                        extent: SampleExtent(samples)) else { return operations.map { _ in [] } }
        return try operations.map { try StatisticsEngine().statistics($0, of: samples, in: buckets) }
    }

    public func newestSamples(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, count: Int) throws
        -> [QuantitySample] {
        try newestSamples(type: type, from: from, to: to, source: source, person: personScope(scope), count: count)
    }

    public func statistics(_ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
                           granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [StatisticsBucket] {
        guard scope.people == .everyone else {
            return try statistics(operation, type: type, from: from, to: to, granularity: granularity, zone: zone,
                                  person: personScope(scope))
        }
        // Everyone: the buckets of all samples found, then each person's (and the unassigned
        // samples') statistics over them, combined.
        guard let buckets = try StatisticsRange.buckets(
            from: from, to: to, granularity: granularity, zone: zone,
            extent: SampleExtent(try statisticsSamples(type: type, from: from, to: to, person: .everyone))) else { return [] }
        let scopes = try people().map { PersonScope.person($0.id) } + [.unassigned]
        let parts = try scopes.map {
            try StatisticsEngine().statistics(operation, of: try statisticsSamples(type: type, from: from, to: to, person: $0),
                                              in: buckets)
        }
        return StatisticsCombination.combine(operation, parts)
    }
}

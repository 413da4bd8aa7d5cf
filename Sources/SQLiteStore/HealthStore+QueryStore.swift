import Foundation
import HealthModel
import Pipeline

/// The local store as the query commands' port. It is one gateway: a gateway filter is ignored.
extension HealthStore: QueryStore {
    public func queryPeopleNames() throws -> [String] {
        try people().map(\.name)
    }

    public func queryUnitSystem(ofPerson name: String) throws -> UnitSystem? {
        try unitSystem(ofPerson: name)
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

    public func forEachSample(type: QuantityType, from: Date?, to: Date?, source: String?, scope: QueryScope, limit: Int,
                              _ body: (QuantitySample) throws -> Void) throws {
        try forEachSample(type: type, from: from, to: to, source: source, person: personScope(scope), limit: limit,
                          newestFirst: false, body)
    }

    /// One read of one person's samples for all `operations` (everyone: each operation as `statistics` computes it).
    /// Over a given range a sum is summed as the rows are read until an operation needs the samples.
    public func statistics(_ operations: [StatisticsOperation], type: QuantityType, from: Date?, to: Date?,
                           granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [[StatisticsBucket]] {
        guard scope.people != .everyone else {
            return try operations.map {
                try statistics($0, type: type, from: from, to: to, granularity: granularity, zone: zone, scope: scope)
            }
        }
        let person = try personScope(scope)
        if from != nil, to != nil,
           let buckets = try StatisticsRange.buckets(from: from, to: to, granularity: granularity, zone: zone, extent: nil) {
            var samples: [StatisticsSample]?
            return try operations.map {
                try statistics($0, type: type, from: from, to: to, in: buckets, person: person, samples: &samples)
            }
        }
        let samples = try statisticsSamples(type: type, from: from, to: to, person: person)
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
        // Everyone: the buckets of the range (without one: of all samples found, their extent
        // taken as the rows are read), then each person's (and the unassigned samples')
        // statistics over them, combined; a sum is summed as each one's rows are read.
        let extent = from != nil && to != nil ? nil : try statisticsExtent(type: type, from: from, to: to, person: .everyone)
        guard let buckets = try StatisticsRange.buckets(from: from, to: to, granularity: granularity, zone: zone,
                                                        extent: extent) else { return [] }
        let scopes = try people().map { PersonScope.person($0.id) } + [.unassigned]
        let parts = try scopes.map {
            var samples: [StatisticsSample]?
            return try statistics(operation, type: type, from: from, to: to, in: buckets, person: $0, samples: &samples)
        }
        return StatisticsCombination.combine(operation, parts)
    }
}

/// The status, changes, export and watch questions of the port, on the local store.
extension HealthStore {
    public func status(scope: QueryScope, rejectionsSince since: Date) throws -> StoreStatus {
        let rejections = try rejections(since: since)
        let policy = try loadAuthorization()
        var denied: [String: Set<String>] = [:]
        for key in rejections.keys where key.reason == "denied" {
            // A type granted since it was refused needs no hint.
            if let type = QuantityType.named(key.type), policy.allows(source: key.source, type: type) { continue }
            denied[key.source, default: []].insert(key.type)
        }
        return StoreStatus(location: path, sourceTypes: try sourceTypeStatus(), held: try pendingCounts(),
                           unassigned: try unassignedCount(), rejections: rejections, denied: denied)
    }

    public func changes(since anchor: ChangeAnchor, type: QuantityType?, scope: QueryScope, limit: Int,
                        _ body: (ChangeEntry) throws -> Void) throws -> ChangeAnchor {
        .sequence(try forEachChange(since: try anchor.sequence(), type: type, person: personScope(scope), limit: limit, body))
    }

    public func forEachRecord(types: [QuantityType]?, from: Date?, to: Date?, scope: QueryScope,
                              _ body: (HealthRecord) throws -> Void) throws -> ExportReadSummary {
        try forEachRecord(types: types, from: from, to: to, person: personScope(scope), body)
    }

    public func watchStart(after anchor: ChangeAnchor?) throws -> WatchCursor {
        guard let anchor else {
            return .log(commit: try commitID(forAnchor: Int64.max), delivery: try lastDeliveredEventID(), deliveredAbove: nil)
        }
        let since = try anchor.sequence()
        return .log(commit: try commitID(forAnchor: since), delivery: 0, deliveredAbove: since)
    }

    public func watchEvents(after cursor: WatchCursor, scope: QueryScope) throws -> (events: [WatchEvent], cursor: WatchCursor) {
        guard case .log(var commit, var delivery, let deliveredAbove) = cursor else {
            throw ChangeAnchorError.ofAnotherStore(text: "watch position", reason: "a fleet's position, not a store file's")
        }
        var events: [WatchEvent] = []
        // Delivered batches of sinks first: those above --since's anchor, else only new ones.
        for event in try deliveredEvents(afterID: delivery) {
            delivery = event.id
            if let deliveredAbove, event.anchor <= deliveredAbove { continue }
            events.append(.delivered(sink: event.sink, type: event.type, count: event.count, anchor: event.anchor))
        }
        for event in try commitEvents(afterCommit: commit, person: personScope(scope)) {
            events.append(.committed(type: event.type, source: event.source, count: event.count, anchor: event.anchor, gateway: nil))
            commit = max(commit, event.commitID)
        }
        return (events, .log(commit: commit, delivery: delivery, deliveredAbove: deliveredAbove))
    }
}

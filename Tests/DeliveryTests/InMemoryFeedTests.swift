import Delivery
import Foundation
import HealthModel
import Pipeline
import Testing

/// A delivery feed held in memory: one sink, its change feed, cursor and dead letters. It shows
/// that `SinkDeliverer` works through the `DeliveryFeed` port alone (no store behind it).
final class InMemoryFeed: DeliveryFeed {
    var definition: SinkDefinition
    var entries: [ChangeEntry] = []
    var cursor: Int64 = 0
    var dead: [DeadLetter] = []
    var delivered: [String: Int] = [:]
    var lastError: String?
    var states: [PublishedState] = []
    /// Thrown by `feedBatch` when set: a store that fails while the feed is read.
    var feedFailure: SinkStoreLookup?

    init(definition: SinkDefinition, samples: [QuantitySample]) {
        self.definition = definition
        entries = samples.enumerated().map { .added($1, anchor: Int64($0 + 1)) }
    }

    private func anchor(_ entry: ChangeEntry) -> Int64 {
        switch entry {
        case .added(_, let anchor), .deleted(_, _, let anchor): anchor
        }
    }

    func identity() throws -> String { "in-memory" }
    func sinks() throws -> [SinkState] { [try sink(named: definition.name)] }
    func sink(named name: String) throws -> SinkState {
        guard name == definition.name else { throw SinkStoreLookup.noSuchSink(name) }
        return SinkState(definition: definition, cursor: cursor, lastSuccess: nil, lastError: lastError, lastErrorAt: nil,
                         deadLetters: dead.count)
    }
    func relaxDurabilityForDelivery() throws {}
    func feedBatch(after cursor: Int64, types: [String], limit: Int, person: String?) throws -> FeedBatch {
        if let feedFailure { throw feedFailure }
        let after = entries.filter { anchor($0) > cursor }.prefix(limit)
        return FeedBatch(entries: Array(after), people: after.map { _ in "" },
                         throughAnchor: after.last.map(anchor) ?? cursor)
    }
    func latestAnchor() throws -> Int64 { entries.last.map(anchor) ?? 0 }
    func acknowledge(sink: String, through: Int64?, delivered: [String: Int], rejected: [RejectedRecord],
                     resolvedDeadLetters: [Int64], publishedStates: [PublishedState], now: Date) throws {
        if let through { cursor = max(cursor, through) }
        self.delivered.merge(delivered, uniquingKeysWith: +)
        for record in rejected {
            dead.append(DeadLetter(id: Int64(dead.count + 1), anchor: record.anchor, uuid: record.uuid, type: record.type,
                                   record: record.record, reason: record.reason, at: now, retrying: false))
        }
        dead.removeAll { resolvedDeadLetters.contains($0.id) }
        states += publishedStates
        lastError = nil
    }
    func advanceCursor(sink: String, to anchor: Int64) throws { cursor = max(cursor, anchor) }
    func deadLetters(sink: String, retryingOnly: Bool, limit: Int) throws -> [DeadLetter] {
        let list = dead.filter { !retryingOnly || $0.retrying }
        return limit > 0 ? Array(list.prefix(limit)) : list
    }
    func hasDeadLettersToRetry(sink: String) throws -> Bool { dead.contains(where: \.retrying) }
    func refuseAgain(sink: String, deadLetters ids: [Int64], reason: String, now: Date) throws {
        for index in dead.indices where ids.contains(dead[index].id) {
            dead[index].retrying = false
            dead[index].reason = reason
        }
    }
    func recordDeliveryFailure(sink: String, message: String, now: Date) throws { lastError = message }
    func publishedStates(sink: String) throws -> [PublishedState] { states }
    func queryUnitSystem(ofPerson name: String) throws -> UnitSystem? { nil }
    /// The feed's samples belong to nobody (`people` is "" for each entry).
    func holdsSamples(person: String, type: String) throws -> Bool {
        guard person.isEmpty else { return false }
        var held: Set<UUID> = []
        for entry in entries {
            switch entry {
            case .added(let sample, _) where sample.type.identifier == type: held.insert(sample.uuid)
            case .deleted(let uuid, _, _): held.remove(uuid)
            default: break
            }
        }
        return !held.isEmpty
    }
    func newestSample(person: String, type: QuantityType) throws -> QuantitySample? { nil }
    func forgetPublishedStates(sink: String, keys: [(person: String, type: String)]) throws {
        states.removeAll { state in keys.contains { $0.person == state.person && $0.type == state.type } }
    }
    func queryPeopleNames() throws -> [String] { [] }
    func statistics(_ operation: StatisticsOperation, type: QuantityType, from: Date?, to: Date?,
                    granularity: BucketGranularity?, zone: TimeZone, scope: QueryScope) throws -> [StatisticsBucket] { [] }
    func close() {}
}

enum SinkStoreLookup: Error { case noSuchSink(String), diskFull }

/// The deliverer over the in-memory feed, against a real HTTP receiver (Python `http.server`).
@Suite(.serialized, .offCooperativePool) struct InMemoryFeedTests {
    @Test func aRejectedBatchIsDeadLetteredOnTheFeedAndTheCursorPassesIt() throws {
        let directory = try TemporaryDirectory("feed-memory")
        let receiver = try HTTPReceiver(plan: ["200", "400", "200"], directory: directory)
        var options = HTTPSinkOptions()
        options.batchSize = 10
        let definition = SinkDefinition(name: "server", url: receiver.url, options: options.encoded(), every: nil,
                                        readTypes: ["*"])
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let samples = (0..<30).map { index in
            QuantitySample(type: .stepCount, quantity: Quantity(value: 10, unit: QuantityType.stepCount.canonicalUnit),
                           start: start.addingTimeInterval(Double(index) * 60), end: start.addingTimeInterval(Double(index) * 60 + 30),
                           source: "phone")
        }
        let feed = InMemoryFeed(definition: definition, samples: samples)
        let configuration = try SinkConfiguration(definition)
        let transport = SinkTransports.make(configuration, secrets: SecretResolver(), softwareVersion: "test")
        let deliverer = try SinkDeliverer(configuration: configuration, store: feed, transport: transport)
        defer { deliverer.close() }

        #expect(deliverer.deliverBacklog(retry: RetryPolicy(maximumAttempts: 3, initialDelay: 0.05))
            == .caughtUp(delivered: 20, deadLettered: 10))
        #expect(feed.cursor == 30)
        #expect(feed.delivered == [QuantityType.stepCount.identifier: 20])
        let refused = Set(receiver.requests()[1].uuids)
        #expect(Set(feed.dead.map { $0.uuid.uuidString.lowercased() }) == refused)
        #expect(Set(feed.dead.map(\.anchor)) == Set(11...20))
        #expect(feed.dead.allSatisfy { $0.reason == "HTTP 400: refused: bad record" })
        #expect(Set(receiver.acceptedUUIDs()) == Set(samples.map { $0.uuid.uuidString.lowercased() }).subtracting(refused))
    }

    /// A store failing under delivery is an error naming the step and the store's error; nothing moves.
    @Test func aFailingFeedIsAStoreErrorNamingTheStep() throws {
        let definition = SinkDefinition(name: "server", url: "http://127.0.0.1:9/", options: HTTPSinkOptions().encoded(),
                                        every: nil, readTypes: ["*"])
        let sample = QuantitySample(type: .stepCount, quantity: Quantity(value: 10, unit: QuantityType.stepCount.canonicalUnit),
                                    start: Date(timeIntervalSince1970: 1_780_000_000),
                                    end: Date(timeIntervalSince1970: 1_780_000_030), source: "phone")
        let feed = InMemoryFeed(definition: definition, samples: [sample])
        feed.feedFailure = .diskFull
        let configuration = try SinkConfiguration(definition)
        let transport = SinkTransports.make(configuration, secrets: SecretResolver(), softwareVersion: "test")
        let deliverer = try SinkDeliverer(configuration: configuration, store: feed, transport: transport)
        defer { deliverer.close() }
        #expect(throws: SinkDeliveryError.store(.readFeed, reason: "diskFull")) { try deliverer.deliverNextBatch() }
        #expect(SinkDeliveryError.store(.readFeed, reason: "diskFull").description == "store: reading the feed: diskFull")
        #expect(feed.cursor == 0)
        #expect(feed.delivered.isEmpty)
    }
}

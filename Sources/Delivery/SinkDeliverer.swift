import Foundation
import HealthModel
import Pipeline

/// What the engine reports as it works; the command line turns these into log lines.
public enum DeliveryEvent: Sendable {
    /// The receiver acknowledged `count` records of `type`; the cursor is at `anchor`.
    case delivered(sink: String, type: String, count: Int, anchor: Int64)
    /// The receiver refused `count` records for good; they are in the sink's dead letters.
    case deadLettered(sink: String, count: Int, reason: String)
    /// An attempt failed; the next one comes after `retryIn` seconds (nil: giving up).
    case failed(sink: String, attempt: Int, error: SinkDeliveryError, retryIn: Double?)
}

/// How often and how long to retry a failing receiver: exponential backoff with jitter.
public struct RetryPolicy: Sendable {
    /// Consecutive failed attempts after which `deliverBacklog` gives up; nil retries forever.
    public var maximumAttempts: Int?
    public var initialDelay: Double
    public var maximumDelay: Double

    public init(maximumAttempts: Int?, initialDelay: Double = 1, maximumDelay: Double = 300) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait after the `failures`-th consecutive failure: min(max, initial × 2^(n-1)), times
    /// a random factor in 0.5...1 so that many gateways do not retry in step.
    public func delay(afterFailures failures: Int, random: Double = Double.random(in: 0.5...1)) -> Double {
        let exponent = Double(min(max(failures - 1, 0), 30))
        return min(maximumDelay, initialDelay * pow(2, exponent)) * random
    }
}

/// How a backlog delivery ended.
public enum BacklogOutcome: Sendable, Equatable {
    /// Nothing is left to send (records refused for good are in dead letters).
    case caughtUp(delivered: Int, deadLettered: Int)
    /// The receiver stayed unreachable through every retry; this was the last failure.
    case unreachable(SinkDeliveryError)
    /// `shouldStop` asked to stop.
    case stopped
}

/// Delivers one sink's feed: reads batches of its granted types after its cursor, sends them,
/// and moves the cursor only after the receiver acknowledged (at-least-once). Not thread-safe:
/// one deliverer, its store connection and its transport belong to one thread. The connection's
/// commits are made `synchronous=NORMAL` (they only move cursors: a lost one re-sends a batch).
///
/// With a transport that allows it (PostgreSQL), a batch's `send` runs on a thread of its own
/// while the deliverer's thread reads the next batch (the one after the sent batch's last anchor)
/// and builds its records; that batch is used only if the cursor did move there (the send was
/// acknowledged or refused for good), otherwise it is dropped and read again.
public final class SinkDeliverer {
    public let configuration: SinkConfiguration
    private let store: any DeliveryFeed
    private let transport: any SinkTransport
    private let onEvent: (DeliveryEvent) -> Void
    private(set) var cursor: Int64
    /// The store's identity, handed to the transport (a fleet binds the gateway id to it).
    private let storeIdentity: String
    /// The batch read while the previous one was being sent: the feed after `cursor` as it was then.
    private var readAhead: (cursor: Int64, batch: FeedBatch, records: [OutgoingRecord])?
    /// Whether this run looked for retired states yet (once at its first batch, then after deletions).
    private var sweptPublishedStates = false
    /// The measurement system each person's states were shown in by this run, once acknowledged;
    /// nil before the run's first send (a unit may have changed while no run went, so the run
    /// shows every state again). A person whose system changes has every state shown again.
    private var shownSystems: [String: UnitSystem]?
    /// The systems of the context last built, kept as `shownSystems` when its send is acknowledged.
    private var contextSystems: [String: UnitSystem]?

    public init(configuration: SinkConfiguration, store: any DeliveryFeed, transport: any SinkTransport,
                onEvent: @escaping (DeliveryEvent) -> Void = { _ in }) throws {
        self.configuration = configuration
        self.store = store
        self.transport = transport
        self.onEvent = onEvent
        cursor = try store.sink(named: configuration.name).cursor
        storeIdentity = try store.identity()
        try store.relaxDurabilityForDelivery()
    }

    private var name: String { configuration.name }
    private var batchSize: Int { max(1, configuration.options.batchSize) }

    private func storeStep<T>(_ step: SinkFeedStep, _ body: () throws -> T) throws(SinkDeliveryError) -> T {
        do { return try body() } catch { throw .store(step, reason: String(describing: error)) }
    }

    /// Sends one batch (queued dead letters first, then the feed); returns how many records it
    /// handled, 0 when there was nothing to send.
    @discardableResult
    public func deliverNextBatch() throws(SinkDeliveryError) -> (delivered: Int, deadLettered: Int) {
        let retries = try storeStep(.readDeadLetters) { try store.deadLetters(sink: name, retryingOnly: true, limit: batchSize) }
        if !retries.isEmpty {
            let records = retries.map(OutgoingRecord.init)
            let result: SendResult
            do {
                result = try transport.send(records, context: try context(records))
            } catch {
                // Dead letters are resolved only when the whole retry was acknowledged.
                throw error.withoutProgress
            }
            switch result {
            case .accepted:
                try storeStep(.acknowledge) {
                    try store.acknowledge(sink: name, through: nil, delivered: counts(records), rejected: [],
                                          resolvedDeadLetters: retries.map(\.id), publishedStates: [], now: Date())
                }
                announce(records, anchor: cursor)
                return (records.count, 0)
            case .rejected(let reason):
                try storeStep(.refuseAgain) { try store.refuseAgain(sink: name, deadLetters: retries.map(\.id), reason: reason, now: Date()) }
                onEvent(.deadLettered(sink: name, count: records.count, reason: reason))
                return (0, records.count)
            }
        }
        let batch: FeedBatch
        let records: [OutgoingRecord]
        if let ahead = readAhead, ahead.cursor == cursor {
            (batch, records) = (ahead.batch, ahead.records)
        } else {
            batch = try storeStep(.readFeed) {
                try store.feedBatch(after: cursor, types: configuration.readTypes, limit: batchSize, person: configuration.person)
            }
            records = Self.outgoing(batch)
        }
        readAhead = nil
        guard !batch.entries.isEmpty else {
            if batch.throughAnchor > cursor {
                try storeStep(.advanceCursor) { try store.advanceCursor(sink: name, to: batch.throughAnchor) }
                cursor = batch.throughAnchor
            }
            try refreshWithoutNewRecords()
            return (0, 0)
        }
        let sendContext = try context(records)
        let result: SendResult
        if transport.sendsWhileTheNextBatchIsRead {
            let send = SendInFlight(transport: transport, records: records, context: sendContext)
            send.start()
            // Meanwhile the next batch, as if this one moved the cursor. Kept only when it has
            // entries (an empty one would hide what arrives later); a store error here is left
            // for the next call to meet and report.
            let next = batch.throughAnchor
            if let ahead = try? store.feedBatch(after: next, types: configuration.readTypes, limit: batchSize, person: configuration.person),
               !ahead.entries.isEmpty {
                readAhead = (next, ahead, Self.outgoing(ahead))
            }
            do {
                result = try send.wait()
            } catch {
                readAhead = nil
                throw try keepingProgress(of: error, records: records)
            }
        } else {
            do {
                result = try transport.send(records, context: sendContext)
            } catch {
                throw try keepingProgress(of: error, records: records)
            }
        }
        switch result {
        case .accepted:
            try storeStep(.acknowledge) {
                try store.acknowledge(sink: name, through: batch.throughAnchor, delivered: counts(records), rejected: [],
                                      resolvedDeadLetters: [], publishedStates: sendContext.statesToRecord, now: Date())
                if !sendContext.retiredStates.isEmpty {
                    try store.forgetPublishedStates(sink: name, keys: sendContext.retiredStates.map(DeliveryContext.parts(ofKey:)))
                }
            }
            shownSystems = contextSystems ?? shownSystems
            cursor = batch.throughAnchor
            announce(records, anchor: cursor)
            return (records.count, 0)
        case .rejected(let reason):
            try storeStep(.acknowledge) {
                try store.acknowledge(sink: name, through: batch.throughAnchor, delivered: [:],
                                      rejected: records.map { $0.rejected(reason: reason) }, resolvedDeadLetters: [],
                                      publishedStates: [], now: Date())
            }
            cursor = batch.throughAnchor
            onEvent(.deadLettered(sink: name, count: records.count, reason: reason))
            return (0, records.count)
        }
    }

    /// A run with nothing new to send still removes the entities that lost their data or their
    /// grant since the last run (`sinks set --types` narrowed, a type's grant revoked) and shows
    /// the states again in a person's new measurement system (`people set P --units us`): once
    /// per run, the same sweep a first batch does, and whenever a person's system changed; sent
    /// as a batch without records.
    private func refreshWithoutNewRecords() throws(SinkDeliveryError) {
        guard transport.wantsDailyTotals, !sweptPublishedStates || unitSystemsChanged() else { return }
        let sendContext = try context([])
        guard !sendContext.retiredStates.isEmpty || !sendContext.currentReadings.isEmpty else {
            shownSystems = contextSystems
            return
        }
        guard case .accepted = try transport.send([], context: sendContext) else { return }
        try storeStep(.acknowledge) {
            try store.acknowledge(sink: name, through: nil, delivered: [:], rejected: [], resolvedDeadLetters: [],
                                  publishedStates: sendContext.statesToRecord, now: Date())
            if !sendContext.retiredStates.isEmpty {
                try store.forgetPublishedStates(sink: name, keys: sendContext.retiredStates.map(DeliveryContext.parts(ofKey:)))
            }
        }
        shownSystems = contextSystems
    }

    /// Whether a person the sink reads chose another measurement system than the one this run
    /// showed their states in (true before the run showed any). A store error reads as no change.
    public func unitSystemsChanged() -> Bool {
        guard transport.wantsDailyTotals else { return false }
        guard let shownSystems else { return true }
        return (try? systems(of: try storeStep(.readPeople) { try store.queryPeopleNames() })) != shownSystems
    }

    /// The measurement system of each of `everybody` the sink reads (metric when none was set).
    private func systems(of everybody: [String]) throws(SinkDeliveryError) -> [String: UnitSystem] {
        var systems: [String: UnitSystem] = [:]
        for person in configuration.person.map({ [$0] }) ?? everybody {
            systems[person] = try storeStep(.readPeople) { try store.queryUnitSystem(ofPerson: person) } ?? .metric
        }
        return systems
    }

    /// Moves the cursor past the records an interrupted send had acknowledged in order (the
    /// highest contiguous acknowledgement); returns the error to report.
    private func keepingProgress(of error: SinkDeliveryError, records: [OutgoingRecord]) throws(SinkDeliveryError) -> SinkDeliveryError {
        guard case .interrupted(let count, _) = error, count > 0 else { return error }
        let done = Array(records.prefix(count))
        guard let last = done.last else { return error }
        try storeStep(.acknowledge) { try store.acknowledge(sink: name, through: last.anchor, delivered: counts(done), rejected: [],
                                                   resolvedDeadLetters: [], publishedStates: [], now: Date()) }
        cursor = last.anchor
        announce(done, anchor: cursor)
        return .interrupted(acknowledged: done.count, error.withoutProgress)
    }

    /// The records a feed batch sends, each with its person.
    private static func outgoing(_ batch: FeedBatch) -> [OutgoingRecord] {
        zip(batch.entries, batch.people).map { OutgoingRecord($0, person: $1) }
    }

    private func counts(_ records: [OutgoingRecord]) -> [String: Int] {
        records.reduce(into: [:]) { $0[$1.type, default: 0] += 1 }
    }

    private func announce(_ records: [OutgoingRecord], anchor: Int64) {
        for (type, count) in counts(records).sorted(by: { $0.key < $1.key }) {
            onEvent(.delivered(sink: name, type: type, count: count, anchor: anchor))
        }
    }

    /// The people the sink reads and, when the transport wants them, today's totals (local time
    /// zone) of each person's cumulative types in `records`.
    private func context(_ records: [OutgoingRecord]) throws(SinkDeliveryError) -> DeliveryContext {
        var context = try dailyContext(records)
        context.storeIdentity = storeIdentity
        for request in transport.statisticsRequests(for: records) {
            context.statistics[request] = try storeStep(.readStatistics) {
                try store.statistics(request.operation, type: request.type, from: request.from, to: request.to,
                                     granularity: request.granularity, zone: request.zone, scope: request.scope)
            }
        }
        return context
    }

    private func dailyContext(_ records: [OutgoingRecord]) throws(SinkDeliveryError) -> DeliveryContext {
        guard transport.wantsDailyTotals else { return DeliveryContext() }
        let everybody = try storeStep(.readPeople) { try store.queryPeopleNames() }
        let people = configuration.person.map { [$0] } ?? everybody
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let start = calendar.startOfDay(for: Date())
        let published = try storeStep(.readPublishedStates) { try store.publishedStates(sink: name) }
        let marks = Dictionary(published.map { (DeliveryContext.key(person: $0.person, type: $0.type), $0.end) }, uniquingKeysWith: max)
        var current = Self.currentReadings(records, publishedStates: marks, startOfToday: start)
        var context = DeliveryContext(people: people, publishedStates: marks)
        context.retiredStates = try retiredStates(marks: marks, records: records, everybody: everybody)
        let systems = try systems(of: everybody)
        context.unitSystems = systems.filter { $0.value != .metric }
        contextSystems = systems
        // A state shown in another system than its person's now is shown again: its newest reading.
        for key in marks.keys.sorted() where current[key] == nil && !context.retiredStates.contains(key) {
            let (person, identifier) = DeliveryContext.parts(ofKey: key)
            guard let system = systems[person], shownSystems?[person] != system, let type = QuantityType.named(identifier) else { continue }
            current[key] = try storeStep(.readNewestSample) { try store.newestSample(person: person, type: type) }
        }
        context.currentReadings = current
        struct Pair: Hashable { var person: String; var type: QuantityType }
        let pairs = Set(current.compactMap { key, sample in
            sample.type.aggregationStyle.isCumulative ? Pair(person: DeliveryContext.parts(ofKey: key).person, type: sample.type) : nil
        })
        guard !pairs.isEmpty, let end = calendar.date(byAdding: .day, value: 1, to: start) else { return context }
        var totals: [String: Double] = [:]
        for pair in pairs {
            guard everybody.contains(pair.person) else { continue }
            let buckets = try storeStep(.readStatistics) {
                try store.statistics(.sum, type: pair.type, from: start, to: end, granularity: nil, zone: .current,
                                     scope: QueryScope(people: .named(pair.person)))
            }
            totals[DeliveryContext.key(person: pair.person, type: pair.type.identifier)] = buckets.first?.value ?? 0
        }
        context.dailyTotals = totals
        return context
    }

    /// The published states (keys of `marks`) whose entity has nothing left to show: its person
    /// is gone or not one the sink reads, its type not read, or no sample of it remains. Looked
    /// for at the run's first batch (a retirement a crash interrupted is found again) and after
    /// a batch with deletions (a person removed, samples moved to another person).
    private func retiredStates(marks: [String: Date], records: [OutgoingRecord], everybody: [String])
        throws(SinkDeliveryError) -> Set<String> {
        guard !sweptPublishedStates || records.contains(where: { $0.sample == nil }) else { return [] }
        sweptPublishedStates = true
        let granted = Set(configuration.grantedTypes.map(\.identifier))
        var retired: Set<String> = []
        for key in marks.keys {
            let (person, identifier) = DeliveryContext.parts(ofKey: key)
            let stillShown = everybody.contains(person) && (configuration.person.map { $0 == person } ?? true)
                && granted.contains(identifier)
            if !stillShown {
                retired.insert(key)
            } else if try !storeStep(.readSampleCounts, { try store.holdsSamples(person: person, type: identifier) }) {
                retired.insert(key)
            }
        }
        return retired
    }

    /// Per (person, type) of `records`, the newest reading that may become the current state:
    /// one at least as new (end time) as the published state, or, for a cumulative type, one
    /// counted in today's total (it changes the total even when older than the last reading).
    /// Unassigned records (dead letters sent again) have no state.
    static func currentReadings(_ records: [OutgoingRecord], publishedStates: [String: Date],
                                startOfToday: Date) -> [String: QuantitySample] {
        var current: [String: QuantitySample] = [:]
        for record in records where !record.person.isEmpty {
            guard let sample = record.sample else { continue }
            let key = DeliveryContext.key(person: record.person, type: sample.type.identifier)
            if let mark = publishedStates[key], sample.end < mark,
               !(sample.type.aggregationStyle.isCumulative && sample.end >= startOfToday) { continue }
            if current[key].map({ $0.end <= sample.end }) ?? true { current[key] = sample }
        }
        return current
    }

    /// Delivers until nothing is left, retrying failures with `retry`'s backoff; records each
    /// failure on the sink (its last error) and gives up after `retry.maximumAttempts`.
    public func deliverBacklog(retry: RetryPolicy, shouldStop: () -> Bool = { false }) -> BacklogOutcome {
        var failures = 0
        var delivered = 0
        var deadLettered = 0
        while !shouldStop() {
            do {
                let step = try deliverNextBatch()
                failures = 0
                delivered += step.delivered
                deadLettered += step.deadLettered
                if step.delivered == 0, step.deadLettered == 0 {
                    return .caughtUp(delivered: delivered, deadLettered: deadLettered)
                }
            } catch let caught {
                // An attempt that moved the cursor before it broke starts the count afresh.
                if case .interrupted(let count, _) = caught, count > 0 {
                    failures = 0
                    delivered += count
                }
                let error = caught.withoutProgress
                failures += 1
                try? store.recordDeliveryFailure(sink: name, message: error.description, now: Date())
                if let maximum = retry.maximumAttempts, failures >= maximum {
                    onEvent(.failed(sink: name, attempt: failures, error: error, retryIn: nil))
                    return .unreachable(error)
                }
                let delay = retry.delay(afterFailures: failures)
                onEvent(.failed(sink: name, attempt: failures, error: error, retryIn: delay))
                let until = Date().addingTimeInterval(delay)
                while Date() < until, !shouldStop() {
                    transport.idle(milliseconds: 50)
                    Thread.sleep(forTimeInterval: min(0.05, max(0, until.timeIntervalSinceNow)))
                }
            }
        }
        return .stopped
    }

    /// Lets the transport handle incoming traffic while idle.
    public func idle(milliseconds: Int) {
        transport.idle(milliseconds: milliseconds)
    }

    /// Closes the transport.
    public func close() {
        transport.close()
    }
}

/// One `send` on a thread of its own, so that the deliverer's thread can read the next batch
/// meanwhile. The transport is not touched by the deliverer's thread between `start` and the end
/// of `wait` (the transport is used by one thread at a time, as `SinkTransport` requires).
private final class SendInFlight: @unchecked Sendable {
    private let transport: any SinkTransport
    private let records: [OutgoingRecord]
    private let context: DeliveryContext
    private let finished = DispatchSemaphore(value: 0)
    /// Written by the sending thread before `finished` is signalled, read after the wait.
    private var result: Result<SendResult, SinkDeliveryError> = .failure(.sendDidNotRun)

    init(transport: any SinkTransport, records: [OutgoingRecord], context: DeliveryContext) {
        self.transport = transport
        self.records = records
        self.context = context
    }

    func start() {
        let thread = Thread { [self] in
            do throws(SinkDeliveryError) {
                result = .success(try transport.send(records, context: context))
            } catch {
                result = .failure(error)
            }
            finished.signal()
        }
        thread.name = "ingestd-sink-send"
        thread.start()
    }

    /// Waits for the send to end; its result or its error.
    func wait() throws(SinkDeliveryError) -> SendResult {
        finished.wait()
        return try result.get()
    }
}

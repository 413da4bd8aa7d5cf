import Foundation
import HealthModel
import Redaction
import Pipeline

/// What a receiver said about a whole batch it answered.
public enum SendResult: Sendable, Equatable {
    /// Every record was acknowledged (MQTT PUBACK for each message, HTTP 2xx).
    case accepted
    /// The receiver refused the records for good (HTTP 4xx other than 408 and 429): they go to
    /// dead letters with this reason and delivery goes on.
    case rejected(reason: String)
}

/// Why a delivery attempt failed and will be retried with backoff. Messages never contain a
/// secret (targets are shown without credentials).
public indirect enum SinkDeliveryError: Error, Equatable, CustomStringConvertible {
    /// The receiver could not be reached or the connection broke.
    case unreachable(target: String, reason: String)
    /// The MQTT broker refused the connection (wrong credentials, not authorized, …).
    case connectionRefused(target: String, reason: String)
    /// No acknowledgement within the time allowed.
    case timedOut(target: String, seconds: Double, waitingFor: String)
    /// The HTTP receiver answered with a status that is retried (5xx, 408, 429).
    case serverError(target: String, status: Int, body: String)
    /// The connection broke after the receiver acknowledged the first `acknowledged` records of
    /// the batch in order: the cursor moves past them, the rest is sent again.
    case interrupted(acknowledged: Int, SinkDeliveryError)
    /// The HTTP receiver redirected: ingestd never follows redirects.
    case redirectRefused(target: String, status: Int, location: String)
    /// The sink's configuration cannot be used (unreadable secret file, missing variable, …).
    case configuration(SinkConfigurationError)
    /// The store failed at `step` of delivery (reading the feed or recording progress); `reason`
    /// is the store's own error, whichever store it is.
    case store(SinkFeedStep, reason: String)
    /// A send ended without a result (the sending thread never ran it).
    case sendDidNotRun
    /// The receiver refuses the sink's configuration (a login or credentials refused, HTTP 401 and
    /// 403 among them, a database whose encoding
    /// cannot hold the data, a gateway id of another store): retried like an outage, never
    /// dead-lettered, until the configuration is fixed; `fix` says how.
    case misconfigured(target: String, reason: String, fix: String)

    public var description: String {
        switch self {
        case .unreachable(let target, let reason): "\(target) unreachable: \(reason)"
        case .connectionRefused(let target, let reason): "\(target) refused the connection: \(reason)"
        case .timedOut(let target, let seconds, let what):
            "\(target): no \(what) within \(JSONTextFormat.seconds(seconds)) s"
        case .serverError(let target, let status, let body):
            "\(target) answered HTTP \(status)" + (body.isEmpty ? "" : ": \(body)")
        case .interrupted(_, let error): error.description
        case .redirectRefused(let target, let status, let location):
            "\(target) answered HTTP \(status) redirecting to \(location.isEmpty ? "(no location)" : location): redirects are refused, give the final URL"
        case .configuration(let error): error.description
        case .store(let step, let reason): "store: \(step.rawValue): \(reason)"
        case .sendDidNotRun: "the send did not run"
        case .misconfigured(let target, let reason, let fix): "\(target): configuration error: \(reason); \(fix)"
        }
    }
}

/// What delivery asked of the store (the feed port) when it failed.
public enum SinkFeedStep: String, Sendable, Hashable {
    case readDeadLetters = "reading the dead letters to retry"
    case acknowledge = "recording what was delivered"
    case refuseAgain = "recording a refused retry"
    case readFeed = "reading the feed"
    case advanceCursor = "advancing the cursor"
    case readStatistics = "reading statistics"
    case readPeople = "reading the people"
    case readPublishedStates = "reading the published states"
    case readSampleCounts = "reading the sample counts"
    case readNewestSample = "reading a type's newest sample"
}

extension SinkDeliveryError {
    /// The `fix` of a receiver that refused the sink's credentials (HTTP 401, 403).
    public static let refusedCredentialsFix = "check the sink's password, token or headers; nothing was dead-lettered"

    /// The error with every text passed through `redactor` (what a receiver echoed, targets).
    public func redacted(by redactor: SecretRedactor) -> SinkDeliveryError {
        let r = redactor.redact
        return switch self {
        case .unreachable(let target, let reason): .unreachable(target: r(target), reason: r(reason))
        case .connectionRefused(let target, let reason): .connectionRefused(target: r(target), reason: r(reason))
        case .timedOut(let target, let seconds, let what): .timedOut(target: r(target), seconds: seconds, waitingFor: r(what))
        case .serverError(let target, let status, let body): .serverError(target: r(target), status: status, body: r(body))
        case .interrupted(let count, let error): .interrupted(acknowledged: count, error.redacted(by: redactor))
        case .redirectRefused(let target, let status, let location):
            .redirectRefused(target: r(target), status: status, location: r(location))
        case .configuration(let error): .configuration(error.redacted(by: redactor))
        case .store(let step, let reason): .store(step, reason: r(reason))
        case .sendDidNotRun: .sendDidNotRun
        case .misconfigured(let target, let reason, let fix): .misconfigured(target: r(target), reason: r(reason), fix: r(fix))
        }
    }

    /// The error itself without the progress an interrupted send made.
    public var withoutProgress: SinkDeliveryError {
        if case .interrupted(_, let error) = self { return error.withoutProgress }
        return self
    }
}

extension SinkConfigurationError {
    /// The error with every text passed through `redactor`.
    public func redacted(by redactor: SecretRedactor) -> SinkConfigurationError {
        let r = redactor.redact
        return switch self {
        case .invalidURL(let url, let reason): .invalidURL(r(url), reason: r(reason))
        case .unsupportedScheme(let scheme, let reason): .unsupportedScheme(r(scheme), reason: reason)
        case .invalidName(let name): .invalidName(r(name))
        case .unreadableOptions(let reason): .unreadableOptions(r(reason))
        case .invalidOption(let option, let value, let reason): .invalidOption(option, value: r(value), reason: r(reason))
        case .optionFileUnreadable(let option, let path, let reason): .optionFileUnreadable(option, path: r(path), reason: r(reason))
        case .optionNotApplicable(let option, let kind): .optionNotApplicable(option, kind: kind)
        case .optionRequired(let option, let kind, let example): .optionRequired(option, kind: kind, example: example)
        case .secretFileUnreadable(let path, let reason): .secretFileUnreadable(path: r(path), reason: r(reason))
        case .secretEnvironmentMissing(let name): .secretEnvironmentMissing(name)
        }
    }
}

/// A transport whose every error and refusal reason passes through the sink's redactor before
/// the deliverer stores, prints or dead-letters it (what a receiver echoes back may hold a
/// secret). Every transport `SinkTransports.make` returns is wrapped in one.
final class RedactingSinkTransport: SinkTransport {
    private let inner: any SinkTransport
    private let redactor: SecretRedactor

    init(_ inner: any SinkTransport, redactor: SecretRedactor) {
        self.inner = inner
        self.redactor = redactor
    }

    var wantsDailyTotals: Bool { inner.wantsDailyTotals }
    var sendsWhileTheNextBatchIsRead: Bool { inner.sendsWhileTheNextBatchIsRead }
    func statisticsRequests(for records: [OutgoingRecord]) -> Set<StatisticsRequest> { inner.statisticsRequests(for: records) }

    func send(_ records: [OutgoingRecord], context: DeliveryContext) throws(SinkDeliveryError) -> SendResult {
        do {
            switch try inner.send(records, context: context) {
            case .accepted: return .accepted
            case .rejected(let reason): return .rejected(reason: redactor.redact(reason))
            }
        } catch {
            throw error.redacted(by: redactor)
        }
    }

    func idle(milliseconds: Int) { inner.idle(milliseconds: milliseconds) }
    func close() { inner.close() }
}

/// Formats seconds for messages: `2` or `0.5`.
enum JSONTextFormat {
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}

/// What a transport may need beside the records: today's totals of cumulative types per person
/// (Home Assistant states) and the people the sink reads (one Home Assistant device each).
public struct DeliveryContext: Sendable {
    /// Today's total (canonical unit) by `DeliveryContext.key(person:type:)`.
    public var dailyTotals: [String: Double]
    /// The people whose samples the sink reads, in the order they were added.
    public var people: [String]
    /// The identity of the store delivering (a fleet binds a gateway id to it); nil when unknown.
    public var storeIdentity: String?

    /// Per `key(person:type:)`: the end time of the reading the sink last published as the
    /// current state (kept in the store; every (person, type) that ever had a state).
    public var publishedStates: [String: Date]
    /// Per `key(person:type:)`: the reading of this batch to show as the current state; only
    /// readings at least as new (by end time) as the published one, or for cumulative types one
    /// that counts in today's total. Readings not here go out only as samples.
    public var currentReadings: [String: QuantitySample]
    /// The store's answers to the transport's `statisticsRequests(for:)` of this batch.
    public var statistics: [StatisticsRequest: [StatisticsBucket]] = [:]
    /// Keys (`key(person:type:)`) of published states whose entity has nothing left to show:
    /// the person is gone or not read by the sink, the type not read, or no sample of it
    /// remains. A Home Assistant sink removes their entities (an empty retained config).
    public var retiredStates: Set<String> = []
    /// The measurement system of each person who set one (`people set P --units us`); a Home
    /// Assistant sink shows their entities in it. Absent: metric.
    public var unitSystems: [String: UnitSystem] = [:]

    public init(dailyTotals: [String: Double] = [:], people: [String] = [], storeIdentity: String? = nil,
                publishedStates: [String: Date] = [:], currentReadings: [String: QuantitySample] = [:]) {
        self.dailyTotals = dailyTotals
        self.people = people
        self.storeIdentity = storeIdentity
        self.publishedStates = publishedStates
        self.currentReadings = currentReadings
    }

    /// The person and type identifier of a `key(person:type:)`.
    public static func parts(ofKey key: String) -> (person: String, type: String) {
        guard let separator = key.firstIndex(of: "\u{0}") else { return ("", key) }
        return (String(key[..<separator]), String(key[key.index(after: separator)...]))
    }

    /// The states a send of this context publishes, to record once the receiver acknowledged.
    public var statesToRecord: [PublishedState] {
        currentReadings.map { key, sample in
            let (person, type) = Self.parts(ofKey: key)
            return PublishedState(person: person, type: type, end: max(sample.end, publishedStates[key] ?? sample.end))
        }
    }

    /// The key of a person's total of a type identifier in `dailyTotals`.
    public static func key(person: String, type: String) -> String { person + "\u{0}" + type }

    /// Today's total of `type` for `person`, if computed.
    public func dailyTotal(person: String, type: String) -> Double? { dailyTotals[Self.key(person: person, type: type)] }
}

/// A connection to one receiver (an MQTT broker, an HTTP server, a PostgreSQL database). Used by one thread at a time; `send` blocks until the receiver
/// acknowledged or refused the batch, or throws when it could not say.
public protocol SinkTransport: AnyObject {
    /// Whether `send` wants today's totals of cumulative types and the current readings per
    /// person and type (Home Assistant states).
    var wantsDailyTotals: Bool { get }
    /// Sends `records` in order, with today's totals and the sink's people in `context`.
    func send(_ records: [OutgoingRecord], context: DeliveryContext) throws(SinkDeliveryError) -> SendResult
    /// Lets the connection handle incoming traffic while there is nothing to send (keepalive,
    /// Home Assistant's `online`), for at most `milliseconds`.
    func idle(milliseconds: Int)
    /// Ends the connection (MQTT: publishes `offline` first).
    func close()
    /// Whether `send` may run on another thread while the deliverer reads the next batch from
    /// its store (still one thread at a time on the transport; nothing is acknowledged early).
    var sendsWhileTheNextBatchIsRead: Bool { get }
    /// The statistics `send` needs from the store for `records` (Home Assistant's hourly
    /// statistics), answered in `DeliveryContext.statistics`; none by default.
    func statisticsRequests(for records: [OutgoingRecord]) -> Set<StatisticsRequest>
}

extension SinkTransport {
    /// Transports send on the deliverer's thread unless they say otherwise.
    public var sendsWhileTheNextBatchIsRead: Bool { false }
    public func statisticsRequests(for records: [OutgoingRecord]) -> Set<StatisticsRequest> { [] }
}

/// Makes the transport of a sink's kind.
public enum SinkTransports {
    /// The transport for `configuration`; `secrets` resolves password and header references
    /// and its redactor learns them now, so that no error of the transport can carry one.
    public static func make(_ configuration: SinkConfiguration, secrets: SecretResolver,
                            softwareVersion: String) -> any SinkTransport {
        secrets.learnSecrets(of: configuration)
        let transport = configuration.options.makeTransport(configuration, secrets: secrets, softwareVersion: softwareVersion)
        return RedactingSinkTransport(transport, redactor: secrets.redactor)
    }
}

import Foundation
import HealthModel
import Pipeline

/// A first-contact decision waiting for the person: a source's held samples of one type (and device).
public typealias PendingDecision = PendingGroup

/// A stored reading nobody was assigned (a shared scale that could not tell who stood on it).
public struct UnassignedReading: Sendable, Equatable {
    public var uuid: UUID
    public var type: QuantityType
    /// In the type's canonical unit.
    public var value: Double
    public var start: Date
    /// "name (local identifier)", whichever parts the device has; "" when none.
    public var device: String

    public init(uuid: UUID, type: QuantityType, value: Double, start: Date, device: String) {
        self.uuid = uuid
        self.type = type
        self.value = value
        self.start = start
        self.device = device
    }
}

/// A sink's delivery state as the dashboard shows it (never its target's credentials).
public struct SinkSummary: Sendable, Equatable {
    public var name: String
    public var kind: String
    public var backlog: Int
    public var lastSuccess: Date?
    /// The last error, already redacted.
    public var lastError: String?
    public var deadLetters: Int

    public init(name: String, kind: String, backlog: Int, lastSuccess: Date?, lastError: String?, deadLetters: Int) {
        self.name = name
        self.kind = kind
        self.backlog = backlog
        self.lastSuccess = lastSuccess
        self.lastError = lastError
        self.deadLetters = deadLetters
    }
}

/// One device as the devices page shows it: its newest reading, its battery where the device
/// says one, and what it waits for (a first-contact decision on its held samples).
public struct DeviceStatus: Sendable, Equatable {
    public var source: String
    /// "name (local identifier)", whichever parts the device has.
    public var device: String
    /// The newest stored reading's type, value (canonical unit; nil when unknown) and end.
    public var lastType: QuantityType?
    public var lastValue: Double?
    public var lastEnd: Date?
    /// The battery charge in percent the device last said, and when.
    public var batteryPercent: Int?
    public var batteryAt: Date?
    /// Held samples of the device waiting for a grant or denial of its source, per type identifier.
    public var held: [String: Int]

    public init(source: String, device: String, lastType: QuantityType? = nil, lastValue: Double? = nil, lastEnd: Date? = nil,
                batteryPercent: Int? = nil, batteryAt: Date? = nil, held: [String: Int] = [:]) {
        self.source = source
        self.device = device
        self.lastType = lastType
        self.lastValue = lastValue
        self.lastEnd = lastEnd
        self.batteryPercent = batteryPercent
        self.batteryAt = batteryAt
        self.held = held
    }

    /// Sets the charge the device said and when.
    public mutating func battery(_ percent: Int, at time: Date) {
        batteryPercent = percent
        batteryAt = time
    }
}

/// What the dashboard needs beyond the query port: the pending first-contact decisions and
/// making one, the sinks' state, the rejections and the last commit for `/metrics`. Implemented over the store file by the
/// composition root (IngestRuntime's `StoreDashboardAdministration`).
public protocol DashboardAdministration: AnyObject {
    /// The held samples waiting for a decision, per source and type.
    func pendingDecisions() throws -> [PendingDecision]
    /// Grants (`grant`) or denies every type `source` sent; returns what happened, for the page.
    func decide(source: String, grant: Bool) throws -> String
    /// The sinks with their backlog, last success and last error.
    func sinkSummaries() throws -> [SinkSummary]
    /// At most `limit` readings nobody was assigned, oldest first.
    func unassignedReadings(limit: Int) throws -> [UnassignedReading]
    /// Gives the reading `uuid` to `person` ("this is mine"); returns what happened, for the page.
    func assign(_ uuid: UUID, to person: String) throws -> String
    /// Every device that wrote or sent samples, by source and device, with its newest reading,
    /// battery and held samples.
    func deviceStatuses() throws -> [DeviceStatus]
    /// Every rejection the store counted, per source, type and reason (the store keeps them all).
    func rejectionCounts() throws -> [RejectionKey: Int]
    /// When the store last committed samples; nil before its first commit.
    func lastCommitTime() throws -> Date?
}

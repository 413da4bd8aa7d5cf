import Delivery
import Foundation
import HealthModel
import Pipeline
import Redaction
import SQLiteStore
import WebDashboard

/// The dashboard's decisions and sink states over the store file: a short connection per call
/// (the query port stays read-only; a grant opens the store for writing like `ingestd auth grant`).
/// It lives in the composition root: only here is the dashboard's store known to be the SQLite file.
public final class StoreDashboardAdministration: DashboardAdministration {
    public let path: String

    public init(path: String) { self.path = path }

    public func pendingDecisions() throws -> [PendingDecision] {
        try reading(or: []) { try $0.pendingGroups() }
    }

    public func decide(source: String, grant: Bool) throws -> String {
        let name = PrintableText.escaped(source)
        if grant {
            let ingestion = try Ingestion(store: try HealthStore(path: path))
            defer { ingestion.close() }
            let release = try ingestion.grant(source: source, types: [], all: true)
            let totals = release.report.totals
            return "granted \(name) every type: brought in \(release.released) held record\(release.released == 1 ? "" : "s") "
                + "(\(totals.written) written, \(totals.duplicate) duplicate, \(totals.invalid) invalid)"
        }
        let store = try HealthStore(path: path)
        defer { store.close() }
        let discarded = try store.deny(source: source, types: [], all: true)
        return "denied \(name) every type: \(discarded) held record\(discarded == 1 ? "" : "s") discarded"
    }

    public func unassignedReadings(limit: Int) throws -> [UnassignedReading] {
        try reading(or: []) { store in
            try store.unassignedSamples(limit: limit).map {
                UnassignedReading(uuid: $0.uuid, type: $0.type, value: $0.quantity.value, start: $0.start,
                                  device: HealthStore.deviceText($0.device))
            }
        }
    }

    public func assign(_ uuid: UUID, to person: String) throws -> String {
        let store = try HealthStore(path: path)
        defer { store.close() }
        let name = PrintableText.escaped(person)
        guard try store.assignIfUnassigned(uuid, to: try store.person(named: person)) else {
            return "that reading is no longer unassigned (someone took it, or it was replaced): nothing changed"
        }
        return "the reading is \(name)'s now"
    }

    public func deviceStatuses() throws -> [DeviceStatus] {
        try reading(or: []) { store in try Self.deviceStatuses(store) }
    }

    private static func deviceStatuses(_ store: HealthStore) throws -> [DeviceStatus] {
        var statuses: [String: DeviceStatus] = [:]
        func key(_ source: String, _ device: String) -> String { source + "\u{0}" + device }
        for reading in try store.lastReadingsByDevice() {
            let device = HealthStore.deviceText(reading.device)
            statuses[key(reading.source, device)] = DeviceStatus(
                source: reading.source, device: device, lastType: QuantityType.named(reading.type), lastValue: reading.value,
                lastEnd: reading.end)
        }
        for battery in try store.deviceBatteries() {
            let device = HealthStore.deviceText(battery.device)
            statuses[key(battery.source, device), default: DeviceStatus(source: battery.source, device: device)]
                .battery(battery.percent, at: battery.at)
        }
        for group in try store.pendingGroups() {
            statuses[key(group.source, group.device), default: DeviceStatus(source: group.source, device: group.device)]
                .held[group.type, default: 0] += group.count
        }
        return statuses.values.sorted { ($0.source, $0.device) < ($1.source, $1.device) }
    }

    public func rejectionCounts() throws -> [RejectionKey: Int] {
        try reading(or: [:]) { try $0.rejections(since: .distantPast) }
    }

    public func lastCommitTime() throws -> Date? {
        try reading(or: nil) { try $0.lastCommitTime() }
    }

    public func sinkSummaries() throws -> [SinkSummary] {
        try reading(or: []) { store in try Self.sinkSummaries(store) }
    }

    private static func sinkSummaries(_ store: HealthStore) throws -> [SinkSummary] {
        try store.sinks().map { sink in
            let definition = sink.definition
            let backlog = try store.backlogCount(after: sink.cursor, types: definition.readTypes,
                                                 person: try store.sinkScope(person: definition.person))
            return SinkSummary(name: definition.name, kind: (try? SinkTarget(url: definition.url).kind.rawValue) ?? "?",
                               backlog: backlog, lastSuccess: sink.lastSuccess,
                               lastError: sink.lastError.map(SecretRedactor.redactingCredentials), deadLetters: sink.deadLetters)
        }
    }

    /// `body`'s answer from the store file opened read-only; `empty` while the file does not exist yet.
    private func reading<T>(or empty: T, _ body: (HealthStore) throws -> T) throws -> T {
        guard FileManager.default.fileExists(atPath: path) else { return empty }
        let store = try HealthStore(path: path, readOnly: true)
        defer { store.close() }
        return try body(store)
    }
}

import Foundation
import HealthModel
import Pipeline

/// One record on its way to a receiver: a sample or a deletion, with where it is in the feed
/// and its message as JSON (the form dead letters keep).
public struct OutgoingRecord: Sendable {
    public var anchor: Int64
    public var uuid: UUID
    public var type: String
    /// The sample; nil for a deletion.
    public var sample: QuantitySample?
    /// DESIGN.md's sample JSON, or `{"deleted":uuid,"type":…}`.
    public var json: String
    /// The dead letter this record was read from (`sinks retry`), if any.
    public var deadLetterID: Int64?
    /// Whose sample it is (a deletion: whose it was); empty when not known (a dead letter).
    public var person: String

    /// The record of a change-feed entry of `person`.
    public init(_ entry: ChangeEntry, person: String = "") {
        self.person = person
        switch entry {
        case .added(let sample, let anchor):
            self.anchor = anchor
            uuid = sample.uuid
            type = sample.type.identifier
            self.sample = sample
            json = HealthRecordEncoder().encode(sample)
        case .deleted(let uuid, let type, let anchor):
            self.anchor = anchor
            self.uuid = uuid
            self.type = type
            sample = nil
            json = Self.deletionJSON(uuid: uuid, type: type)
        }
        deadLetterID = nil
    }

    /// The record of a dead letter queued by `sinks retry`.
    public init(_ deadLetter: DeadLetter) {
        person = ""
        anchor = deadLetter.anchor
        uuid = deadLetter.uuid
        type = deadLetter.type
        json = deadLetter.record
        deadLetterID = deadLetter.id
        if case .sample(let sample)? = try? HealthRecordDecoder(defaultSource: "").decodeLine(deadLetter.record) {
            self.sample = sample
        } else {
            sample = nil
        }
    }

    static func deletionJSON(uuid: UUID, type: String) -> String {
        "{\"deleted\":\"\(uuid.uuidString.lowercased())\",\"type\":\(JSONText.quoted(type))}"
    }

    /// The record as a dead letter with `reason`.
    func rejected(reason: String) -> RejectedRecord {
        RejectedRecord(anchor: anchor, uuid: uuid, type: type, record: json, reason: reason)
    }
}

/// The JSON bodies HTTP sinks post.
public enum HTTPBody {
    /// `{"samples":[…],"deleted":[{"uuid":…,"type":…}]}`, samples in DESIGN.md's JSON.
    public static func samples(_ records: [OutgoingRecord]) -> String {
        var samples: [String] = []
        var deleted: [String] = []
        for record in records {
            if record.sample != nil {
                samples.append(record.json)
            } else {
                deleted.append("{\"uuid\":\"\(record.uuid.uuidString.lowercased())\",\"type\":\(JSONText.quoted(record.type))}")
            }
        }
        return "{\"samples\":[" + samples.joined(separator: ",") + "],\"deleted\":[" + deleted.joined(separator: ",") + "]}"
    }

    /// The Health Auto Export app's body: `{"data":{"metrics":[{"name","units","data":[{"qty","date"}]}]}}`,
    /// one metric per type in first-seen order. The format has no deletions: they are not sent.
    public static func healthAutoExport(_ records: [OutgoingRecord]) -> String {
        var order: [String] = []
        var points: [String: [String]] = [:]
        var units: [String: String] = [:]
        for record in records {
            guard let sample = record.sample else { continue }
            let metric = HealthAutoExportMetric(sample.type)
            if points[metric.name] == nil {
                order.append(metric.name)
                units[metric.name] = metric.units
            }
            var point = "{\"qty\":\(JSONNumber.format(metric.value(sample.quantity.value)))"
            point += ",\"date\":\(JSONText.quoted(HealthAutoExportMetric.dateString(sample.start)))"
            if sample.end != sample.start {
                point += ",\"endDate\":\(JSONText.quoted(HealthAutoExportMetric.dateString(sample.end)))"
            }
            point += ",\"source\":\(JSONText.quoted(sample.source)),\"uuid\":\"\(sample.uuid.uuidString.lowercased())\"}"
            points[metric.name, default: []].append(point)
        }
        let metrics = order.map { name in
            "{\"name\":\(JSONText.quoted(name)),\"units\":\(JSONText.quoted(units[name] ?? "")),\"data\":["
                + (points[name] ?? []).joined(separator: ",") + "]}"
        }
        return "{\"data\":{\"metrics\":[" + metrics.joined(separator: ",") + "]}}"
    }
}

/// A quantity type as the Health Auto Export app names it (`step_count`, `weight_body_mass`, …) and its unit.
public struct HealthAutoExportMetric: Sendable {
    public var name: String
    public var units: String
    private var convertTo: String?
    private var scale: Double = 1
    private let type: QuantityType

    public init(_ type: QuantityType) {
        self.type = type
        units = type.canonicalUnit.description
        switch type.shortName {
        case "stepCount": name = "step_count"
        case "distanceWalkingRunning": name = "walking_running_distance"; units = "km"; convertTo = "km"
        case "distanceCycling": name = "cycling_distance"; units = "km"; convertTo = "km"
        case "heartRate": name = "heart_rate"; units = "count/min"; convertTo = "count/min"
        case "restingHeartRate": name = "resting_heart_rate"
        case "respiratoryRate": name = "respiratory_rate"; units = "count/min"; convertTo = "count/min"
        case "bodyMass": name = "weight_body_mass"
        case "bodyFatPercentage": name = "body_fat_percentage"; scale = 100
        case "oxygenSaturation": name = "blood_oxygen_saturation"; scale = 100
        case "activeEnergyBurned": name = "active_energy"
        case "basalEnergyBurned": name = "basal_energy_burned"
        case "bloodPressureSystolic": name = "blood_pressure_systolic"
        case "bloodPressureDiastolic": name = "blood_pressure_diastolic"
        default:
            var snake = ""
            for character in type.shortName {
                if character.isUppercase { snake += "_" + character.lowercased() } else { snake.append(character) }
            }
            name = snake
        }
    }

    func value(_ canonical: Double) -> Double {
        var value = canonical
        if let convertTo, let target = try? Unit(from: convertTo), let converted = try? type.canonicalUnit.convert(canonical, to: target) {
            value = converted
        }
        return value * scale
    }

    /// `2026-01-01 08:00:00 +0000`, the app's date format (UTC).
    static func dateString(_ date: Date) -> String {
        let iso = ISO8601DateTime.string(from: date) // 2026-01-01T08:00:00Z or with fractions
        var text = iso.replacingOccurrences(of: "T", with: " ")
        if text.hasSuffix("Z") { text.removeLast() }
        if let dot = text.firstIndex(of: ".") { text = String(text[..<dot]) }
        return text + " +0000"
    }
}

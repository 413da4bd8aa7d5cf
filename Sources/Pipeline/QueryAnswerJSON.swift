import Foundation
import HealthModel

/// The JSON lines of the query answers that are not samples (those are `HealthRecordEncoder`'s):
/// `status --json`, `changes --json`, `sources --json` and `stats --json`. The command line and the
/// dashboard's API (`/api/v1/…`) both print them from here, so their bytes are the same.
public enum QueryAnswerJSON {
    /// `stats --json`: a bucket a line, its times with the offset of a zone, its value in a unit.
    public struct StatisticsLines {
        private let type: QuantityType
        private let unit: HealthModel.Unit
        private let zone: TimeZone

        public init(type: QuantityType, unit: HealthModel.Unit, zone: TimeZone) {
            self.type = type
            self.unit = unit
            self.zone = zone
        }

        /// An ISO 8601 date-time in the zone with its offset, to the whole second, e.g.
        /// `2026-03-29T00:00:00+01:00`.
        public func time(_ date: Date) -> String { ISO8601DateTime.string(from: date, wholeSecondsIn: zone) }

        /// The value converted from the type's canonical unit (compatibility is the caller's check).
        private func value(_ canonical: Double) -> Double { (try? type.canonicalUnit.convert(canonical, to: unit)) ?? canonical }

        /// `{"start":…,"end":…,"value":…,"unit":…}`, with `sampleStart` and `sampleEnd` for `latest`.
        public func line(_ bucket: StatisticsBucket) -> String {
            var line = "{\"start\":\(JSONText.quoted(time(bucket.start))),\"end\":\(JSONText.quoted(time(bucket.end)))"
            line += ",\"value\":" + (bucket.value.map { JSONNumber.format(value($0)) } ?? "null")
            line += ",\"unit\":\(JSONText.quoted(unit.unitString))"
            if let interval = bucket.latestInterval {
                line += ",\"sampleStart\":\(JSONText.quoted(time(interval.start))),\"sampleEnd\":\(JSONText.quoted(time(interval.end)))"
            }
            return line + "}"
        }
    }

    /// The `today --json` line: the day, the zone's name, the steps (whole) and the distance in
    /// kilometres (to the metre) of the day.
    public static func todayLine(day: String, zoneName: String, steps: Double, meters: Double) -> String {
        let kilometres = meters.rounded() / 1000
        return "{\"date\":\(JSONText.quoted(day)),\"tz\":\(JSONText.quoted(zoneName)),\"steps\":\(JSONNumber.format(steps.rounded())),\"distanceKm\":\(JSONNumber.format(kilometres))}"
    }

    /// A `sources --json` line: the source's samples and held samples, counts per type, devices,
    /// and the battery charge each device last said (UTC times).
    public static func sourceLine(_ source: SourceSummary, held: Int, encoder: HealthRecordEncoder) -> String {
        let counts = source.countsByType.keys.sorted().map { "\(JSONText.quoted($0)):\(source.countsByType[$0] ?? 0)" }
        let devices = source.devices.map { encoder.encode($0) }
        let batteries = source.batteries.map {
            "{\"device\":\(encoder.encode($0.device)),\"percent\":\($0.percent),\"at\":\(JSONText.quoted(ISO8601DateTime.string(from: $0.at)))}"
        }
        return "{\"source\":\(JSONText.quoted(source.name)),\"samples\":\(source.sampleCount),\"held\":\(held),\"types\":{\(counts.joined(separator: ","))},\"devices\":[\(devices.joined(separator: ","))],\"batteries\":[\(batteries.joined(separator: ","))]}"
    }

    /// `status --json`: a store file's lines per source and type, held per source, the unassigned
    /// count and the rejections; a fleet's database's schema, gateways, and per gateway, source and
    /// type its live samples. No line tells where the store is.
    public static func statusLines(_ status: StoreStatus) -> [String] {
        let time = ISO8601DateTime.string(from:)
        if let schema = status.schema {
            var lines = ["{\"schema\":\(JSONText.quoted(schema.name)),\"version\":\(schema.version)}"]
            for gateway in status.gateways {
                lines.append(
                    "{\"gateway\":\(JSONText.quoted(gateway.gateway)),\"firstDelivery\":\(JSONText.quoted(time(gateway.firstDelivery))),\"lastDelivery\":\(JSONText.quoted(time(gateway.lastDelivery))),\"anchor\":\(gateway.lastAnchor),\"samples\":\(gateway.liveSamples),\"deleted\":\(gateway.deletedSamples)}")
            }
            for row in status.sourceTypes {
                lines.append(
                    "{\"gateway\":\(JSONText.quoted(row.gateway ?? "")),\"source\":\(JSONText.quoted(row.source)),\"type\":\(JSONText.quoted(row.type)),\"count\":\(row.count),\"last\":\(JSONText.quoted(time(row.lastSampleEnd)))}")
            }
            return lines
        }
        var lines = status.sourceTypes.map {
            "{\"source\":\(JSONText.quoted($0.source)),\"type\":\(JSONText.quoted($0.type)),\"count\":\($0.count),\"last\":\(JSONText.quoted(time($0.lastSampleEnd)))}"
        }
        for (source, count) in status.held.sorted(by: { $0.key < $1.key }) {
            lines.append("{\"held\":\(count),\"source\":\(JSONText.quoted(source))}")
        }
        if status.unassigned > 0 { lines.append("{\"unassigned\":\(status.unassigned)}") }
        for (key, count) in status.rejections.sorted(by: { $0.key < $1.key }) {
            lines.append(
                "{\"rejected\":\(count),\"source\":\(JSONText.quoted(key.source)),\"type\":\(JSONText.quoted(key.type)),\"reason\":\(JSONText.quoted(key.reason))}")
        }
        return lines
    }

    /// A `changes --json` line: the added sample, or `{"deleted":"<uuid>","type":…}`.
    public static func line(_ entry: ChangeEntry, encoder: HealthRecordEncoder) -> String {
        switch entry {
        case .added(let sample, _): encoder.encode(sample)
        case .deleted(let uuid, let type, _):
            "{\"deleted\":\"" + UUIDText.string(uuid, .lower) + "\",\"type\":" + JSONText.quoted(type) + "}"
        }
    }

    /// The last line of `changes --json`: `{"anchor":N}` (a fleet's token as a string).
    public static func anchorLine(_ anchor: ChangeAnchor) -> String {
        "{\"anchor\":\(anchor.json)}"
    }
}

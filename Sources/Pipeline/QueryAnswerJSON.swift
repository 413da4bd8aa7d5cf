import Foundation
import HealthModel

/// The JSON lines of the query answers that are not samples (those are `HealthRecordEncoder`'s):
/// `status --json` and `changes --json`. The command line and the dashboard's API (`/api/v1/status`,
/// `/api/v1/changes`) both print them from here, so their bytes are the same.
public enum QueryAnswerJSON {
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
        case .deleted(let uuid, let type, _): "{\"deleted\":\"\(uuid.uuidString.lowercased())\",\"type\":\(JSONText.quoted(type))}"
        }
    }

    /// The last line of `changes --json`: `{"anchor":N}` (a fleet's token as a string).
    public static func anchorLine(_ anchor: ChangeAnchor) -> String {
        "{\"anchor\":\(anchor.json)}"
    }
}

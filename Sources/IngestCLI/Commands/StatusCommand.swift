import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd status`: what the store holds and what was refused lately. Works while the daemon runs.
struct StatusCommand: StoreReportCommand {
    static let configuration = CommandConfiguration(
        name: "status",
        abstract: "Per source and type: sample counts and the last sample; held samples; rejections in the last 24 h.")

    let options: StoreReportOptions

    func run(_ context: CommandContext) async throws {
        let store = try options.store.open(context, readOnly: true)
        defer { store.close() }
        let rows = try store.sourceTypeStatus()
        let held = try store.pendingCounts()
        let unassigned = try store.unassignedCount()
        let since = Date().addingTimeInterval(-86_400)
        let rejections = try store.rejections(since: since)
        var denied: [String: Set<String>] = [:]
        let policy = try store.loadAuthorization()
        for key in rejections.keys where key.reason == "denied" {
            // A type granted since it was refused needs no hint.
            if let type = QuantityType.named(key.type), policy.allows(source: key.source, type: type) { continue }
            denied[key.source, default: []].insert(key.type)
        }
        if json {
            for row in rows {
                context.stdout.writeLine(
                    "{\"source\":\(JSONText.quoted(row.source)),\"type\":\(JSONText.quoted(row.type)),\"count\":\(row.count),\"last\":\(JSONText.quoted(ISO8601DateTime.string(from: row.lastSampleEnd)))}")
            }
            for (source, count) in held.sorted(by: { $0.key < $1.key }) {
                context.stdout.writeLine("{\"held\":\(count),\"source\":\(JSONText.quoted(source))}")
            }
            if unassigned > 0 { context.stdout.writeLine("{\"unassigned\":\(unassigned)}") }
            for (key, count) in rejections.sorted(by: { $0.key < $1.key }) {
                context.stdout.writeLine(
                    "{\"rejected\":\(count),\"source\":\(JSONText.quoted(key.source)),\"type\":\(JSONText.quoted(key.type)),\"reason\":\(JSONText.quoted(key.reason))}")
            }
            return
        }
        context.stdout.writeLine("store: \(store.path)")
        if rows.isEmpty {
            context.stdout.writeLine("no samples yet")
        } else {
            context.stdout.write(Table(header: ["SOURCE", "TYPE", "SAMPLES", "LAST SAMPLE"], rows: rows.map {
                [$0.source, QuantityType.named($0.type)?.shortName ?? $0.type, "\($0.count)", ISO8601DateTime.string(from: $0.lastSampleEnd)]
            }).rendered)
        }
        if !held.isEmpty {
            context.stdout.writeLine("")
            context.stdout.writeLine("held for undecided sources (ingestd auth pending; grant or deny):")
            context.stdout.write(Table(header: ["SOURCE", "HELD"], rows: held.sorted { $0.key < $1.key }.map {
                [$0.key, "\($0.value)"]
            }).rendered)
        }
        if unassigned > 0 {
            context.stdout.writeLine("")
            context.stdout.writeLine("\(unassigned) sample\(unassigned == 1 ? "" : "s") belong to nobody yet (ingestd unassigned; ingestd assign)")
        }
        if !rejections.isEmpty {
            context.stdout.writeLine("")
            context.stdout.writeLine("rejected in the last 24 h:")
            context.stdout.write(Table(header: ["SOURCE", "TYPE", "REASON", "COUNT"], rows: rejections.sorted { $0.key < $1.key }.map {
                [$0.key.source, QuantityType.named($0.key.type)?.shortName ?? $0.key.type, $0.key.reason, "\($0.value)"]
            }).rendered)
        }
        for source in denied.keys.sorted() {
            let types = (denied[source] ?? []).compactMap { QuantityType.named($0) }
            context.stdout.writeLine("denied (ingestd auth deny): allow with \(AuthorizationPolicy.grantCommand(source: source, types: types))")
        }
    }
}

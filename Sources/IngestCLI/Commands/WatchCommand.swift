import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd watch`: follows the commit log ("records processed" notifications).
struct WatchCommand: Command {
    static let configuration = CommandConfiguration(
        name: "watch", abstract: "Print one JSON line per commit and type as other processes write.",
        discussion: """
            Lines look like {"type":…,"count":N,"source":…,"anchor":N}; batches a sink's receiver \
            acknowledged as {"delivered":{"sink":…,"type":…,"count":N,"anchor":N}}. Stop with Ctrl-C.
            """,
        examples: [
            "ingestd watch",
            "ingestd watch --since 0 --count 10",
        ]
    )
    static let signature = Signature {
        Option("since", valueName: "ANCHOR", help: "Also print commits after this anchor (default: only new ones).")
        Option("interval", valueName: "MS", help: "How often to look for commits, in milliseconds.", default: "250")
        Option("count", valueName: "N", help: "Exit after N lines (for scripts and tests).")
        PersonOption.self
        StoreOption.self
    }

    let since: Int64?
    let interval: Int
    let count: Int?
    let storeFile: StoreOption
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        since = try (arguments.value("since") as Int?).map(Int64.init)
        interval = try arguments.count("interval", in: 1...3_600_000) ?? 250
        count = try arguments.value("count")
        storeFile = try StoreOption(arguments, refusingFleet: """
            watch follows the local store file's commits (--store PATH), not yet a fleet's PostgreSQL database; \
            a fleet's changes since a point: 'ingestd changes --store postgresql://… --since ANCHOR'
            """)
        person = try PersonOption(arguments)
        if let since, since < 0 {
            throw UsageError.invalidValue(String(since), argument: "--since", reason: "must not be negative")
        }
        if let count, count < 1 {
            throw UsageError.invalidValue(String(count), argument: "--count", reason: "must be at least 1")
        }
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.open(context)
        defer { store.close() }
        var lastCommit: Int64
        if let since {
            lastCommit = try store.commitID(forAnchor: since)
        } else {
            lastCommit = try store.commitID(forAnchor: Int64.max)
        }
        var printed = 0
        let scope = try person.scope(in: store)
        // Delivered batches of sinks ({"delivered":{…}}): those after --since's anchor, else only new ones.
        var lastDelivered = since == nil ? try store.lastDeliveredEventID() : 0
        while true {
            for event in try store.deliveredEvents(afterID: lastDelivered) {
                lastDelivered = event.id
                if let since, event.anchor <= since { continue }
                context.stdout.writeLine(
                    "{\"delivered\":{\"sink\":\(JSONText.quoted(event.sink)),\"type\":\(JSONText.quoted(event.type)),\"count\":\(event.count),\"anchor\":\(event.anchor)}}")
                printed += 1
                if let count, printed >= count {
                    context.stdout.flush()
                    return
                }
            }
            for event in try store.commitEvents(afterCommit: lastCommit, person: scope) {
                context.stdout.writeLine(
                    "{\"type\":\(JSONText.quoted(event.type)),\"count\":\(event.count),\"source\":\(JSONText.quoted(event.source)),\"anchor\":\(event.anchor)}")
                lastCommit = max(lastCommit, event.commitID)
                printed += 1
                if let count, printed >= count {
                    context.stdout.flush()
                    return
                }
            }
            context.stdout.flush()
            // `ingestd watch | head -1`: SIGPIPE is ignored, so end here once the reader is gone.
            if context.stdout.isReaderGone { return }
            try context.checkStandardOutput()
            try await Task.sleep(for: .milliseconds(interval))
        }
    }
}

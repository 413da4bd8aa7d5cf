import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd watch`: follows the commit log ("records processed" notifications).
struct WatchCommand: Command {
    static let configuration = CommandConfiguration(
        name: "watch", abstract: "Print one JSON line per commit and type as other processes write.",
        discussion: """
            Lines look like {"type":…,"count":N,"source":…,"anchor":N}; batches a sink's receiver \
            acknowledged as {"delivered":{"sink":…,"type":…,"count":N,"anchor":N}}. With --store postgresql://… \
            the samples every gateway delivers to the fleet's database, one line per gateway, type and source \
            with "gateway":… added (--gateway ID: one gateway). Stop with Ctrl-C.
            """,
        examples: [
            "ingestd watch",
            "ingestd watch --since 0 --count 10",
        ]
    )
    static let sinceOption = TypedOption<String>(Option(
        "since", valueName: "ANCHOR",
        help: "Also print commits after this anchor (default: only new ones); a fleet's is a token printed by 'changes'."))
    static let intervalOption = TypedOption<Int>(Option(
        "interval", valueName: "MS", help: "How often to look for commits, in milliseconds.", default: "250"))
    static let countOption = TypedOption<Int>(Option("count", valueName: "N", help: "Exit after N lines (for scripts and tests)."))
    static let signature = Signature {
        Self.sinceOption
        Self.intervalOption
        Self.countOption
        PersonOption.self
        QueryStoreOptions.self
    }

    /// `--since` as given, and read.
    let sinceText: String?
    let since: ChangeAnchor?
    let interval: Int
    let count: Int?
    let storeOptions: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        sinceText = try arguments.value(Self.sinceOption)
        since = try sinceText.map(QueryStoreOptions.anchor)
        interval = try arguments.count(Self.intervalOption, in: 1...3_600_000) ?? 250
        count = try arguments.value(Self.countOption)
        storeOptions = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
        if let count, count < 1 {
            throw UsageError.invalidValue(String(count), argument: "--count", reason: "must be at least 1")
        }
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeOptions.open(context)
        defer { store.close() }
        let scope = try storeOptions.scope(person, in: store)
        var cursor = try storeOptions.answering(since: sinceText ?? "") { try store.watchStart(after: since) }
        var printed = 0
        while true {
            let (events, next) = try storeOptions.answering { try store.watchEvents(after: cursor, scope: scope) }
            cursor = next
            for event in events {
                switch event {
                case .delivered(let sink, let type, let count, let anchor):
                    context.stdout.writeLine(
                        "{\"delivered\":{\"sink\":\(JSONText.quoted(sink)),\"type\":\(JSONText.quoted(type)),\"count\":\(count),\"anchor\":\(anchor)}}")
                case .committed(let type, let source, let count, let anchor, let gateway):
                    let gatewayField = gateway.map { ",\"gateway\":\(JSONText.quoted($0))" } ?? ""
                    context.stdout.writeLine(
                        "{\"type\":\(JSONText.quoted(type)),\"count\":\(count),\"source\":\(JSONText.quoted(source)),\"anchor\":\(anchor)\(gatewayField)}")
                }
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

import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd status`: what the store holds and what was refused lately. Works while the daemon runs.
/// With `--store postgresql://…`: what the fleet's database holds per gateway.
struct StatusCommand: Command {
    static let configuration = CommandConfiguration(
        name: "status",
        abstract: "Per source and type: sample counts and the last sample; held samples; rejections in the last 24 h.",
        discussion: """
            With --store postgresql://… the fleet's database: its schema version, per gateway its first and \
            last delivery, its position in its own feed, live and deleted samples, and per source and type \
            the live samples and the last one (--gateway ID: one gateway).
            """,
        examples: [
            "ingestd status",
            "ingestd status --json",
        ]
    )
    static let signature = Signature {
        JSONOption.self
        QueryStoreOptions.self
    }

    let json: Bool
    let storeOptions: QueryStoreOptions

    init(_ arguments: ParsedValues) throws {
        json = try JSONOption(arguments).isOn
        storeOptions = try QueryStoreOptions(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeOptions.open(context)
        defer { store.close() }
        let status = try storeOptions.answering {
            try store.status(scope: QueryScope(gateway: storeOptions.gateway), rejectionsSince: Date().addingTimeInterval(-86_400))
        }
        if json {
            QueryAnswerJSON.statusLines(status).forEach(context.stdout.writeLine)
            return
        }
        if let schema = status.schema {
            report(status, schema: schema, context)
            return
        }
        let rows = status.sourceTypes
        let held = status.held
        let unassigned = status.unassigned
        let rejections = status.rejections
        context.stdout.writeLine("store: \(status.location)")
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
        for source in status.denied.keys.sorted() {
            let types = (status.denied[source] ?? []).compactMap { QuantityType.named($0) }
            context.stdout.writeLine("denied (ingestd auth deny): allow with \(AuthorizationPolicy.grantCommand(source: source, types: types))")
        }
    }

    /// A shared database's status: schema version, gateways, and per gateway, source and type the live samples.
    private func report(_ status: StoreStatus, schema: SchemaStatus, _ context: CommandContext) {
        let gateways = status.gateways
        let sources = status.sourceTypes
        let time = ISO8601DateTime.string(from:)
        context.stdout.writeLine("store: \(status.location) schema \(schema.name) (version \(schema.version))")
        if gateways.isEmpty {
            context.stdout.writeLine(storeOptions.gateway.map { "no deliveries from gateway \($0)" } ?? "no gateway has delivered yet")
            return
        }
        context.stdout.write(Table(header: ["GATEWAY", "FIRST DELIVERY", "LAST DELIVERY", "ANCHOR", "SAMPLES", "DELETED"], rows: gateways.map {
            [$0.gateway, time($0.firstDelivery), time($0.lastDelivery), "\($0.lastAnchor)", "\($0.liveSamples)", "\($0.deletedSamples)"]
        }).rendered)
        if !sources.isEmpty {
            context.stdout.writeLine("")
            context.stdout.write(Table(header: ["GATEWAY", "SOURCE", "TYPE", "SAMPLES", "LAST SAMPLE"], rows: sources.map {
                [$0.gateway ?? "", $0.source, QuantityType.named($0.type)?.shortName ?? $0.type, "\($0.count)", time($0.lastSampleEnd)]
            }).rendered)
        }
    }
}

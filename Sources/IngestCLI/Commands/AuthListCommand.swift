import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd auth list`.
struct AuthListCommand: StoreReportCommand {
    static let configuration = CommandConfiguration(name: "list", abstract: "List the grants and the explicit denials.",
        examples: [
            "ingestd auth list",
            "ingestd auth list --json",
        ]
    )
    let options: StoreReportOptions

    func run(_ context: CommandContext) async throws {
        let store = try options.store.openAuthorization(context)
        defer { store.close() }
        // Read grants of sinks (reading clients) are listed beside the write grants, as "sink:NAME".
        let decisions = try store.grants().map { ($0.source, $0.type, "granted") }
            + store.denials().map { ($0.source, $0.type, "denied") }
            + store.readGrants().map { ("sink:" + $0.sink, $0.type, "read") }
        if json {
            for (source, type, state) in decisions {
                context.stdout.writeLine(
                    "{\"source\":\(JSONText.quoted(source)),\"type\":\(JSONText.quoted(type)),\"state\":\(JSONText.quoted(state))}")
            }
            return
        }
        if decisions.isEmpty {
            context.stdout.writeLine("no grants: samples are held until 'ingestd auth grant SOURCE TYPE...' (see 'ingestd auth pending')")
            return
        }
        let rows = decisions.map { source, type, state in
            [source, type == "*" ? "(all types)" : (QuantityType.named(type)?.shortName ?? type), type, state]
        }
        context.stdout.write(Table(header: ["SOURCE", "TYPE", "IDENTIFIER", "STATE"], rows: rows).rendered)
    }
}

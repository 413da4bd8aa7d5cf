import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd auth pending`.
struct AuthPendingCommand: StoreReportCommand {
    static let configuration = CommandConfiguration(
        name: "pending", abstract: "Samples held for undecided sources: counts, reading times, device, the grant command.",
        examples: [
            "ingestd auth pending",
            "ingestd auth pending --json",
        ]
    )
    let options: StoreReportOptions

    func run(_ context: CommandContext) async throws {
        let store = try options.store.openAuthorization(context, readOnly: true)
        defer { store.close() }
        let groups = try store.pendingGroups()
        let losses = try store.pendingLosses()
        func command(_ group: PendingGroup) -> String {
            AuthorizationPolicy.grantCommand(source: group.source, types: QuantityType.named(group.type).map { [$0] } ?? [])
        }
        if json {
            for group in groups {
                let loss = losses[group.source]
                context.stdout.writeLine(
                    "{\"source\":\(JSONText.quoted(group.source)),\"type\":\(JSONText.quoted(group.type)),"
                        + "\"device\":\(JSONText.quoted(group.device)),\"count\":\(group.count),"
                        + "\"first\":\(JSONText.quoted(ISO8601DateTime.string(from: group.firstStart))),"
                        + "\"last\":\(JSONText.quoted(ISO8601DateTime.string(from: group.lastEnd))),"
                        + "\"dropped\":\(loss?.dropped ?? 0),\"expired\":\(loss?.expired ?? 0),"
                        + "\"grant\":\(JSONText.quoted(command(group)))}")
            }
            return
        }
        if groups.isEmpty {
            context.stdout.writeLine("nothing held: no samples wait for a decision")
            return
        }
        context.stdout.write(Table(header: ["SOURCE", "TYPE", "DEVICE", "HELD", "FIRST", "LAST", "GRANT WITH"], rows: groups.map {
            [$0.source, QuantityType.named($0.type)?.shortName ?? $0.type, $0.device, "\($0.count)",
             ISO8601DateTime.string(from: $0.firstStart), ISO8601DateTime.string(from: $0.lastEnd), command($0)]
        }).rendered)
        for source in Set(groups.map(\.source)).sorted() {
            if let loss = losses[source] {
                context.stdout.writeLine("\(PrintableText.escaped(source)): \(loss.dropped) dropped over the bound, \(loss.expired) expired")
            }
            context.stdout.writeLine("refuse \(PrintableText.escaped(source)) with: \(AuthorizationPolicy.denyCommand(source: source, types: []))")
        }
        SourcesCommand.warnAboutLookAlikes(Set(groups.map(\.source)).sorted(), context: context)
    }
}

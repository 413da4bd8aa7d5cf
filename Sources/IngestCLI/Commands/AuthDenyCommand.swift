import ArgumentParsing
import Foundation

/// `ingestd auth deny`.
struct AuthDenyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "deny", abstract: "Refuse SOURCE's TYPEs (or --all) for good: discard what is held, never hold them again.",
        usage: "SOURCE TYPE...|--all",
        examples: [
            "ingestd auth deny neighbours-sensor --all",
            "ingestd auth deny phone heartRate",
        ]
    )
    static let signature = AuthGrantChange.signature(
        sourceHelp: "The source id.", allHelp: "Every type, now and in the future (replaces the source's grants).")
    let change: AuthGrantChange

    init(_ arguments: ParsedValues) throws { change = try AuthGrantChange(arguments) }

    func run(_ context: CommandContext) async throws {
        var discarded = 0
        try change.apply(context, verb: "denied", allWord: "every type") { store in
            discarded = try store.deny(source: change.source, types: change.types, all: change.all)
        }
        context.stderr.writeLine("discarded \(discarded) held record\(discarded == 1 ? "" : "s")")
    }
}

import ArgumentParsing
import Foundation

/// `ingestd auth revoke`.
struct AuthRevokeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "revoke", abstract: "Stop SOURCE writing TYPEs (or --all of its grants). Stored samples stay.",
        usage: "SOURCE TYPE...|--all",
        examples: [
            "ingestd auth revoke phone stepCount",
            "ingestd auth revoke old-scale --all",
        ]
    )
    static let signature = AuthGrantChange.signature(sourceHelp: "The source id.", allHelp: "Every grant of the source.")
    let change: AuthGrantChange

    init(_ arguments: ParsedValues) throws { change = try AuthGrantChange(arguments) }

    func run(_ context: CommandContext) async throws {
        try change.apply(context, verb: "revoked", allWord: "every grant") { store in
            try store.revoke(source: change.source, types: change.types, all: change.all)
        }
    }
}

import ArgumentParsing
import Foundation

/// `ingestd profile`: the characteristic types, kept once per store.
struct ProfileCommand: Command {
    static let configuration = CommandConfiguration(
        name: "profile", abstract: "Show or set a person's characteristics (date of birth, biological sex, height).",
        subcommands: [ProfileShowCommand.self, ProfileSetCommand.self], defaultSubcommand: ProfileShowCommand.self,
        examples: [
            "ingestd profile show",
            "ingestd profile set --height 168 --unit cm",
        ]
    )

    init(_ arguments: ParsedValues) throws {}

}

import ArgumentParsing
import Foundation

/// `ingestd people`: the household: who the samples belong to.
struct PeopleCommand: Command {
    static let configuration = CommandConfiguration(
        name: "people", abstract: "Add, list and remove the people whose readings the store keeps.",
        discussion: """
            Every sample belongs to one person or is unassigned. With one person (a new store starts \
            with 'me'), everything is theirs. With several: the device's owner ('ingestd devices assign'), \
            then the scale's user slot (--scale-user-index), then for body mass the person whose recent \
            weight is within the tolerance when nobody else's is; otherwise the sample is unassigned \
            ('ingestd unassigned', 'ingestd assign').
            """,
        subcommands: [PeopleAddCommand.self, PeopleListCommand.self, PeopleSetCommand.self, PeopleRemoveCommand.self],
        defaultSubcommand: PeopleListCommand.self,
        examples: [
            "ingestd people list",
            "ingestd people add bob --weight 85 --unit kg",
        ]
    )

    init(_ arguments: ParsedValues) throws {}
}

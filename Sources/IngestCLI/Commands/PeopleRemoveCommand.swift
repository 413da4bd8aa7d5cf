import ArgumentParsing
import Foundation
import Pipeline

/// `ingestd people remove NAME`: refused while samples are theirs, unless moved or deleted.
struct PeopleRemoveCommand: Command {
    static let configuration = CommandConfiguration(
        name: "remove", abstract: "Remove a person (refused while samples are theirs, unless moved or deleted).",
        usage: "NAME [--reassign OTHER | --delete-samples]",
        examples: [
            "ingestd people remove bob --reassign alice",
            "ingestd people remove bob --delete-samples",
        ]
    )
    static let nameArgument = TypedPositional<String>(Positional("NAME", help: "The person to remove."))
    static let reassignOption = TypedOption<String>(Option(
        "reassign", valueName: "OTHER", help: "Move the person's samples to OTHER (delete + add in the change feed)."))
    static let deleteSamples = TypedFlag(Flag("delete-samples", help: "Delete the person's samples (tombstones in the change feed)."))
    static let signature = Signature {
        Self.nameArgument
        Self.reassignOption
        Self.deleteSamples
        StoreOption.self
    }
    let name: String
    let disposal: PersonSampleDisposal
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        name = try arguments.required(Self.nameArgument)
        let reassign = try arguments.value(Self.reassignOption)
        let delete = arguments.flag(Self.deleteSamples)
        switch (reassign, delete) {
        case (let other?, false): disposal = .reassign(to: other)
        case (nil, true): disposal = .delete
        case (nil, false): disposal = .refuse
        case (_?, true): throw UsageError.invalid("give --reassign OTHER or --delete-samples, not both")
        }
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openHousehold(context)
        defer { store.close() }
        let count: Int
        do {
            count = try store.removePerson(named: name, samples: disposal)
        } catch let error as PeopleError {
            throw error.usageError
        }
        let what = switch disposal {
        case .refuse: ""
        case .reassign(let other): ", \(count) sample\(count == 1 ? "" : "s") moved to \(other)"
        case .delete: ", \(count) sample\(count == 1 ? "" : "s") deleted"
        }
        context.stderr.writeLine("removed \(name)\(what)")
    }
}

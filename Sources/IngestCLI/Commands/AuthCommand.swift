import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd auth`: per (source, type) write authorization: granted, denied or undecided (the
/// default: nothing is stored, the samples wait in the pending area).
struct AuthCommand: Command {
    static let configuration = CommandConfiguration(
        name: "auth", abstract: "Grant, deny, revoke and list which source may write which types; show held samples.",
        discussion: """
            Each (source, type) is granted, denied or undecided (the default). Samples of an undecided \
            pair are held in the store's pending area (never visible to queries or the change feed) until \
            'auth grant' brings them in or 'auth deny' discards them; held samples are removed after \
            --pending-days (of 'ingestd run' and 'ingestd replay').
            """,
        subcommands: [AuthListCommand.self, AuthGrantCommand.self, AuthRevokeCommand.self, AuthDenyCommand.self, AuthPendingCommand.self])

    init(_ arguments: ParsedValues) throws {}

    static func parseTypes(_ arguments: ParsedValues, all: Bool) throws -> [QuantityType] {
        let names: [String] = try arguments.values("types")
        if all, !names.isEmpty { throw UsageError.invalid("give TYPE... or --all, not both") }
        if !all, names.isEmpty { throw UsageError.invalid("give at least one TYPE, or --all") }
        return try names.map(CommonArguments.quantityType)
    }
}

/// What `grant` and `revoke` both take: a source and its types, or `--all`.
struct AuthGrantChange {
    let source: String
    let types: [QuantityType]
    let all: Bool
    let storeFile: StoreOption

    static func signature(sourceHelp: String, allHelp: String) -> Signature {
        Signature {
            Positional("SOURCE", help: sourceHelp)
            Positional("TYPE", key: "types", arity: .zeroOrMore, help: "Quantity types, e.g. stepCount bodyMass.")
            Flag("all", help: allHelp)
            StoreOption.self
        }
    }

    init(_ arguments: ParsedValues) throws {
        source = try CommonArguments.sourceID(try arguments.required("source"), argument: "SOURCE")
        all = arguments.flag("all")
        types = try AuthCommand.parseTypes(arguments, all: all)
        storeFile = try StoreOption(arguments)
    }

    /// Applies the change and says what was done on stderr.
    func apply(_ context: CommandContext, verb: String, allWord: String,
               _ change: (HealthStore) throws -> Void) throws {
        let store = try storeFile.open(context)
        defer { store.close() }
        try change(store)
        context.stderr.writeLine("\(verb) \(source): \(what(allWord: allWord))")
    }

    func what(allWord: String) -> String {
        all ? allWord : types.map(\.shortName).joined(separator: ", ")
    }
}

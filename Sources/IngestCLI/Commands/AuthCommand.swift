import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

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
        subcommands: [AuthListCommand.self, AuthGrantCommand.self, AuthRevokeCommand.self, AuthDenyCommand.self, AuthPendingCommand.self],
        examples: [
            "ingestd auth pending",
            "ingestd auth grant my-scale --all",
            "ingestd auth deny neighbours-sensor --all",
        ]
    )

    init(_ arguments: ParsedValues) throws {}

    static func parseTypes(_ arguments: ParsedValues, all: Bool) throws -> [QuantityType] {
        let names = try arguments.values(AuthGrantChange.types)
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

    /// `SOURCE` (its help is the command's).
    static let sourceArgument = TypedPositional<String>(Positional("SOURCE"))
    static let types = TypedPositionals<String>(Positional(
        "TYPE", key: "types", arity: .zeroOrMore, help: "Quantity types, e.g. stepCount bodyMass."))
    /// `--all` (its help is the command's).
    static let allFlag = TypedFlag(Flag("all"))

    static func signature(sourceHelp: String, allHelp: String) -> Signature {
        Signature {
            sourceArgument.withHelp(sourceHelp)
            types
            allFlag.withHelp(allHelp)
            StoreOption.self
        }
    }

    init(_ arguments: ParsedValues) throws {
        // Control characters are checked against the store's sources in `checkSource`: a source
        // the store has met (an imported name with an ESC in it) is accepted as printed.
        source = try CommonArguments.sourceID(try arguments.required(Self.sourceArgument), argument: Self.sourceArgument.label, allowingControlCharacters: true)
        all = arguments.flag(Self.allFlag)
        types = try AuthCommand.parseTypes(arguments, all: all)
        storeFile = try StoreOption(arguments)
    }

    /// Applies the change and says what was done on stderr.
    func apply(_ context: CommandContext, verb: String, allWord: String,
               _ change: (any AuthorizationStore) throws -> Void) throws {
        let store = try storeFile.openAuthorization(context)
        defer { store.close() }
        try checkSource(in: store, context: context)
        try change(store)
        context.stderr.writeLine("\(verb) \(PrintableText.escaped(source)): \(what(allWord: allWord))")
    }

    /// Refuses a source with control characters that the store has never met (it can only be a
    /// mistake), and warns when the source was never seen (naming the closest seen ones) or
    /// looks like another seen source (a no-break space, a Cyrillic letter, a curly quote).
    func checkSource(in store: any AuthorizationStore, context: CommandContext) throws {
        let seen = try store.seenSourceNames()
        let isSeen = seen.contains(source)
        if !isSeen { _ = try CommonArguments.sourceID(source, argument: "SOURCE") }
        let alike = PrintableText.lookAlikes(of: source, among: seen)
        if !alike.isEmpty {
            context.stderr.writeLine("warning: source \(PrintableText.quoted(source)) looks like "
                + alike.prefix(5).map(PrintableText.quoted).joined(separator: ", ")
                + " but is a different source; check which one you mean ('ingestd sources' or 'ingestd auth pending')")
        }
        guard !isSeen, alike.isEmpty else { return }
        let closest = SourceSuggestions.closest(to: source, among: seen)
        context.stderr.writeLine("warning: no sample from source \(PrintableText.quoted(source)) has been seen yet; the decision is kept for when it comes"
            + (closest.isEmpty ? "" : " (seen sources closest to it: " + closest.map(PrintableText.quoted).joined(separator: ", ") + ")"))
    }

    func what(allWord: String) -> String {
        all ? allWord : types.map(\.shortName).joined(separator: ", ")
    }
}

/// The seen sources nearest to a name that was not seen, for "did you mean" lines.
enum SourceSuggestions {
    /// Up to `count` of `seen` nearest to `name` by edit distance of their look-alike skeletons
    /// (first 64 characters), within a third of the name's length (at least 2), nearest first.
    /// Only skeletons whose length is within that distance are compared, so a store of half a
    /// million sources costs one pass of length checks.
    static func closest(to name: String, among seen: [String], count: Int = 3) -> [String] {
        let target = String(PrintableText.skeleton(name).prefix(64))
        let allowed = max(2, target.count / 3)
        return seen.compactMap { candidate -> (String, Int)? in
            let skeleton = String(PrintableText.skeleton(candidate).prefix(64))
            guard abs(skeleton.count - target.count) <= allowed else { return nil }
            let distance = EditDistance.distance(target, skeleton)
            return distance <= allowed ? (candidate, distance) : nil
        }
        .sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
        .prefix(count).map(\.0)
    }
}

import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd priority TYPE SOURCE...`: which source wins where sources overlap.
struct PriorityCommand: Command {
    static let configuration = CommandConfiguration(
        name: "priority", abstract: "Show or set the source order of a type (first wins where sources overlap).",
        discussion: "Without SOURCE, prints the current order: explicit first, then by when each source first wrote the type.",
        examples: [
            "ingestd priority stepCount watch phone",
        ]
    )
    static let typeArgument = TypedPositional<String>(Positional("TYPE", help: "Quantity type."))
    static let sourcesArgument = TypedPositionals<String>(Positional(
        "SOURCE", key: "sources", arity: .zeroOrMore, help: "Sources, highest priority first."))
    static let signature = Signature {
        Self.typeArgument
        Self.sourcesArgument
        StoreOption.self
    }
    let type: QuantityType
    let sources: [String]
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        type = try CommonArguments.quantityType(try arguments.required(Self.typeArgument))
        sources = try arguments.values(Self.sourcesArgument).map { try CommonArguments.sourceID($0, argument: "SOURCE") }
        storeFile = try StoreOption(arguments)
        if Set(sources).count != sources.count { throw UsageError.invalid("a source is listed twice") }
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openPriorities(context)
        defer { store.close() }
        if !sources.isEmpty { try store.setPriority(type: type, sources: sources) }
        for (rank, source) in try store.priority(for: type).enumerated() {
            context.stdout.writeLine("\(rank + 1) \(PrintableText.escaped(source))")
        }
    }
}

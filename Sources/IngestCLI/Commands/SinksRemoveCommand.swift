import ArgumentParsing

/// `ingestd sinks remove NAME`: the sink, its read grants, cursor and dead letters.
struct SinksRemoveCommand: Command {
    static let configuration = CommandConfiguration(name: "remove", abstract: "Remove a sink with its cursor, grants and dead letters.",
        examples: [
            "ingestd sinks remove alice-server",
        ]
    )
    static let sinkName = TypedPositional<String>(Positional("NAME", help: "The sink."))
    static let signature = Signature {
        Self.sinkName
        StoreOption.self
    }
    let name: String
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        name = try arguments.required(Self.sinkName)
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openSinks(context)
        defer { store.close() }
        try SinksCommand.mapErrors { try store.removeSink(named: name) }
        context.stderr.writeLine("removed sink \(name)")
    }
}

import ArgumentParsing

/// `ingestd sinks retry NAME`: queues the sink's dead letters to be sent again.
struct SinksRetryCommand: Command {
    static let configuration = CommandConfiguration(
        name: "retry", abstract: "Send a sink's dead letters again (at the next delivery).",
        examples: [
            "ingestd sinks retry alice-server",
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
        let count = try SinksCommand.mapErrors { try store.retryDeadLetters(sink: name) }
        context.stderr.writeLine("\(count) dead letter(s) of \(name) queued; a running ingestd sends them shortly, or run 'ingestd sinks deliver \(name)'")
    }
}

import ArgumentParsing
import HealthModel

/// `ingestd sinks dead-letters NAME [--json]`: the records a receiver refused for good.
struct SinksDeadLettersCommand: Command {
    static let configuration = CommandConfiguration(
        name: "dead-letters", abstract: "List the records a sink's receiver refused, with the reason.",
        examples: [
            "ingestd sinks dead-letters alice-server",
        ]
    )
    static let sinkName = TypedPositional<String>(Positional("NAME", help: "The sink."))
    static let signature = Signature {
        Self.sinkName
        JSONOption.self
        StoreOption.self
    }
    let name: String
    let json: Bool
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        name = try arguments.required(Self.sinkName)
        json = try JSONOption(arguments).isOn
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openSinks(context)
        defer { store.close() }
        _ = try SinksCommand.mapErrors { try store.sink(named: name) }
        let letters = try store.deadLetters(sink: name, retryingOnly: false, limit: 0)
        if json {
            for letter in letters {
                context.stdout.writeLine("""
                    {"id":\(letter.id),"uuid":"\(letter.uuid.uuidString.lowercased())","type":\(JSONText.quoted(letter.type)),\
                    "anchor":\(letter.anchor),"reason":\(JSONText.quoted(letter.reason)),\
                    "at":\(JSONText.quoted(ISO8601DateTime.string(from: letter.at))),"retrying":\(letter.retrying),"record":\(letter.record)}
                    """)
            }
            return
        }
        if letters.isEmpty {
            context.stdout.writeLine("no dead letters for \(name)")
            return
        }
        let rows = letters.map { letter in
            [String(letter.id), letter.uuid.uuidString.lowercased(), QuantityType.named(letter.type)?.shortName ?? letter.type,
             ISO8601DateTime.string(from: letter.at), letter.retrying ? "queued" : "", letter.reason]
        }
        context.stdout.write(Table(header: ["ID", "UUID", "TYPE", "AT", "RETRY", "REASON"], rows: rows).rendered)
    }
}

import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd changes`: the anchored object query.
struct ChangesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "changes", abstract: "Samples added and deleted since an anchor; the last line is the new anchor.",
        discussion: """
            Each line is a sample, or {"deleted":"<uuid>","type":…} for a sample that was replaced by a \
            newer sync version. The last line is {"anchor":N}: pass N as --since next time. With \
            --store postgresql://… the fleet's changes, gateway by gateway in each gateway's feed order, \
            deletions included; the anchor is an opaque token holding every gateway's position \
            ({"anchor":"f1.…"}), and --gateway ID reads (and advances) one gateway only.
            """,
        examples: [
            "ingestd changes --since 0 --json",
            "ingestd changes --since 0 --type bodyMass",
        ]
    )
    static let since = TypedOption<String>(Option(
        "since", valueName: "ANCHOR", help: "Only changes after this anchor (default 0: everything); a fleet's is a token.",
        default: "0"))
    static let typeOption = TypedOption<String>(Option("type", valueName: "T", help: "Only this quantity type."))
    static let signature = Signature {
        Self.since
        Self.typeOption
        PersonOption.self
        JSONOption.self
        QueryStoreOptions.self
    }

    /// Where to start, as given, and read.
    let sinceText: String
    let since: ChangeAnchor
    let type: QuantityType?
    let json: Bool
    let storeOptions: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        sinceText = try arguments.value(Self.since) ?? "0"
        storeOptions = try QueryStoreOptions(arguments)
        since = try QueryStoreOptions.anchor(sinceText)
        type = try arguments.value(Self.typeOption).map(CommonArguments.quantityType)
        json = try JSONOption(arguments).isOn
        person = try PersonOption(arguments)
    }

    /// The changes, streamed as they are read; the new anchor last.
    func run(_ context: CommandContext) async throws {
        let store = try storeOptions.open(context)
        defer { store.close() }
        let encoder = HealthRecordEncoder()
        let scope = try storeOptions.scope(person, in: store)
        let next = try storeOptions.answering(since: sinceText) {
            try store.changes(since: since, type: type, scope: scope, limit: 0) { entry in
                switch entry {
                case .added(let sample, _):
                    context.stdout.writeLine(encoder.encode(sample))
                case .deleted(let uuid, let type, _):
                    var line = "{\"deleted\":\""
                    UUIDText.append(uuid, .lower, to: &line)
                    line += "\",\"type\":"
                    JSONText.appendQuoted(type, to: &line)
                    context.stdout.writeLine(line + "}")
                }
            }
        }
        context.stdout.writeLine("{\"anchor\":\(next.json)}")
    }
}

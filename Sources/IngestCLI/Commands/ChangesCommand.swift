import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd changes`: the anchored object query.
struct ChangesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "changes", abstract: "Samples added and deleted since an anchor; the last line is the new anchor.",
        discussion: """
            Each line is a sample, or {"deleted":"<uuid>","type":…} for a sample that was replaced by a \
            newer sync version. The last line is {"anchor":N}: pass N as --since next time.
            """)
    static let signature = Signature {
        Option("since", valueName: "ANCHOR", help: "Only changes after this anchor (default 0: everything).", default: "0")
        Option("type", valueName: "T", help: "Only this quantity type.")
        PersonOption.self
        JSONOption.self
        StoreOption.self
    }

    let since: Int64
    let type: QuantityType?
    let json: Bool
    let storeFile: StoreOption
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        let anchor: Int = try arguments.value("since") ?? 0
        guard anchor >= 0 else { throw UsageError.invalidValue(String(anchor), argument: "--since", reason: "must not be negative") }
        since = Int64(anchor)
        type = try (try arguments.value("type") as String?).map(CommonArguments.quantityType)
        json = try JSONOption(arguments).isOn
        storeFile = try StoreOption(arguments)
        person = try PersonOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.open(context, readOnly: true)
        defer { store.close() }
        let (entries, anchor) = try store.changes(since: since, type: type, person: try person.scope(in: store))
        let encoder = HealthRecordEncoder()
        for entry in entries {
            switch entry {
            case .added(let sample, _):
                context.stdout.writeLine(encoder.encode(sample))
            case .deleted(let uuid, let type, _):
                context.stdout.writeLine("{\"deleted\":\"\(uuid.uuidString.lowercased())\",\"type\":\(JSONText.quoted(type))}")
            }
        }
        context.stdout.writeLine("{\"anchor\":\(anchor)}")
    }
}

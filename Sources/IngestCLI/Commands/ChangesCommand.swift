import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import PostgresStore
import SQLiteStore

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
    static let signature = Signature {
        Option("since", valueName: "ANCHOR", help: "Only changes after this anchor (default 0: everything); a fleet's is a token.",
               default: "0")
        Option("type", valueName: "T", help: "Only this quantity type.")
        PersonOption.self
        JSONOption.self
        QueryStoreOptions.self
    }

    /// Where to start: a store file's anchor, or a fleet's token.
    enum Since {
        case local(Int64)
        case fleet(FleetAnchor)
    }

    let since: Since
    let type: QuantityType?
    let json: Bool
    let storeOptions: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        let text: String = try arguments.value("since") ?? "0"
        storeOptions = try QueryStoreOptions(arguments)
        if storeOptions.isFleet {
            do {
                since = .fleet(try FleetAnchor(token: text))
            } catch {
                throw UsageError.invalidValue(text, argument: "--since", reason: error.description)
            }
        } else {
            guard let anchor = Int64(text) else {
                throw UsageError.invalidValue(text, argument: "--since", reason: "not an anchor (a whole number printed by 'changes')")
            }
            guard anchor >= 0 else { throw UsageError.invalidValue(text, argument: "--since", reason: "must not be negative") }
            since = .local(anchor)
        }
        type = try (try arguments.value("type") as String?).map(CommonArguments.quantityType)
        json = try JSONOption(arguments).isOn
        person = try PersonOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let opened = try storeOptions.open(context)
        defer { opened.close() }
        if let fleet = opened as? PostgresQueryStore, case .fleet(let anchor) = since {
            try runFleet(fleet, since: anchor, context)
            return
        }
        guard let store = opened as? HealthStore, case .local(let since) = since else {
            throw CommandFailure.failure("changes: the store and --since do not match")
        }
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

    /// The fleet's changes, streamed as they are read; the token of the new position last.
    private func runFleet(_ store: PostgresQueryStore, since: FleetAnchor, _ context: CommandContext) throws {
        let encoder = HealthRecordEncoder()
        let next: FleetAnchor
        do {
            next = try store.changes(since: since, type: type, scope: try storeOptions.scope(person, in: store)) { change in
                switch change {
                case .added(let sample, _, _):
                    context.stdout.writeLine(encoder.encode(sample))
                case .deleted(let uuid, let type, _, _):
                    context.stdout.writeLine("{\"deleted\":\"\(uuid.uuidString.lowercased())\",\"type\":\(JSONText.quoted(type))}")
                }
            }
        } catch let error as PostgresError {
            throw CommandFailure.failure(error.description)
        }
        context.stdout.writeLine("{\"anchor\":\(JSONText.quoted(next.token))}")
    }
}

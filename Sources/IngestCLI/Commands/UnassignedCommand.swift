import ArgumentParsing
import HealthModel

/// `ingestd unassigned`: the samples no rule could give to one person.
struct UnassignedCommand: Command {
    static let configuration = CommandConfiguration(
        name: "unassigned", abstract: "List the samples that belong to nobody yet (never in a person's queries).",
        discussion: "Move them with 'ingestd assign UUID... PERSON' or 'ingestd assign --all-from DEVICE PERSON'.",
        examples: [
            "ingestd unassigned",
            "ingestd unassigned --limit 20",
        ]
    )
    static let limitOption = TypedOption<Int>(Option("limit", valueName: "N", help: "At most N samples (0: no limit).", default: "0"))
    static let signature = Signature {
        Self.limitOption
        JSONOption.self
        StoreOption.self
    }
    let limit: Int
    let json: Bool
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        limit = try arguments.value(Self.limitOption) ?? 0
        json = try JSONOption(arguments).isOn
        storeFile = try StoreOption(arguments)
        guard limit >= 0 else { throw UsageError.invalidValue(String(limit), argument: Self.limitOption.spelling, reason: "must not be negative") }
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openAssignments(context)
        defer { store.close() }
        let samples = try store.unassignedSamples(limit: limit)
        if json {
            let encoder = HealthRecordEncoder()
            for sample in samples { context.stdout.writeLine(encoder.encode(sample)) }
            return
        }
        if samples.isEmpty {
            context.stdout.writeLine("no unassigned samples")
            return
        }
        let rows = samples.map { sample -> [String] in
            [sample.uuid.uuidString.lowercased(), sample.type.shortName, ISO8601DateTime.string(from: sample.start),
             JSONNumber.format(sample.quantity.value) + " " + sample.quantity.unit.unitString, sample.source,
             sample.device?.localIdentifier ?? sample.device?.name ?? ""]
        }
        context.stdout.write(Table(header: ["UUID", "TYPE", "START", "VALUE", "SOURCE", "DEVICE"], rows: rows).rendered)
    }
}

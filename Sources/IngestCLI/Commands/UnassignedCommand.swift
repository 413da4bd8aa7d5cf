import ArgumentParsing
import HealthModel
import Pipeline

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

    /// Streamed: the JSON lines as the store reads them; the table in two reads of the feed (the
    /// column widths, then the rows), so memory is bounded by none of their number.
    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openAssignments(context)
        defer { store.close() }
        let printed: Int
        do {
            printed = json ? try writeLines(store, context) : try writeTable(store, context)
        } catch is SampleStreamEnded {
            return
        }
        if printed == 0, !json { context.stdout.writeLine("no unassigned samples") }
    }

    /// One JSON line per sample; returns how many.
    private func writeLines(_ store: any SampleAssignmentStore, _ context: CommandContext) throws -> Int {
        let encoder = HealthRecordEncoder()
        var count = 0
        try store.forEachUnassignedSample(limit: limit) { sample in
            if context.stdout.isReaderGone { throw SampleStreamEnded() }
            context.stdout.writeLine(encoder.encode(sample))
            count += 1
        }
        return count
    }

    /// The table, in two reads of the feed (`TableLayout.stream`); returns how many rows it has.
    private func writeTable(_ store: any SampleAssignmentStore, _ context: CommandContext) throws -> Int {
        try TableLayout.stream(header: Self.header, to: context.stdout) { row in
            try store.forEachUnassignedSample(limit: limit) { try row(Self.row($0)) }
        }
    }

    static let header = ["UUID", "TYPE", "START", "VALUE", "SOURCE", "DEVICE"]

    static func row(_ sample: QuantitySample) -> [String] {
        [UUIDText.string(sample.uuid, .lower), sample.type.shortName, ISO8601DateTime.string(from: sample.start),
         JSONNumber.format(sample.quantity.value) + " " + sample.quantity.unit.unitString, sample.source,
         sample.device?.localIdentifier ?? sample.device?.name ?? ""]
    }
}

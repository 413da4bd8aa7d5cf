import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd samples TYPE`: HealthKit's sample query.
struct SamplesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "samples", abstract: "List stored samples of a type, oldest first.",
        discussion: "A sample is listed when its interval overlaps [--from, --to).")
    static let signature = Signature {
        Positional("TYPE", help: "Quantity type: full identifier or short name (stepCount).")
        TimeRangeOptions.self
        Option("source", valueName: "ID", help: "Only samples of this source.")
        UnitOption.self
        Option("limit", valueName: "N", help: "At most N samples (0: no limit).", default: "0")
        PersonOption.self
        JSONOption.self
        QueryStoreOptions.self
    }

    let type: QuantityType
    let from: Date?
    let to: Date?
    let source: String?
    let unit: String?
    let limit: Int
    let json: Bool
    let storeFile: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        type = try CommonArguments.quantityType(try arguments.required("type"))
        let range = try TimeRangeOptions(arguments)
        from = range.from
        to = range.to
        source = try arguments.value("source")
        unit = try UnitOption(arguments).text
        limit = try arguments.value("limit") ?? 0
        json = try JSONOption(arguments).isOn
        storeFile = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
        guard limit >= 0 else { throw UsageError.invalidValue(String(limit), argument: "--limit", reason: "must not be negative") }
    }

    func run(_ context: CommandContext) async throws {
        let outputUnit = try CommonArguments.outputUnit(unit, for: type)
        let store = try storeFile.open(context)
        defer { store.close() }
        let samples = try store.samples(type: type, from: from, to: to, source: source,
                                        scope: try storeFile.scope(person, in: store), limit: limit)
        let encoder = HealthRecordEncoder()
        if json {
            for sample in samples {
                let converted = (try? sample.converted(to: outputUnit)) ?? sample
                context.stdout.writeLine(encoder.encode(converted))
            }
            return
        }
        let rows = samples.map { sample -> [String] in
            let value = CommonArguments.convert(sample.quantity.value, from: type.canonicalUnit, to: outputUnit)
            return [ISO8601DateTime.string(from: sample.start), ISO8601DateTime.string(from: sample.end),
                    JSONNumber.format(value) + " " + outputUnit.unitString, sample.source,
                    sample.device?.name ?? sample.device?.localIdentifier ?? ""]
        }
        context.stdout.write(Table(header: ["START", "END", "VALUE", "SOURCE", "DEVICE"], rows: rows).rendered)
    }
}

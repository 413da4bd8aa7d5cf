import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd samples TYPE`: HealthKit's sample query.
struct SamplesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "samples", abstract: "List stored samples of a type, oldest first.",
        discussion: """
            A sample is listed when its interval overlaps [--from, --to). --latest or --newest N \
            list the most recent samples instead of the oldest. Text output shows values in the \
            type's display unit (bpm, kg or lb, %, °C or °F) and times in --tz (default: this \
            machine's zone); --json keeps the stored value and unit, with times in UTC unless --tz \
            is given.
            """,
        examples: [
            "ingestd samples bodyMass --latest",
            "ingestd samples heartRate --newest 10 --unit bpm",
            "ingestd samples bodyMass --from 2026-11-01 --units us",
            "ingestd samples stepCount --from 2026-11-01 --json --tz UTC",
        ]
    )
    static let typeArgument = TypedPositional<String>(Positional("TYPE", help: "Quantity type: full identifier or short name (stepCount)."))
    static let sourceOption = TypedOption<String>(Option("source", valueName: "ID", help: "Only samples of this source."))
    static let limitOption = TypedOption<Int>(Option(
        "limit", valueName: "N", help: "At most N samples, the oldest (0: no limit).", default: "0"))
    static let latestFlag = TypedFlag(Flag("latest", help: "Only the newest sample."))
    static let newestOption = TypedOption<Int>(Option("newest", valueName: "N", help: "The newest N samples, oldest of them first."))
    static let signature = Signature {
        Self.typeArgument
        TimeRangeOptions.self
        Self.sourceOption
        UnitOption.self
        UnitSystemOption.self
        Self.limitOption
        Self.latestFlag
        Self.newestOption
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
    /// `--latest` (1) or `--newest N`; nil lists from the oldest.
    let newest: Int?
    let units: UnitSystemOption
    /// The zone times are printed in.
    let printZone: TimeZone
    let json: Bool
    let storeFile: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        type = try CommonArguments.quantityType(try arguments.required(Self.typeArgument))
        let range = try TimeRangeOptions(arguments)
        from = range.from
        to = range.to
        source = try arguments.value(Self.sourceOption)
        unit = try UnitOption(arguments).text
        limit = try arguments.value(Self.limitOption) ?? 0
        let newestCount = try arguments.value(Self.newestOption)
        if arguments.flag(Self.latestFlag) {
            guard newestCount == nil else {
                throw UsageError.invalidValue("--newest", argument: "--latest", reason: "give --latest or --newest N, not both")
            }
            newest = 1
        } else {
            newest = newestCount
        }
        if let newest, newest < 1 {
            throw UsageError.invalidValue(String(newest), argument: "--newest", reason: "must be at least 1")
        }
        if newest != nil, limit != 0 {
            throw UsageError.invalidValue(String(limit), argument: "--limit", reason: "--limit lists the oldest; use --newest N alone")
        }
        units = try UnitSystemOption(arguments)
        json = try JSONOption(arguments).isOn
        printZone = PrintedTime.zone(named: range.zoneName, zone: range.zone, json: json)
        storeFile = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
        guard limit >= 0 else { throw UsageError.invalidValue(String(limit), argument: "--limit", reason: "must not be negative") }
    }

    func run(_ context: CommandContext) async throws {
        let outputUnit = try CommonArguments.outputUnit(unit, for: type)
        let store = try storeFile.open(context)
        defer { store.close() }
        let scope = try storeFile.scope(person, in: store)
        let system = try units.system(for: scope, in: store)
        let encoder = HealthRecordEncoder()
        if json {
            // Streamed: a line per sample as the store reads it, in memory bounded by none of their number.
            let write = { (sample: QuantitySample) in
                let converted = unit == nil ? sample : ((try? sample.converted(to: outputUnit)) ?? sample)
                context.stdout.writeLine(encoder.encode(converted))
            }
            if let newest {
                try store.newestSamples(type: type, from: from, to: to, source: source, scope: scope, count: newest).forEach(write)
            } else {
                do {
                    try store.forEachSample(type: type, from: from, to: to, source: source, scope: scope, limit: limit) { sample in
                        if context.stdout.isReaderGone { throw SampleStreamEnded() }
                        write(sample)
                    }
                } catch is SampleStreamEnded {
                    return
                }
            }
            return
        }
        let samples = try newest.map {
            try store.newestSamples(type: type, from: from, to: to, source: source, scope: scope, count: $0)
        } ?? store.samples(type: type, from: from, to: to, source: source, scope: scope, limit: limit)
        let time = PrintedTime(zone: printZone)
        let rows = samples.map { sample -> [String] in
            let value = unit == nil
                ? DisplayUnits.text(sample.quantity.value, of: type, system: system)
                : DisplayUnits.text(sample.quantity.value, of: type, in: outputUnit, system: system)
            return [time.string(sample.start), time.string(sample.end), value, sample.source,
                    sample.device?.name ?? sample.device?.localIdentifier ?? ""]
        }
        if rows.isEmpty {
            context.stdout.writeLine("No \(type.shortName) samples" + (from != nil || to != nil ? " in this range." : "."))
            return
        }
        context.stdout.write(Table(header: ["START", "END", "VALUE", "SOURCE", "DEVICE"], rows: rows).rendered)
    }
}

/// Ends a streamed read early: the reader of standard output has gone (`samples --json | head`).
struct SampleStreamEnded: Error {}

import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

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

    /// The type, range, source and `--limit`, `--latest` or `--newest N`.
    let selection: SampleSelection
    let unit: String?
    let units: UnitSystemOption
    /// The zone times are printed in.
    let printZone: TimeZone
    let json: Bool
    let storeFile: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        let type = try CommonArguments.quantityType(try arguments.required(Self.typeArgument))
        let range = try TimeRangeOptions(arguments)
        unit = try UnitOption(arguments).text
        let source = try arguments.value(Self.sourceOption)
        let limit = try arguments.value(Self.limitOption) ?? 0
        let newest = try arguments.value(Self.newestOption)
        do {
            selection = try SampleSelection(type: type, from: range.from, to: range.to, source: source, limit: limit,
                                            latest: arguments.flag(Self.latestFlag), newest: newest)
        } catch {
            switch error {
            case .latestAndNewest:
                throw UsageError.invalidValue("--newest", argument: "--latest", reason: "give --latest or --newest N, not both")
            case .newestBelowOne(let count):
                throw UsageError.invalidValue(String(count), argument: "--newest", reason: "must be at least 1")
            case .limitWithNewest:
                throw UsageError.invalidValue(String(limit), argument: "--limit", reason: "--limit lists the oldest; use --newest N alone")
            case .negativeLimit:
                throw UsageError.invalidValue(String(limit), argument: "--limit", reason: "must not be negative")
            }
        }
        units = try UnitSystemOption(arguments)
        json = try JSONOption(arguments).isOn
        printZone = PrintedTime.zone(named: range.zoneName, zone: range.zone, json: json)
        storeFile = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let type = selection.type
        let outputUnit = try CommonArguments.outputUnit(unit, for: type)
        let store = try storeFile.open(context)
        defer { store.close() }
        let scope = try storeFile.scope(person, in: store)
        let system = try units.system(for: scope, in: store)
        if json {
            // Streamed: a line per sample as the store reads it, in memory bounded by none of their number.
            let encoder = HealthRecordEncoder(timeZone: printZone)
            do {
                try selection.forEach(in: store, scope: scope) { sample in
                    if context.stdout.isReaderGone { throw SampleStreamEnded() }
                    let converted = unit == nil ? sample : ((try? sample.converted(to: outputUnit)) ?? sample)
                    context.stdout.writeLine(encoder.encode(converted))
                }
            } catch is SampleStreamEnded {
                return
            }
            return
        }
        // The table in two reads (the column widths, then the rows): memory bounded by none of their number.
        let time = PrintedTime(zone: printZone)
        let printed: Int
        do {
            printed = try TableLayout.stream(header: ["START", "END", "VALUE", "SOURCE", "DEVICE"], to: context.stdout) { row in
                try selection.forEach(in: store, scope: scope) { sample in
                    let value = unit == nil
                        ? DisplayUnits.text(sample.quantity.value, of: type, system: system)
                        : DisplayUnits.text(sample.quantity.value, of: type, in: outputUnit, system: system)
                    try row([time.string(sample.start), time.string(sample.end), value, sample.source,
                             sample.device?.name ?? sample.device?.localIdentifier ?? ""])
                }
            }
        } catch is SampleStreamEnded {
            return
        }
        if printed == 0 {
            context.stdout.writeLine("No \(type.shortName) samples" + (selection.from != nil || selection.to != nil ? " in this range." : "."))
        }
    }
}

/// Ends a streamed read early: the reader of standard output has gone (`samples --json | head`).
struct SampleStreamEnded: Error {}

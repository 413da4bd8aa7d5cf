import ArgumentParsing
import Foundation
import HealthModel
import WebDashboard

/// `ingestd report`: a self-contained, printable HTML health report of one person's range.
struct ReportCommand: Command {
    static let configuration = CommandConfiguration(
        name: "report", abstract: "A printable HTML report of a person's range (blood pressure, weight, steps, heart rate).",
        discussion: """
            One self-contained file (inline SVG charts and CSS, no script, nothing loaded from the \
            network) with the blood-pressure log and its categories, weight and body composition, weekly \
            steps and daily heart rate, each chart with its data table; it prints on A4 or Letter. \
            --to is inclusive: the report covers whole days from --from through --to in --tz.
            """,
        examples: [
            "ingestd report --person ann --from 2026-01-01 --to 2026-03-31 --out report.html",
            "ingestd report --from 2026-03-01 --to 2026-03-31 --tz Europe/Berlin --out march.html",
        ])
    static let fromOption = TypedOption<CalendarDate>(
        Option("from", valueName: "YYYY-MM-DD", help: "The first day."), expected: "a date YYYY-MM-DD") { CalendarDate($0) }
    static let toOption = TypedOption<CalendarDate>(
        Option("to", valueName: "YYYY-MM-DD", help: "The last day (included)."), expected: "a date YYYY-MM-DD") { CalendarDate($0) }
    static let outOption = TypedOption<String>(Option("out", valueName: "FILE", help: "Where to write the HTML (mode 0600)."))
    static let signature = Signature {
        Self.fromOption
        Self.toOption
        Self.outOption
        TimeZoneOption.self
        PersonOption.self
        QueryStoreOptions.self
    }

    let from: CalendarDate
    let to: CalendarDate
    let out: String
    let zone: TimeZone
    let person: PersonOption
    let storeFile: QueryStoreOptions

    init(_ arguments: ParsedValues) throws {
        guard let from = try arguments.value(Self.fromOption) else {
            throw UsageError.missingOption("--from", valueName: "YYYY-MM-DD")
        }
        guard let to = try arguments.value(Self.toOption) else {
            throw UsageError.missingOption("--to", valueName: "YYYY-MM-DD")
        }
        self.from = from
        self.to = to
        out = try arguments.required(Self.outOption)
        zone = try TimeZoneOption(arguments).zone
        person = try PersonOption(arguments)
        storeFile = try QueryStoreOptions(arguments)
        guard from <= to else { throw UsageError.invalid("--from must not be after --to") }
    }

    func run(_ context: CommandContext) async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let start = CommonArguments.startOfDay(from, in: zone), let last = CommonArguments.startOfDay(to, in: zone),
              let end = calendar.date(byAdding: .day, value: 1, to: last) else {
            throw CommandError.uncomputableDays(from: from, to: to, zone: zone.identifier)
        }
        let store = try storeFile.open(context)
        defer { store.close() }
        let scope = try storeFile.scope(person, in: store)
        guard case .named(let name) = scope.people else {
            throw UsageError.invalid("a report is of one person: give --person NAME")
        }
        let html = try HealthReport(store: store, person: name, from: start, to: end, zone: zone).html(generated: Date())
        let data = Data(html.utf8)
        guard FileManager.default.createFile(atPath: out, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CommandError.unwritable(path: out, reason: nil)
        }
        context.stderr.writeLine("wrote \(out): report of \(PrintableText.escaped(name)), \(from) to \(to)")
    }
}

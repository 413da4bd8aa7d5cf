import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd today`: the seed's two numbers, merged across sources.
struct TodayCommand: Command {
    static let configuration = CommandConfiguration(
        name: "today", abstract: "Today's steps and walking/running distance in km, merged across sources.",
        discussion: """
            Overlapping sources are not added up: where two devices recorded the same walk, the \
            higher-priority source counts ('ingestd priority stepCount SOURCE...'). --date takes \
            today, yesterday or YYYY-MM-DD (in --tz); --units us prints the distance in miles.
            """,
        examples: [
            "ingestd today",
            "ingestd today --date yesterday --person alice",
            "ingestd today --date 2026-11-30 --json",
        ]
    )
    static let dateOption = TypedOption<DaySelection>(
        Option("date", valueName: "DAY", help: "Another day: yesterday, today or YYYY-MM-DD."),
        expected: "yesterday, today or a date YYYY-MM-DD") { DaySelection($0) }
    static let signature = Signature {
        Self.dateOption
        TimeZoneOption.self
        UnitSystemOption.self
        PersonOption.self
        JSONOption.self
        QueryStoreOptions.self
    }

    /// The day asked for; nil for today.
    let date: DaySelection?
    let units: UnitSystemOption
    let zone: TimeZone
    let zoneName: String
    let json: Bool
    let storeFile: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        let zoneOption = try TimeZoneOption(arguments)
        zone = zoneOption.zone
        zoneName = zoneOption.name ?? zone.identifier
        date = try arguments.value(Self.dateOption)
        units = try UnitSystemOption(arguments)
        json = try JSONOption(arguments).isOn
        storeFile = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let day: CalendarDate
        if case .date(let given) = date {
            day = given
        } else {
            let offset = date == .yesterday ? -1 : 0
            let reference = calendar.date(byAdding: .day, value: offset, to: Date()) ?? Date()
            let parts = calendar.dateComponents([.year, .month, .day], from: reference)
            guard let today = CalendarDate(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) else {
                throw CommandError.unknownToday(zone: zoneName)
            }
            day = today
        }
        guard let start = CommonArguments.startOfDay(day, in: zone),
              let end = calendar.date(byAdding: .day, value: 1, to: start) else {
            throw CommandError.uncomputableDay(day, zone: zoneName)
        }
        var steps = 0.0
        var meters = 0.0
        var system = units.system
        if storeFile.filePath(context).map({ FileManager.default.fileExists(atPath: $0) }) ?? true {
            let store = try storeFile.open(context)
            defer { store.close() }
            let scope = try storeFile.scope(person, in: store)
            system = try units.system(for: scope, in: store)
            steps = try store.statistics(.sum, type: .stepCount, from: start, to: end, granularity: nil, zone: zone,
                                         scope: scope).first?.value ?? 0
            meters = try store.statistics(.sum, type: .distanceWalkingRunning, from: start, to: end, granularity: nil,
                                          zone: zone, scope: scope).first?.value ?? 0
        }
        if json {
            context.stdout.writeLine(QueryAnswerJSON.todayLine(day: "\(day)", zoneName: zoneName, steps: steps, meters: meters))
        } else {
            let distance = DisplayUnits.text(meters, of: .distanceWalkingRunning, system: system)
            context.stdout.writeLine("\(day) (\(zoneName)): \(JSONNumber.format(steps.rounded())) steps, \(distance)")
        }
    }
}

/// `today --date`: yesterday, today or a calendar date.
enum DaySelection: Equatable {
    case today
    case yesterday
    case date(CalendarDate)

    init?(_ text: String) {
        switch text.lowercased() {
        case "today": self = .today
        case "yesterday": self = .yesterday
        default:
            guard let date = CalendarDate(text) else { return nil }
            self = .date(date)
        }
    }
}

import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd today`: the seed's two numbers, merged across sources.
struct TodayCommand: Command {
    static let configuration = CommandConfiguration(
        name: "today", abstract: "Today's steps and walking/running distance in km, merged across sources.",
        discussion: """
            Overlapping sources are not added up: where two devices recorded the same walk, the \
            higher-priority source counts ('ingestd priority stepCount SOURCE...').
            """)
    static let signature = Signature {
        Option("date", valueName: "YYYY-MM-DD", help: "Another day instead of today.")
        TimeZoneOption.self
        PersonOption.self
        JSONOption.self
        QueryStoreOptions.self
    }

    let date: CalendarDate?
    let zone: TimeZone
    let zoneName: String
    let json: Bool
    let storeFile: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        let zoneOption = try TimeZoneOption(arguments)
        zone = zoneOption.zone
        zoneName = zoneOption.name ?? zone.identifier
        date = try arguments.value("date", expected: "a date YYYY-MM-DD") { CalendarDate($0) }
        json = try JSONOption(arguments).isOn
        storeFile = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let day: CalendarDate
        if let date {
            day = date
        } else {
            let parts = calendar.dateComponents([.year, .month, .day], from: Date())
            guard let today = CalendarDate(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) else {
                throw CommandFailure.failure("cannot tell today's date in \(zoneName)")
            }
            day = today
        }
        guard let start = CommonArguments.startOfDay(day, in: zone),
              let end = calendar.date(byAdding: .day, value: 1, to: start) else {
            throw CommandFailure.failure("cannot compute the day \(day) in \(zoneName)")
        }
        var steps = 0.0
        var meters = 0.0
        if storeFile.filePath(context).map({ FileManager.default.fileExists(atPath: $0) }) ?? true {
            let store = try storeFile.open(context)
            defer { store.close() }
            let scope = try storeFile.scope(person, in: store)
            steps = try store.statistics(.sum, type: .stepCount, from: start, to: end, granularity: nil, zone: zone,
                                         scope: scope).first?.value ?? 0
            meters = try store.statistics(.sum, type: .distanceWalkingRunning, from: start, to: end, granularity: nil,
                                          zone: zone, scope: scope).first?.value ?? 0
        }
        let stepsText = JSONNumber.format(steps.rounded())
        let kilometres = (meters / 1000 * 1000).rounded() / 1000
        if json {
            context.stdout.writeLine(
                "{\"date\":\"\(day)\",\"tz\":\(JSONText.quoted(zoneName)),\"steps\":\(stepsText),\"distance_km\":\(JSONNumber.format(kilometres))}")
        } else {
            context.stdout.writeLine("\(day) (\(zoneName)): \(stepsText) steps, \(JSONNumber.format(kilometres)) km")
        }
    }
}

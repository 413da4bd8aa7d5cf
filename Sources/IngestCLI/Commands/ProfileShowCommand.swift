import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd profile show`.
struct ProfileShowCommand: Command {
    static let configuration = CommandConfiguration(name: "show", abstract: "Print a person's profile.",
        examples: [
            "ingestd profile show",
            "ingestd profile show --json",
        ]
    )
    static let signature = Signature {
        PersonOption.self
        StoreReportOptions.self
    }
    let person: PersonOption
    let options: StoreReportOptions
    var json: Bool { options.json }

    init(_ arguments: ParsedValues) throws {
        person = try PersonOption(arguments)
        options = try StoreReportOptions(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try options.store.openPeople(context)
        defer { store.close() }
        let profile = try person.resolve(in: store).profile
        if json {
            var line = "{\"dateOfBirth\":" + (profile.dateOfBirth.map { JSONText.quoted($0.description) } ?? "null")
            line += ",\"biologicalSex\":" + JSONText.quoted(profile.biologicalSex.rawValue)
            if let height = profile.height {
                line += ",\"height\":{\"value\":\(JSONNumber.format(height.value)),\"unit\":\(JSONText.quoted(height.unit.unitString))}"
            } else {
                line += ",\"height\":null"
            }
            context.stdout.writeLine(line + "}")
        } else {
            context.stdout.writeLine("date of birth:  \(profile.dateOfBirth?.description ?? "not set")")
            context.stdout.writeLine("biological sex: \(profile.biologicalSex.rawValue)")
            context.stdout.writeLine("height:         \(profile.height?.description ?? "not set")")
        }
    }
}

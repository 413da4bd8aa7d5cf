import ArgumentParsing
import Foundation
import HealthModel
import SQLiteStore

/// `ingestd people set NAME --body-composition standard|vendor|estimate|none`.
struct PeopleSetCommand: Command {
    static let configuration = CommandConfiguration(
        name: "set", abstract: "Change a person's settings: the body-composition formula of their weighings.",
        discussion: """
            --body-composition standard derives body fat, lean mass, water, muscle and BMR from a \
            scale's impedance with published equations (Sun 2003, Janssen 2000, Katch-McArdle); vendor \
            uses the scale family's own formula where it is published (Xiaomi, Xiaomi S400, Yunmai, \
            QN), else standard; estimate is standard, and derives impedance-free estimates (Gallagher \
            2000 body fat, Boer lean mass, Mifflin-St Jeor BMR) from weighings without an impedance; \
            none derives nothing. The person's weighings are recomputed at once: the change feed shows the \
            old derived values deleted and the new ones added. Example: \
            ingestd people set alice --body-composition vendor
            """,
        usage: "NAME --body-composition standard|vendor|estimate|none",
        examples: [
            "ingestd people set alice --body-composition vendor",
            "ingestd people set bob --body-composition none",
            "ingestd people set carol --body-composition estimate",
        ]
    )
    static let signature = Signature {
        Positional("NAME", help: "The person.")
        Option("body-composition", valueName: "FORMULA", help: "standard, vendor, estimate or none.",
               allowedValues: BodyCompositionChoice.allCases.map(\.rawValue))
        StoreOption.self
    }
    let name: String
    let choice: BodyCompositionChoice
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        name = try arguments.required("name")
        let parsed = try arguments.value("body-composition", expected: "standard, vendor, estimate or none") { BodyCompositionChoice(rawValue: $0) }
        guard let choice = parsed else {
            throw UsageError.invalid("nothing to set: give --body-composition standard|vendor|estimate|none")
        }
        self.choice = choice
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.open(context)
        defer { store.close() }
        let recomputed: BodyCompositionRecomputation
        do {
            recomputed = try store.setBodyComposition(choice, of: try store.person(named: name))
        } catch let error as PeopleError {
            throw error.usageError
        }
        context.stderr.writeLine("\(name): body composition \(choice); \(recomputed.summary)")
    }
}

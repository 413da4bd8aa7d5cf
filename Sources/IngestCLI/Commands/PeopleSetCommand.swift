import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd people set NAME [--body-composition standard|vendor|estimate|none] [--units metric|us|default]`.
struct PeopleSetCommand: Command {
    static let configuration = CommandConfiguration(
        name: "set", abstract: "Change a person's settings: the body-composition formula of their weighings, the units they read.",
        discussion: """
            --body-composition standard derives body fat, lean mass, water, muscle and BMR from a \
            scale's impedance with published equations (Sun 2003, Janssen 2000, Katch-McArdle); vendor \
            uses the scale family's own formula where it is published (Xiaomi, Xiaomi S400, Yunmai, \
            QN), else standard; estimate is standard, and derives impedance-free estimates (Gallagher \
            2000 body fat, Boer lean mass, Mifflin-St Jeor BMR) from weighings without an impedance; \
            none derives nothing. The person's weighings are recomputed at once: the change feed shows the \
            old derived values deleted and the new ones added. --units us prints the person's values in \
            pounds, miles, °F and mg/dL (metric: kilograms, kilometres, °C, mmol/L) in 'samples', 'stats', \
            'today', the dashboard and the report, unless --units is given there; default follows the \
            configuration's units again. What is stored does not change.
            """,
        usage: "NAME [--body-composition standard|vendor|estimate|none] [--units metric|us|default]",
        examples: [
            "ingestd people set alice --body-composition vendor",
            "ingestd people set bob --units us",
            "ingestd people set carol --body-composition estimate --units metric",
        ]
    )
    static let nameArgument = TypedPositional<String>(Positional("NAME", help: "The person."))
    static let bodyComposition = TypedOption<BodyCompositionChoice>(
        Option("body-composition", valueName: "FORMULA", help: "standard, vendor, estimate or none.",
               allowedValues: BodyCompositionChoice.allCases.map(\.rawValue)),
        expected: "standard, vendor, estimate or none") { BodyCompositionChoice(rawValue: $0) }
    static let unitsOption = TypedOption<UnitsChange>(
        Option("units", valueName: "SYSTEM", help: "metric, us, or default (the configuration's).",
               allowedValues: UnitSystem.allCases.map(\.rawValue) + ["default"]),
        expected: "metric, us or default") { text in
            text == "default" ? .followConfiguration : UnitSystem(rawValue: text).map(UnitsChange.system)
        }
    static let signature = Signature {
        Self.nameArgument
        Self.bodyComposition
        Self.unitsOption
        StoreOption.self
    }
    /// The person's units: a system, or back to the configuration's.
    enum UnitsChange: Equatable {
        case system(UnitSystem)
        case followConfiguration
    }

    let name: String
    let choice: BodyCompositionChoice?
    let units: UnitsChange?
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        name = try arguments.required(Self.nameArgument)
        choice = try arguments.value(Self.bodyComposition)
        // Only the command line's --units sets the person's (the configuration's is not a change).
        units = arguments.isPresent(Self.unitsOption) ? try arguments.value(Self.unitsOption) : nil
        guard choice != nil || units != nil else {
            throw UsageError.invalid("nothing to set: give --body-composition standard|vendor|estimate|none or --units metric|us|default")
        }
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openHousehold(context)
        defer { store.close() }
        do {
            let person = try store.person(named: name)
            if let units {
                let system: UnitSystem? = if case .system(let chosen) = units { chosen } else { nil }
                try store.setUnits(system, of: person)
                context.stderr.writeLine("\(name): units \(system?.rawValue ?? "from the configuration")")
            }
            if let choice {
                let recomputed = try store.setBodyComposition(choice, of: person)
                context.stderr.writeLine("\(name): body composition \(choice); \(recomputed.summary)")
            }
        } catch let error as PeopleError {
            throw error.usageError
        }
    }
}

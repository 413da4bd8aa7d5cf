import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd units`: the HKUnit grammar at the command line.
struct Units: Command {
    static let configuration = CommandConfiguration(
        name: "units",
        abstract: "Convert values between HealthKit unit strings; list the known units.",
        subcommands: [Convert.self, List.self]
    )

    init(_ arguments: ParsedValues) throws {}

    /// `ingestd units convert VALUE FROM TO`.
    struct Convert: Command {
        static let configuration = CommandConfiguration(
            name: "convert",
            abstract: "Convert VALUE from one unit to another and print the number alone.",
            discussion: """
                Units are HKUnit strings: kg, lb, st, cm, in, ft, mi, count/min, m/s^2, mg/dL, \
                mmol<180.15588000005408>/L, kcal, Cal, kJ, degC, degF, K, % (a fraction, as in HealthKit). \
                Quote units with < > or parentheses for the shell.
                """
        )
        static let signature = Signature {
            Positional("VALUE", help: "The number to convert.")
            Positional("FROM", help: "The unit VALUE is in.")
            Positional("TO", help: "The unit to convert to.")
        }

        let value: String
        let from: String
        let to: String

        init(_ arguments: ParsedValues) throws {
            value = try arguments.required("value")
            from = try arguments.required("from")
            to = try arguments.required("to")
        }

        func run(_ context: CommandContext) async throws {
            guard let number = Double(value), number.isFinite else {
                throw CommandFailure.dataError("\"\(value)\" is not a finite number")
            }
            do {
                let source = try HealthModel.Unit(from: from)
                let target = try HealthModel.Unit(from: to)
                context.stdout.writeLine(JSONNumber.format(try source.convert(number, to: target)))
            } catch {
                throw CommandFailure.dataError(error.description)
            }
        }
    }

    /// `ingestd units list`.
    struct List: Command {
        static let configuration = CommandConfiguration(
            name: "list", abstract: "List the unit atoms and SI prefixes of the HKUnit grammar.")

        init(_ arguments: ParsedValues) throws {}

        func run(_ context: CommandContext) async throws {
            context.stdout.writeLine("ATOMS (symbol, prefixable, dimension, name)")
            let width = UnitAtom.all.map(\.symbol.count).max() ?? 8
            for atom in UnitAtom.all {
                let symbol = atom.symbol.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                let prefixable = (atom.isPrefixable ? "yes" : "no").padding(toLength: 5, withPad: " ", startingAt: 0)
                let dimension = HealthModel.Unit(atom).dimension.description.padding(toLength: 22, withPad: " ", startingAt: 0)
                context.stdout.writeLine("  \(symbol)\(prefixable)\(dimension)\(atom.name)")
            }
            context.stdout.writeLine("")
            context.stdout.writeLine("PREFIXES (before prefixable atoms; whole atoms such as min, mi, mmHg, kcal, d, hr win first)")
            for prefix in MetricPrefix.allCases {
                let symbol = prefix.symbol.padding(toLength: 4, withPad: " ", startingAt: 0)
                context.stdout.writeLine("  \(symbol)\(prefix.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) 1e\(Int(log10(prefix.multiplier)))")
            }
            context.stdout.writeLine("")
            context.stdout.writeLine("OPERATORS  * or . multiply, / divide (one per level), ^N integer power, ( ) group, mol<M> molar mass in g/mol")
        }
    }
}

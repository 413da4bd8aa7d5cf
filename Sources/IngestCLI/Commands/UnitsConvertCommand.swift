import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd units convert VALUE FROM TO`.
struct UnitsConvertCommand: Command {
    static let configuration = CommandConfiguration(
        name: "convert",
        abstract: "Convert VALUE from one unit to another and print the number alone.",
        discussion: """
            Units are HKUnit strings: kg, lb, st, cm, in, ft, mi, count/min, m/s^2, mg/dL, \
            mmol<180.15588000005408>/L, kcal, Cal, kJ, degC, degF, K, % (a fraction, as in HealthKit). \
            Quote units with < > or parentheses for the shell.
            """,
        examples: [
            "ingestd units convert 98.6 degF degC",
            "ingestd units convert 85 lbs kg",
            "ingestd units convert 5.5 mmol<180.15588000005408>/L mg/dL",
        ]
    )
    static let valueArgument = TypedPositional<String>(Positional("VALUE", help: "The number to convert."))
    static let fromArgument = TypedPositional<String>(Positional("FROM", help: "The unit VALUE is in."))
    static let toArgument = TypedPositional<String>(Positional("TO", help: "The unit to convert to."))
    static let signature = Signature {
        Self.valueArgument
        Self.fromArgument
        Self.toArgument
    }

    let value: String
    let from: String
    let to: String

    init(_ arguments: ParsedValues) throws {
        value = try arguments.required(Self.valueArgument)
        from = try arguments.required(Self.fromArgument)
        to = try arguments.required(Self.toArgument)
    }

    func run(_ context: CommandContext) async throws {
        guard let number = Double(value), number.isFinite else {
            throw CommandError.notAFiniteNumber(value)
        }
        do {
            let source = try HealthModel.Unit(from: from)
            let target = try HealthModel.Unit(from: to)
            context.stdout.writeLine(JSONNumber.format(try source.convert(number, to: target)))
        } catch {
            throw CommandError.unit(error)
        }
    }
}

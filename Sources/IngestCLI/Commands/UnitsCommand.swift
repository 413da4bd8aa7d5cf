import ArgumentParsing
import Foundation

/// `ingestd units`: the HKUnit grammar at the command line.
struct UnitsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "units",
        abstract: "Convert values between HealthKit unit strings; list the known units.",
        subcommands: [UnitsConvertCommand.self, UnitsListCommand.self],
        examples: [
            "ingestd units convert 98.6 degF degC",
            "ingestd units list",
        ]
    )

    init(_ arguments: ParsedValues) throws {}
}

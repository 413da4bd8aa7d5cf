import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd units`: the HKUnit grammar at the command line.
struct UnitsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "units",
        abstract: "Convert values between HealthKit unit strings; list the known units.",
        subcommands: [UnitsConvertCommand.self, UnitsListCommand.self]
    )

    init(_ arguments: ParsedValues) throws {}
}

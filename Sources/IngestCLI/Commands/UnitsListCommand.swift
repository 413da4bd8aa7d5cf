import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd units list`.
struct UnitsListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "list", abstract: "List the unit atoms and SI prefixes of the HKUnit grammar.",
        examples: [
            "ingestd units list",
        ]
    )

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

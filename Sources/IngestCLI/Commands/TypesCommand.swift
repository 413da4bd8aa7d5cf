import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd types`: the quantity type catalogue.
struct TypesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "types",
        abstract: "List the quantity types: identifier, short name, canonical unit, aggregation, plausible range.",
        examples: [
            "ingestd types",
            "ingestd types --json",
        ]
    )
    static let signature = Signature {
        JSONOption.declared(help: "One JSON object per type.")
    }

    let json: Bool

    init(_ arguments: ParsedValues) throws {
        json = try JSONOption(arguments).isOn
    }

    func run(_ context: CommandContext) async throws {
        let types = QuantityType.catalogue
        if json {
            for type in types {
                var line = "{\"identifier\":" + JSONText.quoted(type.identifier)
                line += ",\"shortName\":" + JSONText.quoted(type.shortName)
                line += ",\"unit\":" + JSONText.quoted(type.canonicalUnit.unitString)
                line += ",\"aggregation\":" + JSONText.quoted(type.aggregationStyle.description)
                line += ",\"min\":" + JSONNumber.format(type.plausibleRange.lowerBound)
                line += ",\"max\":" + JSONNumber.format(type.plausibleRange.upperBound)
                line += ",\"dietary\":" + (type.isDietary ? "true" : "false") + "}"
                context.stdout.writeLine(line)
            }
            return
        }
        let rows = types.map { type in
            [type.shortName, type.canonicalUnit.unitString, type.aggregationStyle.description,
             JSONNumber.format(type.plausibleRange.lowerBound) + "..." + JSONNumber.format(type.plausibleRange.upperBound),
             type.identifier]
        }
        context.stdout.write(Table(header: ["TYPE", "UNIT", "AGGREGATION", "RANGE", "IDENTIFIER"], rows: rows).rendered)
    }
}

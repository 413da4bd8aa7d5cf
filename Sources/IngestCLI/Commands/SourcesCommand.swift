import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd sources`: who wrote what.
struct SourcesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "sources", abstract: "List sources and their devices with sample counts.",
        discussion: "With --store postgresql://… the fleet's sources across gateways (--gateway ID: one of them).",
        examples: [
            "ingestd sources",
            "ingestd sources --json",
        ]
    )
    static let signature = Signature {
        JSONOption.self
        QueryStoreOptions.self
    }
    let json: Bool
    let storeOptions: QueryStoreOptions

    init(_ arguments: ParsedValues) throws {
        json = try JSONOption(arguments).isOn
        storeOptions = try QueryStoreOptions(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeOptions.open(context)
        defer { store.close() }
        let encoder = HealthRecordEncoder()
        let sources = try store.sourcesWithHeld(scope: QueryScope(gateway: storeOptions.gateway))
        let local = PrintedTime(zone: .current)
        for (source, heldCount) in sources {
            if json {
                context.stdout.writeLine(QueryAnswerJSON.sourceLine(source, held: heldCount, encoder: encoder))
            } else {
                let heldText = heldCount > 0 ? ", \(heldCount) held (undecided: ingestd auth pending)" : ""
                context.stdout.writeLine("\(PrintableText.escaped(source.name)): \(source.sampleCount) samples\(heldText)")
                for type in source.countsByType.keys.sorted() {
                    context.stdout.writeLine("  \(QuantityType.named(type)?.shortName ?? type): \(source.countsByType[type] ?? 0)")
                }
                for device in source.devices {
                    let parts = [device.manufacturer, device.model, device.name, device.localIdentifier].compactMap { $0 }
                    context.stdout.writeLine("  device: \(PrintableText.escaped(parts.joined(separator: " ")))")
                }
                for battery in source.batteries {
                    let device = [battery.device.name, battery.device.localIdentifier].compactMap { $0 }.joined(separator: " ")
                    context.stdout.writeLine("  battery: \(PrintableText.escaped(device)) \(battery.percent) % (said \(local.string(battery.at)))")
                }
            }
        }
        Self.warnAboutLookAlikes(sources.map(\.summary.name), context: context)
    }

    /// `warning: sources "Jana's Apple Watch" and "Jana's\u00A0Apple Watch" look alike …` on
    /// stderr for every group of `names` that differ only in what a reader cannot see.
    static func warnAboutLookAlikes(_ names: [String], context: CommandContext) {
        for group in PrintableText.lookAlikeGroups(names).prefix(20) {
            context.stderr.writeLine("warning: sources " + group.prefix(5).map(PrintableText.quoted).joined(separator: " and ")
                + " look alike but are different sources (invisible, look-alike or compatibility characters)")
        }
    }
}

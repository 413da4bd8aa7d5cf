import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd people [list]`: the household with sample counts, slots and devices.
struct PeopleListCommand: StoreReportCommand {
    static let configuration = CommandConfiguration(name: "list", abstract: "List the people, their slots and sample counts.",
        examples: [
            "ingestd people list",
            "ingestd people list --json",
        ]
    )
    let options: StoreReportOptions

    func run(_ context: CommandContext) async throws {
        let store = try options.store.openHousehold(context, readOnly: true)
        defer { store.close() }
        let owners = try store.deviceOwners()
        var rows: [[String]] = []
        for person in try store.people() {
            let count = try store.sampleCount(of: person)
            let devices = owners.filter { $0.person == person.name }.map(\.device)
            if json {
                var line = "{\"name\":\(JSONText.quoted(person.name)),\"samples\":\(count)"
                line += ",\"scaleUserIndex\":" + (person.scaleUserIndex.map(String.init) ?? "null")
                line += ",\"weightKg\":" + (person.bodyMassKilograms.map(JSONNumber.format) ?? "null")
                line += ",\"units\":" + (person.units.map { JSONText.quoted($0.rawValue) } ?? "null")
                line += ",\"devices\":[" + devices.map(JSONText.quoted).joined(separator: ",") + "]"
                line += ",\"profile\":" + String(decoding: try JSONEncoder().encode(person.profile), as: UTF8.self)
                context.stdout.writeLine(line + "}")
            } else {
                rows.append([person.name, String(count), person.scaleUserIndex.map(String.init) ?? "-",
                             person.bodyMassKilograms.map { JSONNumber.format($0) + " kg" } ?? "-",
                             person.units?.rawValue ?? "-",
                             devices.isEmpty ? "-" : devices.joined(separator: " ")])
            }
        }
        if !json {
            context.stdout.write(Table(header: ["NAME", "SAMPLES", "SCALE SLOT", "WEIGHT", "UNITS", "DEVICES"], rows: rows).rendered)
            let unassigned = try store.unassignedCount()
            if unassigned > 0 {
                context.stdout.writeLine("\(unassigned) unassigned sample\(unassigned == 1 ? "" : "s") (see 'ingestd unassigned')")
            }
        }
    }
}

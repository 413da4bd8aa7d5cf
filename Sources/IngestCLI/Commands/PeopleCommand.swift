import ArgumentParsing
import Foundation
import HealthModel
import SQLiteStore

/// `ingestd people`: the household: who the samples belong to.
struct PeopleCommand: Command {
    static let configuration = CommandConfiguration(
        name: "people", abstract: "Add, list and remove the people whose readings the store keeps.",
        discussion: """
            Every sample belongs to one person or is unassigned. With one person (a new store starts \
            with 'me'), everything is theirs. With several: the device's owner ('ingestd devices assign'), \
            then the scale's user slot (--scale-user-index), then for body mass the person whose recent \
            weight is within the tolerance when nobody else's is; otherwise the sample is unassigned \
            ('ingestd unassigned', 'ingestd assign').
            """,
        subcommands: [Add.self, List.self, Remove.self], defaultSubcommand: List.self)

    init(_ arguments: ParsedValues) throws {}

    struct Add: Command {
        static let configuration = CommandConfiguration(
            name: "add", abstract: "Add a person, with their characteristics and scale slot.",
            discussion: """
                --unit may be given twice: a length unit goes with --height, a mass unit with --weight \
                (e.g. --height 168 --unit cm --weight 60 --unit kg). --weight is where the body-mass \
                rule starts until the person's first assigned weighing.
                """)
        static let signature = Signature {
            Positional("NAME", help: "The person's name (used by --person).")
            Option("date-of-birth", valueName: "YYYY-MM-DD", help: "Date of birth.")
            Option("biological-sex", valueName: "female|male|other", help: "Biological sex.",
                   allowedValues: ["female", "male", "other", "notSet"])
            Option("height", valueName: "N", help: "Height (with a length --unit).")
            Option("weight", valueName: "N", help: "Body mass (with a mass --unit).")
            Option("unit", valueName: "U", help: "The unit of --height or --weight (once for each).", repeatable: true)
            Option("scale-user-index", valueName: "N",
                   help: "The person's user slot on multi-user scales (UDS user index, vendor user id), 0...254.")
            CommonArguments.store
        }
        let name: String
        let profile: UserProfile
        let weightKilograms: Double?
        let scaleUserIndex: Int?
        let storePath: String?

        init(_ arguments: ParsedValues) throws {
            name = try arguments.required("name")
            if let problem = Person.problem(withName: name) {
                throw UsageError.invalidValue(name, argument: "NAME", reason: problem)
            }
            let units: [String] = try arguments.values("unit")
            let height: Double? = try arguments.value("height")
            let weight: Double? = try arguments.value("weight")
            var lengthUnit: HealthModel.Unit?
            var massUnit: HealthModel.Unit?
            for text in units {
                guard let unit = try? HealthModel.Unit(from: text) else {
                    throw UsageError.invalidValue(text, argument: "--unit", reason: "not a unit")
                }
                if unit.isCompatible(with: .meter), height != nil, lengthUnit == nil {
                    lengthUnit = unit
                } else if unit.isCompatible(with: .gram), weight != nil, massUnit == nil {
                    massUnit = unit
                } else {
                    throw UsageError.invalidValue(text, argument: "--unit",
                                                  reason: "not the length unit of --height nor the mass unit of --weight")
                }
            }
            var profile = UserProfile()
            profile.dateOfBirth = try arguments.value("date-of-birth", expected: "a date YYYY-MM-DD") { CalendarDate($0) }
            profile.biologicalSex = try arguments.value("biological-sex", expected: "female, male or other") {
                BiologicalSex(named: $0)
            } ?? .notSet
            if let height {
                guard let lengthUnit else { throw UsageError.invalid("--height needs a length --unit (cm, m, in, ft)") }
                guard let metres = try? lengthUnit.convert(height, to: .meter),
                      QuantityType.height.plausibleRange.contains(metres) else {
                    throw UsageError.invalidValue(String(height), argument: "--height", reason: "not a plausible height")
                }
                profile.height = Quantity(value: height, unit: lengthUnit)
            }
            if let weight {
                guard let massUnit else { throw UsageError.invalid("--weight needs a mass --unit (kg, lb)") }
                guard let kilograms = try? massUnit.convert(weight, to: QuantityType.bodyMass.canonicalUnit),
                      QuantityType.bodyMass.plausibleRange.contains(kilograms) else {
                    throw UsageError.invalidValue(String(weight), argument: "--weight", reason: "not a plausible body mass")
                }
                weightKilograms = kilograms
            } else {
                weightKilograms = nil
            }
            self.profile = profile
            scaleUserIndex = try arguments.value("scale-user-index")
            if let scaleUserIndex, !(0...254).contains(scaleUserIndex) {
                throw UsageError.invalidValue(String(scaleUserIndex), argument: "--scale-user-index", reason: "must be 0...254")
            }
            storePath = try arguments.value("store")
        }

        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(storePath, context: context)
            defer { store.close() }
            do {
                try store.addPerson(name: name, profile: profile, bodyMassKilograms: weightKilograms,
                                    scaleUserIndex: scaleUserIndex)
            } catch let error as PeopleError {
                throw error.usageError
            }
            context.stderr.writeLine("added \(name)")
        }
    }

    struct List: Command {
        static let configuration = CommandConfiguration(name: "list", abstract: "List the people, their slots and sample counts.")
        static let signature = Signature {
            CommonArguments.json
            CommonArguments.store
        }
        let json: Bool
        let storePath: String?

        init(_ arguments: ParsedValues) throws {
            json = arguments.flag("json")
            storePath = try arguments.value("store")
        }

        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(storePath, context: context, readOnly: true)
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
                    line += ",\"devices\":[" + devices.map(JSONText.quoted).joined(separator: ",") + "]"
                    line += ",\"profile\":" + String(decoding: try JSONEncoder().encode(person.profile), as: UTF8.self)
                    context.stdout.writeLine(line + "}")
                } else {
                    rows.append([person.name, String(count), person.scaleUserIndex.map(String.init) ?? "-",
                                 person.bodyMassKilograms.map { JSONNumber.format($0) + " kg" } ?? "-",
                                 devices.isEmpty ? "-" : devices.joined(separator: " ")])
                }
            }
            if !json {
                context.stdout.write(Table(header: ["NAME", "SAMPLES", "SCALE SLOT", "WEIGHT", "DEVICES"], rows: rows).rendered)
                let unassigned = try store.unassignedCount()
                if unassigned > 0 {
                    context.stdout.writeLine("\(unassigned) unassigned sample\(unassigned == 1 ? "" : "s") (see 'ingestd unassigned')")
                }
            }
        }
    }

    struct Remove: Command {
        static let configuration = CommandConfiguration(
            name: "remove", abstract: "Remove a person (refused while samples are theirs, unless moved or deleted).",
            usage: "NAME [--reassign OTHER | --delete-samples]")
        static let signature = Signature {
            Positional("NAME", help: "The person to remove.")
            Option("reassign", valueName: "OTHER", help: "Move the person's samples to OTHER (delete + add in the change feed).")
            Flag("delete-samples", help: "Delete the person's samples (tombstones in the change feed).")
            CommonArguments.store
        }
        let name: String
        let disposal: HealthStore.SampleDisposal
        let storePath: String?

        init(_ arguments: ParsedValues) throws {
            name = try arguments.required("name")
            let reassign: String? = try arguments.value("reassign")
            let delete = arguments.flag("delete-samples")
            switch (reassign, delete) {
            case (let other?, false): disposal = .reassign(to: other)
            case (nil, true): disposal = .delete
            case (nil, false): disposal = .refuse
            case (_?, true): throw UsageError.invalid("give --reassign OTHER or --delete-samples, not both")
            }
            storePath = try arguments.value("store")
        }

        func run(_ context: CommandContext) async throws {
            let store = try CommonArguments.openStore(storePath, context: context)
            defer { store.close() }
            let count: Int
            do {
                count = try store.removePerson(named: name, samples: disposal)
            } catch let error as PeopleError {
                throw error.usageError
            }
            let what = switch disposal {
            case .refuse: ""
            case .reassign(let other): ", \(count) sample\(count == 1 ? "" : "s") moved to \(other)"
            case .delete: ", \(count) sample\(count == 1 ? "" : "s") deleted"
            }
            context.stderr.writeLine("removed \(name)\(what)")
        }
    }
}

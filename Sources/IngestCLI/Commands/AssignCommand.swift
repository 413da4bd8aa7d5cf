import ArgumentParsing
import Foundation
import Pipeline

/// `ingestd assign`: gives samples (unassigned ones, or corrections) to a person.
struct AssignCommand: Command {
    static let configuration = CommandConfiguration(
        name: "assign", abstract: "Move samples to a person: by uuid, or every unassigned sample of a device.",
        discussion: """
            The change feed shows each move as a deletion and an addition, so sinks and 'ingestd changes \
            --person' follow. An unknown uuid changes nothing.
            """,
        usage: "UUID... PERSON | --all-from DEVICE PERSON",
        examples: [
            "ingestd assign --all-from 50:FB:19:1B:B5:DC bob",
        ]
    )
    static let words = TypedPositionals<String>(Positional(
        "ARGUMENTS", key: "arguments", arity: .oneOrMore, help: "Sample uuids, then the person's name."))
    static let allFrom = TypedOption<String>(Option(
        "all-from", valueName: "DEVICE", help: "Every unassigned sample of this device (BLE address, serial number or local identifier)."))
    static let signature = Signature {
        Self.words
        Self.allFrom
        StoreOption.self
    }
    let uuids: [UUID]
    let device: String?
    let personName: String
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        var words = try arguments.values(Self.words)
        guard let last = words.popLast() else { throw UsageError.missingArgument("PERSON") }
        personName = last
        device = try arguments.value(Self.allFrom)
        if device != nil, !words.isEmpty {
            throw UsageError.invalid("give UUID... PERSON or --all-from DEVICE PERSON, not both")
        }
        if device == nil, words.isEmpty { throw UsageError.invalid("give at least one UUID before PERSON, or --all-from DEVICE") }
        uuids = try words.map { word in
            guard let uuid = UUID(uuidString: word) else {
                throw UsageError.invalidValue(word, argument: "UUID", reason: "not a uuid")
            }
            return uuid
        }
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openHousehold(context)
        defer { store.close() }
        let moved: Int
        do {
            let person = try store.person(named: personName)
            if let device {
                moved = try store.assignUnassigned(fromDevice: device, to: person)
            } else {
                moved = try store.assign(uuids, to: person)
            }
        } catch let error as PeopleError {
            throw error.usageError
        }
        context.stderr.writeLine("assigned \(moved) sample\(moved == 1 ? "" : "s") to \(personName)")
    }
}

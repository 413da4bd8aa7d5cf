import ArgumentParsing
import Pipeline

/// `ingestd devices assign DEVICE PERSON`: the device's later samples are the person's.
struct DevicesAssignCommand: Command {
    static let configuration = CommandConfiguration(
        name: "assign", abstract: "Make PERSON the owner of DEVICE: its samples are theirs from now on.",
        discussion: """
            DEVICE is what the samples name the device by: a BLE address, a serial number or an \
            adapter-given local identifier (see 'ingestd samples --json'), or a USB device's VID:PID or \
            serial number as 'ingestd devices list' shows them, matched case-insensitively. \
            Samples already stored unassigned stay so; move them with 'ingestd assign --all-from DEVICE PERSON'.
            """,
        examples: [
            "ingestd devices assign 00123456 bob",
            "ingestd devices assign 0c45:7402 alice",
        ]
    )
    static let signature = Signature {
        Positional("DEVICE", help: "BLE address, USB VID:PID, serial number or local identifier.")
        Positional("PERSON", help: "The owner's name.")
        StoreOption.self
    }
    let device: String
    let personName: String
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        device = try arguments.required("device")
        personName = try arguments.required("person")
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openHousehold(context)
        defer { store.close() }
        do {
            try store.assignDevice(device, to: try store.person(named: personName))
        } catch let error as PeopleError {
            throw error.usageError
        }
        context.stderr.writeLine("\(device) belongs to \(personName)")
    }
}

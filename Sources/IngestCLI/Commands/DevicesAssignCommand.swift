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
    static let deviceArgument = TypedPositional<String>(Positional(
        "DEVICE", help: "BLE address, USB VID:PID, serial number or local identifier."))
    static let personArgument = TypedPositional<String>(Positional("PERSON", help: "The owner's name."))
    static let signature = Signature {
        Self.deviceArgument
        Self.personArgument
        StoreOption.self
    }
    let device: String
    let personName: String
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        device = try arguments.required(Self.deviceArgument)
        personName = try arguments.required(Self.personArgument)
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

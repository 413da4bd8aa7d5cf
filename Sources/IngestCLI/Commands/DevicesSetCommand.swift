import ArgumentParsing
import HealthModel
import Pipeline

/// `ingestd devices set DEVICE --body-composition standard|vendor|estimate|none|person`.
struct DevicesSetCommand: Command {
    static let configuration = CommandConfiguration(
        name: "set", abstract: "Choose the body-composition formula of a scale's weighings, over its people's choice.",
        discussion: """
            DEVICE is what the samples name the scale by (a BLE address, a serial number or a local \
            identifier). standard, vendor, estimate or none apply to every weighing of the device whoever it \
            belongs to; person returns to each person's own choice ('ingestd people set NAME \
            --body-composition'). The weighings are recomputed at once. Example: \
            ingestd devices set 50:FB:19:1B:B5:DC --body-composition vendor
            """,
        usage: "DEVICE --body-composition standard|vendor|estimate|none|person",
        examples: [
            "ingestd devices set C8:47:8C:00:11:22 --body-composition standard",
            "ingestd devices set C8:47:8C:00:11:22 --body-composition person",
        ]
    )
    static let deviceArgument = TypedPositional<String>(Positional("DEVICE", help: "BLE address, serial number or local identifier."))
    static let bodyComposition = TypedOption<String>(Option(
        "body-composition", valueName: "FORMULA", help: "standard, vendor, estimate, none, or person (the person's choice).",
        allowedValues: BodyCompositionChoice.allCases.map(\.rawValue) + ["person"]))
    static let signature = Signature {
        Self.deviceArgument
        Self.bodyComposition
        StoreOption.self
    }
    let device: String
    /// nil: the person's choice.
    let choice: BodyCompositionChoice?
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        device = try arguments.required(Self.deviceArgument)
        guard let text = try arguments.value(Self.bodyComposition) else {
            throw UsageError.invalid("nothing to set: give --body-composition standard|vendor|estimate|none|person")
        }
        if text == "person" {
            choice = nil
        } else {
            guard let parsed = BodyCompositionChoice(rawValue: text) else {
                throw UsageError.invalidValue(text, argument: "--body-composition", reason: "not standard, vendor, estimate, none or person")
            }
            choice = parsed
        }
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openHousehold(context)
        defer { store.close() }
        let recomputed: BodyCompositionRecomputation
        do {
            recomputed = try store.setBodyComposition(choice, ofDevice: device)
        } catch let error as PeopleError {
            throw error.usageError
        }
        context.stderr.writeLine("\(device): body composition \(choice?.rawValue ?? "as each person chose"); \(recomputed.summary)")
    }
}

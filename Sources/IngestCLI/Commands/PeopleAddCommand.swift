import ArgumentParsing
import Delivery
import Foundation
import HealthModel
import Pipeline

/// `ingestd people add NAME`: a new member of the household.
struct PeopleAddCommand: Command {
    static let configuration = CommandConfiguration(
        name: "add", abstract: "Add a person, with their characteristics and scale slot.",
        discussion: """
            --unit may be given twice: a length unit goes with --height, a mass unit with --weight \
            (e.g. --height 168 --unit cm --weight 60 --unit kg). --weight is where the body-mass \
            rule starts until the person's first assigned weighing.
            """,
        examples: [
            "ingestd people add bob --weight 85 --unit kg",
            "ingestd people add alice --weight 60 --unit kg --height 165 --unit cm --scale-user-index 1",
        ]
    )
    static let nameArgument = TypedPositional<String>(Positional("NAME", help: "The person's name (used by --person)."))
    static let heightOption = TypedOption<Double>(Option("height", valueName: "N", help: "Height (with a length --unit)."))
    static let weightOption = TypedOption<Double>(Option("weight", valueName: "N", help: "Body mass (with a mass --unit)."))
    static let unitOption = TypedOption<String>(Option(
        "unit", valueName: "U", help: "The unit of --height or --weight (once for each).", repeatable: true))
    static let scaleUserIndexOption = TypedOption<Int>(Option(
        "scale-user-index", valueName: "N",
        help: "The person's user slot on multi-user scales (UDS user index, vendor user id), 0...254."))
    static let signature = Signature {
        Self.nameArgument
        CommonArguments.dateOfBirthOption
        CommonArguments.biologicalSexOption
        Self.heightOption
        Self.weightOption
        Self.unitOption
        Self.scaleUserIndexOption
        StoreOption.self
    }
    let name: String
    let profile: UserProfile
    let weightKilograms: Double?
    let scaleUserIndex: Int?
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        name = try arguments.required(Self.nameArgument)
        if let problem = Person.problem(withName: name) {
            throw UsageError.invalidValue(name, argument: "NAME", reason: problem)
        }
        let units = try arguments.values(Self.unitOption)
        let height = try arguments.value(Self.heightOption)
        let weight = try arguments.value(Self.weightOption)
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
        profile.dateOfBirth = try CommonArguments.dateOfBirth(arguments)
        profile.biologicalSex = try arguments.value(CommonArguments.biologicalSexOption) ?? .notSet
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
        scaleUserIndex = try arguments.value(Self.scaleUserIndexOption)
        if let scaleUserIndex, !(0...254).contains(scaleUserIndex) {
            throw UsageError.invalidValue(String(scaleUserIndex), argument: "--scale-user-index", reason: "must be 0...254")
        }
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openHousehold(context)
        defer { store.close() }
        // Two people never share MQTT topics or Home Assistant entities.
        if let problem = MQTTTopicName.problem(withPerson: name, among: try store.people().map(\.name)) {
            throw UsageError.invalidValue(name, argument: "NAME", reason: problem)
        }
        do {
            try store.addPerson(name: name, profile: profile, bodyMassKilograms: weightKilograms,
                                scaleUserIndex: scaleUserIndex)
        } catch let error as PeopleError {
            throw error.usageError
        }
        context.stderr.writeLine("added \(name)")
    }
}

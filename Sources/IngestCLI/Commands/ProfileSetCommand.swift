import ArgumentParsing
import Foundation
import HealthModel

/// `ingestd profile set`.
struct ProfileSetCommand: Command {
    static let configuration = CommandConfiguration(name: "set", abstract: "Set characteristics; others stay as they are.",
        examples: [
            "ingestd profile set --date-of-birth 1980-02-29 --biological-sex female --height 168 --unit cm",
        ]
    )
    static let heightOption = TypedOption<Double>(Option("height", valueName: "H", help: "Height (with --unit)."))
    static let signature = Signature {
        CommonArguments.dateOfBirthOption
        CommonArguments.biologicalSexOption
        Self.heightOption
        UnitOption.self
        PersonOption.self
        StoreOption.self
    }
    let dateOfBirth: CalendarDate?
    let sex: BiologicalSex?
    let height: Quantity?
    let storeFile: StoreOption
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        dateOfBirth = try CommonArguments.dateOfBirth(arguments)
        sex = try arguments.value(CommonArguments.biologicalSexOption)
        let heightValue = try arguments.value(Self.heightOption)
        let unitText = try UnitOption(arguments).text
        if let heightValue {
            guard let unitText else { throw UsageError.invalid("--height needs --unit (cm, m, in, ft)") }
            guard let unit = try? HealthModel.Unit(from: unitText), unit.isCompatible(with: .meter) else {
                throw UsageError.invalidValue(unitText, argument: "--unit", reason: "not a length unit")
            }
            guard let metres = try? unit.convert(heightValue, to: .meter), QuantityType.height.plausibleRange.contains(metres) else {
                throw UsageError.invalidValue(String(heightValue), argument: "--height", reason: "not a plausible height")
            }
            height = Quantity(value: heightValue, unit: unit)
        } else {
            if unitText != nil { throw UsageError.invalid("--unit is only used with --height") }
            height = nil
        }
        storeFile = try StoreOption(arguments)
        person = try PersonOption(arguments)
        if dateOfBirth == nil, sex == nil, height == nil {
            throw UsageError.invalid("nothing to set: give --date-of-birth, --biological-sex or --height")
        }
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openPeople(context)
        defer { store.close() }
        let owner = try person.resolve(in: store)
        var profile = owner.profile
        if let dateOfBirth { profile.dateOfBirth = dateOfBirth }
        if let sex { profile.biologicalSex = sex }
        if let height { profile.height = height }
        let recomputed = try store.setProfile(profile, of: owner)
        if recomputed.weighings > 0 { context.stderr.writeLine("\(owner.name): \(recomputed.summary)") }
    }
}

import ArgumentParsing
import Foundation
import HealthModel
import Pipeline

/// `ingestd body`: a person's latest weighing with every value stored or derived for it.
struct BodyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "body", abstract: "The latest weighing with its body fat, lean mass, water, muscle, bone, visceral fat and BMR.",
        discussion: """
            Values a formula derived (from the scale's impedance, or estimated without one) name the \
            formula; the others are the scale's own. Set a formula with 'ingestd people set NAME --body-composition'. Example: \
            ingestd body --person alice
            """,
        examples: [
            "ingestd body --person alice",
            "ingestd body --json",
        ]
    )
    static let signature = Signature {
        TimeZoneOption.self
        PersonOption.self
        JSONOption.self
        QueryStoreOptions.self
    }
    let zone: TimeZone
    let json: Bool
    let storeFile: QueryStoreOptions
    let person: PersonOption

    init(_ arguments: ParsedValues) throws {
        zone = try TimeZoneOption(arguments).zone
        json = try JSONOption(arguments).isOn
        storeFile = try QueryStoreOptions(arguments)
        person = try PersonOption(arguments)
    }

    /// The rows in the order they are shown: type, label, unit shown, factor from the canonical unit.
    static let rows: [(type: QuantityType, label: String, unit: String, factor: Double)] = [
        (.bodyMass, "Body mass", "kg", 1),
        (.bodyMassIndex, "Body mass index", "kg/m²", 1),
        (.bodyFatPercentage, "Body fat", "%", 100),
        (.leanBodyMass, "Lean body mass", "kg", 1),
        (.bodyWaterPercentage, "Body water", "%", 100),
        (.skeletalMuscleMass, "Skeletal muscle", "kg", 1),
        (.boneMass, "Bone mass", "kg", 1),
        (.visceralFatRating, "Visceral fat rating", "", 1),
        (.basalMetabolicRate, "Basal metabolic rate", "kcal/day", 1),
    ]

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.open(context)
        defer { store.close() }
        let scope = try storeFile.scope(person, in: store)
        let latest = try store.statistics(.latest, type: .bodyMass, from: nil, to: nil, granularity: nil, zone: zone, scope: scope)
        guard let instant = latest.first?.latestInterval,
              let weighing = try store.samples(type: .bodyMass, from: instant.start, to: instant.end.addingTimeInterval(0.001),
                                               source: nil, scope: scope, limit: 0).last(where: { $0.start == instant.start }) else {
            throw CommandError.noWeighing(person: person.name)
        }
        var values: [(row: Int, sample: QuantitySample)] = [(0, weighing)]
        for (index, row) in Self.rows.enumerated().dropFirst() {
            let found = try store.samples(type: row.type, from: weighing.start, to: weighing.end.addingTimeInterval(0.001),
                                          source: weighing.source, scope: scope, limit: 0)
                .filter { $0.start == weighing.start && $0.end == weighing.end }
            // The scale's own value first, then a derived one.
            if let sample = found.first(where: { !BodyCompositionStage.isDerived($0) }) ?? found.first {
                values.append((index, sample))
            }
        }
        if json {
            var fields = ["\"time\":\"\(ISO8601DateTime.string(from: weighing.start))\"", "\"source\":\(JSONText.quoted(weighing.source))"]
            for (index, sample) in values {
                let row = Self.rows[index]
                var field = "{\"value\":\(JSONNumber.format(sample.quantity.value)),\"unit\":\(JSONText.quoted(sample.type.canonicalUnit.unitString))"
                if case .string(let formula)? = sample.metadata[MetadataKey.bodyCompositionFormula] {
                    field += ",\"formula\":\(JSONText.quoted(formula))"
                }
                fields.append("\(JSONText.quoted(row.type.shortName)):\(field)}")
            }
            context.stdout.writeLine("{" + fields.joined(separator: ",") + "}")
            return
        }
        var calendarZone = zone
        if let name = weighing.metadata.timeZone, let own = TimeZone(identifier: name) { calendarZone = own }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = calendarZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        var header = "\(formatter.string(from: weighing.start)) (\(calendarZone.identifier)), \(weighing.source)"
        if let device = weighing.device?.name ?? weighing.device?.model { header += " (\(device))" }
        if case .number(let ohms)? = weighing.metadata[MetadataKey.impedance] { header += ", impedance \(JSONNumber.format(ohms)) Ω" }
        context.stdout.writeLine(header)
        let rows = values.map { index, sample -> [String] in
            let row = Self.rows[index]
            // A scale's weight as it showed it (10 g), the rest to a tenth, the BMR in whole kcal.
            let perUnit: Double = row.type == .bodyMass ? 100 : row.type == .basalMetabolicRate ? 1 : 10
            let shown = (sample.quantity.value * row.factor * perUnit).rounded() / perUnit
            let text = JSONNumber.format(shown) + (row.unit.isEmpty ? "" : " " + row.unit)
            var origin = "scale"
            if case .string(let formula)? = sample.metadata[MetadataKey.bodyCompositionFormula] {
                origin = "derived: \(formula)"
                if case .number(let version)? = sample.metadata[MetadataKey.bodyCompositionFormulaVersion] { origin += " v\(JSONNumber.format(version))" }
            }
            return [row.label, text, origin]
        }
        context.stdout.write(Table(header: ["VALUE", "", "FROM"], rows: rows).rendered)
    }
}

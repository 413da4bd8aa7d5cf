import Foundation
import HealthModel

/// How one quantity type becomes a FHIR Observation: its LOINC code, the unit its value is
/// written in (an HKUnit to convert the canonical value to, times a factor) and that unit's
/// UCUM code.
public struct FHIRObservationCode: Sendable {
    /// The LOINC code, e.g. `29463-7`.
    public let loinc: String
    /// LOINC's display name for the code.
    public let display: String
    /// The HKUnit the canonical value is converted to before `factor` applies.
    public let unit: HealthModel.Unit
    /// Applied after the conversion: 100 for HealthKit fractions written as UCUM `%`.
    public let factor: Double
    /// The UCUM code of the written value, e.g. `kg`, `/min`, `mm[Hg]`.
    public let ucum: String
    /// The Observation category (`vital-signs`, `activity`), or nil.
    public let category: FHIRObservationCategory?

    /// The canonical `value` of a sample in this code's unit (nil when not a finite number).
    public func value(fromCanonical value: Double, of type: QuantityType) -> Double? {
        guard let converted = try? type.canonicalUnit.convert(value, to: unit) else { return nil }
        let result = converted * factor
        return result.isFinite ? result : nil
    }
}

/// The two Observation categories the export uses (code system observation-category).
public enum FHIRObservationCategory: String, Sendable {
    case vitalSigns = "vital-signs"
    case activity

    /// The category's display text in its code system.
    public var display: String {
        switch self {
        case .vitalSigns: "Vital Signs"
        case .activity: "Activity"
        }
    }
}

/// The LOINC codes and UCUM units of the export: only codes known for certain; a type not
/// listed here is skipped by the FHIR export (and counted), never given an invented code.
public enum FHIRObservationCodes {
    /// The blood-pressure panel that holds the systolic and diastolic components.
    public static let bloodPressurePanel = (loinc: "85354-9", display: "Blood pressure panel with all children optional")

    /// The code of `type`, or nil when the export has none.
    public static func code(for type: QuantityType) -> FHIRObservationCode? {
        table[type.identifier]
    }

    /// Every type the FHIR export writes.
    public static var exportedTypes: [QuantityType] {
        QuantityType.catalogue.filter { table[$0.identifier] != nil }
    }

    private static func entry(_ type: QuantityType, _ loinc: String, _ display: String, unit: String, factor: Double = 1,
                              ucum: String, _ category: FHIRObservationCategory?) -> (String, FHIRObservationCode) {
        // The unit strings below are fixed HKUnit literals; a typo is a programming error caught by the tests.
        let parsed = (try? HealthModel.Unit(from: unit)) ?? type.canonicalUnit
        return (type.identifier, FHIRObservationCode(loinc: loinc, display: display, unit: parsed, factor: factor,
                                                     ucum: ucum, category: category))
    }

    private static let table: [String: FHIRObservationCode] = Dictionary(uniqueKeysWithValues: [
        entry(.stepCount, "55423-8", "Number of steps in unspecified time Pedometer", unit: "count", ucum: "{steps}", .activity),
        entry(.activeEnergyBurned, "41981-2", "Calories burned", unit: "kcal", ucum: "kcal", .activity),
        entry(.bodyMass, "29463-7", "Body weight", unit: "kg", ucum: "kg", .vitalSigns),
        entry(.height, "8302-2", "Body height", unit: "cm", ucum: "cm", .vitalSigns),
        entry(.bodyMassIndex, "39156-5", "Body mass index (BMI) [Ratio]", unit: "count", ucum: "kg/m2", .vitalSigns),
        entry(.bodyFatPercentage, "41982-0", "Percentage of body fat Measured", unit: "%", factor: 100, ucum: "%", nil),
        entry(.leanBodyMass, "91557-9", "Lean body weight", unit: "kg", ucum: "kg", nil),
        entry(.bodyTemperature, "8310-5", "Body temperature", unit: "degC", ucum: "Cel", .vitalSigns),
        entry(.heartRate, "8867-4", "Heart rate", unit: "count/min", ucum: "/min", .vitalSigns),
        entry(.restingHeartRate, "40443-4", "Heart rate --resting", unit: "count/min", ucum: "/min", .vitalSigns),
        entry(.heartRateVariabilitySDNN, "80404-7", "R-R interval.standard deviation (Heart rate variability)",
              unit: "ms", ucum: "ms", nil),
        entry(.respiratoryRate, "9279-1", "Respiratory rate", unit: "count/min", ucum: "/min", .vitalSigns),
        entry(.oxygenSaturation, "59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry",
              unit: "%", factor: 100, ucum: "%", .vitalSigns),
        entry(.bloodPressureSystolic, "8480-6", "Systolic blood pressure", unit: "mmHg", ucum: "mm[Hg]", .vitalSigns),
        entry(.bloodPressureDiastolic, "8462-4", "Diastolic blood pressure", unit: "mmHg", ucum: "mm[Hg]", .vitalSigns),
        entry(.bloodGlucose, "2339-0", "Glucose [Mass/volume] in Blood", unit: "mg/dL", ucum: "mg/dL", nil),
    ])
}

import Foundation

/// The measurement system a person reads values in: kilograms, centimetres, kilometres, °C and
/// mmol/L, or pounds, inches, miles, °F and mg/dL.
public enum UnitSystem: String, Sendable, CaseIterable {
    case metric
    case us
}

/// How one quantity type is shown to people: the unit, the digits after the decimal point and
/// the symbol printed after the number (`bpm`, `%`, `°C`).
///
/// Percentages are stored as fractions (HealthKit's `%` unit, 0.15 for 15 %); their display unit
/// has `scale` 100, so 0.15 prints as `15.0 %`.
public struct DisplayUnit: Sendable, Equatable {
    /// The unit the stored value is converted to before scaling.
    public let unit: Unit
    /// Multiplies the converted value (100 for percentages, 1 otherwise).
    public let scale: Double
    /// Digits after the decimal point.
    public let fractionDigits: Int
    /// Printed after the number, e.g. `bpm`, `%`, `kg`.
    public let symbol: String

    public init(unit: Unit, scale: Double = 1, fractionDigits: Int, symbol: String? = nil) {
        self.unit = unit
        self.scale = scale
        self.fractionDigits = fractionDigits
        self.symbol = symbol ?? unit.unitString
    }

    /// `value` (in `unit`, before scaling) rounded to the precision, without the symbol:
    /// `63.8`, `10441`, `15.0`.
    public func number(_ value: Double) -> String {
        let scaled = value * scale
        guard scaled.isFinite else { return String(scaled) }
        return String(format: "%.\(fractionDigits)f", locale: Locale(identifier: "en_US_POSIX"), scaled)
    }

    /// `value` (in `unit`) with its symbol: `63.8 kg`, `72 bpm`, `15.0 %`.
    public func text(_ value: Double) -> String {
        number(value) + " " + symbol
    }
}

/// The display unit and precision of every quantity type, after HealthKit's preferred units:
/// heart rate in bpm, percentages ×100 with `%`, body mass in kg or lb with one decimal,
/// temperatures in °C or °F, blood glucose in mmol/L or mg/dL, step counts as integers.
///
/// Shared by the command line's text output, the web dashboard and the report, so the same
/// value reads the same everywhere. JSON output never goes through it: it keeps the stored value.
public enum DisplayUnits {
    /// The display unit of `type` in `system`; for a type without an entry, its canonical unit
    /// with up to two decimals.
    public static func displayUnit(for type: QuantityType, system: UnitSystem) -> DisplayUnit {
        if let entry = table[type.identifier] {
            return system == .us ? entry.us : entry.metric
        }
        if type.canonicalUnit == .percent {
            return DisplayUnit(unit: .percent, scale: 100, fractionDigits: 1, symbol: "%")
        }
        return DisplayUnit(unit: type.canonicalUnit, fractionDigits: 2)
    }

    /// A stored value of `type` (in its canonical unit) in its display unit of `system`, before
    /// the display scaling (pounds for 63.5 kg in US units; a fraction stays a fraction).
    public static func converted(_ canonicalValue: Double, of type: QuantityType, system: UnitSystem) -> Double {
        (try? type.canonicalUnit.convert(canonicalValue, to: displayUnit(for: type, system: system).unit)) ?? canonicalValue
    }

    /// A stored value of `type` (in its canonical unit) as people read it, e.g. `72 bpm`.
    public static func text(_ canonicalValue: Double, of type: QuantityType, system: UnitSystem) -> String {
        displayUnit(for: type, system: system).text(converted(canonicalValue, of: type, system: system))
    }

    /// A value of `type` in `unit` (a unit the person asked for with `--unit`): the number in the
    /// type's precision when `unit` is its display unit, else shortest-round-trip, and the unit.
    public static func text(_ canonicalValue: Double, of type: QuantityType, in unit: Unit, system: UnitSystem) -> String {
        let display = displayUnit(for: type, system: system)
        let converted = (try? type.canonicalUnit.convert(canonicalValue, to: unit)) ?? canonicalValue
        if display.unit == unit && display.scale == 1 { return display.text(converted) }
        return JSONNumber.format(converted) + " " + unit.unitString
    }

    private struct Entry {
        let metric: DisplayUnit
        let us: DisplayUnit
        init(_ metric: DisplayUnit, _ us: DisplayUnit? = nil) {
            self.metric = metric
            self.us = us ?? metric
        }
    }

    private static let bpm = DisplayUnit(unit: .countPerMinute, fractionDigits: 0, symbol: "bpm")
    private static let percent = DisplayUnit(unit: .percent, scale: 100, fractionDigits: 1, symbol: "%")
    private static let kilograms = DisplayUnit(unit: .kilogram, fractionDigits: 1, symbol: "kg")
    private static let pounds = DisplayUnit(unit: .pound, fractionDigits: 1, symbol: "lb")
    private static let kilometers = DisplayUnit(unit: .kilometer, fractionDigits: 2, symbol: "km")
    private static let miles = DisplayUnit(unit: .mile, fractionDigits: 2, symbol: "mi")
    private static let meters = DisplayUnit(unit: .meterUnit(), fractionDigits: 0, symbol: "m")
    private static let yards = DisplayUnit(unit: Unit(.yard), fractionDigits: 0, symbol: "yd")
    private static let celsius = DisplayUnit(unit: .degreeCelsius, fractionDigits: 1, symbol: "°C")
    private static let fahrenheit = DisplayUnit(unit: .degreeFahrenheit, fractionDigits: 1, symbol: "°F")
    private static let centimeters = DisplayUnit(unit: .centimeter, fractionDigits: 0, symbol: "cm")
    private static let inches = DisplayUnit(unit: .inch, fractionDigits: 1, symbol: "in")
    private static let kilocalories = DisplayUnit(unit: .kilocalorie, fractionDigits: 0, symbol: "kcal")
    private static let minutes = DisplayUnit(unit: .minute, fractionDigits: 0, symbol: "min")
    private static let mmHg = DisplayUnit(unit: .millimeterOfMercury, fractionDigits: 0, symbol: "mmHg")
    private static let milligramsPerDeciliter = DisplayUnit(unit: .milligramsPerDeciliter, fractionDigits: 0, symbol: "mg/dL")
    private static let millimolesPerLiter = DisplayUnit(
        unit: .millimolesBloodGlucosePerLiter, fractionDigits: 1, symbol: "mmol/L")

    private static func count(_ symbol: String) -> DisplayUnit {
        DisplayUnit(unit: .count, fractionDigits: 0, symbol: symbol)
    }

    private static let table: [String: Entry] = {
        var table: [String: Entry] = [:]
        func add(_ types: [QuantityType], _ entry: Entry) {
            for type in types { table[type.identifier] = entry }
        }
        add([.stepCount], Entry(count("steps")))
        add([.flightsClimbed], Entry(count("floors")))
        add([.pushCount, .swimmingStrokeCount], Entry(count("count")))
        add([.distanceWalkingRunning, .distanceCycling, .distanceWheelchair], Entry(kilometers, miles))
        add([.distanceSwimming], Entry(meters, yards))
        add([.activeEnergyBurned, .basalEnergyBurned], Entry(kilocalories))
        add([.appleExerciseTime, .appleStandTime, .appleMoveTime], Entry(minutes))
        add([.bodyMass, .leanBodyMass], Entry(kilograms, pounds))
        add([.bodyFatPercentage, .oxygenSaturation], Entry(percent))
        add([.bodyMassIndex], Entry(DisplayUnit(unit: .count, fractionDigits: 1, symbol: "kg/m²")))
        add([.height, .waistCircumference], Entry(centimeters, inches))
        add([.bodyTemperature, .basalBodyTemperature, .appleSleepingWristTemperature, .ambientTemperature], Entry(celsius, fahrenheit))
        add([.heartRate, .restingHeartRate, .walkingHeartRateAverage, .heartRateRecoveryOneMinute], Entry(bpm))
        add([.heartRateVariabilitySDNN], Entry(DisplayUnit(unit: .secondUnit(with: .milli), fractionDigits: 0, symbol: "ms")))
        add([.bloodPressureSystolic, .bloodPressureDiastolic], Entry(mmHg))
        add([.respiratoryRate], Entry(DisplayUnit(unit: .countPerMinute, fractionDigits: 0, symbol: "breaths/min")))
        add([.bloodGlucose], Entry(millimolesPerLiter, milligramsPerDeciliter))
        return table
    }()
}

/// Unit spellings people type that are not HKUnit strings (`bpm`, `lbs`, `kgs`, `°C`), mapped to
/// the HKUnit string they mean. Only for typed input: stored and exchanged unit strings stay
/// strict HKUnit.
public enum UnitAliases {
    /// Alias (lowercased) to HKUnit string.
    public static let aliases: [String: String] = [
        "bpm": "count/min", "beats/min": "count/min", "/min": "count/min", "breaths/min": "count/min",
        "lbs": "lb", "pound": "lb", "pounds": "lb", "kgs": "kg", "kilogram": "kg", "kilograms": "kg",
        "°c": "degC", "degc": "degC", "celsius": "degC", "°f": "degF", "degf": "degF", "fahrenheit": "degF",
        "percent": "%", "steps": "count", "mmol/l": "mmol<180.15588000005408>/L", "mg/dl": "mg/dL",
        "kcals": "kcal", "mmhg": "mmHg", "meters": "m", "metres": "m", "miles": "mi", "inches": "in",
    ]

    /// The unit `text` names: an alias's target (`mmol/l` is blood glucose's mmol/L), else
    /// `text` as an HKUnit string.
    public static func unit(typed text: String) throws(UnitError) -> Unit {
        if let target = aliases[text.lowercased()] {
            return try Unit(from: target)
        }
        return try Unit(from: text)
    }

    /// Spellings to suggest for an unknown unit: the aliases and the display units' strings.
    public static var suggestions: [String] {
        Array(aliases.keys) + ["count/min", "kg", "lb", "degC", "degF", "mg/dL", "%", "count", "km", "mi", "cm", "in", "mmHg"]
    }
}

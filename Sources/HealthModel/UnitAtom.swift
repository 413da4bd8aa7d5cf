/// The indivisible units of HealthKit's grammar (`g`, `m`, `lb`, `mmHg`, `degF`, `mol<M>`, …).
///
/// Each atom knows its symbol, its dimension and its size in the coherent base units
/// (gram, metre, second, kelvin, mole, siemens, volt and the non-physical scalars).
public enum UnitAtom: Hashable, Sendable {
    // Mass.
    case gram, ounce, pound, stone
    // Length.
    case meter, inch, foot, yard, mile
    // Volume.
    case liter, fluidOunceUS, fluidOunceImperial, cupUS, cupImperial, pintUS, pintImperial
    // Time.
    case second, minute, hour, day
    // Energy and power.
    case joule, smallCalorie, kilocalorie, largeCalorie, watt
    // Pressure.
    case pascal, millimeterOfMercury, inchOfMercury, centimeterOfWater, atmosphere
    // Temperature.
    case kelvin, degreeCelsius, degreeFahrenheit
    // Amount of substance; with a molar mass it converts to mass.
    case mole(molarMass: Double?)
    // Electricity, frequency.
    case siemens, volt, hertz
    // Scalars and special units.
    case count, percent, decibelASPL, decibelHL, internationalUnit, appleEffortScore

    /// The atom as written in a unit string.
    public var symbol: String {
        switch self {
        case .gram: "g"
        case .ounce: "oz"
        case .pound: "lb"
        case .stone: "st"
        case .meter: "m"
        case .inch: "in"
        case .foot: "ft"
        case .yard: "yd"
        case .mile: "mi"
        case .liter: "L"
        case .fluidOunceUS: "fl_oz_us"
        case .fluidOunceImperial: "fl_oz_imp"
        case .cupUS: "cup_us"
        case .cupImperial: "cup_imp"
        case .pintUS: "pt_us"
        case .pintImperial: "pt_imp"
        case .second: "s"
        case .minute: "min"
        case .hour: "hr"
        case .day: "d"
        case .joule: "J"
        case .smallCalorie: "cal"
        case .kilocalorie: "kcal"
        case .largeCalorie: "Cal"
        case .watt: "W"
        case .pascal: "Pa"
        case .millimeterOfMercury: "mmHg"
        case .inchOfMercury: "inHg"
        case .centimeterOfWater: "cmAq"
        case .atmosphere: "atm"
        case .kelvin: "K"
        case .degreeCelsius: "degC"
        case .degreeFahrenheit: "degF"
        case .mole(let molarMass):
            if let molarMass { "mol<\(molarMass)>" } else { "mol" }
        case .siemens: "S"
        case .volt: "V"
        case .hertz: "Hz"
        case .count: "count"
        case .percent: "%"
        case .decibelASPL: "dBASPL"
        case .decibelHL: "dBHL"
        case .internationalUnit: "IU"
        case .appleEffortScore: "appleEffortScore"
        }
    }

    /// A human name, for `ingestd units list`.
    public var name: String {
        switch self {
        case .gram: "gram"
        case .ounce: "ounce"
        case .pound: "pound"
        case .stone: "stone"
        case .meter: "metre"
        case .inch: "inch"
        case .foot: "foot"
        case .yard: "yard"
        case .mile: "mile"
        case .liter: "litre (also l)"
        case .fluidOunceUS: "US fluid ounce"
        case .fluidOunceImperial: "imperial fluid ounce"
        case .cupUS: "US cup"
        case .cupImperial: "imperial cup"
        case .pintUS: "US pint"
        case .pintImperial: "imperial pint"
        case .second: "second"
        case .minute: "minute"
        case .hour: "hour"
        case .day: "day"
        case .joule: "joule"
        case .smallCalorie: "calorie (small)"
        case .kilocalorie: "kilocalorie"
        case .largeCalorie: "Calorie (food calorie = kcal)"
        case .watt: "watt"
        case .pascal: "pascal"
        case .millimeterOfMercury: "millimetre of mercury"
        case .inchOfMercury: "inch of mercury"
        case .centimeterOfWater: "centimetre of water"
        case .atmosphere: "standard atmosphere"
        case .kelvin: "kelvin"
        case .degreeCelsius: "degree Celsius"
        case .degreeFahrenheit: "degree Fahrenheit"
        case .mole(let molarMass): molarMass == nil ? "mole (mol<M> with molar mass M g/mol)" : "mole"
        case .siemens: "siemens"
        case .volt: "volt"
        case .hertz: "hertz"
        case .count: "count (scalar)"
        case .percent: "percent (a fraction: 0.5 % is one half)"
        case .decibelASPL: "decibel A-weighted sound pressure level"
        case .decibelHL: "decibel hearing level"
        case .internationalUnit: "international unit"
        case .appleEffortScore: "Apple effort score"
        }
    }

    /// Whether SI prefixes may precede the atom (`kg`, `mL`, `kPa`), as in HealthKit.
    public var isPrefixable: Bool {
        switch self {
        case .gram, .meter, .liter, .second, .joule, .smallCalorie, .pascal, .kelvin, .mole, .siemens, .volt,
             .watt, .hertz:
            true
        default:
            false
        }
    }

    /// The atom's dimension.
    public var dimension: UnitDimension {
        var d = UnitDimension()
        switch self {
        case .gram, .ounce, .pound, .stone: d.mass = 1
        case .meter, .inch, .foot, .yard, .mile: d.length = 1
        case .liter, .fluidOunceUS, .fluidOunceImperial, .cupUS, .cupImperial, .pintUS, .pintImperial: d.length = 3
        case .second, .minute, .hour, .day: d.time = 1
        case .joule, .smallCalorie, .kilocalorie, .largeCalorie: d.mass = 1; d.length = 2; d.time = -2
        case .watt: d.mass = 1; d.length = 2; d.time = -3
        case .pascal, .millimeterOfMercury, .inchOfMercury, .centimeterOfWater, .atmosphere:
            d.mass = 1; d.length = -1; d.time = -2
        case .kelvin, .degreeCelsius, .degreeFahrenheit: d.temperature = 1
        case .mole(let molarMass): if molarMass == nil { d.amount = 1 } else { d.mass = 1 }
        case .siemens: d.conductance = 1
        case .volt: d.voltage = 1
        case .hertz: d.time = -1
        case .count, .percent: break
        case .decibelASPL: d.soundLevel = 1
        case .decibelHL: d.hearingLevel = 1
        case .internationalUnit: d.dosage = 1
        case .appleEffortScore: d.effort = 1
        }
        return d
    }

    /// The atom's size in base units (grams, metres, cubic metres, seconds, kelvin, …). Exact by definition.
    public var scale: Double {
        switch self {
        case .gram: 1
        case .ounce: 28.349523125
        case .pound: 453.59237
        case .stone: 6350.29318
        case .meter: 1
        case .inch: 0.0254
        case .foot: 0.3048
        case .yard: 0.9144
        case .mile: 1609.344
        case .liter: 1e-3
        case .fluidOunceUS: 29.5735295625e-6
        case .fluidOunceImperial: 28.4130625e-6
        case .cupUS: 236.5882365e-6
        case .cupImperial: 284.130625e-6
        case .pintUS: 473.176473e-6
        case .pintImperial: 568.26125e-6
        case .second: 1
        case .minute: 60
        case .hour: 3600
        case .day: 86400
        // Energy in g·m²/s² (the base mass unit is the gram): 1 J = 1000.
        case .joule: 1e3
        case .smallCalorie: 4.184e3
        case .kilocalorie, .largeCalorie: 4.184e6
        case .watt: 1e3
        case .pascal: 1e3
        case .millimeterOfMercury: 133.322387415e3
        case .inchOfMercury: 3386.389e3
        case .centimeterOfWater: 98.0665e3
        case .atmosphere: 101325e3
        case .kelvin, .degreeCelsius: 1
        case .degreeFahrenheit: 5.0 / 9.0
        case .mole(let molarMass): molarMass ?? 1
        case .siemens, .volt, .hertz, .count, .percent, .decibelASPL, .decibelHL, .internationalUnit, .appleEffortScore: 1
        }
    }

    /// The offset added after scaling to reach kelvin; non-zero only for the affine temperatures.
    public var offset: Double {
        switch self {
        case .degreeCelsius: 273.15
        case .degreeFahrenheit: 459.67 * 5.0 / 9.0
        default: 0
        }
    }

    /// Every atom, for listings (mol appears once, without a molar mass).
    public static let all: [UnitAtom] = [
        .gram, .ounce, .pound, .stone, .meter, .inch, .foot, .yard, .mile,
        .liter, .fluidOunceUS, .fluidOunceImperial, .cupUS, .cupImperial, .pintUS, .pintImperial,
        .second, .minute, .hour, .day, .joule, .smallCalorie, .kilocalorie, .largeCalorie, .watt,
        .pascal, .millimeterOfMercury, .inchOfMercury, .centimeterOfWater, .atmosphere,
        .kelvin, .degreeCelsius, .degreeFahrenheit, .mole(molarMass: nil), .siemens, .volt, .hertz,
        .count, .percent, .decibelASPL, .decibelHL, .internationalUnit, .appleEffortScore,
    ]

    /// Atoms by their exact spelling; `l` is accepted for litre.
    static let bySymbol: [String: UnitAtom] = {
        var table: [String: UnitAtom] = [:]
        for atom in all { table[atom.symbol] = atom }
        table["l"] = .liter
        return table
    }()
}

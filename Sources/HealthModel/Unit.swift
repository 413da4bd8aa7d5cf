import Foundation

/// A unit of measure in HealthKit's `HKUnit` string grammar.
///
/// Parses every form `HKUnit(from:)` accepts (`kg`, `count/min`, `m/s^2`, `kcal/(kg*hr)`,
/// `mmol<180.15588000005408>/L`), prints a canonical string that parses back to an equal unit,
/// and converts values between compatible units (temperatures are affine; `%` is a fraction,
/// as in HealthKit). Two units are equal when they are made of the same factors, whatever
/// spelling they were parsed from (`mL` and `ml` are the same unit).
public struct Unit: Hashable, Sendable, CustomStringConvertible {
    /// The unit's factors, merged (one entry per distinct prefixed atom) in first-seen order.
    public let factors: [UnitFactor]

    /// Parses an HKUnit string, e.g. `"kg"`, `"count/min"`, `"mmol<180.15588000005408>/L"`.
    public init(from string: String) throws(UnitError) {
        var parser = UnitParser(string)
        self.init(factors: try parser.parse())
    }

    /// A unit made of `factors`; repeated atoms are merged and zero exponents dropped.
    public init(factors: [UnitFactor]) {
        var merged = UnitFactor.merged(
            factors, adding: { (total, exponent) throws(Never) -> Int in total + exponent },
            admittingBase: { (_) throws(Never) in })
        merged.removeAll { $0.exponent == 0 }
        if merged.count > 1 {
            // `count` is the neutral scalar: `count/min` keeps it, `count*kg` is just `kg` with a count.
            let nonCount = merged.filter { !($0.atom == .count && $0.exponent == 1) }
            if nonCount.contains(where: { $0.exponent > 0 }) { merged = nonCount }
        }
        self.factors = merged.isEmpty ? [UnitFactor(prefix: nil, atom: .count, exponent: 1)] : merged
    }

    /// The canonical unit string; `Unit(from: u.unitString) == u` for every unit.
    public var unitString: String {
        // Most units are one factor (kg, count/min is two): printed at once.
        if factors.count == 1, factors[0].exponent == 1 { return factors[0].printed(exponent: 1) }
        let numerator = factors.filter { $0.exponent > 0 }
        let denominator = factors.filter { $0.exponent < 0 }
        if numerator.isEmpty {
            return denominator.map { $0.printed(exponent: $0.exponent) }.joined(separator: "*")
        }
        let top = numerator.map { $0.printed(exponent: $0.exponent) }.joined(separator: "*")
        guard !denominator.isEmpty else { return top }
        let bottom = denominator.map { $0.printed(exponent: -$0.exponent) }.joined(separator: "*")
        return denominator.count == 1 ? "\(top)/\(bottom)" : "\(top)/(\(bottom))"
    }

    public var description: String { unitString }

    /// Units are equal when they have the same factors in any order: `m*s` is `s*m`, and
    /// `m.s/m^2` is `s/m` (the order of `factors` only decides how `unitString` spells it).
    public static func == (lhs: Unit, rhs: Unit) -> Bool {
        if lhs.factors == rhs.factors { return true }
        // Factors are merged, so each base occurs once: equal counts and containment suffice.
        return lhs.factors.count == rhs.factors.count && lhs.factors.allSatisfy(rhs.factors.contains)
    }

    /// A hash that ignores the order of the factors, agreeing with `==`.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for factor in factors { combined ^= factor.hashValue }
        hasher.combine(factors.count)
        hasher.combine(combined)
    }

    /// The physical dimension; units convert into each other exactly when their dimensions are equal.
    public var dimension: UnitDimension {
        var result = UnitDimension.none
        for factor in factors {
            result = result + factor.atom.dimension * factor.exponent
        }
        return result
    }

    /// The factor that takes a value in this unit to the coherent base units (g, m, s, K, mol, …).
    var scaleToBase: Double {
        var scale = 1.0
        for factor in factors {
            let one = factor.atom.scale * (factor.prefix?.multiplier ?? 1)
            scale *= pow(one, Double(factor.exponent))
        }
        return scale
    }

    /// The single affine atom this unit consists of (`degC`, `degF`), if any.
    var affineAtom: UnitAtom? {
        guard factors.count == 1, factors[0].exponent == 1, factors[0].prefix == nil, factors[0].atom.offset != 0 else {
            return nil
        }
        return factors[0].atom
    }

    /// Whether a value in this unit can be converted to `other` (the same dimension).
    public func isCompatible(with other: Unit) -> Bool { dimension == other.dimension }

    /// Converts `value`, expressed in this unit, into `target`.
    ///
    /// Exact factors are used throughout; the result is rounded to 15 significant digits so that
    /// conversions with exact decimal factors print cleanly (98.6 degF is 37 degC, not 36.99999999999999).
    public func convert(_ value: Double, to target: Unit) throws(UnitError) -> Double {
        guard isCompatible(with: target) else {
            throw .incompatible(from: unitString, to: target.unitString)
        }
        if self == target { return value }
        let sourceOffset = affineAtom?.offset ?? 0
        let targetOffset = target.affineAtom?.offset ?? 0
        let base = value * scaleToBase + sourceOffset
        return Unit.clean((base - targetOffset) / target.scaleToBase)
    }

    /// Rounds away binary noise beyond 15 significant digits.
    static func clean(_ value: Double) -> Double {
        guard value.isFinite, value != 0 else { return value }
        let magnitude = floor(log10(abs(value)))
        let scale = pow(10, 14 - magnitude)
        guard scale.isFinite, scale > 0, (value * scale).magnitude < 9e15 else { return value }
        let rounded = (value * scale).rounded() / scale
        return rounded.isFinite ? rounded : value
    }

    // MARK: HealthKit-style constructors

    /// A unit of one atom with an optional SI prefix.
    public init(_ atom: UnitAtom, prefix: MetricPrefix? = nil) {
        self.init(factors: [UnitFactor(prefix: atom.isPrefixable ? prefix : nil, atom: atom, exponent: 1)])
    }

    /// This unit times `other` (`HKUnit.unitMultiplied(by:)`).
    public func unitMultiplied(by other: Unit) -> Unit { Unit(factors: factors + other.factors) }
    /// This unit divided by `other` (`HKUnit.unitDivided(by:)`).
    public func unitDivided(by other: Unit) -> Unit { Unit(factors: factors + other.reciprocal.factors) }
    /// This unit raised to an integer power (`HKUnit.unitRaised(toPower:)`).
    public func unitRaised(toPower power: Int) -> Unit {
        Unit(factors: factors.map { UnitFactor(prefix: $0.prefix, atom: $0.atom, exponent: $0.exponent * power) })
    }
    /// One over this unit (`HKUnit.reciprocal()`).
    public var reciprocal: Unit { unitRaised(toPower: -1) }

    public static func gramUnit(with prefix: MetricPrefix? = nil) -> Unit { Unit(.gram, prefix: prefix) }
    public static func meterUnit(with prefix: MetricPrefix? = nil) -> Unit { Unit(.meter, prefix: prefix) }
    public static func literUnit(with prefix: MetricPrefix? = nil) -> Unit { Unit(.liter, prefix: prefix) }
    public static func secondUnit(with prefix: MetricPrefix? = nil) -> Unit { Unit(.second, prefix: prefix) }
    public static func jouleUnit(with prefix: MetricPrefix? = nil) -> Unit { Unit(.joule, prefix: prefix) }
    public static func pascalUnit(with prefix: MetricPrefix? = nil) -> Unit { Unit(.pascal, prefix: prefix) }
    public static func siemenUnit(with prefix: MetricPrefix? = nil) -> Unit { Unit(.siemens, prefix: prefix) }
    /// Moles of a substance with the given molar mass in g/mol (`HKUnit.moleUnit(with:molarMass:)`).
    public static func moleUnit(with prefix: MetricPrefix? = nil, molarMass: Double) -> Unit {
        Unit(.mole(molarMass: molarMass), prefix: prefix)
    }

    public static let count = Unit(.count)
    public static let percent = Unit(.percent)
    public static let gram = Unit(.gram)
    public static let kilogram = Unit(.gram, prefix: .kilo)
    public static let pound = Unit(.pound)
    public static let stone = Unit(.stone)
    public static let meter = Unit(.meter)
    public static let centimeter = Unit(.meter, prefix: .centi)
    public static let kilometer = Unit(.meter, prefix: .kilo)
    public static let inch = Unit(.inch)
    public static let foot = Unit(.foot)
    public static let mile = Unit(.mile)
    public static let second = Unit(.second)
    public static let minute = Unit(.minute)
    public static let hour = Unit(.hour)
    public static let day = Unit(.day)
    public static let kilocalorie = Unit(.kilocalorie)
    public static let largeCalorie = Unit(.largeCalorie)
    public static let joule = Unit(.joule)
    public static let degreeCelsius = Unit(.degreeCelsius)
    public static let degreeFahrenheit = Unit(.degreeFahrenheit)
    public static let kelvin = Unit(.kelvin)
    public static let millimeterOfMercury = Unit(.millimeterOfMercury)
    public static let liter = Unit(.liter)
    public static let milliliter = Unit(.liter, prefix: .milli)
    public static let internationalUnit = Unit(.internationalUnit)
    public static let decibelAWeightedSoundPressureLevel = Unit(.decibelASPL)
    /// `count/min`, the unit people read heart rates in.
    public static let countPerMinute = Unit.count.unitDivided(by: .minute)
    /// `count/s`, HealthKit's canonical unit for heart and respiratory rate.
    public static let countPerSecond = Unit.count.unitDivided(by: .second)
    /// `mg/dL`, HealthKit's canonical unit for blood glucose.
    public static let milligramsPerDeciliter = Unit.gramUnit(with: .milli).unitDivided(by: .literUnit(with: .deci))
    /// HealthKit's `HKUnitMolarMassBloodGlucose`, g/mol.
    public static let molarMassBloodGlucose = 180.15588000005408
    /// `mmol<180.15588000005408>/L`, blood glucose in moles.
    public static let millimolesBloodGlucosePerLiter = Unit.moleUnit(with: .milli, molarMass: molarMassBloodGlucose)
        .unitDivided(by: .liter)
}

/// One factor of a unit: an optionally prefixed atom raised to an integer power.
public struct UnitFactor: Hashable, Sendable {
    public var prefix: MetricPrefix?
    public var atom: UnitAtom
    public var exponent: Int

    public init(prefix: MetricPrefix?, atom: UnitAtom, exponent: Int) {
        self.prefix = prefix
        self.atom = atom
        self.exponent = exponent
    }

    func sameBase(as other: UnitFactor) -> Bool { prefix == other.prefix && atom == other.atom }

    /// `factors` with those of the same prefixed atom combined into one, in first-seen order:
    /// `add` sums two exponents (and may refuse the sum), `admitBase` is told how many distinct
    /// bases there are before another one is added (and may refuse it).
    static func merged<Failure: Error>(
        _ factors: [UnitFactor],
        adding add: (Int, Int) throws(Failure) -> Int,
        admittingBase admitBase: (Int) throws(Failure) -> Void
    ) throws(Failure) -> [UnitFactor] {
        var merged: [UnitFactor] = []
        for factor in factors {
            if let index = merged.firstIndex(where: { $0.sameBase(as: factor) }) {
                merged[index].exponent = try add(merged[index].exponent, factor.exponent)
            } else {
                try admitBase(merged.count)
                merged.append(factor)
            }
        }
        return merged
    }

    func printed(exponent: Int) -> String {
        let base = (prefix?.symbol ?? "") + atom.symbol
        return exponent == 1 ? base : "\(base)^\(exponent)"
    }
}

/// SI prefixes as HealthKit spells them (`mc` for micro).
public enum MetricPrefix: String, CaseIterable, Sendable {
    case pico, nano, micro, milli, centi, deci, deca, hecto, kilo, mega, giga, tera

    /// The prefix as written in a unit string.
    public var symbol: String {
        switch self {
        case .pico: "p"
        case .nano: "n"
        case .micro: "mc"
        case .milli: "m"
        case .centi: "c"
        case .deci: "d"
        case .deca: "da"
        case .hecto: "h"
        case .kilo: "k"
        case .mega: "M"
        case .giga: "G"
        case .tera: "T"
        }
    }

    /// The power of ten the prefix stands for.
    public var multiplier: Double {
        switch self {
        case .pico: 1e-12
        case .nano: 1e-9
        case .micro: 1e-6
        case .milli: 1e-3
        case .centi: 1e-2
        case .deci: 1e-1
        case .deca: 1e1
        case .hecto: 1e2
        case .kilo: 1e3
        case .mega: 1e6
        case .giga: 1e9
        case .tera: 1e12
        }
    }
}

/// A unit's physical dimension as integer exponents of independent base quantities.
public struct UnitDimension: Hashable, Sendable, CustomStringConvertible {
    public var mass = 0, length = 0, time = 0, temperature = 0, amount = 0
    public var conductance = 0, voltage = 0, soundLevel = 0, hearingLevel = 0, dosage = 0, effort = 0

    public static let none = UnitDimension()

    static func + (lhs: UnitDimension, rhs: UnitDimension) -> UnitDimension {
        var d = lhs
        d.mass += rhs.mass; d.length += rhs.length; d.time += rhs.time; d.temperature += rhs.temperature
        d.amount += rhs.amount; d.conductance += rhs.conductance; d.voltage += rhs.voltage
        d.soundLevel += rhs.soundLevel; d.hearingLevel += rhs.hearingLevel; d.dosage += rhs.dosage
        d.effort += rhs.effort
        return d
    }

    static func * (lhs: UnitDimension, power: Int) -> UnitDimension {
        var d = lhs
        d.mass *= power; d.length *= power; d.time *= power; d.temperature *= power; d.amount *= power
        d.conductance *= power; d.voltage *= power; d.soundLevel *= power; d.hearingLevel *= power
        d.dosage *= power; d.effort *= power
        return d
    }

    /// A readable name for the dimension, e.g. `mass`, `length/time^2`.
    public var description: String {
        let parts: [(String, Int)] = [
            ("mass", mass), ("length", length), ("time", time), ("temperature", temperature),
            ("amount", amount), ("conductance", conductance), ("voltage", voltage),
            ("sound level", soundLevel), ("hearing level", hearingLevel), ("dosage", dosage), ("effort", effort),
        ]
        let up = parts.filter { $0.1 > 0 }.map { $0.1 == 1 ? $0.0 : "\($0.0)^\($0.1)" }
        let down = parts.filter { $0.1 < 0 }.map { $0.1 == -1 ? $0.0 : "\($0.0)^\(-$0.1)" }
        if up.isEmpty && down.isEmpty { return "scalar" }
        let top = up.isEmpty ? "1" : up.joined(separator: "*")
        return down.isEmpty ? top : "\(top)/\(down.joined(separator: "*"))"
    }
}

/// Why a unit string could not be parsed, or two units could not be converted.
public enum UnitError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The unit string was empty.
    case empty
    /// No atom is called this (after trying whole atoms, then prefix + atom).
    case unknownAtom(String, in: String)
    /// The string has a character or token where it cannot be.
    case unexpected(String, at: Int, in: String)
    /// An operator is missing its operand (`kg/`, `kg//s`, `*m`).
    case missingOperand(after: String, at: Int, in: String)
    /// The exponent after `^` is not an integer.
    case badExponent(String, in: String)
    /// An exponent (as written, or merged/multiplied out) lies outside `-limit...limit`.
    case exponentOutOfRange(String, limit: Int, in: String)
    /// Parentheses nest deeper than `limit`; `at` is the offending `(`.
    case nestedTooDeeply(limit: Int, at: Int, in: String)
    /// More than `limit` distinct (prefixed) atoms in one unit.
    case tooManyFactors(limit: Int, in: String)
    /// The molar mass in `mol<…>` is not a positive number.
    case badMolarMass(String, in: String)
    /// More than one `/` at the top level (HealthKit allows one; use parentheses).
    case moreThanOneDivision(in: String)
    /// A `(` without its `)` or the other way round.
    case unbalancedParentheses(in: String)
    /// An affine temperature (`degC`, `degF`) inside a compound unit or with a prefix.
    case affineInCompound(String)
    /// The two units measure different dimensions.
    case incompatible(from: String, to: String)

    public var description: String {
        switch self {
        case .empty: "empty unit string"
        case .unknownAtom(let atom, let string): "unknown unit \"\(atom)\" in \"\(string)\""
        case .unexpected(let token, let at, let string): "unexpected \"\(token)\" at position \(at + 1) in \"\(string)\""
        case .missingOperand(let op, let at, let string): "missing unit after \"\(op)\" at position \(at + 1) in \"\(string)\""
        case .badExponent(let exponent, let string): "exponent \"\(exponent)\" is not an integer in \"\(string)\""
        case .exponentOutOfRange(let exponent, let limit, let string):
            "exponent \"\(exponent)\" is out of range (-\(limit)...\(limit)) in \"\(string)\""
        case .nestedTooDeeply(let limit, let at, let string):
            "parentheses nested deeper than \(limit) levels at position \(at + 1) in \"\(Self.excerpt(string))\""
        case .tooManyFactors(let limit, let string):
            "more than \(limit) different units combined in \"\(Self.excerpt(string))\""
        case .badMolarMass(let mass, let string): "molar mass \"\(mass)\" is not a positive number in \"\(string)\""
        case .moreThanOneDivision(let string): "more than one top-level \"/\" in \"\(string)\" (group the denominator in parentheses)"
        case .unbalancedParentheses(let string): "unbalanced parentheses in \"\(string)\""
        case .affineInCompound(let string): "temperature units (degC, degF) cannot be prefixed, raised or combined: \"\(string)\""
        case .incompatible(let from, let to): "cannot convert \"\(from)\" to \"\(to)\": incompatible units"
        }
    }

    /// The start of a long unit string, for messages about strings too deep to print whole.
    private static func excerpt(_ string: String) -> String {
        string.count <= 80 ? string : String(string.prefix(80)) + "… (\(string.utf8.count) bytes)"
    }
}

import Testing
@testable import HealthModel

@Suite struct UnitParsingTests {
    private func unit(_ s: String) throws -> Unit { try Unit(from: s) }

    @Test func wholeAtomsWinOverPrefixPlusAtom() throws {
        // min is minutes, mi is miles, m is metres: three different dimensions or sizes.
        #expect(try unit("min").factors == [UnitFactor(prefix: nil, atom: .minute, exponent: 1)])
        #expect(try unit("mi").factors == [UnitFactor(prefix: nil, atom: .mile, exponent: 1)])
        #expect(try unit("m").factors == [UnitFactor(prefix: nil, atom: .meter, exponent: 1)])
        #expect(try unit("mmHg").factors == [UnitFactor(prefix: nil, atom: .millimeterOfMercury, exponent: 1)])
        #expect(try unit("cmAq").factors == [UnitFactor(prefix: nil, atom: .centimeterOfWater, exponent: 1)])
        #expect(try unit("hr").factors == [UnitFactor(prefix: nil, atom: .hour, exponent: 1)])
        #expect(try unit("d").factors == [UnitFactor(prefix: nil, atom: .day, exponent: 1)])
    }

    @Test func prefixedAtoms() throws {
        #expect(try unit("dL").factors == [UnitFactor(prefix: .deci, atom: .liter, exponent: 1)])
        #expect(try unit("mcg").factors == [UnitFactor(prefix: .micro, atom: .gram, exponent: 1)])
        #expect(try unit("kPa").factors == [UnitFactor(prefix: .kilo, atom: .pascal, exponent: 1)])
        #expect(try unit("mm").factors == [UnitFactor(prefix: .milli, atom: .meter, exponent: 1)])
        #expect(try unit("Mm").factors == [UnitFactor(prefix: .mega, atom: .meter, exponent: 1)])
        #expect(try unit("dam").factors == [UnitFactor(prefix: .deca, atom: .meter, exponent: 1)])
        #expect(try unit("mcS").factors == [UnitFactor(prefix: .micro, atom: .siemens, exponent: 1)])
    }

    @Test func calorieSpellings() throws {
        #expect(try unit("Cal").convert(1, to: unit("cal")) == 1000)
        #expect(try unit("Cal").convert(1, to: unit("kcal")) == 1)
        #expect(try unit("kcal").convert(1, to: unit("J")) == 4184)
        #expect(try unit("cal").convert(1, to: unit("J")) == 4.184)
        #expect(try unit("kJ").convert(4.184, to: unit("kcal")) == 1)
    }

    @Test func compoundForms() throws {
        let vo2 = try unit("ml/(kg*min)")
        #expect(vo2.unitString == "mL/(kg*min)")
        #expect(try unit("kcal/(kg*hr)").unitString == "kcal/(kg*hr)")
        // HealthKit: multiplication binds tighter than division, so kcal/kg*hr is kcal/(kg*hr).
        #expect(try unit("kcal/kg*hr") == unit("kcal/(kg*hr)"))
        #expect(try unit("m/s^2").unitString == "m/s^2")
        #expect(try unit("m.s^-2") == unit("m/s^2"))
        #expect(try unit("mg/dl") == unit("mg/dL"))
        #expect(try unit("count/min").unitString == "count/min")
    }

    @Test func molarMass() throws {
        let glucose = try unit("mmol<180.15588000005408>/L")
        #expect(glucose.factors.first?.atom == .mole(molarMass: 180.15588000005408))
        #expect(glucose.unitString == "mmol<180.15588000005408>/L")
        // Apple's own export prints 16 significant digits; it must still convert.
        let apple = try unit("mmol<180.1558800000541>/L")
        let mgdl = try apple.convert(5.5, to: unit("mg/dL"))
        #expect(abs(mgdl - 99.08573400002975) < 1e-9)
        #expect(try glucose.convert(1, to: unit("mg/dL")) == 18.0155880000054)
    }

    @Test(arguments: ["kg", "count/min", "m/s^2", "mg/dL", "mmol<180.15588000005408>/L", "kcal/(kg*hr)",
                      "ml/(kg*min)", "%", "degF", "degC", "K", "mcg", "fl_oz_us", "dBASPL", "IU", "count",
                      "s^-1", "kg*m^2/s^2", "(kg)/(m)", "mL/min", "L/min", "cm^3", "lb", "st", "J/(s*m^2)"])
    func canonicalStringRoundTrips(_ text: String) throws {
        let parsed = try unit(text)
        let again = try unit(parsed.unitString)
        #expect(again == parsed)
        #expect(again.unitString == parsed.unitString)
    }

    @Test func badStringsGiveSpecificErrors() throws {
        #expect(throws: UnitError.empty) { try Unit(from: "") }
        #expect(throws: UnitError.missingOperand(after: "/", at: 2, in: "kg/")) { try Unit(from: "kg/") }
        #expect(throws: UnitError.badExponent("x", in: "m^x")) { try Unit(from: "m^x") }
        #expect(throws: UnitError.badMolarMass("abc", in: "mmol<abc>/L")) { try Unit(from: "mmol<abc>/L") }
        #expect(throws: UnitError.unknownAtom("foo", in: "foo")) { try Unit(from: "foo") }
        #expect(throws: UnitError.missingOperand(after: "/", at: 2, in: "kg//s")) { try Unit(from: "kg//s") }
        #expect(throws: UnitError.moreThanOneDivision(in: "m/s/s")) { try Unit(from: "m/s/s") }
        #expect(throws: UnitError.unbalancedParentheses(in: "kcal/(kg*hr")) { try Unit(from: "kcal/(kg*hr") }
        #expect(throws: UnitError.unbalancedParentheses(in: "kg)")) { try Unit(from: "kg)") }
        #expect(throws: UnitError.affineInCompound("degC/min")) { try Unit(from: "degC/min") }
        #expect(throws: UnitError.unknownAtom("h", in: "h")) { try Unit(from: "h") }
        // Found by fuzzing: a huge exponent overflowed the dimension arithmetic (a crash).
        #expect(throws: UnitError.exponentOutOfRange("+000000000000003200000000320094018", limit: 64, in: "mL^+000000000000003200000000320094018")) {
            try Unit(from: "mL^+000000000000003200000000320094018")
        }
        #expect(throws: UnitError.exponentOutOfRange("40", limit: 64, in: "(m^40)^40")) { try Unit(from: "(m^40)^40") }
        #expect(try Unit(from: "m^64").factors.first?.exponent == 64)
        #expect(throws: UnitError.exponentOutOfRange("-65", limit: 64, in: "m^-53*m^-12")) { try Unit(from: "m^-53*m^-12") }
        #expect(throws: UnitError.unknownAtom("kmin", in: "kmin")) { try Unit(from: "kmin") }
        #expect(throws: UnitError.unknownAtom("mL/min·kg".split(separator: "/")[1].description, in: "mL/min·kg")) {
            try Unit(from: "mL/min·kg")
        }
    }

    /// Issue 10, finding 1: `abs(Int.min)` trapped (SIGILL) on this exponent.
    @Test(arguments: [("m^-9223372036854775808", "-9223372036854775808"), ("(m^-9223372036854775808)^-1", "-9223372036854775808"),
                      ("m^9223372036854775807", "9223372036854775807"), ("(m^2)^-9223372036854775808", "-9223372036854775808"),
                      ("(m^-1)^-9223372036854775808", "-9223372036854775808"), ("m/s^-9223372036854775808", "-9223372036854775808")])
    func extremeExponentsAreRejectedWithoutTrapping(_ text: String, _ exponent: String) {
        #expect(throws: UnitError.exponentOutOfRange(exponent, limit: 64, in: text)) { try Unit(from: text) }
    }

    @Test func mergedExponentsAtTheBoundsStayAccepted() throws {
        #expect(try Unit(from: "m^-64").factors.first?.exponent == -64)
        #expect(try Unit(from: "(m^-8)^8").factors.first?.exponent == -64)
        #expect(try Unit(from: "m^64*m^-64*m").factors.first?.exponent == 1)
    }

    /// Issue 10, finding 2: 20,000 nested parentheses overflowed the stack (SIGSEGV).
    @Test func deepNestingIsRejectedAtTheLimit() throws {
        let deep = String(repeating: "(", count: 20_000) + "m" + String(repeating: ")", count: 20_000)
        #expect(throws: UnitError.nestedTooDeeply(limit: 32, at: 32, in: deep)) { try Unit(from: deep) }
        let message = UnitError.nestedTooDeeply(limit: 32, at: 32, in: deep).description
        #expect(message.hasPrefix("parentheses nested deeper than 32 levels at position 33 in \"((((("))
        #expect(message.count < 200)
        // 32 levels are fine, 33 are not.
        let allowed = String(repeating: "(", count: 32) + "kg/m" + String(repeating: ")", count: 32)
        #expect(try Unit(from: allowed) == Unit(from: "kg/m"))
        let tooDeep = "(" + allowed + ")"
        #expect(throws: UnitError.nestedTooDeeply(limit: 32, at: 32, in: tooDeep)) { try Unit(from: tooDeep) }
        // Unclosed deep nesting is a nesting error too, never a crash.
        let unclosed = String(repeating: "(", count: 100_000)
        #expect(throws: UnitError.nestedTooDeeply(limit: 32, at: 32, in: unclosed)) { try Unit(from: unclosed) }
    }

    /// Merging distinct atoms was quadratic: 8,000 distinct molar masses (79 KB) took 8 s, a 1 MB line minutes.
    @Test func distinctAtomsAreBounded() throws {
        let many = (1...8_000).map { "mol<\($0)>" }.joined(separator: "*")
        #expect(throws: UnitError.tooManyFactors(limit: 32, in: many)) { try Unit(from: many) }
        #expect(UnitError.tooManyFactors(limit: 32, in: many).description.count < 200)
        let thirtyTwo = (1...32).map { "mol<\($0)>" }.joined(separator: "*")
        #expect(try Unit(from: thirtyTwo).factors.count == 32)
        #expect(throws: UnitError.tooManyFactors(limit: 32, in: thirtyTwo + "*m")) { try Unit(from: thirtyTwo + "*m") }
        // Repeating one atom is merged, not counted per occurrence.
        let repeated = Array(repeating: "m", count: 60).joined(separator: "*") + "/" + "(" + Array(repeating: "m", count: 59).joined(separator: "*") + ")"
        #expect(try Unit(from: repeated) == Unit(from: "m"))
    }

    @Test func errorMessagesNameTheProblem() {
        #expect(UnitError.unknownAtom("foo", in: "foo").description == "unknown unit \"foo\" in \"foo\"")
        #expect(UnitError.incompatible(from: "kg", to: "m").description == "cannot convert \"kg\" to \"m\": incompatible units")
    }
}

@Suite struct UnitConversionTests {
    private func convert(_ value: Double, _ from: String, _ to: String) throws -> Double {
        try Unit(from: from).convert(value, to: Unit(from: to))
    }

    @Test func exactFactors() throws {
        #expect(try convert(1, "lb", "kg") == 0.45359237)
        #expect(try convert(1, "in", "m") == 0.0254)
        #expect(try convert(1, "mi", "m") == 1609.344)
        #expect(try convert(1, "mi", "km") == 1.609344)
        #expect(try convert(1, "st", "lb") == 14)
        #expect(try convert(16, "oz", "lb") == 1)
        #expect(try convert(1, "ft", "in") == 12)
        #expect(try convert(1, "mmHg", "Pa") == 133.322387415)
        #expect(try convert(1, "fl_oz_us", "mL") == 29.5735295625)
        #expect(try convert(180, "cm", "ft") == 5.90551181102362)
        #expect(try convert(1, "Cal", "kJ") == 4.184)
    }

    @Test func rates() throws {
        #expect(try convert(60, "count/min", "count/s") == 1)
        #expect(try convert(1, "count/s", "count/min") == 60)
        #expect(try convert(72, "count/min", "Hz") == 1.2)
        #expect(try convert(3.6, "km/hr", "m/s") == 1)
        #expect(try convert(1, "m/s^2", "km/hr^2") == 12960)
        #expect(abs(try convert(1, "kcal/(kg*hr)", "J/(kg*s)") - 4184.0 / 3600.0) < 1e-12)
    }

    @Test func affineTemperatures() throws {
        #expect(try convert(98.6, "degF", "degC") == 37)
        #expect(try convert(32, "degF", "degC") == 0)
        #expect(try convert(-40, "degF", "degC") == -40)
        #expect(try convert(37, "degC", "degF") == 98.6)
        #expect(try convert(0, "degC", "K") == 273.15)
        #expect(try convert(212, "degF", "K") == 373.15)
        #expect(try convert(0, "K", "degF") == -459.67)
    }

    @Test func percentIsAFraction() throws {
        #expect(try convert(0.235, "%", "count") == 0.235)
        #expect(Unit.percent.isCompatible(with: .count))
    }

    @Test func glucose() throws {
        // 1 mmol/L of glucose is 18.015588 mg/dL (moles times molar mass, per decilitre).
        #expect(abs(try convert(100, "mg/dL", "mmol<180.15588000005408>/L") - 100 / 18.015588000005408) < 1e-12)
        #expect(abs(try convert(5.5, "mmol<180.15588000005408>/L", "mg/dL") - 5.5 * 18.015588000005408) < 1e-9)
    }

    @Test func incompatiblePairsNameBothUnits() {
        #expect(throws: UnitError.incompatible(from: "kg", to: "m")) { try convert(1, "kg", "m") }
        #expect(throws: UnitError.incompatible(from: "degC", to: "count")) { try convert(1, "degC", "count") }
        #expect(throws: UnitError.incompatible(from: "mmol/L", to: "mg/dL")) { try convert(1, "mmol/L", "mg/dL") }
        #expect(throws: UnitError.incompatible(from: "count/min", to: "min")) { try convert(1, "count/min", "min") }
    }

    @Test func healthKitConstructors() {
        #expect(Unit.gramUnit(with: .kilo).unitString == "kg")
        #expect(Unit.meterUnit(with: .centi).unitString == "cm")
        #expect(Unit.countPerMinute.unitString == "count/min")
        #expect(Unit.meter.unitDivided(by: Unit.second.unitRaised(toPower: 2)).unitString == "m/s^2")
        #expect(Unit.millimolesBloodGlucosePerLiter.isCompatible(with: .milligramsPerDeciliter))
    }

    /// Found by the fuzz-units target: `m.s/m^2` printed as `s/m`, which parsed to a unit that
    /// compared unequal because equality followed the order of the factors.
    @Test func equalityIgnoresTheOrderOfFactors() throws {
        let unit = try Unit(from: "m.s/m^2")
        #expect(unit.unitString == "s/m")
        #expect(try Unit(from: unit.unitString) == unit)
        #expect(try Unit(from: "m*s") == Unit(from: "s*m"))
        #expect(try Unit(from: "kcal/(kg*hr)") == Unit(from: "kcal/(hr*kg)"))
        #expect(Set([try Unit(from: "m*s"), try Unit(from: "s*m")]).count == 1)
        #expect(try Unit(from: "m*s") != Unit(from: "m/s"))
        #expect(try Unit(from: "m*s").convert(42, to: Unit(from: "s*m")) == 42)
    }
}


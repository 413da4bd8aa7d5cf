import Testing
@testable import HealthModel

/// Issue 29 item 1: values as people read them, from the values the issue saw printed.
@Suite struct DisplayUnitsTests {
    @Test func theIssuesValuesReadAsPeopleReadThem() {
        // Heart rate is stored in count/min (it was 1.41666666666667 count/s before schema 13).
        #expect(DisplayUnits.text(85, of: .heartRate, system: .metric) == "85 bpm")
        #expect(DisplayUnits.text(84.6, of: .heartRate, system: .metric) == "85 bpm")
        #expect(DisplayUnits.text(0.15, of: .bodyFatPercentage, system: .metric) == "15.0 %")
        #expect(DisplayUnits.text(0.97, of: .oxygenSaturation, system: .us) == "97.0 %")
        #expect(DisplayUnits.text(63.79776684050001, of: .bodyMass, system: .metric) == "63.8 kg")
        #expect(DisplayUnits.text(63.79776684050001, of: .bodyMass, system: .us) == "140.6 lb")
        #expect(DisplayUnits.text(10441.390593939857, of: .stepCount, system: .metric) == "10441 steps")
        #expect(DisplayUnits.text(37, of: .bodyTemperature, system: .us) == "98.6 °F")
        #expect(DisplayUnits.text(36.64, of: .bodyTemperature, system: .metric) == "36.6 °C")
        #expect(DisplayUnits.text(100, of: .bloodGlucose, system: .metric) == "5.6 mmol/L")
        #expect(DisplayUnits.text(100, of: .bloodGlucose, system: .us) == "100 mg/dL")
        #expect(DisplayUnits.text(950, of: .distanceWalkingRunning, system: .metric) == "0.95 km")
        #expect(DisplayUnits.text(1609.344, of: .distanceWalkingRunning, system: .us) == "1.00 mi")
        #expect(DisplayUnits.text(1.68, of: .height, system: .metric) == "168 cm")
        #expect(DisplayUnits.text(15, of: .respiratoryRate, system: .metric) == "15 breaths/min")
    }

    @Test func aRequestedUnitPrintsShortestRoundTripUnlessItIsTheDisplayUnit() throws {
        let bpm = try UnitAliases.unit(typed: "bpm")
        #expect(DisplayUnits.text(85, of: .heartRate, in: bpm, system: .metric) == "85 bpm")
        // Beats per second is not a display unit: the exact value.
        #expect(DisplayUnits.text(90, of: .heartRate, in: .countPerSecond, system: .metric) == "1.5 count/s")
        let pounds = try UnitAliases.unit(typed: "lbs")
        #expect(DisplayUnits.text(63.79776684050001, of: .bodyMass, in: pounds, system: .us) == "140.6 lb")
        // Not a display unit: the exact value, without binary noise.
        #expect(DisplayUnits.text(1.5, of: .bodyMass, in: .gram, system: .metric) == "1500 g")
    }

    @Test func typedAliasesMapToHKUnits() throws {
        for (typed, unit) in [("bpm", "count/min"), ("BPM", "count/min"), ("lbs", "lb"), ("kgs", "kg"), ("°C", "degC"),
                              ("degC", "degC"), ("°F", "degF"), ("percent", "%"), ("mmol/l", "mmol<180.15588000005408>/L")] {
            #expect(try UnitAliases.unit(typed: typed) == Unit(from: unit), "\(typed)")
        }
        #expect(throws: UnitError.self) { try UnitAliases.unit(typed: "furlongs") }
    }
}

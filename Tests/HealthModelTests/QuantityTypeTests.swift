import Testing
@testable import HealthModel

@Suite struct QuantityTypeTests {
    @Test func looksUpByFullIdentifier() throws {
        let type = try #require(QuantityType.named("HKQuantityTypeIdentifierStepCount"))
        #expect(type == .stepCount)
        #expect(type.shortName == "stepCount")
        #expect(type.canonicalUnit == Unit.count)
        #expect(type.aggregationStyle == .cumulative)
    }

    @Test func looksUpByShortNameCaseInsensitively() {
        #expect(QuantityType.named("stepCount") == .stepCount)
        #expect(QuantityType.named("STEPCOUNT") == .stepCount)
        #expect(QuantityType.named("bodymass") == .bodyMass)
        #expect(QuantityType.named("vo2max") == .vo2Max)
        #expect(QuantityType.named("heartRateVariabilitySDNN") == .heartRateVariabilitySDNN)
        #expect(QuantityType(named: "dietaryWater") == .dietaryWater)
    }

    @Test func fullIdentifierIsExact() {
        #expect(QuantityType.named("hkquantitytypeidentifierstepcount") == nil)
        #expect(QuantityType.named("HKQuantityTypeIdentifierStepcount") == nil)
    }

    @Test func unknownNamesAreNil() {
        #expect(QuantityType.named("HKQuantityTypeIdentifierFoo") == nil)
        #expect(QuantityType.named("") == nil)
        #expect(QuantityType.named(" stepCount") == nil)
        #expect(QuantityType(named: "steps") == nil)
    }

    @Test func ambientTemperatureExtension() throws {
        let type = try #require(QuantityType.named("IngestQuantityTypeIdentifierAmbientTemperature"))
        #expect(type == .ambientTemperature)
        #expect(QuantityType.named("ambientTemperature") == .ambientTemperature)
        #expect(type.canonicalUnit == (try Unit(from: "degC")))
        #expect(type.aggregationStyle == .discreteArithmetic)
        #expect(type.plausibleRange == -60...80)
    }

    @Test func catalogueIdentifiersAndShortNamesAreUniqueAndFindable() {
        var identifiers = Set<String>()
        var shortNames = Set<String>()
        for type in QuantityType.catalogue {
            #expect(identifiers.insert(type.identifier).inserted, "duplicate \(type.identifier)")
            #expect(shortNames.insert(type.shortName.lowercased()).inserted, "duplicate \(type.shortName)")
            #expect(QuantityType.named(type.identifier) == type)
            #expect(QuantityType.named(type.shortName) == type)
            #expect(type.identifier.hasPrefix("HKQuantityTypeIdentifier") || type.identifier.hasPrefix("IngestQuantityTypeIdentifier"))
            #expect(type.plausibleRange.lowerBound < type.plausibleRange.upperBound, "\(type.identifier)")
        }
    }

    @Test(arguments: QuantityType.catalogue)
    func canonicalUnitStringParsesBack(type: QuantityType) throws {
        let reparsed = try Unit(from: type.canonicalUnit.unitString)
        #expect(reparsed == type.canonicalUnit)
        #expect(reparsed.isCompatible(with: type.canonicalUnit))
    }

    @Test func canonicalUnitsFollowTheHealthKitTable() throws {
        let expected: [(QuantityType, String)] = [
            // Heart and respiratory rate depart from HealthKit's count/s: a device's bpm is stored exactly.
            (.heartRate, "count/min"), (.respiratoryRate, "count/min"), (.restingHeartRate, "count/min"),
            (.bloodGlucose, "mg/dL"), (.vo2Max, "ml/(kg*min)"), (.oxygenSaturation, "%"),
            (.bodyFatPercentage, "%"), (.bodyMass, "kg"), (.height, "m"), (.bodyTemperature, "degC"),
            (.activeEnergyBurned, "kcal"), (.dietaryWater, "mL"), (.dietarySodium, "g"),
            (.bloodPressureSystolic, "mmHg"), (.electrodermalActivity, "S"), (.insulinDelivery, "IU"),
            (.environmentalAudioExposure, "dBASPL"), (.cyclingPower, "W"), (.walkingSpeed, "m/s"),
            (.peakExpiratoryFlowRate, "L/min"), (.heartRateVariabilitySDNN, "ms"), (.appleExerciseTime, "min"),
        ]
        for (type, unitString) in expected {
            #expect(type.canonicalUnit == (try Unit(from: unitString)), "\(type.identifier)")
        }
    }

    @Test func massesAcceptExportUnits() throws {
        for type in [QuantityType.bodyMass, .leanBodyMass] {
            for unit in ["kg", "lb", "st", "g"] {
                #expect(type.canonicalUnit.isCompatible(with: try Unit(from: unit)), "\(type.shortName) \(unit)")
            }
        }
        // 160 lb = 72.57472 kg.
        let kilograms = try Unit(from: "lb").convert(160, to: QuantityType.bodyMass.canonicalUnit)
        #expect(abs(kilograms - 72.574_779_2) < 1e-9)
    }

    @Test func lengthsAcceptExportUnits() throws {
        let lengthTypes: [QuantityType] = [
            .height, .waistCircumference, .distanceWalkingRunning, .distanceCycling, .distanceWheelchair, .distanceSwimming,
        ]
        for type in lengthTypes {
            for unit in ["cm", "in", "ft", "km", "mi", "yd"] {
                #expect(type.canonicalUnit.isCompatible(with: try Unit(from: unit)), "\(type.shortName) \(unit)")
            }
        }
        #expect(try Unit(from: "mi").convert(1, to: QuantityType.distanceWalkingRunning.canonicalUnit) == 1609.344)
    }

    @Test func temperaturesAcceptFahrenheit() throws {
        let fahrenheit = try Unit(from: "degF")
        for type in [QuantityType.bodyTemperature, .basalBodyTemperature, .appleSleepingWristTemperature, .ambientTemperature] {
            #expect(type.canonicalUnit.isCompatible(with: fahrenheit), "\(type.shortName)")
        }
        let celsius = try fahrenheit.convert(98.6, to: QuantityType.bodyTemperature.canonicalUnit)
        #expect(abs(celsius - 37) < 1e-9)
    }

    @Test func energiesAcceptKilojoulesAndFoodCalories() throws {
        for type in [QuantityType.activeEnergyBurned, .basalEnergyBurned, .dietaryEnergyConsumed] {
            for unit in ["kJ", "Cal", "kcal"] {
                #expect(type.canonicalUnit.isCompatible(with: try Unit(from: unit)), "\(type.shortName) \(unit)")
            }
        }
        #expect(abs(try Unit(from: "kJ").convert(4.184, to: QuantityType.activeEnergyBurned.canonicalUnit) - 1) < 1e-12)
    }

    @Test func bloodGlucoseAcceptsMassAndMolarConcentration() throws {
        let molar = try Unit(from: "mmol<180.15588000005408>/L")
        #expect(QuantityType.bloodGlucose.canonicalUnit.isCompatible(with: try Unit(from: "mg/dL")))
        #expect(QuantityType.bloodGlucose.canonicalUnit.isCompatible(with: molar))
        // 5.5 mmol/L × 180.15588 g/mol = 990.857 mg/L = 99.0857 mg/dL.
        let milligramsPerDeciliter = try molar.convert(5.5, to: QuantityType.bloodGlucose.canonicalUnit)
        #expect(abs(milligramsPerDeciliter - 99.085_734) < 1e-5)
    }

    @Test func heartRateIsStoredPerMinuteAndABpmValueExactly() throws {
        let perMinute = try Unit(from: "count/min")
        #expect(QuantityType.heartRate.canonicalUnit.isCompatible(with: perMinute))
        #expect(QuantityType.respiratoryRate.canonicalUnit.isCompatible(with: perMinute))
        let range = QuantityType.heartRate.plausibleRange
        let lowest = try QuantityType.heartRate.canonicalUnit.convert(range.lowerBound, to: perMinute)
        let highest = try QuantityType.heartRate.canonicalUnit.convert(range.upperBound, to: perMinute)
        #expect(abs(lowest - 20) < 1e-9)
        #expect(abs(highest - 300) < 1e-9)
        #expect(try perMinute.convert(72, to: QuantityType.heartRate.canonicalUnit) == 72)
        // Every whole bpm a device sends is stored as itself (in count/s 62 came back as 62.00000000000001).
        for bpm in 20...300 {
            #expect(try perMinute.convert(Double(bpm), to: QuantityType.heartRate.canonicalUnit) == Double(bpm))
        }
    }

    @Test func aggregationStyles() {
        #expect(QuantityType.stepCount.aggregationStyle == .cumulative)
        #expect(QuantityType.bodyMass.aggregationStyle == .discreteArithmetic)
        #expect(QuantityType.heartRate.aggregationStyle == .discreteTemporallyWeighted)
        #expect(QuantityType.atrialFibrillationBurden.aggregationStyle == .discreteTemporallyWeighted)
        #expect(QuantityType.environmentalAudioExposure.aggregationStyle == .discreteEquivalentContinuousLevel)
        #expect(QuantityType.headphoneAudioExposure.aggregationStyle == .discreteEquivalentContinuousLevel)
        #expect(AggregationStyle.discreteTemporallyWeighted.rawValue == 2)
    }

    @Test func plausibleRangesFromTheDesign() {
        #expect(QuantityType.bodyMass.plausibleRange == 0.5...650)
        #expect(QuantityType.bodyTemperature.plausibleRange == 25...45)
        #expect(QuantityType.stepCount.plausibleRange == 0...1_000_000)
        #expect(QuantityType.oxygenSaturation.isPlausible(0.97))
        #expect(!QuantityType.oxygenSaturation.isPlausible(97))  // percent written as 97 instead of a fraction
        #expect(!QuantityType.bodyMass.isPlausible(72_350))  // grams sent as kilograms
    }

    @Test func dietaryTypes() {
        let required = [
            "Sodium", "Potassium", "Calcium", "Caffeine", "Iron", "VitaminC", "Cholesterol", "Protein",
            "FatTotal", "FatSaturated", "Carbohydrates", "Sugar", "Fiber", "EnergyConsumed", "Water",
        ]
        for suffix in required {
            let type = QuantityType.named("HKQuantityTypeIdentifierDietary" + suffix)
            #expect(type?.isDietary == true, "Dietary\(suffix)")
            #expect(type?.aggregationStyle == .cumulative, "Dietary\(suffix)")
        }
        for type in QuantityType.catalogue {
            #expect(type.isDietary == type.identifier.hasPrefix("HKQuantityTypeIdentifierDietary"), "\(type.identifier)")
        }
    }

    @Test func correlationAndCharacteristicTypes() {
        #expect(CorrelationType.bloodPressure.identifier == "HKCorrelationTypeIdentifierBloodPressure")
        #expect(CorrelationType.food.identifier == "HKCorrelationTypeIdentifierFood")
        #expect(CorrelationType.named("HKCorrelationTypeIdentifierFood") == .food)
        #expect(CorrelationType.named("BloodPressure") == .bloodPressure)
        #expect(CorrelationType.named("HKCorrelationTypeIdentifierBP") == nil)
        #expect(CharacteristicType.dateOfBirth.identifier == "HKCharacteristicTypeIdentifierDateOfBirth")
        #expect(CharacteristicType.biologicalSex.identifier == "HKCharacteristicTypeIdentifierBiologicalSex")
        #expect(CharacteristicType.named("biologicalsex") == .biologicalSex)
    }
}

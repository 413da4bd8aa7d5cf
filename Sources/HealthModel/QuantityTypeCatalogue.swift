// The built-in quantity types: HealthKit's device-relevant types plus ingestd's own extensions.
// Canonical units and aggregation styles follow HKTypeIdentifiers.h (research/healthkit-model.md §2).
// Plausible ranges are per sample, in the canonical unit, wide enough for real extremes and
// narrow enough to catch unit mix-ups (grams sent as kilograms, percent sent as a fraction...).

extension QuantityType {
    /// A HealthKit type: the identifier is `HKQuantityTypeIdentifier` + `suffix`; the short name is
    /// the suffix with a lowercase first letter unless given.
    private init(
        healthKit suffix: String,
        shortName: String? = nil,
        unit: String,
        _ style: AggregationStyle,
        _ range: ClosedRange<Double>,
        dietary: Bool = false
    ) {
        self.init(
            identifier: "HKQuantityTypeIdentifier" + suffix,
            shortName: shortName ?? (suffix.prefix(1).lowercased() + suffix.dropFirst()),
            canonicalUnit: catalogueUnit(unit),
            aggregationStyle: style,
            plausibleRange: range,
            isDietary: dietary
        )
    }

    /// A cumulative nutrition type (a possible food correlation member).
    private init(dietary suffix: String, unit: String = "g", _ range: ClosedRange<Double>) {
        self.init(healthKit: suffix, unit: unit, .cumulative, range, dietary: true)
    }

    // MARK: Activity (cumulative)

    public static let stepCount = QuantityType(healthKit: "StepCount", unit: "count", .cumulative, 0...1_000_000)
    public static let distanceWalkingRunning = QuantityType(healthKit: "DistanceWalkingRunning", unit: "m", .cumulative, 0...500_000)
    public static let distanceCycling = QuantityType(healthKit: "DistanceCycling", unit: "m", .cumulative, 0...1_000_000)
    public static let distanceWheelchair = QuantityType(healthKit: "DistanceWheelchair", unit: "m", .cumulative, 0...500_000)
    public static let distanceSwimming = QuantityType(healthKit: "DistanceSwimming", unit: "m", .cumulative, 0...100_000)
    public static let flightsClimbed = QuantityType(healthKit: "FlightsClimbed", unit: "count", .cumulative, 0...10_000)
    public static let pushCount = QuantityType(healthKit: "PushCount", unit: "count", .cumulative, 0...1_000_000)
    public static let swimmingStrokeCount = QuantityType(healthKit: "SwimmingStrokeCount", unit: "count", .cumulative, 0...1_000_000)
    public static let activeEnergyBurned = QuantityType(healthKit: "ActiveEnergyBurned", unit: "kcal", .cumulative, 0...50_000)
    public static let basalEnergyBurned = QuantityType(healthKit: "BasalEnergyBurned", unit: "kcal", .cumulative, 0...50_000)
    public static let appleExerciseTime = QuantityType(healthKit: "AppleExerciseTime", unit: "min", .cumulative, 0...1440)
    public static let appleStandTime = QuantityType(healthKit: "AppleStandTime", unit: "min", .cumulative, 0...1440)
    public static let appleMoveTime = QuantityType(healthKit: "AppleMoveTime", unit: "min", .cumulative, 0...1440)

    // MARK: Body measurements (discrete arithmetic)

    public static let bodyMass = QuantityType(healthKit: "BodyMass", unit: "kg", .discreteArithmetic, 0.5...650)
    /// A fraction: 0.235 means 23.5 %.
    public static let bodyFatPercentage = QuantityType(healthKit: "BodyFatPercentage", unit: "%", .discreteArithmetic, 0...1)
    public static let leanBodyMass = QuantityType(healthKit: "LeanBodyMass", unit: "kg", .discreteArithmetic, 0.5...650)
    public static let bodyMassIndex = QuantityType(healthKit: "BodyMassIndex", unit: "count", .discreteArithmetic, 5...250)
    public static let height = QuantityType(healthKit: "Height", unit: "m", .discreteArithmetic, 0.2...3)
    public static let waistCircumference = QuantityType(healthKit: "WaistCircumference", unit: "m", .discreteArithmetic, 0.1...3)
    public static let bodyTemperature = QuantityType(healthKit: "BodyTemperature", unit: "degC", .discreteArithmetic, 25...45)
    public static let basalBodyTemperature = QuantityType(healthKit: "BasalBodyTemperature", unit: "degC", .discreteArithmetic, 25...45)
    public static let appleSleepingWristTemperature = QuantityType(healthKit: "AppleSleepingWristTemperature", unit: "degC", .discreteArithmetic, 20...45)

    // MARK: Heart and circulation

    /// Stored in count/min (beats per minute), so a device's bpm is stored exactly (HealthKit's
    /// own canonical unit is count/s; stores before schema 13 held it so). 20...300.
    public static let heartRate = QuantityType(healthKit: "HeartRate", unit: "count/min", .discreteTemporallyWeighted, 20...300)
    public static let restingHeartRate = QuantityType(healthKit: "RestingHeartRate", unit: "count/min", .discreteArithmetic, 20...300)
    public static let walkingHeartRateAverage = QuantityType(healthKit: "WalkingHeartRateAverage", unit: "count/min", .discreteArithmetic, 20...300)
    /// The drop in beats per minute one minute after exercise.
    public static let heartRateRecoveryOneMinute = QuantityType(healthKit: "HeartRateRecoveryOneMinute", unit: "count/min", .discreteArithmetic, 0...200)
    public static let heartRateVariabilitySDNN = QuantityType(healthKit: "HeartRateVariabilitySDNN", unit: "ms", .discreteArithmetic, 0...2000)
    /// A fraction of time in atrial fibrillation.
    public static let atrialFibrillationBurden = QuantityType(healthKit: "AtrialFibrillationBurden", unit: "%", .discreteTemporallyWeighted, 0...1)
    public static let bloodPressureSystolic = QuantityType(healthKit: "BloodPressureSystolic", unit: "mmHg", .discreteArithmetic, 40...300)
    public static let bloodPressureDiastolic = QuantityType(healthKit: "BloodPressureDiastolic", unit: "mmHg", .discreteArithmetic, 20...200)
    public static let peripheralPerfusionIndex = QuantityType(healthKit: "PeripheralPerfusionIndex", unit: "%", .discreteArithmetic, 0...0.5)

    // MARK: Respiratory and metabolic

    /// A fraction: 0.97 means 97 %.
    public static let oxygenSaturation = QuantityType(healthKit: "OxygenSaturation", unit: "%", .discreteArithmetic, 0.35...1)
    /// Stored in count/min (breaths per minute), like heart rate; 1...120.
    public static let respiratoryRate = QuantityType(healthKit: "RespiratoryRate", unit: "count/min", .discreteArithmetic, 1...120)
    public static let bloodGlucose = QuantityType(healthKit: "BloodGlucose", unit: "mg/dL", .discreteArithmetic, 10...1500)
    public static let vo2Max = QuantityType(healthKit: "VO2Max", shortName: "vo2Max", unit: "ml/(kg*min)", .discreteArithmetic, 5...100)
    public static let electrodermalActivity = QuantityType(healthKit: "ElectrodermalActivity", unit: "S", .discreteArithmetic, 0...0.001)
    public static let forcedVitalCapacity = QuantityType(healthKit: "ForcedVitalCapacity", unit: "L", .discreteArithmetic, 0...10)
    public static let forcedExpiratoryVolume1 = QuantityType(healthKit: "ForcedExpiratoryVolume1", unit: "L", .discreteArithmetic, 0...10)
    public static let peakExpiratoryFlowRate = QuantityType(healthKit: "PeakExpiratoryFlowRate", unit: "L/min", .discreteArithmetic, 0...1000)
    public static let inhalerUsage = QuantityType(healthKit: "InhalerUsage", unit: "count", .cumulative, 0...1000)
    public static let numberOfTimesFallen = QuantityType(healthKit: "NumberOfTimesFallen", unit: "count", .cumulative, 0...1000)
    public static let insulinDelivery = QuantityType(healthKit: "InsulinDelivery", unit: "IU", .cumulative, 0...1000)
    /// A fraction: 0.0008 means 0.08 %.
    public static let bloodAlcoholContent = QuantityType(healthKit: "BloodAlcoholContent", unit: "%", .discreteArithmetic, 0...0.01)

    // MARK: Hearing (equivalent continuous level)

    public static let environmentalAudioExposure = QuantityType(healthKit: "EnvironmentalAudioExposure", unit: "dBASPL", .discreteEquivalentContinuousLevel, 0...200)
    public static let headphoneAudioExposure = QuantityType(healthKit: "HeadphoneAudioExposure", unit: "dBASPL", .discreteEquivalentContinuousLevel, 0...200)

    // MARK: Power and speed

    public static let cyclingPower = QuantityType(healthKit: "CyclingPower", unit: "W", .discreteArithmetic, 0...3000)
    public static let runningPower = QuantityType(healthKit: "RunningPower", unit: "W", .discreteArithmetic, 0...3000)
    public static let walkingSpeed = QuantityType(healthKit: "WalkingSpeed", unit: "m/s", .discreteArithmetic, 0...10)
    public static let runningSpeed = QuantityType(healthKit: "RunningSpeed", unit: "m/s", .discreteArithmetic, 0...15)
    public static let cyclingSpeed = QuantityType(healthKit: "CyclingSpeed", unit: "m/s", .discreteArithmetic, 0...40)

    // MARK: Nutrition (cumulative, dietary)

    public static let dietaryEnergyConsumed = QuantityType(dietary: "DietaryEnergyConsumed", unit: "kcal", 0...50_000)
    public static let dietaryWater = QuantityType(dietary: "DietaryWater", unit: "mL", 0...20_000)
    public static let dietaryProtein = QuantityType(dietary: "DietaryProtein", 0...2000)
    public static let dietaryFatTotal = QuantityType(dietary: "DietaryFatTotal", 0...2000)
    public static let dietaryFatSaturated = QuantityType(dietary: "DietaryFatSaturated", 0...2000)
    public static let dietaryFatMonounsaturated = QuantityType(dietary: "DietaryFatMonounsaturated", 0...2000)
    public static let dietaryFatPolyunsaturated = QuantityType(dietary: "DietaryFatPolyunsaturated", 0...2000)
    public static let dietaryCarbohydrates = QuantityType(dietary: "DietaryCarbohydrates", 0...2000)
    public static let dietarySugar = QuantityType(dietary: "DietarySugar", 0...2000)
    public static let dietaryFiber = QuantityType(dietary: "DietaryFiber", 0...2000)
    public static let dietaryCholesterol = QuantityType(dietary: "DietaryCholesterol", 0...20)
    public static let dietaryCaffeine = QuantityType(dietary: "DietaryCaffeine", 0...10)
    // Major minerals.
    public static let dietarySodium = QuantityType(dietary: "DietarySodium", 0...100)
    public static let dietaryPotassium = QuantityType(dietary: "DietaryPotassium", 0...100)
    public static let dietaryCalcium = QuantityType(dietary: "DietaryCalcium", 0...100)
    public static let dietaryChloride = QuantityType(dietary: "DietaryChloride", 0...100)
    public static let dietaryPhosphorus = QuantityType(dietary: "DietaryPhosphorus", 0...100)
    public static let dietaryMagnesium = QuantityType(dietary: "DietaryMagnesium", 0...100)
    // Trace minerals.
    public static let dietaryIron = QuantityType(dietary: "DietaryIron", 0...5)
    public static let dietaryZinc = QuantityType(dietary: "DietaryZinc", 0...5)
    public static let dietaryCopper = QuantityType(dietary: "DietaryCopper", 0...5)
    public static let dietaryManganese = QuantityType(dietary: "DietaryManganese", 0...5)
    public static let dietaryIodine = QuantityType(dietary: "DietaryIodine", 0...5)
    public static let dietarySelenium = QuantityType(dietary: "DietarySelenium", 0...5)
    public static let dietaryChromium = QuantityType(dietary: "DietaryChromium", 0...5)
    public static let dietaryMolybdenum = QuantityType(dietary: "DietaryMolybdenum", 0...5)
    // Vitamins.
    public static let dietaryVitaminC = QuantityType(dietary: "DietaryVitaminC", 0...50)
    public static let dietaryVitaminA = QuantityType(dietary: "DietaryVitaminA", 0...5)
    public static let dietaryVitaminB6 = QuantityType(dietary: "DietaryVitaminB6", 0...5)
    public static let dietaryVitaminB12 = QuantityType(dietary: "DietaryVitaminB12", 0...5)
    public static let dietaryVitaminD = QuantityType(dietary: "DietaryVitaminD", 0...5)
    public static let dietaryVitaminE = QuantityType(dietary: "DietaryVitaminE", 0...5)
    public static let dietaryVitaminK = QuantityType(dietary: "DietaryVitaminK", 0...5)
    public static let dietaryThiamin = QuantityType(dietary: "DietaryThiamin", 0...5)
    public static let dietaryRiboflavin = QuantityType(dietary: "DietaryRiboflavin", 0...5)
    public static let dietaryNiacin = QuantityType(dietary: "DietaryNiacin", 0...5)
    public static let dietaryFolate = QuantityType(dietary: "DietaryFolate", 0...5)
    public static let dietaryBiotin = QuantityType(dietary: "DietaryBiotin", 0...5)
    public static let dietaryPantothenicAcid = QuantityType(dietary: "DietaryPantothenicAcid", 0...5)

    // MARK: ingestd extensions (not HealthKit types)

    /// Room or outdoor air temperature from home thermometers (`IngestQuantityTypeIdentifierAmbientTemperature`).
    public static let ambientTemperature = QuantityType(
        identifier: "IngestQuantityTypeIdentifierAmbientTemperature",
        shortName: "ambientTemperature",
        canonicalUnit: catalogueUnit("degC"),
        aggregationStyle: .discreteArithmetic,
        plausibleRange: -60...80
    )

    /// Total body water as a fraction of body mass, derived from a scale's impedance
    /// (`IngestQuantityTypeIdentifierBodyWaterPercentage`; 0.55 means 55 %). Health Connect keeps
    /// body water as a mass (`BodyWaterMassRecord`): mass × fraction.
    public static let bodyWaterPercentage = ingestd("BodyWaterPercentage", unit: "%", 0...1)
    /// Skeletal muscle mass (`IngestQuantityTypeIdentifierSkeletalMuscleMass`); Health Connect has no record type.
    public static let skeletalMuscleMass = ingestd("SkeletalMuscleMass", unit: "kg", 0.5...300)
    /// Bone mineral mass (`IngestQuantityTypeIdentifierBoneMass`; Health Connect `BoneMassRecord`).
    public static let boneMass = ingestd("BoneMass", unit: "kg", 0.1...20)
    /// A vendor's unitless visceral fat rating (`IngestQuantityTypeIdentifierVisceralFatRating`,
    /// 1–59 on Xiaomi's and Yunmai's scales); Health Connect has no record type.
    public static let visceralFatRating = ingestd("VisceralFatRating", unit: "count", 0...100)
    /// Basal metabolic rate as energy per day (`IngestQuantityTypeIdentifierBasalMetabolicRate`;
    /// Health Connect `BasalMetabolicRateRecord`, in kcal/day). HealthKit's `basalEnergyBurned`
    /// is the energy burned over a sample's interval, not a rate.
    public static let basalMetabolicRate = ingestd("BasalMetabolicRate", unit: "kcal/d", 100...10_000)

    /// An ingestd discrete type `IngestQuantityTypeIdentifier` + `suffix`.
    private static func ingestd(_ suffix: String, unit: String, _ range: ClosedRange<Double>) -> QuantityType {
        QuantityType(identifier: "IngestQuantityTypeIdentifier" + suffix,
                     shortName: suffix.prefix(1).lowercased() + suffix.dropFirst(),
                     canonicalUnit: catalogueUnit(unit), aggregationStyle: .discreteArithmetic, plausibleRange: range)
    }

    /// Every built-in type, HealthKit types first, in a stable order.
    public static let catalogue: [QuantityType] = [
        .stepCount, .distanceWalkingRunning, .distanceCycling, .distanceWheelchair, .distanceSwimming,
        .flightsClimbed, .pushCount, .swimmingStrokeCount, .activeEnergyBurned, .basalEnergyBurned,
        .appleExerciseTime, .appleStandTime, .appleMoveTime,
        .bodyMass, .bodyFatPercentage, .leanBodyMass, .bodyMassIndex, .height, .waistCircumference,
        .bodyTemperature, .basalBodyTemperature, .appleSleepingWristTemperature,
        .heartRate, .restingHeartRate, .walkingHeartRateAverage, .heartRateRecoveryOneMinute,
        .heartRateVariabilitySDNN, .atrialFibrillationBurden, .bloodPressureSystolic, .bloodPressureDiastolic,
        .peripheralPerfusionIndex,
        .oxygenSaturation, .respiratoryRate, .bloodGlucose, .vo2Max, .electrodermalActivity,
        .forcedVitalCapacity, .forcedExpiratoryVolume1, .peakExpiratoryFlowRate,
        .inhalerUsage, .numberOfTimesFallen, .insulinDelivery, .bloodAlcoholContent,
        .environmentalAudioExposure, .headphoneAudioExposure,
        .cyclingPower, .runningPower, .walkingSpeed, .runningSpeed, .cyclingSpeed,
        .dietaryEnergyConsumed, .dietaryWater, .dietaryProtein, .dietaryFatTotal, .dietaryFatSaturated,
        .dietaryFatMonounsaturated, .dietaryFatPolyunsaturated, .dietaryCarbohydrates, .dietarySugar,
        .dietaryFiber, .dietaryCholesterol, .dietaryCaffeine,
        .dietarySodium, .dietaryPotassium, .dietaryCalcium, .dietaryChloride, .dietaryPhosphorus,
        .dietaryMagnesium,
        .dietaryIron, .dietaryZinc, .dietaryCopper, .dietaryManganese, .dietaryIodine, .dietarySelenium,
        .dietaryChromium, .dietaryMolybdenum,
        .dietaryVitaminC, .dietaryVitaminA, .dietaryVitaminB6, .dietaryVitaminB12, .dietaryVitaminD,
        .dietaryVitaminE, .dietaryVitaminK, .dietaryThiamin, .dietaryRiboflavin, .dietaryNiacin,
        .dietaryFolate, .dietaryBiotin, .dietaryPantothenicAcid,
        .ambientTemperature, .bodyWaterPercentage, .skeletalMuscleMass, .boneMass, .visceralFatRating,
        .basalMetabolicRate,
    ]
}

/// The metadata keys ingestd interprets, as HealthKit's raw constant values (what exports show).
public enum MetadataKey {
    /// Stable id of one logical measurement across re-sends (String).
    public static let syncIdentifier = "HKMetadataKeySyncIdentifier"
    /// Version compared on re-send: a higher version replaces the stored sample (Int).
    public static let syncVersion = "HKMetadataKeySyncVersion"
    /// The writer's own record id (String); `HKMetadataKeyExternalUUID` in HealthKit's headers.
    public static let externalUUID = "HKExternalUUID"
    /// Whether a person typed the value in rather than a sensor measuring it (Bool).
    public static let wasUserEntered = "HKWasUserEntered"
    /// IANA time zone the sample was recorded in (String).
    public static let timeZone = "HKTimeZone"
    /// Serial number of the measuring device (String).
    public static let deviceSerialNumber = "HKDeviceSerialNumber"
    /// Name of the food in a food correlation (String).
    public static let foodType = "HKFoodType"
    /// The user slot a multi-user device gave the reading (number: the UDS user index or a vendor
    /// user id); ingestd's key, used to assign the reading to the person with that slot.
    public static let deviceUserID = "IngestDeviceUserID"
    /// Whole-body impedance of a weighing in ohms (number), as a scale measured it.
    public static let impedance = "IngestImpedanceOhm"
    /// A dual-frequency scale's impedance at its high frequency (about 250 kHz) in ohms (number);
    /// `impedance` is then the one at about 50 kHz (the Xiaomi S400).
    public static let highFrequencyImpedance = "IngestImpedanceHighFrequencyOhm"
    /// The body-composition formula a derived sample was computed with (String, e.g. `standard`,
    /// `xiaomi`); a sample without it is a stored value (the scale's or an import's own).
    public static let bodyCompositionFormula = "IngestBodyCompositionFormula"
    /// The version of that formula (number).
    public static let bodyCompositionFormulaVersion = "IngestBodyCompositionFormulaVersion"

    /// The constant names that some producers write instead of the raw values; accepted on input.
    static let longSpellings: [String: String] = [
        "HKMetadataKeyExternalUUID": externalUUID,
        "HKMetadataKeyWasUserEntered": wasUserEntered,
        "HKMetadataKeyTimeZone": timeZone,
        "HKMetadataKeyDeviceSerialNumber": deviceSerialNumber,
    ]

    /// HealthKit keys whose values are numbers (booleans as 0/1, enumerations, plain numbers), as
    /// HealthKit's headers document them. An Apple Health export writes every metadata value as
    /// text, so this is how an importer tells a number from an app's numeric-looking string.
    public static let numericHealthKitKeys: Set<String> = [
        wasUserEntered, "HKWasTakenInLab", "HKMetadataKeyHeartRateMotionContext", "HKHeartRateSensorLocation",
        "HKBodyTemperatureSensorLocation", "HKBloodGlucoseMealTime", "HKInsulinDeliveryReason", "HKVO2MaxTestType",
        "HKIndoorWorkout", "HKCoachedWorkout", "HKGroupFitness", "HKMenstrualCycleStart",
        "HKSexualActivityProtectionUsed", "HKReferenceRangeLowerLimit", "HKReferenceRangeUpperLimit",
        "HKWeatherCondition", "HKSwimmingStrokeStyle", "HKSwimmingLocationType", "HKSWOLFScore",
        "HKMetadataKeyAppleDeviceCalibrated", "HKMetadataKeyUserMotionContext", "HKMetadataKeyAppleECGAlgorithmVersion",
        "HKMetadataKeyDevicePlacementSide",
    ]

    /// The raw key for `key`, mapping the accepted long spellings to HealthKit's raw values.
    public static func canonical(_ key: String) -> String { longSpellings[key] ?? key }
}

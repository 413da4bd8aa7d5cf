import Transport
import HealthModel

/// The Bluetooth SIG assigned numbers this module reads.
public enum GATTHealthUUID {
    // MARK: Services
    public static let weightScaleService = BLEUUID(0x181D)
    public static let bodyCompositionService = BLEUUID(0x181B)
    public static let healthThermometerService = BLEUUID(0x1809)
    public static let heartRateService = BLEUUID(0x180D)
    public static let runningSpeedAndCadenceService = BLEUUID(0x1814)
    public static let bloodPressureService = BLEUUID(0x1810)
    public static let glucoseService = BLEUUID(0x1808)
    public static let pulseOximeterService = BLEUUID(0x1822)

    /// The services whose presence selects the adapter.
    public static let services: [BLEUUID] = [
        weightScaleService, bodyCompositionService, healthThermometerService, heartRateService,
        runningSpeedAndCadenceService, bloodPressureService, glucoseService, pulseOximeterService,
    ]

    // MARK: Measurement characteristics
    public static let weightMeasurement = BLEUUID(0x2A9D)
    public static let bodyCompositionMeasurement = BLEUUID(0x2A9C)
    public static let temperatureMeasurement = BLEUUID(0x2A1C)
    public static let intermediateTemperature = BLEUUID(0x2A1E)
    public static let heartRateMeasurement = BLEUUID(0x2A37)
    public static let rscMeasurement = BLEUUID(0x2A53)
    public static let bloodPressureMeasurement = BLEUUID(0x2A35)
    public static let intermediateCuffPressure = BLEUUID(0x2A36)
    public static let glucoseMeasurement = BLEUUID(0x2A18)
    public static let glucoseMeasurementContext = BLEUUID(0x2A34)
    public static let plxSpotCheckMeasurement = BLEUUID(0x2A5E)
    public static let plxContinuousMeasurement = BLEUUID(0x2A5F)

    // MARK: Characteristics that describe the device or later measurements
    /// Temperature Type (uint8), for thermometers that do not put the type in each measurement.
    public static let temperatureType = BLEUUID(0x2A1D)
    /// Body Sensor Location (uint8) of a heart rate sensor.
    public static let bodySensorLocation = BLEUUID(0x2A38)
    /// Device Information service strings.
    public static let manufacturerName = BLEUUID(0x2A29)
    public static let modelNumber = BLEUUID(0x2A24)
    public static let serialNumber = BLEUUID(0x2A25)
    public static let hardwareRevision = BLEUUID(0x2A27)
    public static let firmwareRevision = BLEUUID(0x2A26)
    public static let softwareRevision = BLEUUID(0x2A28)

    // MARK: Conversation characteristics
    /// Record Access Control Point (write + indicate) of the Glucose service.
    public static let recordAccessControlPoint = BLEUUID(0x2A52)
    /// Current Time (0x2A2B) of the Current Time service 0x1805.
    public static let currentTime = BLEUUID(0x2A2B)
    /// Date Time (0x2A08): the clock of the Roche (Accu-Chek) meters, in their Glucose service.
    public static let dateTime = BLEUUID(0x2A08)
    /// User Control Point (write + indicate) of the User Data Service 0x181C.
    public static let userControlPoint = BLEUUID(0x2A9F)
    /// User Data Service user data: Date of Birth (year u16 LE, month, day).
    public static let dateOfBirth = BLEUUID(0x2A85)
    /// User Data Service user data: Gender (0 male, 1 female, 2 unspecified).
    public static let gender = BLEUUID(0x2A8C)
    /// User Data Service user data: Height (u16 LE, centimetres on these scales).
    public static let height = BLEUUID(0x2A8E)
    /// Database Change Increment (u32 LE) of the User Data Service.
    public static let databaseChangeIncrement = BLEUUID(0x2A99)
}

/// Metadata keys this adapter writes besides HealthKit's typed ones (sync identity, time zone,
/// serial number).
public enum GATTMetadataKey {
    /// HealthKit's body temperature sensor location (number): 1 armpit, 2 body, 3 ear, 4 finger,
    /// 5 gastro-intestinal, 6 mouth, 7 rectum, 8 toe, 9 ear drum. The Bluetooth Temperature Type
    /// uses the same numbers for these nine.
    public static let bodyTemperatureSensorLocation = "HKBodyTemperatureSensorLocation"
    /// HealthKit's heart rate sensor location (number): 0 other, 1 chest, 2 wrist, 3 finger,
    /// 4 hand, 5 ear lobe, 6 foot. The Bluetooth Body Sensor Location uses the same numbers.
    public static let heartRateSensorLocation = "HKHeartRateSensorLocation"
    /// How a value was derived rather than measured (string): `cadence` for steps computed as
    /// cadence × time, `total-distance` for distance taken as the change of the device's counter.
    public static let derivedFrom = "IngestDerivedFrom"
    /// Bioelectrical impedance in ohms (number), on the body fat sample of a body composition reading.
    public static let bodyImpedance = "IngestBodyImpedance"
    /// The user index the device assigned the reading to (number; multi-user scales, BP monitors).
    public static let deviceUserID = MetadataKey.deviceUserID
    /// The device's own wall-clock time stamp (string, `2012-12-05T11:50:27`) when it was not used
    /// as the sample time because it lay in the future of the receive time.
    public static let deviceTime = "IngestDeviceTime"
    /// Blood pressure Measurement Status bits (number), on the correlation.
    public static let bloodPressureMeasurementStatus = "IngestBloodPressureMeasurementStatus"
    /// Glucose type (number, low nibble) and sample location (number, high nibble).
    public static let glucoseSampleType = "IngestGlucoseSampleType"
    public static let glucoseSampleLocation = "IngestGlucoseSampleLocation"
    /// The glucose meter's record sequence number (number).
    public static let glucoseSequenceNumber = "IngestGlucoseSequenceNumber"
    /// HealthKit's blood glucose meal time (number): 1 preprandial, 2 postprandial.
    public static let bloodGlucoseMealTime = "HKBloodGlucoseMealTime"
    /// The Glucose Measurement Context's meal (number): 1 preprandial, 2 postprandial, 3 fasting,
    /// 4 casual, 5 bedtime.
    public static let glucoseMeal = "IngestGlucoseMeal"
    /// Seconds the meter's clock was ahead of the conversation's (negative: behind) when the
    /// reading's time was corrected by it (number).
    public static let deviceClockOffset = "IngestDeviceClockOffsetSeconds"
}

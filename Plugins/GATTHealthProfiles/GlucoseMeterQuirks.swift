import Foundation
import Transport

/// The real glucose meters' departures from the Glucose profile, as the public uploaders
/// document them (xDrip+ `BluetoothGlucoseMeter.java`, Tidepool uploader
/// `bluetoothLEDriver.js`), told apart by the Manufacturer Name String (0x2A29) the
/// conversation reads first. See README.md ("Glucose meters").
public enum GlucoseMeterFamily: String, Sendable, CaseIterable {
    /// Ascensia (formerly Bayer) Contour Next One / Contour Plus One: the profile as written;
    /// its clock is the Current Time characteristic (0x2A2B).
    case contour
    /// Roche Accu-Chek Guide / Instant / Aviva Connect: the meter's clock is the Date Time
    /// characteristic (0x2A08) of the Glucose service, not a Current Time service (xDrip+
    /// reads Date Time for a manufacturer name starting "Roche").
    case accuChek
    /// Any other meter with the Glucose service: the profile as written.
    case standard

    /// The family of a meter whose Manufacturer Name String is `manufacturer`.
    public init(manufacturer: String?) {
        let name = (manufacturer ?? "").lowercased()
        if name.hasPrefix("roche") {
            self = .accuChek
        } else if name.hasPrefix("ascensia") || name.hasPrefix("bayer") {
            self = .contour
        } else {
            self = .standard
        }
    }

    /// Where the meter's clock is read, in order of preference.
    public var clockCharacteristics: [BLEUUID] {
        switch self {
        case .accuChek: [GATTHealthUUID.dateTime, GATTHealthUUID.currentTime]
        case .contour, .standard: [GATTHealthUUID.currentTime]
        }
    }
}

/// The meter's clock as a Current Time (0x2A2B) or Date Time (0x2A08) value starts: year
/// (uint16), month, day, hours, minutes, seconds; nil when short or not a time.
func meterClock(_ bytes: [UInt8]) -> GATTDateTime? {
    guard bytes.count >= 7 else { return nil }
    return GATTDateTime(year: Int(bytes[0]) | Int(bytes[1]) << 8, month: Int(bytes[2]), day: Int(bytes[3]),
                        hours: Int(bytes[4]), minutes: Int(bytes[5]), seconds: Int(bytes[6]))
}

/// Glucose Measurement Context (0x2A34), the part the adapter uses: flags uint8 (bit 0
/// carbohydrate id and carbohydrate, bit 1 meal, bit 7 extended flags follow) · sequence
/// number uint16 · [extended flags uint8] · [carbohydrate id uint8, carbohydrate SFLOAT] ·
/// [meal uint8: 1 preprandial, 2 postprandial, 3 fasting, 4 casual, 5 bedtime] · … .
public struct GlucoseMeasurementContext: Hashable, Sendable {
    /// The sequence number of the Glucose Measurement it belongs to.
    public var sequenceNumber: UInt16
    public var meal: UInt8?

    /// Decodes the value.
    /// - Throws: `.tooShort`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        let flags = try reader.uint8("flags")
        sequenceNumber = try reader.uint16("sequence-number")
        if flags & 0x80 != 0 { _ = try reader.uint8("extended-flags") }
        if flags & 0x01 != 0 {
            _ = try reader.uint8("carbohydrate-id")
            _ = try reader.sfloat("carbohydrate")
        }
        meal = flags & 0x02 != 0 ? try reader.uint8("meal") : nil
    }

    /// The meal value the i-SENS meters (CareSens) use for a blood ketone reading: the record
    /// is then a ketone reading, not glucose (xDrip+ `ContextRx.ketone()`, Tidepool's driver).
    public static let ketoneMeal: UInt8 = 6

    /// HealthKit's `HKMetadataKeyBloodGlucoseMealTime` (1 preprandial, 2 postprandial) for the
    /// meal: fasting counts as before a meal; casual and bedtime have none.
    public var healthKitMealTime: Int? {
        switch meal {
        case 1, 3: 1
        case 2: 2
        default: nil
        }
    }
}

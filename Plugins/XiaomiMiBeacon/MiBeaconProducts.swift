import AdapterKit
import Foundation

/// The MiBeacon health devices read, by the product id at offset 2 (ids from
/// Bluetooth-Devices/xiaomi-ble `devices.py`).
public struct MiBeaconProduct: Sendable, Hashable {
    /// What the device measures, which decides the objects read.
    public enum Kind: Sendable, Hashable {
        /// Body Composition Scale S400: object 0x6E16.
        case bodyCompositionScaleS400
        /// Smart Scale S200: object 0x4E16.
        case smartScaleS200
        /// Body thermometer: object 0x000A (body temperature in 0.01 °C).
        case bodyThermometer
        /// Baby thermometer: object 0x2000 (two skin-side temperatures and the battery).
        case babyThermometer
    }

    public var productID: UInt16
    public var name: String
    public var model: String
    public var kind: Kind

    /// Every product the adapter reads.
    public static let all: [MiBeaconProduct] = [
        MiBeaconProduct(productID: 0x30D9, name: "Body Composition Scale S400", model: "MJTZC01YM", kind: .bodyCompositionScaleS400),
        MiBeaconProduct(productID: 0x3BD5, name: "Body Composition Scale S400", model: "MJTZC01YM", kind: .bodyCompositionScaleS400),
        MiBeaconProduct(productID: 0x48CF, name: "Body Composition Scale S400", model: "MJTZC01YM", kind: .bodyCompositionScaleS400),
        MiBeaconProduct(productID: 0x4B05, name: "Body Composition Scale", model: "MJTZC03YM", kind: .bodyCompositionScaleS400),
        MiBeaconProduct(productID: 0x45C9, name: "Smart Scale S200", model: "MJTZC02YM", kind: .smartScaleS200),
        MiBeaconProduct(productID: 0x4C04, name: "Smart Scale S200", model: "MJTZC02YM", kind: .smartScaleS200),
        MiBeaconProduct(productID: 0x4DCB, name: "Smart Scale S200", model: "MJTZC02YM", kind: .smartScaleS200),
        MiBeaconProduct(productID: 0x0391, name: "Body Thermometer", model: "MMC-W505", kind: .bodyThermometer),
        MiBeaconProduct(productID: 0x00DB, name: "Baby Thermometer", model: "MMC-T201-1", kind: .babyThermometer),
    ]

    private static let byID = Dictionary(all.map { ($0.productID, $0) }, uniquingKeysWith: { first, _ in first })

    /// The product with this id, nil for MiBeacon devices that measure nothing ingestd keeps
    /// (room sensors, switches, toothbrushes…).
    public static func product(_ id: UInt16) -> MiBeaconProduct? { byID[id] }
}

/// What one MiBeacon object of a health device says.
public enum MiBeaconReading: Sendable, Hashable {
    /// S400 (0x6E16): the weighing frame (mass, heart rate, the 50 kHz impedance), the closing
    /// frame (the 250 kHz impedance alone: the weighing is complete), or the step-off frame (all zero).
    case s400(profile: UInt8, kilograms: Double?, heartRate: Int?, impedanceOhms: Double?)
    /// S200 (0x4E16): mass in kg; nil when the scale is empty.
    case s200(profile: UInt8, kilograms: Double?, deviceTime: UInt32)
    /// Body temperature in °C (0x000A); nil for the "no reading" zero.
    case bodyTemperature(Double?)
    /// MMC-T201-1 (0x2000): the two raw temperatures (0.01 °C) and the body temperature derived from them.
    case babyThermometer(rawFirst: Int16, rawSecond: Int16, bodyCelsius: Double, battery: UInt8)
}

/// Why an object of a known product cannot be read.
public enum MiBeaconObjectError: Error, Hashable, Sendable, CustomStringConvertible {
    case wrongLength(id: UInt16, expected: Int, value: [UInt8])

    public var reason: String { "bad-object-length" }

    public var description: String {
        switch self {
        case .wrongLength(let id, let expected, let value):
            String(format: "object 0x%04x has %d value bytes, not %d: ", id, value.count, expected) + hexString(value)
        }
    }
}

/// The pure decoders of the health objects.
public enum MiBeaconObjects {
    /// The reading an object gives for `kind`, nil for objects that product sends but that carry
    /// no health value (battery, …).
    public static func reading(_ object: MiBeaconObject, kind: MiBeaconProduct.Kind) throws(MiBeaconObjectError) -> MiBeaconReading? {
        let v = object.value
        switch (kind, object.id) {
        case (.bodyCompositionScaleS400, 0x6E16):
            guard v.count == 9 else { throw .wrongLength(id: object.id, expected: 9, value: v) }
            let packed = UInt32(v[1]) | UInt32(v[2]) << 8 | UInt32(v[3]) << 16 | UInt32(v[4]) << 24
            let mass = packed & 0x7FF
            let heart = (packed >> 11) & 0x7F
            let impedance = packed >> 18
            return .s400(profile: v[0], kilograms: mass == 0 ? nil : Double(mass) / 10,
                         heartRate: heart > 0 && heart < 127 ? Int(heart) + 50 : nil,
                         impedanceOhms: impedance == 0 ? nil : Double(impedance) / 10)
        case (.smartScaleS200, 0x4E16):
            guard v.count == 9 else { throw .wrongLength(id: object.id, expected: 9, value: v) }
            let mass = UInt32(v[1]) | UInt32(v[2]) << 8 | UInt32(v[3]) << 16 | UInt32(v[4]) << 24
            let time = UInt32(v[5]) | UInt32(v[6]) << 8 | UInt32(v[7]) << 16 | UInt32(v[8]) << 24
            return .s200(profile: v[0], kilograms: mass == 0 ? nil : Double(mass) / 100, deviceTime: time)
        case (.bodyThermometer, 0x000A):
            guard v.count == 2 else { throw .wrongLength(id: object.id, expected: 2, value: v) }
            let raw = Int16(bitPattern: UInt16(v[0]) | UInt16(v[1]) << 8)
            return .bodyTemperature(raw == 0 ? nil : Double(raw) / 100)
        case (.babyThermometer, 0x2000):
            guard v.count == 5 else { throw .wrongLength(id: object.id, expected: 5, value: v) }
            let first = Int16(bitPattern: UInt16(v[0]) | UInt16(v[1]) << 8)
            let second = Int16(bitPattern: UInt16(v[2]) | UInt16(v[3]) << 8)
            return .babyThermometer(rawFirst: first, rawSecond: second,
                                    bodyCelsius: babyThermometerBodyTemperature(first: first, second: second), battery: v[4])
        default:
            return nil
        }
    }

    /// The MMC-T201-1's body temperature from its two sensor temperatures (0.01 °C each): the
    /// probe does not touch the body core, so xiaomi-ble fitted this to the Mi Home app's values
    /// between 36.5 and 37.8 °C: 3.71934e-11·e^(0.69314·t1/100) − 1.02801e-8·e^(0.53871·t2/100) + 36.413.
    /// An approximation, not a calibrated conversion.
    public static func babyThermometerBodyTemperature(first: Int16, second: Int16) -> Double {
        3.71934e-11 * exp(0.69314 * Double(first) / 100) - 1.02801e-8 * exp(0.53871 * Double(second) / 100) + 36.413
    }
}

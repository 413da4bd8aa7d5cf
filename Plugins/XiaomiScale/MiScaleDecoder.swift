import AdapterKit
import Foundation
import HealthModel

/// The two Xiaomi advertisement layouts: which service-data UUID carries the frame and how long it is.
public enum MiScaleModel: String, Sendable, Hashable, CaseIterable {
    /// Mi Smart Scale (XMTZC01HM, XMTZC04HM): service data 0x181D, 10 bytes.
    case smartScale
    /// Mi Body Composition Scale and Scale 2 (XMTZC02HM, XMTZC05HM): service data 0x181B, 13 bytes.
    case bodyCompositionScale

    /// The 16-bit service-data UUID the frame travels under.
    public var serviceUUID: UInt16 {
        switch self {
        case .smartScale: 0x181D
        case .bodyCompositionScale: 0x181B
        }
    }

    /// The exact length of the service-data payload (after the UUID).
    public var frameLength: Int {
        switch self {
        case .smartScale: 10
        case .bodyCompositionScale: 13
        }
    }

    /// Xiaomi model numbers sold with this layout.
    public var modelNumbers: String {
        switch self {
        case .smartScale: "XMTZC01HM/XMTZC04HM"
        case .bodyCompositionScale: "XMTZC02HM/XMTZC05HM"
        }
    }
}

/// The unit the scale displays and broadcasts its weight in.
public enum MiScaleWeightUnit: String, Sendable, Hashable {
    /// Raw value in 1/200 kg (5 g steps).
    case kilogram
    /// Raw value in 1/100 lb.
    case pound
    /// Raw value in 1/100 jin (catty; one jin is exactly 0.5 kg).
    case jin

}

/// The scale's own clock reading (year, month, day, hour, minute, second), without a zone.
///
/// The scale is set by the phone app in local time; it may never have been set, in which case it
/// counts from 1970 or another default. ``isPlausible`` tells a set clock from an unset one.
public struct MiScaleClock: Hashable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The first year a Mi scale was sold; earlier years mean the clock was never set.
    public static let earliestPlausibleYear = 2014

    /// Whether the fields form a real time of day on a real date.
    public var isValid: Bool {
        (1...12).contains(month) && (1...31).contains(day) && (0...23).contains(hour)
            && (0...59).contains(minute) && (0...59).contains(second)
    }

    /// Whether the clock looks set: valid fields and a year no earlier than the first Mi scale.
    public var isPlausible: Bool { isValid && year >= Self.earliestPlausibleYear }

    /// The instant this wall-clock time denotes in `timeZone`; nil when the fields are not a
    /// real date (e.g. 31 February).
    public func date(in timeZone: TimeZone) -> Date? {
        guard isValid else { return nil }
        return LocalClockTimes.calendarDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                                            in: timeZone)
    }

    /// The same instant as `date(in: times.timeZone)`, from the run's shared conversion.
    public func date(using times: LocalClockTimes) -> Date? {
        guard isValid else { return nil }
        return times.date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// `2021-04-11T16:19:01`: the clock as the scale shows it, no zone.
    public var description: String {
        // Built by hand: `String(format:)` costs microseconds, and this runs for every new reading.
        if (0...9999).contains(year), [month, day, hour, minute, second].allSatisfy({ (0...99).contains($0) }) {
            return ASCIIBuffer.text(capacity: 19) { out in
                out.put(year, digits: 4); out.put("-"); out.put(month, digits: 2); out.put("-"); out.put(day, digits: 2)
                out.put("T"); out.put(hour, digits: 2); out.put(":"); out.put(minute, digits: 2); out.put(":")
                out.put(second, digits: 2)
            }
        }
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value.magnitude)
            let sign = value < 0 ? "-" : ""
            return sign + String(repeating: "0", count: max(0, width - digits.count - sign.count)) + digits
        }
        return padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + "T" + padded(hour, 2) + ":"
            + padded(minute, 2) + ":" + padded(second, 2)
    }
}

/// One decoded Mi scale advertisement frame.
public struct MiScaleReading: Hashable, Sendable {
    public var model: MiScaleModel
    /// The weight as broadcast, in counts of the unit's resolution (see ``MiScaleWeightUnit``).
    public var rawWeight: UInt16
    public var unit: MiScaleWeightUnit
    /// The reading has settled (the display stops blinking).
    public var isStabilized: Bool
    /// The person has stepped off; the frame repeats the last weight.
    public var isWeightRemoved: Bool
    /// Bioelectrical impedance in ohms, when the frame says it carries one (body composition scale only).
    public var impedanceOhms: UInt16?
    /// The scale's clock when the reading was taken.
    public var clock: MiScaleClock
    /// The control byte(s) as received: one for the smart scale, two for the body composition scale.
    public var controlBytes: [UInt8]

    /// The weight in kilograms: kg and jin counts are both 1/200 kg; a pound is 0.45359237 kg.
    public var weightKilograms: Double {
        switch unit {
        case .kilogram, .jin: Double(rawWeight) / 200
        case .pound: Double(rawWeight) * 0.453_592_37 / 100
        }
    }

    /// The weight in the unit the scale displays.
    public var weightInDisplayUnit: Double {
        switch unit {
        case .kilogram: Double(rawWeight) / 200
        case .pound, .jin: Double(rawWeight) / 100
        }
    }

    /// Whether the frame is a finished measurement worth storing: stabilized and still loaded.
    public var isFinalReading: Bool { isStabilized && !isWeightRemoved }
}

/// Why a Mi scale frame could not be decoded. Every case names the bytes.
public enum MiScaleDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The frame ends before `field`, which starts at `offset`.
    case tooShort(model: MiScaleModel, field: String, offset: Int, bytes: [UInt8])
    /// The frame is longer than the model's fixed layout.
    case tooLong(model: MiScaleModel, expected: Int, bytes: [UInt8])

    /// A short stable key for rejection counts.
    public var reason: String {
        switch self {
        case .tooShort: "short-frame"
        case .tooLong: "long-frame"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let model, let field, let offset, let bytes):
            "\(model.rawValue) frame of \(bytes.count) bytes ends before \(field) at offset \(offset): \(hexString(bytes))"
        case .tooLong(let model, let expected, let bytes):
            "\(model.rawValue) frame has \(bytes.count) bytes, the layout has \(expected): \(hexString(bytes))"
        }
    }
}

/// Pure decoders for the two Mi scale advertisement frames (service data, UUID bytes removed).
///
/// Layouts (little-endian):
/// - Smart scale, 10 bytes: control · weight uint16 · year uint16 · month · day · hour · minute · second.
///   Control: bit0 pounds, bit4 jin, bit5 stabilized, bit7 weight removed.
/// - Body composition scale, 13 bytes: control0 · control1 · year uint16 · month · day · hour ·
///   minute · second · impedance uint16 (ohms) · weight uint16.
///   control0 bit0 pounds; control1: bit1 impedance present, bit5 stabilized, bit6 jin, bit7 weight removed.
public enum MiScaleDecoder {
    /// Decodes the frame of `model`.
    public static func decode(_ bytes: some Collection<UInt8>, model: MiScaleModel) throws(MiScaleDecodingError) -> MiScaleReading {
        let frame = Array(bytes)
        switch model {
        case .smartScale: return try decodeSmartScale(frame)
        case .bodyCompositionScale: return try decodeBodyCompositionScale(frame)
        }
    }

    /// Decodes a Mi Smart Scale frame (service data 0x181D).
    public static func decodeSmartScale(_ bytes: some Collection<UInt8>) throws(MiScaleDecodingError) -> MiScaleReading {
        let frame = Array(bytes)
        let model = MiScaleModel.smartScale
        try require(frame, model: model, field: "control byte", offset: 0, width: 1)
        try require(frame, model: model, field: "weight", offset: 1, width: 2)
        let clock = try readClock(frame, model: model, offset: 3)
        guard frame.count == model.frameLength else { throw .tooLong(model: model, expected: model.frameLength, bytes: frame) }
        let control = frame[0]
        let unit: MiScaleWeightUnit = control & 0x01 != 0 ? .pound : (control & 0x10 != 0 ? .jin : .kilogram)
        return MiScaleReading(
            model: model,
            rawWeight: uint16(frame, at: 1),
            unit: unit,
            isStabilized: control & 0x20 != 0,
            isWeightRemoved: control & 0x80 != 0,
            impedanceOhms: nil,
            clock: clock,
            controlBytes: [control]
        )
    }

    /// Decodes a Mi Body Composition Scale frame (service data 0x181B).
    public static func decodeBodyCompositionScale(_ bytes: some Collection<UInt8>) throws(MiScaleDecodingError) -> MiScaleReading {
        let frame = Array(bytes)
        let model = MiScaleModel.bodyCompositionScale
        try require(frame, model: model, field: "control bytes", offset: 0, width: 2)
        let clock = try readClock(frame, model: model, offset: 2)
        try require(frame, model: model, field: "impedance", offset: 9, width: 2)
        try require(frame, model: model, field: "weight", offset: 11, width: 2)
        guard frame.count == model.frameLength else { throw .tooLong(model: model, expected: model.frameLength, bytes: frame) }
        let control0 = frame[0]
        let control1 = frame[1]
        let unit: MiScaleWeightUnit = control0 & 0x01 != 0 ? .pound : (control1 & 0x40 != 0 ? .jin : .kilogram)
        return MiScaleReading(
            model: model,
            rawWeight: uint16(frame, at: 11),
            unit: unit,
            isStabilized: control1 & 0x20 != 0,
            isWeightRemoved: control1 & 0x80 != 0,
            impedanceOhms: control1 & 0x02 != 0 ? uint16(frame, at: 9) : nil,
            clock: clock,
            controlBytes: [control0, control1]
        )
    }

    private static func require(_ frame: [UInt8], model: MiScaleModel, field: String, offset: Int, width: Int) throws(MiScaleDecodingError) {
        guard frame.count >= offset + width else {
            throw .tooShort(model: model, field: field, offset: offset, bytes: frame)
        }
    }

    private static func readClock(_ frame: [UInt8], model: MiScaleModel, offset: Int) throws(MiScaleDecodingError) -> MiScaleClock {
        try require(frame, model: model, field: "timestamp", offset: offset, width: 7)
        return MiScaleClock(
            year: Int(uint16(frame, at: offset)),
            month: Int(frame[offset + 2]),
            day: Int(frame[offset + 3]),
            hour: Int(frame[offset + 4]),
            minute: Int(frame[offset + 5]),
            second: Int(frame[offset + 6])
        )
    }

    private static func uint16(_ frame: [UInt8], at offset: Int) -> UInt16 {
        UInt16(frame[offset]) | UInt16(frame[offset + 1]) << 8
    }
}

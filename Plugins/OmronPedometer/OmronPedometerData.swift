import AdapterKit
import Foundation

/// Why the body of an "OK" reply could not be read as what the command returns. Offsets count from the
/// first byte after "OK" (the status byte).
public enum OmronDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The body is not as long as the record it should hold.
    case wrongLength(record: String, expected: Int, found: Int, body: [UInt8])
    /// A packed decimal digit is above 9.
    case invalidDigit(field: String, offset: Int, body: [UInt8])
    /// The status byte after "OK" is not 0.
    case badStatus(record: String, status: UInt8, body: [UInt8])
    /// A text field holds bytes that are not printable ASCII.
    case notText(record: String, body: [UInt8])

    public var description: String {
        switch self {
        case .wrongLength(let record, let expected, let found, let body):
            "\(record): \(found) bytes where \(expected) were expected: \(hexString(body))"
        case .invalidDigit(let field, let offset, let body):
            "\(field): byte \(offset) is not packed decimal: \(hexString(body))"
        case .badStatus(let record, let status, let body):
            String(format: "%@: status byte 0x%02x is not 0: ", record, status) + hexString(body)
        case .notText(let record, let body):
            "\(record): not printable text: \(hexString(body))"
        }
    }
}

/// Steps counted in one hour of one day.
public struct OmronHour: Hashable, Sendable {
    /// 0-23, local time of the device.
    public var hour: Int
    public var steps: Int
    /// Steps the device counted as part of an aerobic walk (10 minutes or more without a break).
    public var aerobicSteps: Int
    /// The device flags the hour as worn/used; it also marks a finished hour (the hour in progress reads false
    /// even with steps).
    public var isUsed: Bool
    /// The device recorded an event (a button press) in this hour.
    public var hasEvent: Bool

    public init(hour: Int, steps: Int, aerobicSteps: Int, isUsed: Bool, hasEvent: Bool) {
        self.hour = hour
        self.steps = steps
        self.aerobicSteps = aerobicSteps
        self.isUsed = isUsed
        self.hasEvent = hasEvent
    }
}

/// One day's totals as the device keeps them (GTD block 4).
public struct OmronDailySummary: Hashable, Sendable {
    public var totalSteps: Int
    public var aerobicSteps: Int
    public var aerobicWalkingMinutes: Int
    public var kilocalories: Int
    /// Distance in hundredths of the device's distance unit (miles on the US HJ-720IT).
    public var distanceHundredths: Int
    /// Fat burned in tenths of a gram.
    public var fatBurnedDecigrams: Int
    /// The six bytes after the packed totals, kept as read (a flag, a day number and profile values).
    public var trailer: [UInt8]

    public init(totalSteps: Int, aerobicSteps: Int, aerobicWalkingMinutes: Int, kilocalories: Int,
                distanceHundredths: Int, fatBurnedDecigrams: Int, trailer: [UInt8]) {
        self.totalSteps = totalSteps
        self.aerobicSteps = aerobicSteps
        self.aerobicWalkingMinutes = aerobicWalkingMinutes
        self.kilocalories = kilocalories
        self.distanceHundredths = distanceHundredths
        self.fatBurnedDecigrams = fatBurnedDecigrams
        self.trailer = trailer
    }
}

/// How many days the device holds.
public struct OmronDataCount: Hashable, Sendable {
    /// Days in memory.
    public var storedDays: Int
    /// Days not yet cleared by `CTD` (today counts until it is cleared).
    public var untransferredDays: Int

    public init(storedDays: Int, untransferredDays: Int) {
        self.storedDays = storedDays
        self.untransferredDays = untransferredDays
    }
}

/// Pure decoders for the bodies of the pedometer's "OK" replies (the bytes after "OK": a status byte,
/// the record, a checksum byte already checked by `OmronReply.parse`).
public enum OmronPedometerDecoder {
    /// `VER00`: the ASCII text between the status byte and the checksum, e.g. `HJ-720IT202`.
    public static func version(_ body: [UInt8]) throws(OmronDecodingError) -> String {
        try checkStatus(body, record: "version")
        guard body.count >= 3 else {
            throw .wrongLength(record: "version", expected: 3, found: body.count, body: body)
        }
        return try text(body[1..<(body.count - 1)], record: "version", body: body)
    }

    /// `SRL00`: `00 <n> <n ASCII bytes> <checksum>`, e.g. `HJ7208Y125980`.
    public static func serialNumber(_ body: [UInt8]) throws(OmronDecodingError) -> String {
        try checkStatus(body, record: "serial number")
        guard body.count >= 3, body.count == Int(body[1]) + 3 else {
            throw .wrongLength(record: "serial number", expected: body.count >= 2 ? Int(body[1]) + 3 : 3,
                               found: body.count, body: body)
        }
        return try text(body[2..<(body.count - 1)], record: "serial number", body: body)
    }

    /// `CNT00`: `00 <stored u16 BE> <untransferred u16 BE> <checksum>`.
    public static func dataCount(_ body: [UInt8]) throws(OmronDecodingError) -> OmronDataCount {
        try checkStatus(body, record: "data count")
        guard body.count == 6 else {
            throw .wrongLength(record: "data count", expected: 6, found: body.count, body: body)
        }
        return OmronDataCount(storedDays: Int(body[1]) << 8 | Int(body[2]),
                              untransferredDays: Int(body[3]) << 8 | Int(body[4]))
    }

    /// `GTD` blocks 1-3: `00 20` then 8 hours of 4 bytes, then the checksum. Per hour: steps in the low
    /// 14 bits of bytes 0-1 (bit 6 of byte 0 = hour used), aerobic steps in the low 14 bits of bytes 2-3
    /// (bit 6 of byte 2 = event).
    public static func hours(_ body: [UInt8], block: Int) throws(OmronDecodingError) -> [OmronHour] {
        let record = "hours block \(block)"
        try checkStatus(body, record: record)
        guard body.count == 35, body[1] == 32 else {
            throw .wrongLength(record: record, expected: 35, found: body.count, body: body)
        }
        return (0..<8).map { index in
            let offset = 2 + index * 4
            let steps = Int(body[offset] & 0x3F) << 8 | Int(body[offset + 1])
            let aerobic = Int(body[offset + 2] & 0x3F) << 8 | Int(body[offset + 3])
            return OmronHour(hour: (block - 1) * 8 + index, steps: steps, aerobicSteps: aerobic,
                             isUsed: body[offset] & 0x40 != 0, hasEvent: body[offset + 2] & 0x40 != 0)
        }
    }

    /// `GTD` block 4: `00 14` then packed decimal digits (total steps 5, aerobic steps 5, aerobic minutes 4,
    /// kcal 5, distance 5 in hundredths, fat 4 in tenths of a gram), six further bytes, the checksum.
    public static func summary(_ body: [UInt8]) throws(OmronDecodingError) -> OmronDailySummary {
        try checkStatus(body, record: "day summary")
        guard body.count == 23, body[1] == 20 else {
            throw .wrongLength(record: "day summary", expected: 23, found: body.count, body: body)
        }
        var digits = PackedDigits(body: body, offset: 2)
        return OmronDailySummary(
            totalSteps: try digits.take(5, field: "total steps"),
            aerobicSteps: try digits.take(5, field: "aerobic steps"),
            aerobicWalkingMinutes: try digits.take(4, field: "aerobic walking time"),
            kilocalories: try digits.take(5, field: "calories"),
            distanceHundredths: try digits.take(5, field: "distance"),
            fatBurnedDecigrams: try digits.take(4, field: "fat burned"),
            trailer: Array(body[16..<22]))
    }

    private static func checkStatus(_ body: [UInt8], record: String) throws(OmronDecodingError) {
        guard let status = body.first else {
            throw .wrongLength(record: record, expected: 1, found: 0, body: body)
        }
        guard status == 0 else { throw .badStatus(record: record, status: status, body: body) }
    }

    private static func text(_ bytes: ArraySlice<UInt8>, record: String, body: [UInt8]) throws(OmronDecodingError) -> String {
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { throw .notText(record: record, body: body) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Reads packed decimal digits (two per byte, high nibble first) in sequence.
private struct PackedDigits {
    let body: [UInt8]
    var nibble: Int

    init(body: [UInt8], offset: Int) {
        self.body = body
        self.nibble = offset * 2
    }

    mutating func take(_ count: Int, field: String) throws(OmronDecodingError) -> Int {
        var value = 0
        for _ in 0..<count {
            let byte = body[nibble / 2]
            let digit = nibble % 2 == 0 ? byte >> 4 : byte & 0x0F
            guard digit <= 9 else { throw .invalidDigit(field: field, offset: nibble / 2, body: body) }
            value = value * 10 + Int(digit)
            nibble += 1
        }
        return value
    }
}

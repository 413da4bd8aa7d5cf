import AdapterKit
import Foundation

/// One reading stored in the monitor's memory: the cuff pressures, the pulse, the monitor's
/// wall-clock time and its two flags.
public struct OmronBPRecord: Sendable, Equatable {
    public var systolic: Int
    public var diastolic: Int
    public var pulse: Int
    /// The monitor's local time (no zone): year, month, day, hour, minute, second.
    public var time: DateComponents
    /// The monitor saw an irregular heartbeat.
    public var irregularHeartbeat: Bool
    /// The monitor saw the body move during the measurement.
    public var bodyMovement: Bool

    /// Decodes one slot; nil for an empty slot (never written, or erased: all 0xFF, or the
    /// zero placeholder some monitors leave).
    public init?(_ bytes: [UInt8], layout: OmronBPModel.RecordLayout) throws(OmronRecordError) {
        guard bytes.count >= 8 else { throw .tooShort(bytes: bytes) }
        if bytes.allSatisfy({ $0 == 0xFF }) { return nil }
        let year, month, day, hour, minute, second: Int
        switch layout {
        case .byteAligned:
            if bytes[0] > 0xE1 || bytes[1...7].allSatisfy({ $0 == 0 }) { return nil }
            systolic = Int(bytes[0]) + 25
            diastolic = Int(bytes[1])
            pulse = Int(bytes[2])
            year = 2000 + Int(bytes[3] & 0x3F)
            let first = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
            let second16 = UInt16(bytes[6]) | UInt16(bytes[7]) << 8
            hour = Int(first & 0x1F)
            day = Int(first >> 5 & 0x1F)
            month = Int(first >> 10 & 0x0F)
            irregularHeartbeat = first >> 14 & 1 == 1
            bodyMovement = first >> 15 & 1 == 1
            second = min(Int(second16 & 0x3F), 59)
            minute = Int(second16 >> 6 & 0x3F)
        case .bitPacked:
            if bytes[0...7].allSatisfy({ $0 == 0 }) { return nil }
            diastolic = Int(bytes[0])
            systolic = Int(bytes[1]) + 25
            year = 2000 + Int(bytes[2])
            pulse = Int(bytes[3])
            let word = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
            bodyMovement = word >> 31 & 1 == 1
            irregularHeartbeat = word >> 30 & 1 == 1
            month = Int(word >> 26 & 0x0F)
            day = Int(word >> 21 & 0x1F)
            hour = Int(word >> 16 & 0x1F)
            minute = Int(word >> 6 & 0x3F)
            second = min(Int(word & 0x3F), 59)
        }
        guard (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59 else {
            throw .impossibleTime(year: year, month: month, day: day, hour: hour, minute: minute, bytes: bytes)
        }
        time = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The reading's instant, its wall-clock time read in `zone`.
    public func date(in zone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: time)
    }
}

/// Why a stored reading could not be used; each case carries the bytes.
public enum OmronRecordError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(bytes: [UInt8])
    case impossibleTime(year: Int, month: Int, day: Int, hour: Int, minute: Int, bytes: [UInt8])

    public var reason: String {
        switch self {
        case .tooShort: "short-record"
        case .impossibleTime: "impossible-time"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let bytes): "a reading needs at least 8 bytes: \(hexString(bytes))"
        case .impossibleTime(let year, let month, let day, let hour, let minute, let bytes):
            "reading dated \(year)-\(month)-\(day) \(hour):\(minute), no such time: \(hexString(bytes))"
        }
    }
}

/// The monitor's clock block in its settings, in one of two layouts (omblepy's
/// `deviceSpecific/hem-*.py`, `settingsTimeSyncBytes`).
public enum OmronClockBlock {
    /// Where the time and the sum sit in the block.
    public enum Layout: String, Sendable, Hashable {
        /// 16 bytes: 8…13 year − 2000, month, day, hour, minute, second; 14 the low byte of the
        /// sum of bytes 0…13; 15 zero (HEM-7142T2, HEM-7155T, HEM-7361T, HEM-7377T1).
        case yearFirst
        /// 10 bytes: 2…7 month, year − 2000, hour, day, second, minute (the same fields as
        /// big-endian 16-bit words); 8 zero; 9 the low byte of the sum of bytes 0…8 (HEM-7600T).
        case wordSwapped

        /// The block's length.
        public var size: Int { self == .yearFirst ? 16 : 10 }
        /// Where year − 2000, month, day, hour, minute and second sit, in that order.
        var fieldPositions: [Int] { self == .yearFirst ? [8, 9, 10, 11, 12, 13] : [3, 2, 5, 4, 7, 6] }
        /// The bytes kept as read (before the time).
        var keptPrefix: Int { self == .yearFirst ? 8 : 2 }
        /// Where the low byte of the sum of the bytes before it sits.
        var sumPosition: Int { self == .yearFirst ? 14 : 9 }
    }

    /// The monitor's clock, nil when the block is short or holds no valid time.
    public static func time(_ block: [UInt8], layout: Layout) -> DateComponents? {
        guard block.count >= layout.size else { return nil }
        let field = layout.fieldPositions.map { Int(block[$0]) }
        let c = DateComponents(year: 2000 + field[0], month: field[1], day: field[2], hour: field[3], minute: field[4],
                               second: field[5])
        guard (1...12).contains(field[1]), (1...31).contains(field[2]), field[3] <= 23, field[4] <= 59, field[5] <= 59
        else { return nil }
        return c
    }

    /// `block` with its clock set to `date` read in `zone`, its sum renewed (the bytes before the
    /// time kept).
    public static func setting(_ block: [UInt8], to date: Date, in zone: TimeZone, layout: Layout) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let fields = [UInt8(clamping: (c.year ?? 2000) - 2000), UInt8(clamping: c.month ?? 1), UInt8(clamping: c.day ?? 1),
                      UInt8(clamping: c.hour ?? 0), UInt8(clamping: c.minute ?? 0), UInt8(clamping: c.second ?? 0)]
        var out = Array(block.prefix(layout.keptPrefix))
        out += [UInt8](repeating: 0, count: layout.size - out.count)
        for (position, value) in zip(layout.fieldPositions, fields) { out[position] = value }
        out[layout.sumPosition] = UInt8(truncatingIfNeeded: out[0..<layout.sumPosition].reduce(0) { $0 + Int($1) })
        return out
    }
}

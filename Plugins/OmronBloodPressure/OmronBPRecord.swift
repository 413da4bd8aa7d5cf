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

/// The monitor's clock block (16 bytes in the settings): bytes 8…13 year − 2000, month, day,
/// hour, minute, second; byte 14 the low byte of the sum of bytes 0…13; byte 15 zero.
public enum OmronClockBlock {
    public static let size = 16

    /// The monitor's clock, nil when the block is short or holds no valid time.
    public static func time(_ block: [UInt8]) -> DateComponents? {
        guard block.count >= size else { return nil }
        let c = DateComponents(year: 2000 + Int(block[8]), month: Int(block[9]), day: Int(block[10]),
                               hour: Int(block[11]), minute: Int(block[12]), second: Int(block[13]))
        guard (1...12).contains(c.month ?? 0), (1...31).contains(c.day ?? 0), (c.hour ?? 99) <= 23,
              (c.minute ?? 99) <= 59, (c.second ?? 99) <= 59 else { return nil }
        return c
    }

    /// `block` with its clock set to `date` read in `zone` (bytes 0…7 kept).
    public static func setting(_ block: [UInt8], to date: Date, in zone: TimeZone) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        var out = Array(block.prefix(8))
        out += [UInt8(clamping: (c.year ?? 2000) - 2000), UInt8(clamping: c.month ?? 1), UInt8(clamping: c.day ?? 1),
                UInt8(clamping: c.hour ?? 0), UInt8(clamping: c.minute ?? 0), UInt8(clamping: c.second ?? 0)]
        out.append(UInt8(truncatingIfNeeded: out.reduce(0) { $0 + Int($1) }))
        out.append(0)
        return out
    }
}

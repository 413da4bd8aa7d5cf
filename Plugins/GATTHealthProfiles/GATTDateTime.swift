import Foundation
import HealthModel

/// A Bluetooth Date Time (the 0x2A08 layout, 7 bytes): year uint16, month, day, hours, minutes,
/// seconds. It has no time zone: it is the device's wall clock.
///
/// Year, month or day 0 means "unknown"; ``decode(_:field:offset:)`` returns nil for it.
public struct GATTDateTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Size of the field on the wire.
    public static let byteCount = 7

    public var year: Int
    public var month: Int
    public var day: Int
    public var hours: Int
    public var minutes: Int
    public var seconds: Int

    /// Creates a wall-clock time; nil when a component is out of range (year 1582…9999,
    /// a day that exists in that month, 0…23 h, 0…59 min, 0…59 s).
    public init?(year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int) {
        guard (1582...9999).contains(year), (1...12).contains(month),
              (1...CalendarMath.daysInMonth(year: year, month: month)).contains(day),
              (0...23).contains(hours), (0...59).contains(minutes), (0...59).contains(seconds)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    /// Decodes 7 bytes. Nil when year, month or day is 0 (the device does not know the date);
    /// throws `.invalidDateTime` for any other out-of-range component and `.tooShort` for fewer bytes.
    public static func decode(_ bytes: [UInt8], field: String = "date-time", offset: Int = 0)
        throws(GATTDecodeError) -> GATTDateTime?
    {
        guard bytes.count >= byteCount else {
            throw .tooShort(field: field, offset: offset, needed: byteCount, have: bytes.count)
        }
        let year = Int(bytes[0]) | Int(bytes[1]) << 8
        let month = Int(bytes[2])
        let day = Int(bytes[3])
        if year == 0 || month == 0 || day == 0 { return nil }
        guard let dateTime = GATTDateTime(
            year: year, month: month, day: day,
            hours: Int(bytes[4]), minutes: Int(bytes[5]), seconds: Int(bytes[6]))
        else {
            throw .invalidDateTime(field: field, offset: offset, bytes: Array(bytes.prefix(byteCount)))
        }
        return dateTime
    }

    /// The instant this wall-clock time names in `timeZone`. In a daylight-saving gap the
    /// clock time is read as if the change had not happened yet; in an overlap, the first one.
    public func date(in timeZone: TimeZone) -> Date {
        let asUTC = Date(timeIntervalSince1970: Double(secondsSinceEpochAsUTC))
        // The zone's offsets a day either side cover any one transition near this time.
        let before = timeZone.secondsFromGMT(for: asUTC.addingTimeInterval(-86_400))
        let after = timeZone.secondsFromGMT(for: asUTC.addingTimeInterval(86_400))
        let consistent = Set([before, after])
            .map { asUTC.addingTimeInterval(-Double($0)) }
            .filter { candidate in
                Double(timeZone.secondsFromGMT(for: candidate)) == asUTC.timeIntervalSince(candidate)
            }
        return consistent.min() ?? asUTC.addingTimeInterval(-Double(before))
    }

    /// The wall-clock time `minutes` later (earlier when negative), as a calendar would show it.
    public func adding(minutes delta: Int) -> GATTDateTime? {
        Self(secondsSinceEpochAsUTC: secondsSinceEpochAsUTC + delta * 60)
    }

    /// `2012-12-05T11:50:27`: ISO 8601 without a zone, as the device said it.
    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText)-\(two(month))-\(two(day))T\(two(hours)):\(two(minutes)):\(two(seconds))"
    }

    public static func < (lhs: GATTDateTime, rhs: GATTDateTime) -> Bool {
        lhs.secondsSinceEpochAsUTC < rhs.secondsSinceEpochAsUTC
    }

    // MARK: Proleptic Gregorian arithmetic, zone-free

    /// Seconds from 1970-01-01T00:00:00 to this wall-clock time, as if both were UTC.
    var secondsSinceEpochAsUTC: Int {
        CalendarMath.days(year: year, month: month, day: day) * 86_400 + hours * 3600 + minutes * 60 + seconds
    }

    private init?(secondsSinceEpochAsUTC total: Int) {
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - days * 86_400
        let civil = CalendarMath.date(days: days)
        self.init(year: civil.year, month: civil.month, day: civil.day,
                  hours: secondOfDay / 3600, minutes: secondOfDay / 60 % 60, seconds: secondOfDay % 60)
    }
}

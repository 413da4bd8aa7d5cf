import Foundation

/// A day in the proleptic Gregorian calendar with no time or zone, written `YYYY-MM-DD`
/// (e.g. a date of birth).
public struct CalendarDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Creates the date if it exists (month 1...12, day within the month, year 1...9999).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...CalendarMath.daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = CalendarMath.digits(bytes, 0, 4),
            let month = CalendarMath.digits(bytes, 5, 2),
            let day = CalendarMath.digits(bytes, 8, 2)
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The date as calendar components (year, month, day).
    public var dateComponents: DateComponents { DateComponents(year: year, month: month, day: day) }

    /// `YYYY-MM-DD`.
    public var description: String {
        CalendarMath.padded(year, 4) + "-" + CalendarMath.padded(month, 2) + "-" + CalendarMath.padded(day, 2)
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

extension CalendarDate: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = CalendarDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not a YYYY-MM-DD date")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

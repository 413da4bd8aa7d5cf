import Foundation
import HealthModel
import Synchronization

/// Wall-clock times of one zone (a device clock without a zone) turned into instants, as
/// `Calendar` turns them, without asking a calendar each time: where the zone's offset does not
/// change within a day either side of the answer, the answer is the local time less that offset
/// (unique, and no time of day is skipped there), from the span of constant offset learned last.
/// Anywhere else (near a change of offset, before 1970, impossible fields) the Gregorian calendar
/// answers. A router makes one and gives it to every session (``AdapterContext/clockTimes``): a
/// crowd of devices shares it.
public final class LocalClockTimes: Sendable {
    public let timeZone: TimeZone
    /// The last span of constant offset learned: instants `from ..< to` (Unix seconds) at `offset`.
    private let span = Mutex<(from: Int64, to: Int64, offset: Int)?>(nil)
    private static let day: Int64 = 86_400

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// The instant of the wall-clock time in ``timeZone``; nil when the fields are not a real
    /// date and time (31 February, hour 24).
    public func date(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1970...9999).contains(year), (1...12).contains(month),
              (1...CalendarMath.daysInMonth(year: year, month: month)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else {
            return Self.calendarDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second, in: timeZone)
        }
        let local = Int64(CalendarMath.days(year: year, month: month, day: day)) * Self.day
            + Int64(hour * 3600 + minute * 60 + second)
        if let known = span.withLock({ $0 }), let instant = Self.instant(local, in: known) {
            return Date(timeIntervalSince1970: Double(instant))
        }
        let guess = local - Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local))))
        let from = guess - 2 * Self.day
        let start = Date(timeIntervalSince1970: Double(from))
        let to = timeZone.nextDaylightSavingTimeTransition(after: start).map { Int64($0.timeIntervalSince1970.rounded(.down)) }
        let learned = (from: from, to: to ?? .max, offset: timeZone.secondsFromGMT(for: start))
        span.withLock { $0 = learned }
        if let instant = Self.instant(local, in: learned) { return Date(timeIntervalSince1970: Double(instant)) }
        return Self.calendarDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second, in: timeZone)
    }

    /// `local` less the span's offset, when that instant lies a day or more inside the span.
    private static func instant(_ local: Int64, in span: (from: Int64, to: Int64, offset: Int)) -> Int64? {
        let instant = local - Int64(span.offset)
        guard instant >= span.from + day, span.to == .max || instant < span.to - day else { return nil }
        return instant
    }

    /// The instant by the Gregorian calendar in `timeZone`; nil when the fields are not a real
    /// date (the calendar would roll 31 February over into March).
    public static func calendarDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int,
                                    in timeZone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components) else { return nil }
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        guard back.year == year, back.month == month, back.day == day else { return nil }
        return date
    }
}

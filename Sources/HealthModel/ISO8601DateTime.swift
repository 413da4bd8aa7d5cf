import Foundation

/// ingestd's timestamp text: ISO 8601 / RFC 3339 date-times.
///
/// Output is always UTC, `2026-01-01T08:00:00Z`, with fractional seconds (microsecond
/// resolution, trailing zeros dropped) only when they are not zero: `2026-01-01T08:00:00.123Z`.
/// Input accepts `Z` or a numeric offset (`+01:00`, `+0100`, `+01`), `T`, `t` or a space between
/// date and time, and any number of fractional digits.
public enum ISO8601DateTime {
    /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
    private static let referenceDateOffset: Int64 = 978_307_200
    /// The representable range: 0001-01-01T00:00:00Z through 9999-12-31T23:59:59.999999Z.
    private static let minimumMicroseconds: Int64 = -62_135_596_800 * 1_000_000
    private static let maximumMicroseconds: Int64 = 253_402_300_800 * 1_000_000 - 1

    /// Formats `date` in UTC. Dates outside years 1...9999 are clamped to that range.
    public static func string(from date: Date) -> String {
        var text = ""
        append(date, to: &text)
        return text
    }

    /// Appends the formatted `date` to `text` (written as bytes into one small buffer: this runs
    /// twice per JSON line).
    public static func append(_ date: Date, to text: inout String) {
        append(date, offset: { _ in 0 }, to: &text)
    }

    /// Appends `date` on the wall clock of `zone` with the zone's offset at that moment and the
    /// same microsecond fraction as `append(_:to:)`: `2026-05-28T22:26:40.5+02:00`; `Z` where
    /// the offset is zero, so in UTC the text is `append(_:to:)`'s. `date(from:)` reads it back
    /// to the same instant.
    public static func append(_ date: Date, in zone: TimeZone, to text: inout String) {
        append(date, offset: { zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double($0))) }, to: &text)
    }

    /// Appends the formatted `date` (UTC) to `bytes` as UTF-8.
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        ASCIIBuffer.append(capacity: 36, to: &bytes) { put(date, offset: { _ in 0 }, to: &$0) }
    }

    /// Appends `date` on the wall clock of `zone` (as `append(_:in:to:)` writes it to text) to `bytes`.
    public static func append(_ date: Date, in zone: TimeZone, to bytes: inout [UInt8]) {
        ASCIIBuffer.append(capacity: 36, to: &bytes) {
            put(date, offset: { zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double($0))) }, to: &$0)
        }
    }

    private static func append(_ date: Date, offset: (Int64) -> Int, to text: inout String) {
        // Made in a buffer and appended once: capturing `text` in the closure could copy it per call.
        text += ASCIIBuffer.text(capacity: 36) { put(date, offset: offset, to: &$0) }
    }

    private static func put(_ date: Date, offset: (Int64) -> Int, to out: inout ASCIIBuffer) {
        let micros = microsecondsSince1970(date)
        let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        var fraction = Int(micros - seconds * 1_000_000)
        let time = WallClockTime(secondsSince1970: seconds, offset: offset(seconds))
        putDateTime(time, to: &out)
        if fraction != 0 {
            var digits = 6
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            out.put("."); out.put(fraction, digits: digits)
        }
        putOffset(time.offset, to: &out)
    }

    /// Formats `date` on the wall clock of `zone`, to the whole second, with the zone's offset at
    /// that moment: `2026-05-28T22:26:40+02:00`; `Z` where the offset is zero; the offset's seconds
    /// only where it has some (`+00:53:28`, a local mean time before the zones were standardised).
    /// Byte for byte what Foundation's `ISO8601DateFormatter` with `.withInternetDateTime` writes
    /// (it rounds to the millisecond, half up, then drops the fraction) for years 1583 to 9999;
    /// before 1583 Foundation counts in the Julian calendar, this (as `string(from:)`) in the
    /// proleptic Gregorian one ISO 8601 prescribes. Dates outside years 1...9999 are clamped.
    public static func string(from date: Date, wholeSecondsIn zone: TimeZone) -> String {
        let time = WallClockTime(date, in: zone)
        return ASCIIBuffer.text(capacity: 28) { out in
            putDateTime(time, to: &out)
            putOffset(time.offset, to: &out)
        }
    }

    /// `Z` for a zero offset, else `±HH:MM` (`±HH:MM:SS` when it has seconds).
    private static func putOffset(_ offset: Int, to out: inout ASCIIBuffer) {
        guard offset != 0 else {
            out.put("Z")
            return
        }
        let magnitude = abs(offset)
        out.put(offset < 0 ? "-" : "+")
        out.put(magnitude / 3600, digits: 2); out.put(":"); out.put(magnitude / 60 % 60, digits: 2)
        if magnitude % 60 != 0 { out.put(":"); out.put(magnitude % 60, digits: 2) }
    }

    /// `yyyy-MM-ddTHH:mm:ss` of `time`.
    private static func putDateTime(_ time: WallClockTime, to out: inout ASCIIBuffer) {
        out.put(time.year, digits: 4)  // 1...9999: WallClockTime clamps
        out.put("-"); out.put(time.month, digits: 2)
        out.put("-"); out.put(time.day, digits: 2)
        out.put("T"); out.put(time.hour, digits: 2)
        out.put(":"); out.put(time.minute, digits: 2)
        out.put(":"); out.put(time.second, digits: 2)
    }

    private static func microsecondsSince1970(_ date: Date) -> Int64 {
        // Whole seconds and the fraction apart: the subtraction is exact and the fraction is small,
        // so multiplying it by 10^6 adds no error of the size of a microsecond (multiplying the
        // whole interval would, for dates far from 2001).
        let interval = date.timeIntervalSinceReferenceDate
        let limit = 9.0e11
        guard interval.isFinite else { return interval > 0 ? maximumMicroseconds : minimumMicroseconds }
        let clamped = min(max(interval, -limit), limit)
        let whole = clamped.rounded(.down)
        let fractionMicros = Int64(((clamped - whole) * 1_000_000).rounded())
        let micros = (Int64(whole) + referenceDateOffset) * 1_000_000 + fractionMicros
        return min(max(micros, minimumMicroseconds), maximumMicroseconds)
    }

    /// Parses an ISO 8601 date-time with `Z` or an offset; nil when the text is not one
    /// (wrong shape, impossible date or time, missing zone).
    public static func date(from text: some StringProtocol) -> Date? {
        var utf8Text = String(text)
        return utf8Text.withUTF8 { date(fromUTF8: $0) }
    }

    /// Parses UTF-8 bytes; see `date(from:)`.
    static func date(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count >= 20,
            let year = CalendarMath.digits(bytes, 0, 4), bytes[4] == UInt8(ascii: "-"),
            let month = CalendarMath.digits(bytes, 5, 2), bytes[7] == UInt8(ascii: "-"),
            let day = CalendarMath.digits(bytes, 8, 2),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") || bytes[10] == UInt8(ascii: " "),
            let hour = CalendarMath.digits(bytes, 11, 2), bytes[13] == UInt8(ascii: ":"),
            let minute = CalendarMath.digits(bytes, 14, 2), bytes[16] == UInt8(ascii: ":"),
            let second = CalendarMath.digits(bytes, 17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...CalendarMath.daysInMonth(year: year, month: month)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }

        var index = 19
        var fractionDigits: Slice<UnsafeBufferPointer<UInt8>>? = nil
        if bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
            let fractionStart = index + 1
            index = fractionStart
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            guard index > fractionStart else { return nil }
            fractionDigits = bytes[fractionStart..<index]
        }

        guard index < bytes.count else { return nil }
        var offsetSeconds = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            guard let offsetHours = CalendarMath.digits(bytes, index + 1, 2), offsetHours < 24 else { return nil }
            index += 3
            var offsetMinutes = 0
            if index < bytes.count {
                if bytes[index] == UInt8(ascii: ":") { index += 1 }
                guard let minutes = CalendarMath.digits(bytes, index, 2), minutes < 60 else { return nil }
                offsetMinutes = minutes
                index += 2
            }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }

        let days = CalendarMath.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        guard let fractionDigits, fractionDigits.contains(where: { $0 != UInt8(ascii: "0") }) else {
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        // Parse "seconds.fraction" as one decimal so the result is the Double nearest to the
        // written instant, the same value a literal like 1767254400.123 would give.
        let fractionText = String(decoding: fractionDigits, as: UTF8.self)
        if seconds >= 0, let interval = TimeInterval("\(seconds).\(fractionText)") {
            return Date(timeIntervalSince1970: interval)
        }
        guard let fraction = TimeInterval("0.\(fractionText)") else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }
}

/// A moment's calendar fields on the wall clock of a time zone, to the whole second (proleptic
/// Gregorian calendar, `CalendarMath`).
public struct WallClockTime: Sendable, Equatable {
    public var year, month, day, hour, minute, second: Int
    /// The zone's offset from UTC at that moment, in seconds.
    public var offset: Int

    /// The first and last second of years 1...9999 (seconds from 1970-01-01T00:00:00): what the
    /// fields can show.
    private static let representable: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    /// The whole second `seconds` after 1970-01-01T00:00:00Z, `offset` seconds ahead of UTC. A
    /// local time outside years 1...9999 is clamped to that range.
    public init(secondsSince1970 seconds: Int64, offset: Int) {
        let local = min(max(seconds + Int64(offset), Self.representable.lowerBound), Self.representable.upperBound)
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let secondOfDay = Int(local - days * 86_400)
        (year, month, day) = CalendarMath.date(days: Int(days))
        hour = secondOfDay / 3600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
        self.offset = offset
    }

    /// `date` in `zone` (its offset then, daylight saving time included) as Foundation's date
    /// formatters show it: rounded to the millisecond, half up, then to the second below.
    public init(_ date: Date, in zone: TimeZone) {
        let limit = Double(Self.representable.upperBound + 86_400) * 1000
        let milliseconds = min(max((date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down), -limit), limit)
        let whole = Int64(milliseconds.isNaN ? 0 : milliseconds)
        let seconds = whole >= 0 ? whole / 1000 : (whole - 999) / 1000
        self.init(secondsSince1970: seconds, offset: zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds))))
    }
}

/// ASCII text written byte by byte into one small buffer: digits zero-padded to a width, and
/// single characters. What does not fit the capacity is dropped.
public struct ASCIIBuffer: ~Copyable {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private var count = 0

    /// The text `body` writes (at most `capacity` bytes).
    public static func text(capacity: Int, _ body: (inout ASCIIBuffer) -> Void) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var out = ASCIIBuffer(buffer: buffer)
            body(&out)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<out.count]), as: UTF8.self)
        }
    }

    /// Appends the bytes `body` writes (at most `capacity`) to `bytes`.
    public static func append(capacity: Int, to bytes: inout [UInt8], _ body: (inout ASCIIBuffer) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var out = ASCIIBuffer(buffer: buffer)
            body(&out)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<out.count]))
        }
    }

    private init(buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// The magnitude of `value` in decimal, left-padded with zeros to `digits` (higher digits are dropped).
    public mutating func put(_ value: Int, digits: Int) {
        guard digits > 0, count + digits <= buffer.count else { return }
        var remaining = value.magnitude
        for position in stride(from: count + digits - 1, through: count, by: -1) {
            buffer[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
        }
        count += digits
    }

    /// One ASCII character.
    public mutating func put(_ character: Unicode.Scalar) {
        guard count < buffer.count else { return }
        buffer[count] = UInt8(ascii: character)
        count += 1
    }
}

import Foundation
import HealthModel
import TestSupport
import Testing

@testable import Export

/// The CSV writers format times and uuids without Foundation's formatters (issue 31): the text
/// must stay byte for byte what `ISO8601DateFormatter` (`export --format csv --tz ZONE`) and
/// `DateFormatter` (`dd.MM.yyyy HH:mm`, openScale) wrote, in zones with half- and quarter-hour
/// offsets, negative and half-hour daylight saving time, local mean times with seconds in the
/// offset, at every daylight saving transition of a century and a half and around each one by a
/// second and by the half millisecond Foundation rounds at.
@Suite struct CSVTimeFormattingTests {
    static let zoneNames = [
        "UTC", "Europe/Berlin", "Europe/London", "Europe/Dublin", "Europe/Amsterdam", "Europe/Moscow",
        "America/New_York", "America/St_Johns", "America/Sao_Paulo", "America/Caracas", "America/Santiago",
        "Asia/Kolkata", "Asia/Kathmandu", "Asia/Tehran", "Australia/Lord_Howe", "Australia/Adelaide",
        "Pacific/Chatham", "Pacific/Apia", "Pacific/Kiritimati", "Pacific/Honolulu", "Africa/Monrovia",
        "Antarctica/Troll", "Etc/GMT+5",
    ]

    /// What the writers printed before: Foundation's formatters, set up as they were.
    struct FoundationFormatters {
        let iso = ISO8601DateFormatter()
        let local = DateFormatter()

        init(_ zone: TimeZone) {
            iso.timeZone = zone
            iso.formatOptions = [.withInternetDateTime]
            local.locale = Locale(identifier: "en_US_POSIX")
            local.calendar = Calendar(identifier: .gregorian)
            local.timeZone = zone
            local.dateFormat = "dd.MM.yyyy HH:mm"
        }
    }

    /// Every daylight saving transition of `zone` from 1900 to 2040, each with the moments a
    /// second, a millisecond and Foundation's half millisecond around it.
    static func transitionDates(_ zone: TimeZone) -> [Date] {
        var dates: [Date] = []
        var after = Date(timeIntervalSince1970: -2_208_988_800)  // 1900-01-01
        let end = Date(timeIntervalSince1970: 2_208_988_800)  // 2040-01-01
        for _ in 0..<1_000 {
            guard let transition = zone.nextDaylightSavingTimeTransition(after: after), transition < end else { break }
            for delta in [-3600, -1, -0.001, -0.0005, -0.0004999, -0.0004, 0, 0.0004, 0.0005, 0.9994, 0.9995, 1, 3600] {
                dates.append(transition.addingTimeInterval(delta))
            }
            after = transition
        }
        return dates
    }

    /// Random moments from 1583 (the first whole year of the Gregorian calendar) to 2100: whole
    /// seconds, microseconds (as decoded from JSON lines) and any fraction.
    static func randomDates(count: Int, seed: UInt64) -> [Date] {
        var random = SplitMix64(seed: seed)
        let first = -12_212_553_600.0, last = 4_102_444_800.0  // 1583-01-01, 2100-01-01
        return (0..<count).map { index in
            let second = Double(Int64.random(in: Int64(first)...Int64(last), using: &random))
            switch index % 3 {
            case 0: return Date(timeIntervalSince1970: second)
            case 1: return Date(timeIntervalSince1970: second + Double(Int.random(in: 0..<1_000_000, using: &random)) / 1_000_000)
            default: return Date(timeIntervalSince1970: second + Double.random(in: 0..<1, using: &random))
            }
        }
    }

    @Test(arguments: zoneNames)
    func zonedTimesAreWhatFoundationsFormattersWrote(_ name: String) throws {
        let zone = try #require(TimeZone(identifier: name))
        let old = FoundationFormatters(zone)
        let dates = Self.transitionDates(zone) + Self.randomDates(count: 4_000, seed: UInt64(name.utf8.count) &* 7919)
            + [Date(timeIntervalSince1970: 1_197_183_600), Date(timeIntervalSince1970: 1_197_183_599.9996),  // Caracas to -04:30
               Date(timeIntervalSince1970: 1_325_239_200), Date(timeIntervalSince1970: 1_325_239_199.9995),  // Apia skips 30 Dec 2011
               Date(timeIntervalSince1970: 253_402_214_400), Date(timeIntervalSince1970: -12_212_467_200)]  // 9999-12-31, 1583-01-02
        var mismatches: [String] = []
        for date in dates {
            let iso = ISO8601DateTime.string(from: date, wholeSecondsIn: zone)
            if iso != old.iso.string(from: date) {
                mismatches.append("\(date.timeIntervalSince1970): \(iso), Foundation \(old.iso.string(from: date))")
            }
            let local = OpenScaleCSVWriter.dateTime(date, in: zone)
            if local != old.local.string(from: date) {
                mismatches.append("\(date.timeIntervalSince1970): \(local), Foundation \(old.local.string(from: date))")
            }
        }
        #expect(dates.count > 4_000)
        #expect(mismatches.isEmpty, "\(name): \(mismatches.count) of \(dates.count): \(mismatches.prefix(5))")
    }

    /// Before the Gregorian calendar Foundation counts in the Julian one; ingestd prints every
    /// date (JSON lines, UTC columns, zoned columns) in the proleptic Gregorian calendar of ISO 8601.
    @Test func datesBeforeTheGregorianCalendarAreProlepticGregorianLikeTheUTCColumns() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let date = Date(timeIntervalSince1970: -14_831_766_000)  // 1500-01-01T01:00:00Z (proleptic)
        #expect(ISO8601DateTime.string(from: date) == "1500-01-01T01:00:00Z")
        #expect(ISO8601DateTime.string(from: date, wholeSecondsIn: utc) == "1500-01-01T01:00:00Z")
        #expect(OpenScaleCSVWriter.dateTime(date, in: utc) == "01.01.1500 01:00")
        // The far ends clamp to years 1 and 9999 instead of printing what no reader takes.
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: 1e300), wholeSecondsIn: utc) == "9999-12-31T23:59:59Z")
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: -1e300), wholeSecondsIn: utc) == "0001-01-01T00:00:00Z")
    }

    /// A whole long-layout row in a zone, against the row the Foundation formatters made.
    @Test func aLongCSVRowInAZoneIsTheRowFoundationMade() throws {
        let zone = try #require(TimeZone(identifier: "America/St_Johns"))
        let old = FoundationFormatters(zone)
        let start = Date(timeIntervalSince1970: 1_780_000_000.9996), end = Date(timeIntervalSince1970: 1_780_000_060.25)
        let member = QuantitySample(type: .bloodPressureSystolic, quantity: Quantity(value: 121, unit: QuantityType.bloodPressureSystolic.canonicalUnit),
                                    start: start, end: end, source: "cuff", device: Device(name: "Cuff", localIdentifier: "cuff-1"))
        let correlation = Correlation(type: .bloodPressure, start: start, end: end, objects: [member], source: "cuff")
        var writer = CSVLongWriter(timeZone: zone)
        var output = ""
        writer.write(.correlation(correlation), to: &output)
        let expected = [member.uuid.uuidString, member.type.identifier, "121", member.quantity.unit.unitString,
                        old.iso.string(from: start), old.iso.string(from: end), "cuff", "Cuff", "", "", "cuff-1",
                        correlation.type.identifier, correlation.uuid.uuidString].joined(separator: ",") + "\r\n"
        #expect(output == expected)
        #expect(output.contains(",2026-05-28T17:56:41-02:30,"))
    }
}

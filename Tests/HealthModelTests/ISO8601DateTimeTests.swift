import Foundation
import Testing
@testable import HealthModel

// Foundation also declares `Unit` (NSUnit).
fileprivate typealias Unit = HealthModel.Unit

@Suite struct ISO8601DateTimeTests {
    @Test func formatsWholeSecondsWithoutFraction() {
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: 1_767_254_400)) == "2026-01-01T08:00:00Z")
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
    }

    @Test func formatsFractionsWithoutTrailingZeros() {
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: 1_767_254_400.123)) == "2026-01-01T08:00:00.123Z")
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: 1_767_254_400.5)) == "2026-01-01T08:00:00.5Z")
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: 1_767_254_400.000123)) == "2026-01-01T08:00:00.000123Z")
        #expect(ISO8601DateTime.string(from: Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.75Z")
    }

    /// `samples --json --tz`: the same microsecond text on the zone's wall clock with the offset
    /// it had then (either side of Berlin's and New York's clock changes, a half-hour zone, a
    /// fraction before 1970), `Z` in UTC, and each reads back to the same instant.
    @Test func formatsOnAZonesClockWithItsOffset() throws {
        func zoned(_ seconds: Double, _ zone: String) throws -> String {
            var text = ""
            ISO8601DateTime.append(Date(timeIntervalSince1970: seconds), in: try #require(TimeZone(identifier: zone)), to: &text)
            #expect(ISO8601DateTime.date(from: text) == Date(timeIntervalSince1970: seconds), "\(text)")
            return text
        }
        #expect(try zoned(1_767_254_400.123, "Europe/Berlin") == "2026-01-01T09:00:00.123+01:00")
        #expect(try zoned(1_774_746_000, "Europe/Berlin") == "2026-03-29T03:00:00+02:00")      // 01:00Z, just after the change
        #expect(try zoned(1_774_745_999, "Europe/Berlin") == "2026-03-29T01:59:59+01:00")      // a second before it
        #expect(try zoned(1_762_066_800.5, "America/New_York") == "2025-11-02T02:00:00.5-05:00")
        #expect(try zoned(1_767_254_400, "Asia/Kolkata") == "2026-01-01T13:30:00+05:30")
        #expect(try zoned(-0.25, "UTC") == "1969-12-31T23:59:59.75Z")
        #expect(try zoned(1_767_254_400.000123, "UTC") == ISO8601DateTime.string(from: Date(timeIntervalSince1970: 1_767_254_400.000123)))
    }

    @Test func parsesZuluAndOffsets() {
        let expected = Date(timeIntervalSince1970: 1_767_254_400)
        for text in [
            "2026-01-01T08:00:00Z", "2026-01-01t08:00:00z", "2026-01-01 08:00:00Z", "2026-01-01T09:00:00+01:00",
            "2026-01-01T09:00:00+0100", "2026-01-01T09:00:00+01", "2026-01-01T02:30:00-05:30", "2026-01-01T08:00:00.000Z",
            "2025-12-31T23:00:00-09:00",
        ] {
            #expect(ISO8601DateTime.date(from: text) == expected, "\(text)")
        }
    }

    @Test func parsesFractionsToTheNearestDouble() {
        #expect(ISO8601DateTime.date(from: "2026-01-01T08:00:00.123Z") == Date(timeIntervalSince1970: 1_767_254_400.123))
        #expect(ISO8601DateTime.date(from: "2026-01-01T09:00:00,5+01:00") == Date(timeIntervalSince1970: 1_767_254_400.5))
        #expect(ISO8601DateTime.date(from: "1969-12-31T23:59:59.75Z") == Date(timeIntervalSince1970: -0.25))
    }

    @Test func refusesMalformedOrImpossibleDates() {
        for text in [
            "", "2026-01-01", "2026-01-01T08:00:00", "2026-01-01T08:00Z", "2026-02-29T08:00:00Z", "2026-13-01T08:00:00Z",
            "2026-01-01T24:00:00Z", "2026-01-01T08:60:00Z", "2026-01-01T08:00:60Z", "2026-01-01T08:00:00.Z",
            "2026-01-01T08:00:00+1:00", "2026-01-01T08:00:00+01:0", "2026-01-01T08:00:00ZZ", "26-01-01T08:00:00Z",
            "2026-01-01T08:00:00+25:00", "2026/01/01T08:00:00Z",
        ] {
            #expect(ISO8601DateTime.date(from: text) == nil, "\(text)")
        }
    }

    @Test func roundTripsMicroseconds() throws {
        for interval in [1_767_254_400.123456, 1_700_000_000.000001, 1_767_254_400.999999] {
            let text = ISO8601DateTime.string(from: Date(timeIntervalSince1970: interval))
            let parsed = try #require(ISO8601DateTime.date(from: text))
            #expect(ISO8601DateTime.string(from: parsed) == text)
            #expect(abs(parsed.timeIntervalSince1970 - interval) < 1e-6)
        }
    }

    /// Found by fuzzing: far from 2001 a microsecond did not survive print → parse → print.
    @Test func microsecondsRoundTripFarFromTheReferenceDate() throws {
        for text in ["2125-01-15T09:00:02.600001Z", "2099-12-31T23:59:59.999999Z", "1970-01-01T00:00:00.000001Z",
                     "1900-06-01T12:00:00.5Z", "2136-12-31T23:59:59.123457Z"] {
            let date = try #require(ISO8601DateTime.date(from: text))
            #expect(ISO8601DateTime.string(from: date) == text)
        }
    }
}

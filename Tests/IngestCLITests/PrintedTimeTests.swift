import Foundation
import Testing

@testable import IngestCLI

/// Times as the text commands print them (`samples`, `sources`): the zone's wall clock with its
/// offset at that moment, the fraction only when there is one.
@Suite struct PrintedTimeTests {
    static let instant = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28T20:26:40Z

    @Test func wholeSecondsHaveNoFractionAndUTCIsZ() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        #expect(PrintedTime(zone: utc).string(Self.instant) == "2026-05-28T20:26:40Z")
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        #expect(PrintedTime(zone: berlin).string(Self.instant) == "2026-05-28T22:26:40+02:00")
        // Winter time: the offset of that moment, not today's.
        #expect(PrintedTime(zone: berlin).string(Date(timeIntervalSince1970: 1_767_225_600)) == "2026-01-01T01:00:00+01:00")
    }

    @Test func aFractionPrintsItsDigitsAndNoTrailingZeros() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        #expect(PrintedTime(zone: berlin).string(Self.instant.addingTimeInterval(0.5)) == "2026-05-28T22:26:40.5+02:00")
        let behind = try #require(TimeZone(identifier: "America/St_Johns"))  // -02:30 in summer
        #expect(PrintedTime(zone: behind).string(Self.instant.addingTimeInterval(0.125)) == "2026-05-28T17:56:40.125-02:30")
    }
}

import Foundation
import TestSupport
import Testing
@testable import GATTHealthProfiles

struct GATTDateTimeTests {
    /// The time stamp inside Nordic's thermometer test vector: 2012-12-05 11:50:27.
    @Test func decodesWallClock() throws {
        let dateTime = try #require(try GATTDateTime.decode(hex("DC 07 0C 05 0B 32 1B")))
        #expect(dateTime.year == 2012)
        #expect(dateTime.month == 12)
        #expect(dateTime.day == 5)
        #expect(dateTime.hours == 11)
        #expect(dateTime.minutes == 50)
        #expect(dateTime.seconds == 27)
        #expect(dateTime.description == "2012-12-05T11:50:27")
    }

    /// Year, month or day 0 means "not known" (Nordic's blood pressure test sends year 0).
    @Test(arguments: ["00 00 04 11 14 29 3B", "DC 07 00 05 0B 32 1B", "DC 07 0C 00 0B 32 1B", "00 00 00 00 00 00 00"])
    func unknownDateIsNil(_ frame: String) throws {
        #expect(try GATTDateTime.decode(hex(frame)) == nil)
    }

    @Test(arguments: [
        "DC 07 0D 05 0B 32 1B",  // month 13
        "DC 07 0C 20 0B 32 1B",  // day 32
        "E7 07 02 1D 00 00 00",  // 2023-02-29
        "DC 07 0C 05 18 00 00",  // hour 24
        "DC 07 0C 05 0B 3C 00",  // minute 60
        "DC 07 0C 05 0B 32 3C",  // second 60
        "2D 06 01 01 00 00 00",  // year 1581
    ])
    func outOfRangeComponentsThrow(_ frame: String) {
        #expect(throws: GATTDecodeError.invalidDateTime(field: "stamp", offset: 4, bytes: hex(frame))) {
            try GATTDateTime.decode(hex(frame), field: "stamp", offset: 4)
        }
    }

    @Test func leapDayIsValid() throws {
        let dateTime = try #require(try GATTDateTime.decode(hex("E8 07 02 1D 0C 00 00")))
        #expect(dateTime.description == "2024-02-29T12:00:00")
    }

    @Test func shortFieldThrows() {
        #expect(throws: GATTDecodeError.tooShort(field: "date-time", offset: 0, needed: 7, have: 6)) {
            try GATTDateTime.decode(hex("DC 07 0C 05 0B 32"))
        }
    }

    @Test func readsWallClockInTheGivenZone() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let dateTime = try #require(GATTDateTime(year: 2012, month: 12, day: 5, hours: 11, minutes: 50, seconds: 27))
        // CET is UTC+1 in December.
        #expect(dateTime.date(in: berlin) == Date(timeIntervalSince1970: 1_354_704_627))
        let summer = try #require(GATTDateTime(year: 2024, month: 7, day: 1, hours: 12, minutes: 0, seconds: 0))
        // CEST is UTC+2: 2024-07-01T10:00:00Z.
        #expect(summer.date(in: berlin) == Date(timeIntervalSince1970: 1_719_828_000))
    }

    @Test func daylightSavingGapAndOverlap() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 2024-03-31 02:30 does not exist in Berlin; read with the winter offset: 01:30Z.
        let gap = try #require(GATTDateTime(year: 2024, month: 3, day: 31, hours: 2, minutes: 30, seconds: 0))
        #expect(gap.date(in: berlin) == Date(timeIntervalSince1970: 1_711_848_600))
        // 2024-10-27 02:30 happens twice; the first (summer time, 00:30Z) is taken.
        let overlap = try #require(GATTDateTime(year: 2024, month: 10, day: 27, hours: 2, minutes: 30, seconds: 0))
        #expect(overlap.date(in: berlin) == Date(timeIntervalSince1970: 1_729_989_000))
    }

    @Test func addingMinutesCrossesDaysAndMonths() throws {
        let newYear = try #require(GATTDateTime(year: 2019, month: 1, day: 1, hours: 0, minutes: 2, seconds: 0))
        #expect(newYear.adding(minutes: -5)?.description == "2018-12-31T23:57:00")
        let leap = try #require(GATTDateTime(year: 2024, month: 2, day: 28, hours: 23, minutes: 59, seconds: 30))
        #expect(leap.adding(minutes: 1)?.description == "2024-02-29T00:00:30")
        #expect(leap.adding(minutes: 0) == leap)
    }
}

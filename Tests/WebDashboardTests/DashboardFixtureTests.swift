import Foundation
import Testing

/// The browser tests' export: whatever the hour of the UTC day it is made at, its last day is
/// today and every record lies in the past (the pipeline refuses future ones).
struct DashboardFixtureTests {
    @Test(arguments: [95.0, 600.0, 10_800.0, 86_300.0])
    func theExportsLastDayIsTodayAndAllInThePast(secondsIntoTheDay: Double) throws {
        let midnight = Date(timeIntervalSince1970: 1_780_012_800)  // a UTC midnight
        let now = midnight.addingTimeInterval(secondsIntoTheDay)
        let xml = DashboardStore.exportXML(now: now)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        let dates = xml.components(separatedBy: "Date=\"").dropFirst().compactMap { formatter.date(from: String($0.prefix(25))) }
        #expect(dates.count == 860, "40 days of 9 records, 14 weighings with a blood pressure: every date read")
        #expect(dates.allSatisfy { $0 < now }, "a record in the future")
        let today = dates.filter { $0 >= midnight }
        #expect(today.count >= 12, "steps, distance and heart rate three times, and a weighing, today")
    }
}

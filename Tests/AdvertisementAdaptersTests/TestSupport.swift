import AdapterKit
import Foundation
import HealthModel
import Testing

/// The quantity samples an output holds, in order.
func samples(_ output: AdapterOutput) -> [QuantitySample] {
    output.records.flatMap(\.samples)
}

/// An instant given in UTC, for comparing sample times.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) throws -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
    return try #require(calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)))
}

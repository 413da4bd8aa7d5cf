import Foundation
import Testing
@testable import HealthModel

// Foundation also declares `Unit` (NSUnit).
fileprivate typealias Unit = HealthModel.Unit

@Suite struct UserProfileTests {
    @Test func encodesAndDecodesJSON() throws {
        let profile = UserProfile(
            dateOfBirth: CalendarDate(year: 1980, month: 5, day: 17), biologicalSex: .female,
            height: Quantity(value: 1.7, unit: try Unit(from: "m")))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(profile), as: UTF8.self)
        #expect(json == #"{"biologicalSex":"female","dateOfBirth":"1980-05-17","height":{"unit":"m","value":1.7}}"#)
        #expect(try JSONDecoder().decode(UserProfile.self, from: Data(json.utf8)) == profile)
    }

    @Test func decodesHealthKitNamesAndMissingFields() throws {
        let json = #"{"biologicalSex":"HKBiologicalSexMale","height":{"value":71,"unit":"in"}}"#
        let profile = try JSONDecoder().decode(UserProfile.self, from: Data(json.utf8))
        #expect(profile.biologicalSex == .male)
        #expect(profile.dateOfBirth == nil)
        let height = try #require(profile.height)
        #expect(abs(try height.doubleValue(for: try Unit(from: "m")) - 1.8034) < 1e-12)
        #expect(try JSONDecoder().decode(UserProfile.self, from: Data("{}".utf8)) == UserProfile())
    }

    @Test func refusesBadValues() {
        for json in [
            #"{"dateOfBirth":"1980-02-30"}"#, #"{"dateOfBirth":"17.05.1980"}"#, #"{"biologicalSex":"unknown"}"#,
            #"{"height":{"value":1.7,"unit":"m/"}}"#,
        ] {
            #expect(throws: DecodingError.self, "\(json)") {
                try JSONDecoder().decode(UserProfile.self, from: Data(json.utf8))
            }
        }
    }

    @Test func calendarDates() throws {
        #expect(CalendarDate("2024-02-29")?.description == "2024-02-29")
        #expect(CalendarDate("2023-02-29") == nil)
        #expect(CalendarDate("2023-13-01") == nil)
        #expect(CalendarDate("2023-1-01") == nil)
        #expect(CalendarDate("0000-01-01") == nil)
        let date = try #require(CalendarDate("0987-06-05"))
        #expect(date.description == "0987-06-05")
        #expect(date.dateComponents == DateComponents(year: 987, month: 6, day: 5))
        #expect(try #require(CalendarDate("1999-12-31")) < (try #require(CalendarDate("2000-01-01"))))
    }

    @Test func biologicalSexNames() {
        #expect(BiologicalSex(named: "HKBiologicalSexNotSet") == .notSet)
        #expect(BiologicalSex(named: "OTHER") == .other)
        #expect(BiologicalSex.female.healthKitName == "HKBiologicalSexFemale")
        #expect(BiologicalSex(named: "f") == nil)
    }
}

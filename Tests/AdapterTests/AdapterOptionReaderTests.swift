import AdapterKit
import Foundation
import Testing

/// The one adapter-option parser: absent options read as nil, a value an adapter cannot use is an
/// error naming the option, the value and what was expected, and sessions reject it as `bad-option`.
@Suite struct AdapterOptionReaderTests {
    @Test func anAbsentOptionIsNil() throws {
        let reader = AdapterOptionReader([:])
        #expect(try reader.integer("n", in: 1...10 as ClosedRange<Int>) == nil)
        #expect(try reader.number("x", expected: "a number") == nil)
        #expect(try reader.flag("f") == nil)
        #expect(try reader.choice("c", ["a": 1]) == nil)
    }

    @Test func goodValuesAreRead() throws {
        let reader = AdapterOptionReader(["n": "10", "x": "-2.5", "f": "YES", "c": "LB", "d": "2024-02-29"])
        #expect(try reader.integer("n", in: 1...10 as ClosedRange<UInt8>) == 10)
        #expect(try reader.number("x", expected: "a number") { abs($0) <= 20 } == -2.5)
        #expect(try reader.flag("f") == true)
        #expect(try reader.choice("c", ["kg": 0, "lb": 1]) == 1)
        #expect(try reader.value("d", expected: "a date") { $0.count == 10 ? $0 : nil } == "2024-02-29")
    }

    @Test(arguments: [
        (["n": "11"], AdapterOptionError.invalid(option: "n", value: "11", expected: "a whole number from 1 to 10")),
        (["n": "-1"], .invalid(option: "n", value: "-1", expected: "a whole number from 1 to 10")),
        (["n": "ten"], .invalid(option: "n", value: "ten", expected: "a whole number from 1 to 10")),
    ])
    func integersOutsideTheRangeAreNamed(_ options: [String: String], _ error: AdapterOptionError) {
        #expect(throws: error) { try AdapterOptionReader(options).integer("n", in: 1...10 as ClosedRange<Int>) }
    }

    @Test func badValuesOfEachKindAreNamed() {
        let reader = AdapterOptionReader(["x": "inf", "y": "30", "f": "sometimes", "c": "stone", "code": "12345"])
        #expect(throws: AdapterOptionError.invalid(option: "x", value: "inf", expected: "a finite number")) {
            try reader.number("x", expected: "a finite number")
        }
        #expect(throws: AdapterOptionError.invalid(option: "y", value: "30", expected: "°C from -20 to 20")) {
            try reader.number("y", expected: "°C from -20 to 20") { abs($0) <= 20 }
        }
        #expect(throws: AdapterOptionError.invalid(option: "f", value: "sometimes", expected: "true or false")) {
            try reader.flag("f")
        }
        #expect(throws: AdapterOptionError.invalid(option: "c", value: "stone", expected: "kg or lb")) {
            try reader.choice("c", ["kg": 0, "lb": 1])
        }
        // A secret is named by its length, never shown.
        #expect(throws: AdapterOptionError.invalid(option: "code", value: "<5 characters>", expected: "0…9999")) {
            try reader.integer("code", in: 0...9999 as ClosedRange<UInt16>, expected: "0…9999", isSecret: true)
        }
    }

    @Test func theErrorReadsAsARejection() {
        let error = AdapterOptionError.invalid(option: "temper-interval", value: "0", expected: "whole seconds from 1 to 86400")
        #expect(error.description == "option temper-interval=0 is not valid; expected whole seconds from 1 to 86400")
        var output = AdapterOutput()
        output.reject("temper", option: error, time: Date(timeIntervalSince1970: 0))
        #expect(output.rejections.map(\.reason) == ["bad-option"])
        #expect(output.rejections.map(\.detail) == [error.description])
    }

    /// A real conversation (the HidrateSpark log) given an impossible bottle size stores nothing and says why.
    @Test func aConversationRejectsABadOptionAndStoresNothing() async throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "hidrate-spark/real-sips" })
        let replayed = try await Replayed(path: fixture.path, options: ["hidrate-bottle-ml": "50"])
        #expect(replayed.lines.isEmpty)
        #expect(replayed.rejections.map(\.description).contains {
            $0.hasPrefix("hidrate-spark: bad-option: option hidrate-bottle-ml=50 is not valid; expected millilitres from 100 to 4000")
        }, "\(replayed.rejections)")
    }

    /// The same capture with a good bottle size gives the sips as that bottle's share.
    @Test func aConversationTakesAGoodOption() async throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "hidrate-spark/real-sips" })
        let replayed = try await Replayed(path: fixture.path, options: ["hidrate-bottle-ml": "1000"])
        #expect(!replayed.lines.isEmpty)
        #expect(replayed.rejections.isEmpty, "\(replayed.rejections)")
        #expect(replayed.lines.allSatisfy { $0.contains("\"IngestBottleCapacityML\":1000") })
    }
}

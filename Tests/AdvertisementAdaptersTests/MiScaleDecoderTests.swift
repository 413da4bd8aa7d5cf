import AdapterKit
import Foundation
import TestSupport
import Testing
import XiaomiScale

// Byte vectors: "xiaomi-ble" are the service-data payloads of Bluetooth-Devices/xiaomi-ble
// tests/test_parser.py (test_Xiaomi_Scale1, _mass_removed, _non_stabilized, _reset,
// test_Xiaomi_Scale2, _non_stabilized, _reset); "research" are the examples of
// shared/research/ble-protocols.md §3.1-3.2; "synthetic" frames were built here from the
// documented layout to reach a flag no published vector sets (pounds, jin).

@Suite("MiScaleDecoder")
struct MiScaleDecoderTests {
    @Test("Smart scale, xiaomi-ble test_Xiaomi_Scale1: 86.55 kg, stabilized, 2021-04-11 16:19:01")
    func smartScalePublishedVector() throws {
        let reading = try MiScaleDecoder.decodeSmartScale(hex("22 9e 43 e5 07 04 0b 10 13 01"))
        #expect(reading.model == .smartScale)
        #expect(reading.rawWeight == 17310)
        #expect(reading.unit == .kilogram)
        #expect(reading.weightKilograms == 86.55)
        #expect(reading.isStabilized)
        #expect(!reading.isWeightRemoved)
        #expect(reading.isFinalReading)
        #expect(reading.impedanceOhms == nil)
        #expect(reading.clock == MiScaleClock(year: 2021, month: 4, day: 11, hour: 16, minute: 19, second: 1))
        #expect(reading.clock.isPlausible)
        #expect(reading.clock.description == "2021-04-11T16:19:01")
        #expect(reading.controlBytes == [0x22])
    }

    @Test("Smart scale, research §3.1: 61.75 kg, stabilized, 2022-02-14 16:41:58")
    func smartScaleResearchVector() throws {
        let reading = try MiScaleDecoder.decodeSmartScale(hex("22 3e 30 e6 07 02 0e 10 29 3a"))
        #expect(reading.weightKilograms == 61.75)
        #expect(reading.isFinalReading)
        #expect(reading.clock.description == "2022-02-14T16:41:58")
    }

    @Test("Smart scale, xiaomi-ble mass removed: 87.2 kg with the removed bit, clock unset (1970)")
    func smartScaleWeightRemoved() throws {
        let reading = try MiScaleDecoder.decodeSmartScale(hex("a2 20 44 b2 07 01 01 0a 1a 15"))
        #expect(reading.weightKilograms == 87.2)
        #expect(reading.isWeightRemoved)
        #expect(reading.isStabilized)  // bit 5 is set too; removal wins
        #expect(!reading.isFinalReading)
        #expect(reading.clock.year == 1970)
        #expect(reading.clock.isValid)
        #expect(!reading.clock.isPlausible)
    }

    @Test("Smart scale, xiaomi-ble non stabilized and reset frames are not final readings")
    func smartScaleNotFinal() throws {
        let settling = try MiScaleDecoder.decodeSmartScale(hex("82 14 00 e5 07 04 0b 10 17 08"))
        #expect(settling.weightKilograms == 0.1)
        #expect(!settling.isStabilized)
        #expect(!settling.isFinalReading)
        let reset = try MiScaleDecoder.decodeSmartScale(hex("80 00 00 e5 07 04 0b 10 13 01"))
        #expect(reset.rawWeight == 0)
        #expect(reset.isWeightRemoved)
        #expect(!reset.isFinalReading)
    }

    @Test("Smart scale in pounds (synthetic): 150.00 lb = 68.0388555 kg")
    func smartScalePounds() throws {
        let reading = try MiScaleDecoder.decodeSmartScale(hex("23 98 3a e6 07 02 0e 10 29 3a"))
        #expect(reading.unit == .pound)
        #expect(reading.weightInDisplayUnit == 150)
        #expect(abs(reading.weightKilograms - 68.038_855_5) < 1e-9)
    }

    @Test("Smart scale in jin (synthetic): 123.50 jin = 61.75 kg")
    func smartScaleJin() throws {
        let reading = try MiScaleDecoder.decodeSmartScale(hex("32 3e 30 e6 07 02 0e 10 29 3a"))
        #expect(reading.unit == .jin)
        #expect(reading.weightInDisplayUnit == 123.5)
        #expect(reading.weightKilograms == 61.75)
    }

    @Test("Body composition scale, xiaomi-ble test_Xiaomi_Scale2: 85.15 kg, 428 ohm")
    func bodyCompositionPublishedVector() throws {
        let reading = try MiScaleDecoder.decodeBodyCompositionScale(hex("02 26 b2 07 05 04 0f 02 01 ac 01 86 42"))
        #expect(reading.model == .bodyCompositionScale)
        #expect(reading.rawWeight == 17030)
        #expect(reading.weightKilograms == 85.15)
        #expect(reading.impedanceOhms == 428)
        #expect(reading.isFinalReading)
        #expect(reading.clock.description == "1970-05-04T15:02:01")
        #expect(!reading.clock.isPlausible)
        #expect(reading.controlBytes == [0x02, 0x26])
    }

    @Test("Body composition scale, research §3.2: 72.45 kg, 503 ohm, 2022-02-14 16:41:58")
    func bodyCompositionResearchVector() throws {
        let reading = try MiScaleDecoder.decodeBodyCompositionScale(hex("02 26 e6 07 02 0e 10 29 3a f7 01 9a 38"))
        #expect(reading.weightKilograms == 72.45)
        #expect(reading.impedanceOhms == 503)
        #expect(reading.clock.description == "2022-02-14T16:41:58")
        #expect(reading.clock.isPlausible)
    }

    @Test("Body composition scale, xiaomi-ble non stabilized (105.8 kg) and reset")
    func bodyCompositionNotFinal() throws {
        let settling = try MiScaleDecoder.decodeBodyCompositionScale(hex("02 04 b2 07 01 01 12 10 1a 00 00 a8 52"))
        #expect(settling.weightKilograms == 105.8)
        #expect(!settling.isStabilized)
        #expect(!settling.isWeightRemoved)
        #expect(settling.impedanceOhms == nil)
        let reset = try MiScaleDecoder.decodeBodyCompositionScale(hex("02 82 b2 07 05 04 0f 02 01 00 00 00 00"))
        #expect(reset.isWeightRemoved)
        #expect(!reset.isFinalReading)
    }

    @Test("Body composition scale units (synthetic): pounds from control0 bit 0, jin from control1 bit 6")
    func bodyCompositionUnits() throws {
        let pounds = try MiScaleDecoder.decodeBodyCompositionScale(hex("03 24 e6 07 02 0e 10 29 3a 00 00 98 3a"))
        #expect(pounds.unit == .pound)
        #expect(pounds.impedanceOhms == nil)
        #expect(abs(pounds.weightKilograms - 68.038_855_5) < 1e-9)
        let jin = try MiScaleDecoder.decodeBodyCompositionScale(hex("02 64 e6 07 02 0e 10 29 3a 00 00 3e 30"))
        #expect(jin.unit == .jin)
        #expect(jin.weightKilograms == 61.75)
    }

    @Test("A frame cut short names the missing field, its offset and the bytes")
    func truncatedFrames() throws {
        let five = hex("22 9e 43 e5 07")
        #expect(throws: MiScaleDecodingError.tooShort(model: .smartScale, field: "timestamp", offset: 3, bytes: five)) {
            try MiScaleDecoder.decodeSmartScale(five)
        }
        let two = hex("02 26")
        #expect(throws: MiScaleDecodingError.tooShort(model: .bodyCompositionScale, field: "timestamp", offset: 2, bytes: two)) {
            try MiScaleDecoder.decodeBodyCompositionScale(two)
        }
        let twelve = hex("02 26 b2 07 05 04 0f 02 01 ac 01 86")
        #expect(throws: MiScaleDecodingError.tooShort(model: .bodyCompositionScale, field: "weight", offset: 11, bytes: twelve)) {
            try MiScaleDecoder.decodeBodyCompositionScale(twelve)
        }
        #expect(throws: MiScaleDecodingError.tooShort(model: .smartScale, field: "control byte", offset: 0, bytes: [])) {
            try MiScaleDecoder.decodeSmartScale([])
        }
    }

    @Test("A frame longer than the layout is refused, not silently cut")
    func overlongFrame() throws {
        let eleven = hex("22 9e 43 e5 07 04 0b 10 13 01 00")
        #expect(throws: MiScaleDecodingError.tooLong(model: .smartScale, expected: 10, bytes: eleven)) {
            try MiScaleDecoder.decodeSmartScale(eleven)
        }
        let error = MiScaleDecodingError.tooLong(model: .smartScale, expected: 10, bytes: eleven)
        #expect(error.reason == "long-frame")
        #expect(error.description.contains("22 9e 43 e5 07 04 0b 10 13 01 00"))
    }

    @Test("Clock: impossible dates have no instant; wall time is read in the given zone")
    func clockConversion() throws {
        let february31 = MiScaleClock(year: 2022, month: 2, day: 31, hour: 8, minute: 0, second: 0)
        #expect(february31.isValid)  // fields in range...
        #expect(february31.date(in: try #require(TimeZone(identifier: "UTC"))) == nil)  // ...but no such day
        let zeroMonth = MiScaleClock(year: 2022, month: 0, day: 1, hour: 8, minute: 0, second: 0)
        #expect(!zeroMonth.isValid)
        let clock = MiScaleClock(year: 2021, month: 4, day: 11, hour: 16, minute: 19, second: 1)
        #expect(clock.date(in: try #require(TimeZone(identifier: "Europe/Berlin"))) == (try utc(2021, 4, 11, 14, 19, 1)))
        #expect(clock.date(in: try #require(TimeZone(identifier: "America/New_York"))) == (try utc(2021, 4, 11, 20, 19, 1)))
    }

    @Test("Clock: the run's shared conversion gives the calendar's instant, across changes of offset too")
    func sharedClockConversion() throws {
        for zoneName in ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"] {
            let zone = try #require(TimeZone(identifier: zoneName))
            let times = LocalClockTimes(timeZone: zone)
            // Every 37 minutes through 2021 (both changes of offset, the skipped and the repeated hour,
            // Lord Howe's half hour), then back in time, so the span learned last is often the wrong one.
            var clocks: [MiScaleClock] = []
            var day = (year: 2021, month: 1, day: 1)
            var minuteOfDay = 0
            while day.year == 2021 {
                clocks.append(MiScaleClock(year: day.year, month: day.month, day: day.day, hour: minuteOfDay / 60,
                                           minute: minuteOfDay % 60, second: minuteOfDay % 60))
                minuteOfDay += 37
                if minuteOfDay >= 1440 {
                    minuteOfDay -= 1440
                    day.day += 1
                    if day.day > [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][day.month - 1] { (day.month, day.day) = (day.month + 1, 1) }
                    if day.month > 12 { (day.year, day.month) = (day.year + 1, 1) }
                }
            }
            clocks += clocks.reversed()
            clocks.append(MiScaleClock(year: 2022, month: 2, day: 31, hour: 8, minute: 0, second: 0))
            clocks.append(MiScaleClock(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59))
            for clock in clocks {
                let expected = clock.date(in: zone)
                #expect(clock.date(using: times) == expected, "\(clock) in \(zoneName)")
            }
            #expect(clocks.count > 28_000)
        }
        let berlin = LocalClockTimes(timeZone: try #require(TimeZone(identifier: "Europe/Berlin")))
        // 02:30 on 28 March 2021 did not happen in Berlin; 02:30 on 31 October happened twice.
        for clock in [MiScaleClock(year: 2021, month: 3, day: 28, hour: 2, minute: 30, second: 0),
                      MiScaleClock(year: 2021, month: 10, day: 31, hour: 2, minute: 30, second: 0)] {
            #expect(clock.date(using: berlin) == clock.date(in: berlin.timeZone))
            #expect(clock.date(using: berlin) != nil)
        }
    }
}

import OmronPedometer
import TestSupport
import Testing

/// The pedometer's records, on reply bodies from the first HJ-720IT capture (5/16/2009, the capture's day 4),
/// whose values the vendor CSV states.
struct OmronPedometerDecoderTests {
    /// `GTD 00 00 04 02`: hours 8-15 of 5/16/2009.
    static let hoursBlock = hex("0020580711aa42d701f942d60000400700000000000000000000000000004079000043")
    /// `GTD 00 00 04 04`: the summary of 5/16/2009.
    static let summaryBlock = hex("00140834805027004200308004210184800614700280ed")

    @Test func hourlyBlockGivesStepsAerobicStepsAndFlags() throws {
        let hours = try OmronPedometerDecoder.hours(Self.hoursBlock, block: 2)
        #expect(hours.map(\.hour) == Array(8...15))
        // CSV 5/16/2009, Steps 8AM-3PM: 6151,727,726,7,0,0,0,121; aerobic 8AM 4522, 9AM 505.
        #expect(hours.map(\.steps) == [6151, 727, 726, 7, 0, 0, 0, 121])
        #expect(hours.map(\.aerobicSteps) == [4522, 505, 0, 0, 0, 0, 0, 0])
        #expect(hours.map(\.isUsed) == [true, true, true, true, false, false, false, true])
        #expect(hours.allSatisfy { !$0.hasEvent })
    }

    @Test func summaryGivesThePackedDecimalTotals() throws {
        let summary = try OmronPedometerDecoder.summary(Self.summaryBlock)
        // CSV 5/16/2009: 8348 steps, 5027 aerobic, 42 min, 308 kcal, 4.21 mi, 18.4 g.
        #expect(summary.totalSteps == 8348)
        #expect(summary.aerobicSteps == 5027)
        #expect(summary.aerobicWalkingMinutes == 42)
        #expect(summary.kilocalories == 308)
        #expect(summary.distanceHundredths == 421)
        #expect(summary.fatBurnedDecigrams == 184)
        #expect(summary.trailer == [0x80, 0x06, 0x14, 0x70, 0x02, 0x80])
    }

    @Test func dataCountIsTwoBigEndianNumbers() throws {
        // Second capture: 11 days stored, 2 not yet cleared.
        #expect(try OmronPedometerDecoder.dataCount(hex("00000b000209"))
                == OmronDataCount(storedDays: 11, untransferredDays: 2))
    }

    @Test func versionIsTheTextBeforeTheChecksum() throws {
        #expect(try OmronPedometerDecoder.version(hex("00484a2d373230495432303237")) == "HJ-720IT202")
    }

    @Test func aDigitAboveNineIsNamedWithItsField() {
        var body = Self.summaryBlock
        body[9] = 0x3A   // kcal digits start in byte 9: 3A is not packed decimal
        #expect(throws: OmronDecodingError.invalidDigit(field: "calories", offset: 9, body: body)) {
            try OmronPedometerDecoder.summary(body)
        }
    }

    @Test func wrongLengthsAndStatusesAreRefused() {
        let short = Array(Self.hoursBlock.prefix(20))
        #expect(throws: OmronDecodingError.wrongLength(record: "hours block 2", expected: 35, found: 20, body: short)) {
            try OmronPedometerDecoder.hours(short, block: 2)
        }
        var status = Self.summaryBlock
        status[0] = 0x01
        #expect(throws: OmronDecodingError.badStatus(record: "day summary", status: 0x01, body: status)) {
            try OmronPedometerDecoder.summary(status)
        }
        let serial = hex("000d484a37")
        #expect(throws: OmronDecodingError.wrongLength(record: "serial number", expected: 16, found: 5, body: serial)) {
            try OmronPedometerDecoder.serialNumber(serial)
        }
        let binary = hex("0001ff00")
        #expect(throws: OmronDecodingError.notText(record: "version", body: binary)) {
            try OmronPedometerDecoder.version(binary)
        }
    }
}

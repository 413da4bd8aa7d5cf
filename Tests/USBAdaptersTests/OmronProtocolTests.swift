import OmronPedometer
import TestSupport
import Testing

/// Report framing, command encoding, reply assembly and checking, on the byte examples of libomron's
/// protocol notes and on reports from the HJ-720IT captures.
struct OmronProtocolTests {
    @Test func commandsCarryTheXorOfTheirArguments() {
        #expect(OmronCommand.version.bytes == Array("VER00".utf8))
        #expect(OmronCommand.dataCount.bytes == Array("CNT00".utf8))
        #expect(OmronCommand.end.bytes == [0x45, 0x4E, 0x44, 0xFF, 0xFF])
        // From the capture: GTD for day 6, block 2 ends in 06 ^ 02 = 04.
        #expect(OmronCommand.dayBlock(day: 6, block: 2).bytes == hex("47 54 44 00 00 06 02 04"))
        #expect(OmronCommand.dayBlock(day: 9, block: 4).description == "GTD 00 00 09 04 0d")
        #expect(OmronCommand.version.description == "VER00")
    }

    @Test func messagesAreCutIntoCountedReports() {
        // The capture's GTD day 0 block 1 request: 7 bytes, then 1.
        #expect(OmronReport.reports(for: OmronCommand.dayBlock(day: 0, block: 1).bytes)
                == [hex("07 47 54 44 00 00 00 01"), hex("01 01 00 00 00 00 00 00")])
        #expect(OmronReport.reports(for: Array("VER00".utf8)) == [hex("05 56 45 52 30 30 00 00")])
        #expect(OmronReport.reports(for: [UInt8](repeating: 0, count: 12))
                == [hex("07 00 00 00 00 00 00 00"), hex("05 00 00 00 00 00 00 00")])
    }

    @Test func reportPayloadsHonourTheCountByte() throws {
        #expect(try OmronReport.payload(of: hex("02 4f 4b ff ff ff ff ff")) == [0x4F, 0x4B])
        #expect(try OmronReport.payload(of: hex("00 00 00 00 00 00 00 00")) == [])
        // Seen in the capture after an odd mode value: a count of 8.
        #expect(throws: OmronProtocolError.badReportCount(count: 8, report: hex("08 60 00 00 00 00 00 00"))) {
            try OmronReport.payload(of: hex("08 60 00 00 00 00 00 00"))
        }
        #expect(throws: OmronProtocolError.truncatedReport(count: 5, length: 3, report: [5, 1, 2])) {
            try OmronReport.payload(of: [5, 1, 2])
        }
        #expect(throws: OmronProtocolError.emptyReport) { try OmronReport.payload(of: []) }
    }

    /// libomron's protocol notes: the 790IT answers VER00 with "M7080IT 207" and checksum 'J' in three reports.
    @Test func publishedVersionReplyAssemblesAndChecks() throws {
        var assembler = OmronReplyAssembler(command: .version)
        #expect(try assembler.add(report: hex("07 4f 4b 00 4d 37 30 38")) == nil)
        #expect(try assembler.add(report: hex("07 30 49 54 20 32 30 37")) == nil)
        let reply = try #require(try assembler.add(report: hex("01 4a ff ff ff ff ff ff")))
        guard case .ok(let body) = try OmronReply.parse(reply, for: .version) else {
            Issue.record("not OK")
            return
        }
        #expect(try OmronPedometerDecoder.version(body) == "M7080IT 207")
    }

    /// A 14-byte reply fills two reports exactly: it ends by its known length, not by a short report.
    @Test func aReplyOfWholeReportsEndsAtItsKnownLength() throws {
        var assembler = OmronReplyAssembler(command: .profile)
        #expect(try assembler.add(report: hex("07 4f 4b 00 55 33 14 70")) == nil)
        let reply = try assembler.add(report: hex("07 00 00 03 20 00 00 21"))
        #expect(reply == hex("4f 4b 00 55 33 14 70 00 00 03 20 00 00 21"))
    }

    @Test func lengthPrefixedRepliesEndAtTheirDeclaredLength() throws {
        // SRL00 of the HJ-720IT: OK 00 0d "HJ7208Y125980" 5c.
        var assembler = OmronReplyAssembler(command: .serialNumber)
        #expect(try assembler.add(report: hex("07 4f 4b 00 0d 48 4a 37")) == nil)
        #expect(try assembler.add(report: hex("07 32 30 38 59 31 32 35")) == nil)
        let reply = try #require(try assembler.add(report: hex("04 39 38 30 5c 31 32 35")))
        guard case .ok(let body) = try OmronReply.parse(reply, for: .serialNumber) else {
            Issue.record("not OK")
            return
        }
        #expect(try OmronPedometerDecoder.serialNumber(body) == "HJ7208Y125980")
    }

    @Test func emptyReportsBeforeAReplyAreIgnored() throws {
        var assembler = OmronReplyAssembler(command: .clearData)
        #expect(try assembler.add(report: hex("00 00 00 00 00 00 00 00")) == nil)
        #expect(try assembler.add(report: hex("02 4f 4b 00 00 00 00 00")) == [0x4F, 0x4B])
    }

    @Test func noIsARefusal() throws {
        var assembler = OmronReplyAssembler(command: .dataCount)
        let reply = try #require(try assembler.add(report: hex("02 4e 4f 00 00 00 00 00")))
        #expect(try OmronReply.parse(reply, for: .dataCount) == .refused)
    }

    @Test func aBadChecksumNamesExpectedAndFound() {
        // CNT00 of the first capture with its checksum byte changed from 0x00 to 0x5a.
        let reply = hex("4f 4b 00 00 0a 00 0a 5a")
        #expect(throws: OmronProtocolError.badChecksum(command: "CNT00", expected: 0x00, found: 0x5A, reply: reply)) {
            try OmronReply.parse(reply, for: .dataCount)
        }
    }

    @Test func shortGarbledAndOverlongRepliesAreRefusedWithTheirBytes() throws {
        let short = hex("4f 4b 00 00 0a")
        #expect(throws: OmronProtocolError.shortReply(command: "CNT00", expected: 8, found: 5, reply: short)) {
            try OmronReply.parse(short, for: .dataCount)
        }
        #expect(throws: OmronProtocolError.garbled(command: "VER00", reply: [0x60, 0x00])) {
            var assembler = OmronReplyAssembler(command: .version)
            _ = try assembler.add(report: hex("02 60 00 00 00 00 00 00"))
        }
        let block = OmronCommand.dayBlock(day: 0, block: 1)
        let lying = hex("4f 4b 00 20 40 00 60")
        #expect(throws: OmronProtocolError.badDeclaredLength(command: block.description, declared: 32, available: 2,
                                                             reply: lying)) {
            try OmronReply.parse(lying, for: block)
        }
        var assembler = OmronReplyAssembler(command: .dataCount)
        _ = try assembler.add(report: hex("07 4f 4b 00 00 0a 00 0a"))
        #expect(throws: OmronProtocolError.overlongReply(command: "CNT00", expected: 8, found: 14,
                                                         reply: hex("4f 4b 00 00 0a 00 0a 00 01 02 03 04 05 06"))) {
            _ = try assembler.add(report: hex("07 00 01 02 03 04 05 06"))
        }
    }

    @Test func endMayAnswerOff() throws {
        #expect(try OmronReply.parse(Array("OFF\r\n".utf8), for: .end) == .status("OFF\r\n"))
        #expect(try OmronReply.parse([0x4F, 0x4B], for: .end) == .ok(body: []))
    }
}

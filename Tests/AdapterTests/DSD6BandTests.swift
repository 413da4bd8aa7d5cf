import DSD6Band
import Foundation
import Testing

/// The DS-D6 band's reply parsing on the bytes of the real logs.
struct DSD6BandTests {
    @Test func repliesSplitOverNotificationsAreJoinedAtCRLF() {
        var assembler = DSD6LineAssembler()
        // `AT+DATA:0,000,120,000,000,000,0` arrives as a 20-byte notification and a 13-byte one.
        #expect(assembler.add(Array("AT+DATA:0,000,120,00".utf8)).isEmpty)
        let lines = assembler.add(Array("0,000,000,0\r\n".utf8))
        #expect(lines == [.success("AT+DATA:0,000,120,000,000,000,0")])
        #expect(assembler.add(Array("AT+BATT:14\r\nNT+TOPACE:0\r\n".utf8)) == [.success("AT+BATT:14"), .success("NT+TOPACE:0")])
    }

    @Test func anOverlongLineIsReportedAndTheNextLineStillParses() {
        var assembler = DSD6LineAssembler()
        let flood = [UInt8](repeating: 0x41, count: DSD6LineAssembler.maximumLineLength + 5)
        let results = assembler.add(flood + Array("\r\nAT+SN:1\r\n".utf8))
        #expect(results.count == 3)
        guard case .failure(.lineTooLong) = results.first else {
            Issue.record("expected line-too-long, got \(results)")
            return
        }
        #expect(results.last == .success("AT+SN:1"))
    }

    @Test func stepCountAndTimeZoneReplies() throws {
        let steps = try DSD6Reply(line: "AT+TOPACE:5446")
        #expect(steps.prefix == "AT" && steps.command == "TOPACE")
        #expect(try steps.stepCount() == 5446)
        #expect(try DSD6Reply(line: "AT+TIMEZONE:3600").timeZoneOffset() == 3600)
        #expect(try DSD6Reply(line: "NT+TOPACE:0").prefix == "NT")
        #expect(throws: DSD6ReplyError.badNumber(command: "TOPACE", value: "OK")) { try DSD6Reply(line: "AT+TOPACE:OK").stepCount() }
        #expect(throws: DSD6ReplyError.badNumber(command: "TOPACE", value: "-1")) { try DSD6Reply(line: "AT+TOPACE:-1").stepCount() }
        #expect(throws: DSD6ReplyError.notAReply("garbage")) { try DSD6Reply(line: "garbage") }
        #expect(throws: DSD6ReplyError.notAReply("XX+A:1")) { try DSD6Reply(line: "XX+A:1") }
    }

    /// The vendor app's split of `AT+DT=20200517222621` + CR LF, byte for byte as in the log.
    @Test func commandsAreSplitLikeTheVendorApp() {
        let date = Date(timeIntervalSince1970: 1_589_754_381)  // 2020-05-17 22:26:21 UTC
        let command = DSD6Command.setClock(date, in: TimeZone(identifier: "UTC")!)
        #expect(DSD6Command.writes(command) == [Array("AT+DT=20200517222621".utf8), [0x0D, 0x0A]])
        #expect(DSD6Command.writes(DSD6Command.stepCount) == [Array("AT+TOPACE=0\r\n".utf8)])
    }
}

import BLEWire
import TestSupport
import Testing

@Suite struct HCIEventTests {
    @Test func commandCompleteOfReadLocalSupportedFeaturesFromARealController() throws {
        // From the DSD6 capture: LE Read Local Supported Features answered with 0xCF.
        let event = try HCIEvent(packet: hex("04 0e 0c 01 03 20 00 cf 00 00 00 00 00 00 00"))
        #expect(event == .commandComplete(opcode: .leReadLocalSupportedFeatures,
                                          returnParameters: hex("00 cf 00 00 00 00 00 00 00")))
    }

    @Test func commandStatus() throws {
        let event = try HCIEvent(packet: hex("04 0f 04 0c 01 0c 20"))
        #expect(event == .commandStatus(opcode: .leSetScanEnable, status: .commandDisallowed))
    }

    @Test func leMetaEventSplitsTheSubevent() throws {
        let event = try HCIEvent(packet: hex("04 3e 03 02 00 ff"))
        #expect(event == .leMeta(subevent: 0x02, parameters: [0x00, 0xFF]))
    }

    @Test func malformedPacketsNameWhatIsWrong() {
        #expect(throws: HCIPacketError.empty) { try HCIEvent(packet: []) }
        #expect(throws: HCIPacketError.notAnEvent(indicator: 0x02)) { try HCIEvent(packet: [0x02, 0x00]) }
        #expect(throws: HCIPacketError.truncated(need: 3, have: 2)) { try HCIEvent(packet: [0x04, 0x0E]) }
        #expect(throws: HCIPacketError.truncated(need: 7, have: 5)) { try HCIEvent(packet: hex("04 0e 04 01 0b")) }
        #expect(throws: HCIPacketError.truncated(need: 6, have: 5)) { try HCIEvent(packet: hex("04 0e 02 01 0b")) }
    }

    @Test func commandPacketsUseH4Framing() {
        #expect(HCICommand.leSetScanEnable(true, filterDuplicates: false).packet == hex("01 0c 20 02 01 00"))
        #expect(HCICommand.leSetScanParameters(LEScanParameters()).packet == hex("01 0b 20 07 00 60 00 30 00 00 00"))
        #expect(HCIOpcode(ogf: 0x08, ocf: 0x000B) == .leSetScanParameters)
        #expect(HCIOpcode.leSetScanEnable.description == "LE Set Scan Enable (0x200C)")
        #expect(HCIStatus.commandDisallowed.description == "Command Disallowed (0x0C)")
    }
}

import Foundation
import TestSupport
import Testing
import Transport

@Suite struct BLEUUIDTests {
    @Test func sixteenBitAliasLivesInBaseUUID() throws {
        let weight = BLEUUID(0x2A9D)
        #expect(weight.description == "2A9D")
        #expect(weight.uuidString == "00002A9D-0000-1000-8000-00805F9B34FB")
        #expect(weight.shortValue == 0x2A9D)
        #expect(BLEUUID("00002a9d-0000-1000-8000-00805f9b34fb") == weight)
        #expect(BLEUUID("2a9d") == weight)
        #expect(BLEUUID(littleEndianBytes: hex("9d 2a")) == weight)
        #expect(BLEUUID(littleEndianBytes: hex("9d 2a 00 00")) == weight)
        #expect(weight.shortestLittleEndianBytes == hex("9d 2a"))
    }

    @Test func thirtyTwoBitAliasPrintsInFull() throws {
        let uuid = BLEUUID(uint32: 0x1234_5678)
        #expect(uuid.shortValue == nil)
        #expect(uuid.uint32Value == 0x1234_5678)
        #expect(uuid.description == "12345678-0000-1000-8000-00805F9B34FB")
        #expect(BLEUUID("12345678") == uuid)
        #expect(BLEUUID(littleEndianBytes: hex("78 56 34 12")) == uuid)
        #expect(uuid.shortestLittleEndianBytes == hex("78 56 34 12"))
    }

    @Test func vendorUUIDFromWireOrder() throws {
        // A 128-bit characteristic UUID as the HidrateSpark bottle sends it in a Read By Type
        // response (hidrate-spark_wban-python_btsnoop_hci.log), least significant byte first.
        let wire = hex("84 37 f9 53 60 07 5a 9e 74 40 8a 6c b1 11 6e 01")
        let uuid = try #require(BLEUUID(littleEndianBytes: wire))
        #expect(uuid.description == "016E11B1-6C8A-4074-9E5A-076053F93784")
        #expect(uuid.shortValue == nil && uuid.uint32Value == nil)
        #expect(uuid.littleEndianBytes == wire)
        #expect(BLEUUID(uuid.description) == uuid)
    }

    @Test(arguments: ["", "2A9", "2A9DX", "0000180D-0000-1000-8000-00805F9B34F", "0000180D00001000800000805F9B34FB",
                      "0000180D-0000-1000-8000_00805F9B34FB", "00-00180D", "zzzz"])
    func rejectsMalformedText(_ text: String) {
        #expect(BLEUUID(text) == nil)
    }

    @Test func rejectsWrongByteCounts() {
        #expect(BLEUUID(littleEndianBytes: hex("01")) == nil)
        #expect(BLEUUID(littleEndianBytes: hex("01 02 03")) == nil)
        #expect(BLEUUID(littleEndianBytes: [UInt8](repeating: 1, count: 15)) == nil)
    }

    @Test func codesAsString() throws {
        let json = try JSONEncoder().encode([BLEUUID(0x180D), BLEUUID.clientCharacteristicConfiguration])
        #expect(String(decoding: json, as: UTF8.self) == #"["180D","2902"]"#)
        #expect(try JSONDecoder().decode([BLEUUID].self, from: json) == [BLEUUID(0x180D), BLEUUID(0x2902)])
    }
}

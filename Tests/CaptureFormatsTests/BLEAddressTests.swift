import Foundation
import TestSupport
import Testing
import Transport

@Suite struct BLEAddressTests {
    @Test func printsMostSignificantByteFirst() throws {
        // HCI carries addresses least significant byte first (Core Vol 4 Part E 7.7.65.2);
        // these wire bytes come from the first advertising report of dsd6_btsnoop_hci.log.
        let address = try #require(BLEAddress(littleEndianBytes: hex("f5 d1 1d 46 22 40")))
        #expect(address.description == "40:22:46:1D:D1:F5")
        #expect(address.bytes == hex("40 22 46 1d d1 f5"))
        #expect(address.littleEndianBytes == hex("f5 d1 1d 46 22 40"))
        #expect(address.rawValue == 0x4022_461D_D1F5)
    }

    @Test func parsesWhatItPrints() throws {
        let address = try #require(BLEAddress("c8:47:8c:00:11:22"))
        #expect(address.description == "C8:47:8C:00:11:22")
        #expect(BLEAddress(address.description) == address)
        #expect(BLEAddress("C8-47-8C-00-11-22") == address)
        #expect(BLEAddress(bytes: hex("c8 47 8c 00 11 22")) == address)
    }

    @Test(arguments: ["", "C8:47:8C:00:11", "C8:47:8C:00:11:22:33", "C8:47:8C:00:11:2G", "C8:47:8C:00:11:223",
                      "C8:47:8C:00:11:2", "C8:47:8C:00-11:22"])
    func rejectsMalformedText(_ text: String) {
        #expect(BLEAddress(text) == nil)
    }

    @Test func rejectsWrongByteCounts() {
        #expect(BLEAddress(bytes: hex("01 02 03 04 05")) == nil)
        #expect(BLEAddress(littleEndianBytes: hex("01 02 03 04 05 06 07")) == nil)
        #expect(BLEAddress(rawValue: 1 << 48) == nil)
        #expect(BLEAddress(truncatingIfNeeded: 0x1_0000_0000_0001).rawValue == 1)
    }

    @Test func codesAsString() throws {
        let address = try #require(BLEAddress("E7:40:B8:61:56:5E"))
        let json = try JSONEncoder().encode([address])
        #expect(String(decoding: json, as: UTF8.self) == #"["E7:40:B8:61:56:5E"]"#)
        #expect(try JSONDecoder().decode([BLEAddress].self, from: json) == [address])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([BLEAddress].self, from: Data(#"["x"]"#.utf8)) }
    }

    @Test func addressTypesName() {
        #expect(BLEAddressType.public.description == "public")
        #expect(BLEAddressType(rawValue: 1) == .random)
        #expect(BLEAddressType.random.isRandom && !BLEAddressType.public.isRandom)
        #expect(BLEAddressType(rawValue: 7).description == "unknown(7)")
    }
}

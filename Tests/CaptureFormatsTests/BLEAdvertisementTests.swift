import Foundation
import TestSupport
import Testing
import Transport

/// AD structures as laid out in the Core Specification Supplement, Part A (length, type, data).
@Suite struct BLEAdvertisementTests {
    let address = BLEAddress("C8:47:8C:00:11:22")!

    func advertisement(_ data: [UInt8]) -> BLEAdvertisement {
        BLEAdvertisement(time: Date(timeIntervalSince1970: 1_000), address: address, addressType: .public,
                         eventType: .advInd, rssi: -60, data: data)
    }

    @Test func decodesEveryKnownStructure() throws {
        let vendor = hex("fb 34 9b 5f 80 00 00 80 00 10 00 00 aa bb cc dd")
        let data = hex("02 01 06")                         // Flags: LE General Discoverable, no BR/EDR
            + hex("05 03 0d 18 0f 18")                     // Complete list of 16-bit UUIDs: 180D, 180F
            + hex("05 04 78 56 34 12")                     // Incomplete list of 32-bit UUIDs: 12345678
            + [0x11, 0x07] + vendor                        // Complete list of 128-bit UUIDs
            + hex("04 08 4d 49 20")                        // Shortened Local Name "MI "
            + hex("0a 09 4d 49 20 53 43 41 4c 45 32")      // Complete Local Name "MI SCALE2"
            + hex("02 0a f4")                              // TX Power Level -12 dBm
            + hex("0d 16 1d 18 22 3e 30 e6 07 02 0e 10 29 3a")  // Service Data 0x181D (Mi Scale v1 frame)
            + hex("06 20 78 56 34 12 aa")                  // Service Data, 32-bit UUID
            + [0x12, 0x21] + vendor + [0x5A]               // Service Data, 128-bit UUID
            + hex("09 ff 88 ec 00 03 41 c5 64 00")         // Manufacturer data, company 0xEC88
        let ad = advertisement(data)
        #expect(ad.flags == 0x06)
        #expect(ad.serviceUUIDs == [
            BLEUUID(0x180D), BLEUUID(0x180F), BLEUUID(uint32: 0x1234_5678), BLEUUID(littleEndianBytes: vendor)!,
        ])
        #expect(ad.localName == "MI SCALE2")
        #expect(!ad.isLocalNameShortened)
        #expect(ad.txPower == -12)
        #expect(ad.serviceData == [
            BLEUUID(0x181D): hex("22 3e 30 e6 07 02 0e 10 29 3a"),
            BLEUUID(uint32: 0x1234_5678): [0xAA],
            BLEUUID(littleEndianBytes: vendor)!: [0x5A],
        ])
        #expect(ad.manufacturerData == [0xEC88: hex("00 03 41 c5 64 00")])
        #expect(ad.malformedDataOffset == nil)
        #expect(ad.data == data)
        #expect(ad.rssi == -60)
    }

    @Test func shortenedNameIsUsedWhenAlone() {
        let ad = advertisement(hex("04 08 44 53 2d"))
        #expect(ad.localName == "DS-")
        #expect(ad.isLocalNameShortened)
    }

    @Test func completeNameWinsOverLaterShortenedName() {
        let ad = advertisement(hex("06 09 44 53 2d 44 36 03 08 44 53"))
        #expect(ad.localName == "DS-D6")
        #expect(!ad.isLocalNameShortened)
    }

    @Test func nulPaddingIsDroppedFromNames() {
        #expect(advertisement(hex("05 09 41 42 00 00")).localName == "AB")
    }

    @Test func zeroLengthEndsTheSignificantPart() {
        let ad = advertisement(hex("02 01 06 00 00 00 00 00"))
        #expect(ad.flags == 0x06)
        #expect(ad.malformedDataOffset == nil)
    }

    @Test func overrunningStructureIsReportedAndEarlierOnesKept() {
        let ad = advertisement(hex("02 01 1a 05 ff 4c 00"))
        #expect(ad.flags == 0x1A)
        #expect(ad.manufacturerData.isEmpty)
        #expect(ad.malformedDataOffset == 3)
    }

    @Test func tooShortFieldsAreIgnored() {
        let ad = advertisement(hex("02 ff 4c 01 16 04 03 0d 18 0f"))
        #expect(ad.manufacturerData.isEmpty)
        #expect(ad.serviceData.isEmpty)
        #expect(ad.serviceUUIDs == [BLEUUID(0x180D)])
        #expect(ad.malformedDataOffset == nil)
    }

    @Test func laterManufacturerStructureWins() {
        let ad = advertisement(hex("04 ff 57 01 01 04 ff 57 01 02"))
        #expect(ad.manufacturerData == [0x0157: [0x02]])
    }

    @Test func legacyEventTypesMapToExtendedProperties() {
        #expect(BLEAdvertisingEventType.advInd.isConnectable && BLEAdvertisingEventType.advInd.isScannable)
        #expect(BLEAdvertisingEventType.advDirectInd.isDirected)
        #expect(!BLEAdvertisingEventType.advNonconnInd.isConnectable)
        #expect(BLEAdvertisingEventType.scanResponse.isScanResponse)
        #expect(BLEAdvertisingEventType.scanResponse.description == "SCAN_RSP")
        // Legacy PDUs inside extended reports carry the same legacy code (Core Vol 4 Part E 7.7.65.13).
        #expect(BLEAdvertisingEventType(extendedEventType: 0x0013) == .advInd)
        #expect(BLEAdvertisingEventType(extendedEventType: 0x0010) == .advNonconnInd)
        #expect(BLEAdvertisingEventType(extendedEventType: 0x001B).legacyType == 4)
        // Data status bits 5-6 are not part of the type.
        let extended = BLEAdvertisingEventType(extendedEventType: 0x0021)
        #expect(extended.properties == 0x01 && extended.legacyType == nil && !extended.isLegacyPDU)
    }
}

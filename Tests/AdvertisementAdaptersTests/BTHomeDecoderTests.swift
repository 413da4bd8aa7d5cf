import BTHome
import TestSupport
import Testing
import Transport

// Byte vectors are the service-data payloads of Bluetooth-Devices/bthome-ble
// tests/test_parser_v2.py (the test named in each case); "synthetic" ones were built here from
// the BTHome v2 format (bthome.io) where no published vector covers the case.

@Suite("BTHomeDecoder")
struct BTHomeDecoderTests {
    @Test("test_bthome_mass_kilograms: 40 06 5e 1f = 80.30 kg")
    func massKilograms() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("40 06 5e 1f"))
        #expect(packet.deviceInfo.version == 2)
        #expect(!packet.deviceInfo.isEncrypted)
        #expect(!packet.deviceInfo.isTriggerBased)
        let object = try #require(packet.objects.first)
        #expect(packet.objects.count == 1)
        #expect(object.id == 0x06)
        #expect(object.offset == 1)
        #expect(object.rawValue == 8030)
        #expect(object.value == 80.3)
        #expect(object.definition.unit == "kg")
    }

    @Test("test_bthome_mass_pounds: 40 07 3e 1d = 74.86 lb")
    func massPounds() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("40 07 3e 1d"))
        let object = try #require(packet.objects.first)
        #expect(object.id == 0x07)
        #expect(object.value == 74.86)
        #expect(object.definition.unit == "lb")
    }

    @Test("test_bthome_temperature_humidity: 25.06 °C and 50.55 %")
    func temperatureHumidity() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("40 02 ca 09 03 bf 13"))
        #expect(packet.objects.map(\.id) == [0x02, 0x03])
        #expect(packet.objects.map(\.value) == [25.06, 50.55])
        #expect(packet.objects.map(\.offset) == [1, 4])
    }

    @Test("test_bthome_packet_id_temperature_humidity_battery: packet id 9, 93 %, 23.97 °C, 63.27 %")
    func packetIDAndMore() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("40 00 09 01 5d 02 5d 09 03 b7 18"))
        #expect(packet.packetID == 9)
        #expect(packet.objects.map(\.id) == [0x00, 0x01, 0x02, 0x03])
        #expect(packet.objects.map(\.value) == [9, 93, 23.97, 63.27])
    }

    @Test("Negative temperatures are sign-extended (synthetic: 0x02 = -5.5 °C, 0x57 = -12 °C, 0x58 = -0.35 × 4)")
    func negativeTemperatures() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("40 02 da fd 57 f4 58 fc"))
        #expect(packet.objects.map(\.rawValue) == [-550, -12, -4])
        #expect(packet.objects.map(\.value) == [-5.5, -12, -1.4])
    }

    @Test("test_bthome_double_temperature: the same id twice is two channels")
    func doubleTemperature() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("40 02 ca 09 02 cf 09"))
        #expect(packet.objects.map(\.value) == [25.06, 25.11])
    }

    @Test("test_bthome_with_mac: device info bit 1 carries the MAC, least significant byte first")
    func macIncluded() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("42 b2 18 8d 38 c1 a4 04 13 8a 01"))
        #expect(packet.deviceInfo.hasMACAddress)
        #expect(packet.macAddress == BLEAddress("A4:C1:38:8D:18:B2"))
        #expect(packet.objects.first?.value == 1008.83)
        #expect(packet.objects.first?.offset == 7)
    }

    @Test("test_sleepy_device: 0x44 is a trigger-based v2 device")
    func triggerBased() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("44 04 13 8a 01"))
        #expect(packet.deviceInfo.isTriggerBased)
        #expect(packet.deviceInfo.version == 2)
    }

    @Test("test_bindkey_correct / test_bthome_with_mac_encrypted: encrypted payloads are kept undecoded")
    func encrypted() throws {
        let plain = try BTHomeDecoder.decode(hex("41 a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14"))
        #expect(plain.deviceInfo.isEncrypted)
        #expect(plain.objects.isEmpty)
        #expect(plain.encryptedPayload == (hex("a4 72 66 c9 5f 73 00 11 22 33 78 23 72 14")))
        let withMAC = try BTHomeDecoder.decode(hex("43 a5 80 8f e6 48 54 f1 96 c0 6f fb 49 00 11 22 33 f0 8e cb de"))
        #expect(withMAC.macAddress == BLEAddress("54:48:E6:8F:80:A5"))
        #expect(withMAC.encryptedPayload?.count == 14)
    }

    @Test("test_has_incorrect_version: device info 0xe1 names version 7")
    func wrongVersion() throws {
        let data = hex("e1 02 00 0c 04 04 13 8a 01")
        #expect(throws: BTHomeDecodingError.unsupportedVersion(7, deviceInfo: 0xE1, bytes: data)) {
            try BTHomeDecoder.decode(data)
        }
        // BTHome v1 devices use other UUIDs; a v1-style first byte here is refused the same way.
        #expect(throws: BTHomeDecodingError.unsupportedVersion(1, deviceInfo: 0x23, bytes: [0x23, 0x02])) {
            try BTHomeDecoder.decode([0x23, 0x02])
        }
    }

    @Test("test_bthome_wrong_object_id and _battery_wrong_object_id_humidity: an unknown id stops parsing")
    func unknownObject() throws {
        let alone = hex("40 fe ca 09")
        let packet = try BTHomeDecoder.decode(alone)
        #expect(packet.objects.isEmpty)
        #expect(packet.objectListError == .unknownObject(id: 0xFE, offset: 1, bytes: alone))
        #expect(throws: BTHomeDecodingError.unknownObject(id: 0xFE, offset: 1, bytes: alone)) {
            try BTHomeDecoder.decodeStrictly(alone)
        }
        let afterBattery = hex("40 01 5d fe 5d 09 03 b7 18")
        let partial = try BTHomeDecoder.decode(afterBattery)
        #expect(partial.objects.map(\.value) == [93])  // the humidity after 0xfe is not read
        #expect(partial.objectListError == .unknownObject(id: 0xFE, offset: 3, bytes: afterBattery))
        #expect(partial.objectListError?.reason == "unknown-object")
    }

    @Test("A truncated object (synthetic, the mass vector cut by one byte) names id, offset and sizes")
    func truncatedObject() throws {
        let data = hex("40 00 07 06 5e")
        let packet = try BTHomeDecoder.decode(data)
        #expect(packet.packetID == 7)
        #expect(packet.objectListError == .truncatedObject(id: 0x06, offset: 3, needed: 2, available: 1, bytes: data))
        #expect(packet.objectListError?.reason == "truncated-object")
        let description = try #require(packet.objectListError?.description)
        #expect(description.contains("object 0x06 at offset 3 needs 2 value bytes, 1 remain"))
        // A text object whose length byte runs past the end.
        let text = hex("40 53 05 41 42")
        #expect(throws: BTHomeDecodingError.truncatedObject(id: 0x53, offset: 1, needed: 5, available: 2, bytes: text)) {
            try BTHomeDecoder.decodeStrictly(text)
        }
    }

    @Test("Header problems: empty data, MAC flag without the MAC")
    func shortHeader() throws {
        #expect(throws: BTHomeDecodingError.tooShort(field: "device info", offset: 0, bytes: [])) {
            try BTHomeDecoder.decode([UInt8]())
        }
        let data = hex("42 b2 18 8d")
        #expect(throws: BTHomeDecodingError.tooShort(field: "MAC address", offset: 1, bytes: data)) {
            try BTHomeDecoder.decode(data)
        }
    }

    @Test("Length-prefixed text and raw objects, and the firmware version object (synthetic)")
    func variableLengthObjects() throws {
        let packet = try BTHomeDecoder.decodeStrictly(hex("40 53 02 48 69 54 03 01 02 03 f1 00 01 02 04"))
        #expect(packet.objects.map(\.id) == [0x53, 0x54, 0xF1])
        #expect(packet.objects[0].text == "Hi")
        #expect(packet.objects[0].value == nil)
        #expect(packet.objects[1].valueBytes == [1, 2, 3])
        #expect(packet.objects[2].valueBytes == [0x00, 0x01, 0x02, 0x04])
    }

    @Test("The object table: widths and factors of the ids the adapter relies on")
    func objectTable() throws {
        let mass = try #require(BTHomeObjectTable.definition(for: 0x06))
        #expect(mass.byteCount == 2 && mass.format == .unsigned && mass.factor == 0.01)
        let pressure = try #require(BTHomeObjectTable.definition(for: 0x04))
        #expect(pressure.byteCount == 3)
        #expect(pressure.description == "0x04 pressure uint24 ×0.01 hPa")
        let coarseTemperature = try #require(BTHomeObjectTable.definition(for: 0x58))
        #expect(coarseTemperature.format == .signed && coarseTemperature.factor == 0.35)
        #expect(BTHomeObjectTable.definition(for: 0x2D)?.name == "window")
        #expect(BTHomeObjectTable.definition(for: 0x30) == nil)
        #expect(BTHomeObjectTable.definition(for: 0xFE) == nil)
        // 0x00-0x2F except 0x30-0x39, 0x3A, 0x3C-0x64, 0xF0-0xF2: 48 + 1 + 41 + 3.
        #expect(BTHomeObjectTable.definitions.count == 93)
        let known = Set(BTHomeObjectTable.definitions.keys)
        let expected = Set(Array(0x00...0x2F) + [0x3A] + Array(0x3C...0x64) + [0xF0, 0xF1, 0xF2]).map { UInt8($0) }
        #expect(known == Set(expected))
    }
}

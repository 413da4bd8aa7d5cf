import AdapterKit
import ExternalAdapterProtocol
import Foundation
import HealthModel
import Logging
import TestSupport
import Testing
import Transport

@Suite("ExternalInputCodec")
struct ExternalInputCodecTests {
    @Test("An advertisement line carries the decoded fields and the raw data, and reads back unchanged")
    func advertisementRoundTrip() throws {
        let advertisement = try makeAdvertisement(address: miScaleAddress, name: "MI_SCALE",
                                                  serviceData: [(0x181D, hex(miScaleStableFrame))],
                                                  manufacturer: (0x0157, [0x01, 0x02]),
                                                  time: Date(timeIntervalSince1970: 1_618_150_000.25))
        let line = ExternalInputCodec.encodeAdvertisementLine(advertisement)
        #expect(line == """
            {"advertisement":{"time":"2021-04-11T14:06:40.25Z","address":"50:FB:19:1B:B5:DC","addressType":"public",\
            "legacyType":0,"rssi":-60,"name":"MI_SCALE","serviceData":{"181d":"229e43e507040b101301"},\
            "manufacturerData":{"0157":"0102"},"data":"\(CompactHex.encode(advertisement.data))"}}
            """)
        #expect(try ExternalInputCodec.decode(line) == .advertisement(advertisement))
    }

    @Test("A hand-written line in the issue's form (no raw data) is rebuilt from its fields")
    func advertisementWithoutData() throws {
        let line = """
            {"advertisement":{"time":"2026-01-01T08:00:00Z","address":"C8:47:8C:00:11:22","rssi":-71,"name":"MI SCALE2",\
            "serviceData":{"181d":"229e43e507040b101301"},"manufacturerData":{"0157":"aabb"},"unknownFutureField":1}}
            """
        guard case .advertisement(let advertisement) = try ExternalInputCodec.decode(line) else {
            Issue.record("not an advertisement")
            return
        }
        #expect(advertisement.address == BLEAddress("C8:47:8C:00:11:22"))
        #expect(advertisement.time == ISO8601DateTime.date(from: "2026-01-01T08:00:00Z"))
        #expect(advertisement.rssi == -71)
        #expect(advertisement.localName == "MI SCALE2")
        #expect(advertisement.serviceData == [BLEUUID(0x181D): hex(miScaleStableFrame)])
        #expect(advertisement.manufacturerData == [0x0157: [0xAA, 0xBB]])
        #expect(advertisement.malformedDataOffset == nil)
    }

    @Test("Device lines for BLE and USB read back, with the time zone")
    func deviceLines() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let traits = BLEDeviceTraits(address: try #require(BLEAddress(miScaleAddress)), name: "MI \"SCALE\"",
                                     serviceUUIDs: [BLEUUID(0x181D), BLEUUID(0x180F)], companyIDs: [0x0157])
        let bleLine = ExternalInputCodec.encodeDeviceLine(.ble(traits), timeZone: zone)
        #expect(bleLine == """
            {"device":{"transport":"ble","address":"50:FB:19:1B:B5:DC","name":"MI \\"SCALE\\"","serviceUUIDs":["180F","181D"],\
            "companyIDs":[343]},"timeZone":"Europe/Berlin","protocol":1}
            """)
        #expect(try ExternalInputCodec.decode(bleLine) == .device(.ble(traits), timeZone: zone))

        let usb = USBDeviceDescription(vendorID: 0x0FCF, productID: 0x1008, bus: 1, address: 5,
                                       manufacturer: "Dynastream", product: "ANTUSB-m Stick", serialNumber: "123")
        let usbLine = ExternalInputCodec.encodeDeviceLine(.usb(usb), timeZone: zone)
        #expect(usbLine.hasPrefix("{\"device\":{\"transport\":\"usb\",\"vendorID\":\"0fcf\",\"productID\":\"1008\",\"bus\":1,\"address\":5,"))
        #expect(try ExternalInputCodec.decode(usbLine) == .device(.usb(usb), timeZone: zone))
        #expect(ExternalDevice.usb(usb).localIdentifier == "usb:001:005")
    }

    @Test("Bad lines are errors that name the field", arguments: [
        ("{\"hello\":1}", ExternalInputError.unknownMessage(keys: ["hello"])),
        (#"{"advertisement":{"time":"yesterday","address":"50:FB:19:1B:B5:DC"}}"#,
         .invalidField(field: "advertisement.time", text: "yesterday")),
        (#"{"advertisement":{"time":"2026-01-01T08:00:00Z","address":"50:FB:19:1B:B5:DC","data":"0x"}}"#,
         .invalidField(field: "advertisement.data", text: "0x")),
        (#"{"device":{"transport":"serial"}}"#, .invalidField(field: "device.transport", text: "serial")),
        (#"{"device":{"transport":"ble","address":"50:FB:19:1B:B5:DC"},"timeZone":"Mars/Olympus"}"#,
         .invalidField(field: "timeZone", text: "Mars/Olympus")),
    ])
    func badLines(_ line: String, _ expected: ExternalInputError) {
        #expect(throws: expected) { try ExternalInputCodec.decode(line) }
    }

    @Test("Output lines: log and done")
    func outputLines() {
        #expect(ExternalOutputLine.log(.warning, "short \"frame\"") == #"{"log":{"level":"warning","message":"short \"frame\""}}"#)
        #expect(ExternalOutputLine.done == #"{"done":true}"#)
        #expect(Logger.Level.debug < .error)
    }
}

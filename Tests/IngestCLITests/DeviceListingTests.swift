import AdapterKit
import HealthModel
@testable import IngestCLI
import Testing
import Transport

struct DeviceListingTests {
    static let stick = USBDeviceDescription(
        vendorID: 0x0FCF, productID: 0x1008, bus: 1, address: 2, manufacturer: "Dynastream Innovations",
        product: "ANT USBStick2", serialNumber: "123")
    static let hub = USBDeviceDescription(vendorID: 0x1D6B, productID: 0x0002, bus: 1, address: 1, deviceClass: 0x09)
    static let thermometer = USBDeviceDescription(vendorID: 0x0C45, productID: 0x7401, bus: 3, address: 7)

    static func adapter(_ id: String, _ matches: [DeviceMatch]) -> AdapterDescriptor {
        AdapterDescriptor(id: id, name: id, version: "1", summary: "", matches: matches, produces: [])
    }

    static let adapters = [
        adapter("gatt-weight-scale", [.ble(BLEMatch(serviceUUIDs: [BLEUUID(0x181D)]))]),
        adapter("ant-plus", [.usb(USBMatch(vendorID: 0x0FCF, productID: 0x1008)), .usb(USBMatch(vendorID: 0x0FCF, productID: 0x1009))]),
        adapter("any-dynastream", [.usb(USBMatch(vendorID: 0x0FCF))]),
    ]

    @Test func eachDeviceGetsTheFirstMatchingAdapterOrTheReasonForNone() {
        let rows = DeviceListing.rows(devices: [Self.thermometer, Self.stick, Self.hub], adapters: Self.adapters)
        #expect(rows.map(\.cells) == [
            ["1d6b:0002", "001/001", "-", "-", "-", "a USB hub (no adapter needed)"],
            ["0fcf:1008", "001/002", "Dynastream Innovations", "ANT USBStick2", "123", "ant-plus (also any-dynastream)"],
            ["0c45:7401", "003/007", "-", "-", "-", "no adapter matches 0c45:7401"],
        ])
    }

    @Test func aVendorWideMatchTakesOtherProducts() {
        var other = Self.stick
        other.productID = 0x100C
        #expect(DeviceListing.rows(devices: [other], adapters: Self.adapters).first?.adapterID == "any-dynastream")
    }

    @Test func jsonRowsNameEveryField() {
        let rows = DeviceListing.rows(devices: [Self.stick, Self.thermometer], adapters: Self.adapters)
        #expect(rows.map(\.json) == [
            #"{"usb":"0fcf:1008","vendorID":"0fcf","productID":"1008","bus":1,"address":2,"manufacturer":"Dynastream Innovations","product":"ANT USBStick2","serial":"123","class":0,"adapter":"ant-plus","alsoMatching":["any-dynastream"],"reason":null}"#,
            #"{"usb":"0c45:7401","vendorID":"0c45","productID":"7401","bus":3,"address":7,"manufacturer":null,"product":null,"serial":null,"class":0,"adapter":null,"alsoMatching":[],"reason":"no adapter matches 0c45:7401"}"#,
        ])
    }
}

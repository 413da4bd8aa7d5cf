import AdapterKit
import ExternalAdapters
@testable import IngestCLI
import IngestRuntime
import Testing
import Transport

struct DeviceListingTests {
    static let stick = USBDeviceDescription(
        vendorID: 0x0FCF, productID: 0x1008, bus: 1, address: 2, manufacturer: "Dynastream Innovations",
        product: "ANT USBStick2", serialNumber: "123")
    static let hub = USBDeviceDescription(vendorID: 0x1D6B, productID: 0x0002, bus: 1, address: 1, deviceClass: 0x09)
    static let thermometer = USBDeviceDescription(vendorID: 0x0C45, productID: 0x7401, bus: 3, address: 7)
    static let unknown = USBDeviceDescription(vendorID: 0x1234, productID: 0x5678, bus: 4, address: 9)

    /// An external adapter as the catalogue would hold it (its process is only started by a session, which the
    /// listing never makes).
    static func plugin(_ id: String, _ matches: [DeviceMatch]) -> ExternalPlugin {
        let descriptor = AdapterDescriptor(id: id, name: id, version: "1", summary: "", matches: matches, produces: [])
        return ExternalPlugin(id: id, path: "/plugins/ingestd-adapter-\(id)",
                              adapter: ExternalAdapter(descriptor: descriptor, executable: "/plugins/ingestd-adapter-\(id)"),
                              brokenReason: nil)
    }

    /// The runner `ingestd devices` builds: the catalogue's external USB adapters, then the built-in ones.
    static func runner(_ plugins: [ExternalPlugin] = []) -> USBSessionRunner {
        USBSessionRunner(adapters: AdapterCatalogue.usbAdapters(ExternalAdapterCatalogue(plugins: plugins)),
                         options: [:], timeZone: .gmt)
    }

    @Test func eachDeviceGetsTheBuiltInAdapterOrTheReasonForNone() {
        let rows = DeviceListing.rows(devices: [Self.thermometer, Self.unknown, Self.stick, Self.hub], runner: Self.runner())
        #expect(rows.map(\.cells) == [
            ["1d6b:0002", "001/001", "-", "-", "-", "a USB hub (no adapter needed)"],
            ["0fcf:1008", "001/002", "Dynastream Innovations", "ANT USBStick2", "123", "ant-plus"],
            ["0c45:7401", "003/007", "-", "-", "-", "temper"],
            ["1234:5678", "004/009", "-", "-", "-", "no adapter matches 1234:5678"],
        ])
    }

    /// The daemon's order: an external adapter matching a device takes it before the built-in one.
    @Test func anExternalAdapterTakesADeviceBeforeTheBuiltInOne() {
        let runner = Self.runner([Self.plugin("py-ant", [.usb(USBMatch(vendorID: 0x0FCF, productID: 0x1008))])])
        let rows = DeviceListing.rows(devices: [Self.stick, Self.thermometer], runner: runner)
        #expect(rows.map(\.adapterID) == ["py-ant", "temper"])
    }

    @Test func aVendorWideExternalMatchTakesOtherProductsAndAUSBOnlyOneNoBluetooth() {
        var other = Self.stick
        other.productID = 0x100C
        let runner = Self.runner([
            Self.plugin("ble-only", [.ble(BLEMatch(serviceUUIDs: [BLEUUID(0x181D)]))]),
            Self.plugin("any-dynastream", [.usb(USBMatch(vendorID: 0x0FCF))]),
        ])
        #expect(DeviceListing.rows(devices: [other, Self.unknown], runner: runner).map(\.adapterID) == ["any-dynastream", nil])
    }

    /// Overlapping claims: the device goes to the first adapter, and the row names the others.
    @Test func aDeviceClaimedTwiceNamesTheOtherAdapter() {
        let runner = Self.runner([Self.plugin("any-dynastream", [.usb(USBMatch(vendorID: 0x0FCF))])])
        let rows = DeviceListing.rows(devices: [Self.stick], runner: runner)
        #expect(rows.map(\.adapterID) == ["any-dynastream"])
        #expect(rows.map(\.alsoMatching) == [["ant-plus"]])
        #expect(rows.map(\.cells).first?.last == "any-dynastream (also ant-plus)")
    }

    @Test func jsonRowsNameEveryField() {
        let rows = DeviceListing.rows(devices: [Self.stick, Self.unknown], runner: Self.runner())
        #expect(rows.map(\.json) == [
            #"{"usb":"0fcf:1008","vendorID":"0fcf","productID":"1008","bus":1,"address":2,"manufacturer":"Dynastream Innovations","product":"ANT USBStick2","serial":"123","class":0,"adapter":"ant-plus","alsoMatching":[],"reason":null}"#,
            #"{"usb":"1234:5678","vendorID":"1234","productID":"5678","bus":4,"address":9,"manufacturer":null,"product":null,"serial":null,"class":0,"adapter":null,"alsoMatching":[],"reason":"no adapter matches 1234:5678"}"#,
        ])
    }
}

import BuiltinAdapters
import Foundation
import Testing
import Transport

/// `ingestd devices` (the built binary) under umockdev: the real libusb enumerates the fake stick.
@Suite(.offCooperativePool, .enabled(if: UMockdev.isInstalled, UMockdev.skipReason))
struct DevicesCommandTests {
    static let stick = USBDeviceDescription(vendorID: 0x0FCF, productID: 0x1008, bus: 1, address: 2)

    /// What the registry says about the stick: the first USB adapter matching it, or the reason.
    static var expectedAdapterJSON: String {
        if let adapter = BuiltinAdapters.usb.first(where: { $0.descriptor.matches(stick) }) {
            return #""adapter":"\#(adapter.descriptor.id)","alsoMatching":[],"reason":null"#
        }
        return #""adapter":null,"alsoMatching":[],"reason":"no adapter matches 0fcf:1008""#
    }

    @Test func listsTheFakeStickWithItsStringsAndAdapter() throws {
        let ingestd = try #require(UMockdev.builtExecutable("ingestd"), "ingestd was not built next to the tests")
        let result = try UMockdev.run(ingestd, device: "fake_ant.umockdev", capture: "fake_ant.pcapng", ["devices", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.lines == [
            #"{"usb":"1d6b:0002","vendorID":"1d6b","productID":"0002","bus":1,"address":1,"manufacturer":null,"product":null,"serial":null,"class":9,"adapter":null,"alsoMatching":[],"reason":"a USB hub (no adapter needed)"}"#,
            #"{"usb":"0fcf:1008","vendorID":"0fcf","productID":"1008","bus":1,"address":2,"manufacturer":"Dynastream Innovations","product":"ANT USBStick2","serial":"123","class":0,"#
                + Self.expectedAdapterJSON + "}",
        ])
    }

    @Test func theTableShowsBusAndAddressLikeLsusb() throws {
        let ingestd = try #require(UMockdev.builtExecutable("ingestd"), "ingestd was not built next to the tests")
        let result = try UMockdev.run(ingestd, device: "fake_omron.umockdev", capture: "fake_omron.pcapng", ["devices"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.lines
        #expect(lines.first?.hasPrefix("VID:PID    BUS/ADDR  MANUFACTURER") == true)
        let omron = try #require(lines.first { $0.hasPrefix("0590:0028") })
        #expect(omron.contains("001/002") && omron.contains("Omron") && omron.contains("HJ-720IT"))
    }
}

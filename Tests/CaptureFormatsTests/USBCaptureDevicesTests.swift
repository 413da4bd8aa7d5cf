import CaptureFormats
import TestSupport
import Testing
import Transport

struct USBCaptureDevicesTests {
    /// The keyboard capture holds the kernel's enumeration of every device on bus 1.
    @Test func findsEveryDeviceAndTheIDsOfItsDeviceDescriptor() throws {
        let devices = USBCaptureDevices(events: try USBFixture.events(USBFixture.keyboard)).devices
        #expect(devices.map(\.description) == [
            "bus 1 device 0 04d9:1603 (2 events)",
            "bus 1 device 1 1d6b:0002 (101 events)",
            "bus 1 device 3 04f2:b67d (10 events)",
            "bus 1 device 4 06cb:00bd (8 events)",
            "bus 1 device 11 04d9:1603 (56 events)",
        ])
    }

    @Test func describesTheKeyboardFromItsCapturedDescriptorsAndStrings() throws {
        let devices = USBCaptureDevices(events: try USBFixture.events(USBFixture.keyboard))
        let keyboard = try #require(devices.device(bus: 1, address: 11))
        #expect(keyboard.configurationDescriptor?.count == 59)
        // String 1 is a single space (the manufacturer), string 2 the product.
        #expect(keyboard.strings == [1: " ", 2: "USB Keyboard"])
        #expect(keyboard.endpointsInTraffic == [0x81: .interrupt, 0x82: .interrupt])
        let description = try #require(keyboard.description())
        #expect(description == USBDeviceDescription(
            vendorID: 0x04D9, productID: 0x1603, bus: 1, address: 11, manufacturer: nil, product: "USB Keyboard",
            serialNumber: nil, deviceClass: 0,
            interfaces: [
                USBInterfaceDescription(number: 0, interfaceClass: 3, interfaceSubclass: 1, interfaceProtocol: 1,
                                        endpoints: [USBEndpointDescription(address: 0x81, transferType: .interrupt, maxPacketSize: 8)]),
                USBInterfaceDescription(number: 1, interfaceClass: 3, interfaceSubclass: 0, interfaceProtocol: 0,
                                        endpoints: [USBEndpointDescription(address: 0x82, transferType: .interrupt, maxPacketSize: 8)]),
            ]))
    }

    @Test func selectingByIDsPrefersTheAddressedDeviceOverAddressZero() throws {
        let devices = USBCaptureDevices(events: try USBFixture.events(USBFixture.keyboard))
        #expect(try devices.select(vendorID: 0x04D9, productID: 0x1603).address == 11)
        #expect(try devices.select(vendorID: 0x1D6B, productID: 0x0002).address == 1)
    }

    @Test func idsNotInTheCaptureNameWhatIsThere() throws {
        let devices = USBCaptureDevices(events: try USBFixture.events(USBFixture.keyboard))
        #expect(throws: USBCaptureSelectionError.noMatch(wanted: "0fcf:1008", devices: devices.devices.map(\.description))) {
            try devices.select(vendorID: 0x0FCF, productID: 0x1008)
        }
        let message = USBCaptureSelectionError.noMatch(wanted: "0fcf:1008", devices: ["bus 1 device 2 (6 events)"]).description
        #expect(message == "no USB device 0fcf:1008 in the capture (it has: bus 1 device 2 (6 events))")
    }

    /// The fake ANT capture has no GET_DESCRIPTOR exchange: the ids come from `--usb VID:PID`
    /// and the endpoints from the traffic.
    @Test func aCaptureWithoutDescriptorsTakesForcedIDsAndEndpointsFromTraffic() throws {
        let devices = USBCaptureDevices(events: try USBFixture.events(USBFixture.antPcapng))
        let stick = try #require(devices.devices.first)
        #expect(devices.devices.count == 1)
        #expect(stick.vendorID == nil && stick.description() == nil)
        #expect(try devices.select(vendorID: 0x0FCF, productID: 0x1008) == stick)
        #expect(stick.description(vendorID: 0x0FCF, productID: 0x1008) == USBDeviceDescription(
            vendorID: 0x0FCF, productID: 0x1008, bus: 1, address: 2,
            interfaces: [USBInterfaceDescription(number: 0, interfaceClass: 0xFF, endpoints: [
                USBEndpointDescription(address: 0x01, transferType: .bulk, maxPacketSize: 0),
                USBEndpointDescription(address: 0x81, transferType: .bulk, maxPacketSize: 0),
            ])]))
    }

    @Test func descriptorParsingSkipsClassDescriptorsAndStopsAtATruncatedOne() {
        // The HJ-720IT configuration: interface, HID descriptor (0x21), two interrupt endpoints.
        let configuration: [UInt8] = hex("""
            09 02 29 00 01 01 00 80 32  09 04 00 00 02 03 00 00 00  09 21 10 01 00 01 22 1f 00
            07 05 81 03 08 00 0a  07 05 02 03 08 00 0a
            """)
        let interfaces = USBDescriptorParser.interfaces(ofConfiguration: configuration)
        #expect(interfaces == [USBInterfaceDescription(number: 0, interfaceClass: 3, endpoints: [
            USBEndpointDescription(address: 0x81, transferType: .interrupt, maxPacketSize: 8),
            USBEndpointDescription(address: 0x02, transferType: .interrupt, maxPacketSize: 8),
        ])])
        // Cut inside the second endpoint descriptor: the first endpoint stays.
        let cut = USBDescriptorParser.interfaces(ofConfiguration: Array(configuration.prefix(37)))
        #expect(cut.first?.endpoints.count == 1)
        #expect(USBDescriptorParser.interfaces(ofConfiguration: [0x09, 0x04]) == [])
        #expect(USBDescriptorParser.string([0x1A, 0x03] + Array("USB Keyboard".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })) == "USB Keyboard")
        #expect(USBDescriptorParser.string([0x04, 0x02, 0x20, 0x00]) == nil)
        #expect(USBDescriptorParser.deviceIDs(hex("120110010000000890052800010201030001"))! == (0x0590, 0x0028, 0))
    }
}

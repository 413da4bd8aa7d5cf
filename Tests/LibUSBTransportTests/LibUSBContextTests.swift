import Foundation
import Testing

/// LibUSBContext through the real libusb under umockdev: enumeration and hotplug.
@Suite(.offCooperativePool, .enabled(if: UMockdev.isInstalled, UMockdev.skipReason))
struct LibUSBContextTests {
    @Test func enumerateListsTheFakeStickWithEndpointsFromItsDescriptors() throws {
        let result = try UMockdev.runProbe(device: "fake_ant.umockdev", capture: "fake_ant.pcapng", ["list"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.lines == [
            #"DEVICE 0fcf:1008 bus 1 address 2 class 0x00 manufacturer="Dynastream Innovations" product="ANT USBStick2" serial="123""#,
            "  INTERFACE 0 alt 0 class 0xff",
            "    ENDPOINT 0x81 bulk in max 64",
            "    ENDPOINT 0x01 bulk out max 64",
            "DEVICE 1d6b:0002 bus 1 address 1 class 0x09",
            "  INTERFACE 0 alt 0 class 0x09",
            "    ENDPOINT 0x81 interrupt in max 4",
        ])
    }

    @Test func enumerateDescribesTheHIDDeviceFromItsConfigurationDescriptor() throws {
        let result = try UMockdev.runProbe(device: "fake_omron.umockdev", capture: "fake_omron.pcapng", ["list"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.lines.prefix(4) == [
            #"DEVICE 0590:0028 bus 1 address 2 class 0x00 manufacturer="Omron" product="HJ-720IT" serial="123""#,
            "  INTERFACE 0 alt 0 class 0x03",
            "    ENDPOINT 0x81 interrupt in max 8",
            "    ENDPOINT 0x02 interrupt out max 8",
        ])
    }

    /// The device arrives at runtime (testbed add + uevent), is opened and does the ANT start-up,
    /// is pulled out while a receive loop is reading (the loop ends, no hang), arrives again and
    /// is claimed, and leaves again: every event comes through the AsyncStream.
    @Test func hotplugArrivalAndDepartureWhileASessionIsReading() throws {
        let result = try UMockdev.wrapProbe([
            "hotplug", "--device", UMockdev.fixture("fake_ant.umockdev"), "--pcap", UMockdev.fixture("fake_ant.pcapng"),
            "--syspath", UMockdev.deviceSyspath, "0fcf:1008",
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.lines
        #expect(lines.first == "HOTPLUG supported")
        #expect(lines.contains("PRESENT 0"))
        let arrived = "EVENT arrived 0fcf:1008 bus 001 address 002 Dynastream Innovations ANT USBStick2"
        let left = "EVENT left bus 001 address 002"
        #expect(lines.filter { $0 == arrived }.count == 2)
        #expect(lines.filter { $0 == left }.count == 2)
        #expect(lines.contains("WROTE 0x01 bulk 5 a4014a00ef"))
        #expect(lines.contains("READ 0x81 bulk a4016f00ca"))
        #expect(lines.filter { $0.hasPrefix("SESSION ENDED") }.count == 2)
        #expect(!lines.contains { $0.hasPrefix("ERROR") && !$0.contains("timeout") })
        #expect(lines.last == "DONE")
        // Order within each round: arrival, then the departure, then the end of the session.
        let firstArrival = try #require(lines.firstIndex(of: arrived))
        let firstDeparture = try #require(lines.firstIndex(of: left))
        let firstEnd = try #require(lines.firstIndex { $0.hasPrefix("SESSION ENDED") })
        #expect(firstArrival < firstDeparture && firstDeparture < firstEnd)
        #expect(lines.firstIndex(of: "CLOSED round 1").map { $0 < (lines.lastIndex(of: arrived) ?? 0) } == true)
    }
}

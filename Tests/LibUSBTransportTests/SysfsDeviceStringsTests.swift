import Foundation
import Testing
@testable import LibUSBTransport

struct SysfsDeviceStringsTests {
    @Test func namesFollowTheKernelsBusPortScheme() {
        #expect(SysfsDeviceStrings.deviceName(bus: 1, portNumbers: []) == "usb1")
        #expect(SysfsDeviceStrings.deviceName(bus: 1, portNumbers: [1]) == "1-1")
        #expect(SysfsDeviceStrings.deviceName(bus: 3, portNumbers: [2, 4, 1]) == "3-2.4.1")
    }

    @Test func readsTrimmedAttributesAndLeavesMissingOnesNil() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sysfs-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let device = root.appendingPathComponent("2-1.3")
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        try "Dynastream Innovations\n".write(to: device.appendingPathComponent("manufacturer"), atomically: true, encoding: .utf8)
        try "ANT USBStick2\n".write(to: device.appendingPathComponent("product"), atomically: true, encoding: .utf8)
        let strings = try #require(SysfsDeviceStrings.read(bus: 2, portNumbers: [1, 3], root: root.path))
        #expect(strings == SysfsDeviceStrings(manufacturer: "Dynastream Innovations", product: "ANT USBStick2", serialNumber: nil))
        #expect(SysfsDeviceStrings.read(bus: 2, portNumbers: [2], root: root.path) == nil)
    }
}

import Foundation
import Testing
@testable import LibUSBTransport
import Transport

/// LibUSBDeviceHandle through the real libusb under `umockdev-run --pcap`: the transfers must be
/// the ones in the capture (type, endpoint, length, bytes) or umockdev does not answer them.
@Suite(.offCooperativePool, .enabled(if: UMockdev.isInstalled, UMockdev.skipReason))
struct LibUSBDeviceHandleUMockdevTests {
    static let antSteps = ["claim", "write:a4014a00ef", "read:64", "read:64"]

    @Test(arguments: ["fake_ant.pcapng", "fake_ant.pcap"])
    func antResetAndStartupGoThroughBulkTransfers(capture: String) throws {
        let result = try UMockdev.runProbe(device: "fake_ant.umockdev", capture: capture,
                                           ["session", "0fcf:1008"] + Self.antSteps)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.lines == [
            "OPENED 0fcf:1008 bus 001 address 002 Dynastream Innovations ANT USBStick2",
            "ENDPOINTS interface 0 in 0x81 bulk out 0x01 bulk",
            "CLAIMED 0",
            "WROTE 0x01 bulk 5 a4014a00ef",
            "READ 0x81 bulk a4016f00ca",
            "READ 0x81 bulk a4094e0004001a2b051c2148a6",
            "CLOSED",
        ])
    }

    /// When the capture has nothing more, the next read times out (the device went quiet): the
    /// session sees `.timeout`, not a hang and not a crash, and closes normally.
    @Test func readsAfterTheCaptureEndsTimeOut() throws {
        let result = try UMockdev.runProbe(device: "fake_ant.umockdev", capture: "fake_ant.pcapng",
                                           ["session", "0fcf:1008"] + Self.antSteps + ["read:64"])
        #expect(result.status == 0)
        #expect(result.lines.suffix(2) == ["ERROR timeout: timeout on endpoint 0x81", "CLOSED"])
    }

    /// A write the capture does not expect is not answered: `.timeout`, and the session goes on.
    @Test func aWriteTheDeviceDoesNotExpectTimesOut() throws {
        let result = try UMockdev.runProbe(device: "fake_ant.umockdev", capture: "fake_ant.pcapng",
                                           ["session", "0fcf:1008", "claim", "write:a4014a00ee"])
        #expect(result.status == 0)
        #expect(result.lines.suffix(2) == ["ERROR timeout: timeout on endpoint 0x01", "CLOSED"])
    }

    /// HID: SET_REPORT as a control transfer, then interrupt OUT and IN with
    /// libusb_interrupt_transfer (umockdev, like the descriptors, says interrupt: a bulk call
    /// would not be answered).
    @Test func omronSessionUsesControlAndInterruptTransfers() throws {
        let result = try UMockdev.runProbe(device: "fake_omron.umockdev", capture: "fake_omron.pcapng", [
            "session", "0590:0028", "claim", "control:2109000300000200:0102", "write:0556455230300000", "read:8",
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.lines == [
            "OPENED 0590:0028 bus 001 address 002 Omron HJ-720IT",
            "ENDPOINTS interface 0 in 0x81 interrupt out 0x02 interrupt",
            "CLAIMED 0 (HID: kernel driver detached if bound)",
            "CONTROL 2109000300000200 -> ok",
            "WROTE 0x02 interrupt 8 0556455230300000",
            "READ 0x81 interrupt 074f4b00484a2d37",
            "CLOSED",
        ])
    }

    @Test func openingADeviceThatIsNotThereSaysWhich() throws {
        let result = try UMockdev.runProbe(device: "fake_ant.umockdev", capture: "fake_ant.pcapng",
                                           ["session", "0fcf:1009", "claim"])
        #expect(result.status == 1)
        #expect(result.lines == ["FAILED no device 0fcf:1009"])
    }
}

/// The parts of LibUSBDeviceHandle that need no device.
struct LibUSBDeviceHandleTests {
    @Test func timeoutsBecomeWholeMillisecondsAndNeverZero() {
        #expect(LibUSBDeviceHandle.milliseconds(.milliseconds(1500)) == 1500)
        #expect(LibUSBDeviceHandle.milliseconds(.seconds(2)) == 2000)
        #expect(LibUSBDeviceHandle.milliseconds(.microseconds(2500)) == 2)
        // libusb's 0 means "forever": the shortest timeout is 1 ms.
        #expect(LibUSBDeviceHandle.milliseconds(.zero) == 1)
        #expect(LibUSBDeviceHandle.milliseconds(.microseconds(10)) == 1)
        #expect(LibUSBDeviceHandle.milliseconds(.seconds(-3)) == 1)
        #expect(LibUSBDeviceHandle.milliseconds(.seconds(Int64.max)) == UInt32.max)
    }

    @Test func libusbErrorCodesMapToUSBErrors() {
        #expect(USBError(libusbCode: -4, what: "x") == .noDevice)
        #expect(USBError(libusbCode: -7, endpoint: 0x81, what: "x") == .timeout(endpoint: 0x81))
        #expect(USBError(libusbCode: -9, endpoint: 0x02, what: "x") == .stall(endpoint: 0x02))
        #expect(USBError(libusbCode: -8, endpoint: 0x81, what: "x") == .overflow(endpoint: 0x81))
        #expect(USBError(libusbCode: -3, what: "opening 0fcf:1008") == .accessDenied("opening 0fcf:1008"))
        #expect(USBError(libusbCode: -6, what: "claiming") == .busy("claiming"))
        #expect(USBError(libusbCode: -5, what: "it") == .notFound("it"))
        #expect(USBError(libusbCode: -1, what: "reading") == .io("reading"))
        #expect(USBError(libusbCode: -99, what: "x") == .other(code: -99, name: "LIBUSB_ERROR_OTHER"))
        #expect(USBError(libusbCode: -12, what: "x") == .other(code: -12, name: "LIBUSB_ERROR_NOT_SUPPORTED"))
    }
}

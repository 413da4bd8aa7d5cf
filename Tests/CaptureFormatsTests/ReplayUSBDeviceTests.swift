import CaptureFormats
import TestSupport
import Testing
import Transport

/// The way an adapter session talks to a device, written against `USBDeviceHandle` only: the
/// ANT stick start-up and a receive loop that runs until the device has nothing more.
func antStartupSession(_ handle: any USBDeviceHandle) throws -> (messages: [[UInt8]], end: USBError) {
    let interface = try #require(handle.device.interfaces.first)
    let output = try #require(interface.endpoints.first { !$0.isInput })
    let input = try #require(interface.endpoints.first { $0.isInput })
    try handle.claimInterface(interface.number, detachKernelDriver: interface.isHID)
    defer { handle.close() }
    _ = try handle.write(endpoint: output.address, data: [0xA4, 0x01, 0x4A, 0x00, 0xEF], timeout: .seconds(1))
    var messages: [[UInt8]] = []
    while true {
        switch Result(catching: { () throws(USBError) in try handle.read(endpoint: input.address, length: 64, timeout: .seconds(1)) }) {
        case .success(let message): messages.append(message)
        case .failure(let error): return (messages, error)
        }
    }
}

struct ReplayUSBDeviceTests {
    @Test func anANTSessionRunsAgainstTheCaptureUntilItEnds() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.antPcapng, vendorID: 0x0FCF, productID: 0x1008)
        #expect(replay.device.idString == "0fcf:1008")
        let (messages, end) = try antStartupSession(replay)
        #expect(messages == [USBMonTests.startup, USBMonTests.broadcast])
        #expect(end == .replayExhausted("no more IN transfers from endpoint 0x81"))
        // The capture's clock: the completion time of the broadcast.
        #expect(replay.timestamp == 1_700_000_000_250_000)
    }

    @Test func aWriteThatDiffersFromTheCaptureNamesBothByteStrings() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.antPcapng, vendorID: 0x0FCF, productID: 0x1008)
        #expect(throws: USBError.io("replay mismatch on endpoint 0x01: the session wrote a4 01 4a 00 ee where the capture has a4 01 4a 00 ef (record at byte 48)")) {
            try replay.write(endpoint: 0x01, data: [0xA4, 0x01, 0x4A, 0x00, 0xEE], timeout: .seconds(1))
        }
        // Nothing was consumed: the right bytes still match.
        #expect(try replay.write(endpoint: 0x01, data: USBMonTests.reset, timeout: .seconds(1)) == 5)
        #expect(throws: USBError.replayExhausted("no more OUT transfers to endpoint 0x01 (the session wrote a4 01 4a 00 ef)")) {
            try replay.write(endpoint: 0x01, data: USBMonTests.reset, timeout: .seconds(1))
        }
    }

    @Test func withoutIDsACaptureLackingDescriptorsAsksForThem() throws {
        #expect(throws: USBReplayOpenError.needsIDs(devices: ["bus 1 device 2 (6 events)"])) {
            try ReplayUSBDevice.open(path: USBFixture.antPcapng)
        }
        #expect(USBReplayOpenError.needsIDs(devices: []).description
            == "the capture does not identify one USB device by its descriptors (it has: no USB traffic); give --usb VID:PID")
    }

    @Test func omronControlAndInterruptTransfersReplay() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.omron, vendorID: 0x0590, productID: 0x0028)
        try replay.claimInterface(0, detachKernelDriver: true)
        #expect(throws: USBError.io("replay mismatch: control 21 09 00 03 00 00 02 00 with data 01 03 where the capture has 01 02 (record at byte 48)")) {
            try replay.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0300, index: 0, data: [0x01, 0x03],
                                       length: 0, timeout: .seconds(1))
        }
        #expect(try replay.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0300, index: 0, data: [0x01, 0x02],
                                           length: 0, timeout: .seconds(1)) == [])
        #expect(try replay.write(endpoint: 0x02, data: hex("0556455230300000"), timeout: .seconds(1)) == 8)
        #expect(try replay.read(endpoint: 0x81, length: 8, timeout: .seconds(1)) == hex("074f4b00484a2d37"))
        #expect(replay.isFinished)
    }

    /// The keyboard as its HID driver saw it: the kernel's standard requests in the capture are
    /// passed over, class requests match by setup bytes, a stalled request stalls again, and the
    /// interrupt reports come back in order until the capture ends with a read still pending.
    @Test func aRealKeyboardCaptureReplaysItsDriversConversation() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.keyboard, vendorID: 0x04D9, productID: 0x1603)
        #expect(replay.bus == 1 && replay.address == 11)
        #expect(replay.device.product == "USB Keyboard")
        // SET_IDLE on interface 0 (class request): the standard requests before it are skipped.
        #expect(try replay.controlTransfer(requestType: 0x21, request: 0x0A, value: 0, index: 0, data: [], length: 0,
                                           timeout: .seconds(1)) == [])
        let reportDescriptor = try replay.controlTransfer(requestType: 0x81, request: 0x06, value: 0x2200, index: 0,
                                                          data: [], length: 62, timeout: .seconds(1))
        #expect(reportDescriptor.count == 62)
        #expect(reportDescriptor.prefix(4) == [0x05, 0x01, 0x09, 0x06])
        // SET_REPORT (LEDs off) then SET_IDLE on interface 1, which the keyboard stalled.
        _ = try replay.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0200, index: 0, data: [0x00], length: 0,
                                       timeout: .seconds(1))
        #expect(throws: USBError.stall(endpoint: 0x00)) {
            try replay.controlTransfer(requestType: 0x21, request: 0x0A, value: 0, index: 1, data: [], length: 0,
                                       timeout: .seconds(1))
        }
        var reports: [[UInt8]] = []
        var end: USBError?
        while end == nil {
            switch Result(catching: { () throws(USBError) in try replay.read(endpoint: 0x81, length: 8, timeout: .seconds(1)) }) {
            case .success(let report): reports.append(report)
            case .failure(let error): end = error
            }
        }
        #expect(reports.count == 14)
        #expect(reports.enumerated().allSatisfy { index, report in
            report == (index % 2 == 0 ? [0, 0, 0x0C, 0, 0, 0, 0, 0] : [0, 0, 0, 0, 0, 0, 0, 0])
        })
        #expect(end == .replayExhausted("the capture ends before the transfer on endpoint 0x81 submitted at byte 18720 completed"))
    }

    @Test func controlRequestsOutOfOrderAreAMismatch() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.keyboard, vendorID: 0x04D9, productID: 0x1603)
        #expect(throws: USBError.io("replay mismatch: the session sent control 21 09 00 02 00 00 01 00 but the capture's next control transfer is 21 0a 00 00 00 00 00 00 (record at byte 14496)")) {
            try replay.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0200, index: 0, data: [0x00], length: 0,
                                       timeout: .seconds(1))
        }
    }

    @Test func aReadShorterThanTheCapturedAnswerOverflows() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.antPcapng, vendorID: 0x0FCF, productID: 0x1008)
        _ = try replay.write(endpoint: 0x01, data: USBMonTests.reset, timeout: .seconds(1))
        #expect(throws: USBError.overflow(endpoint: 0x81)) { try replay.read(endpoint: 0x81, length: 4, timeout: .seconds(1)) }
    }

    @Test func aClosedReplayIsGone() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.antPcapng, vendorID: 0x0FCF, productID: 0x1008)
        replay.close()
        #expect(throws: USBError.noDevice) { try replay.write(endpoint: 0x01, data: USBMonTests.reset, timeout: .seconds(1)) }
    }

    @Test func claimingAnInterfaceTheDescriptorsLackIsNotFound() throws {
        let replay = try ReplayUSBDevice.open(path: USBFixture.omron, vendorID: 0x0590, productID: 0x0028)
        #expect(throws: USBError.self) { try replay.claimInterface(3, detachKernelDriver: false) }
    }

    @Test func urbStatusesMapToUSBErrors() {
        #expect(USBError(urbStatus: 0, endpoint: 0x81) == nil)
        #expect(USBError(urbStatus: -32, endpoint: 0x81) == .stall(endpoint: 0x81))
        #expect(USBError(urbStatus: -19, endpoint: 0x81) == .noDevice)
        #expect(USBError(urbStatus: -108, endpoint: 0x81) == .noDevice)
        #expect(USBError(urbStatus: -2, endpoint: 0x81) == .timeout(endpoint: 0x81))
        #expect(USBError(urbStatus: -75, endpoint: 0x02) == .overflow(endpoint: 0x02))
        #expect(USBError(urbStatus: -71, endpoint: 0x02) == .io("URB status -71 on endpoint 0x02"))
    }
}

import CaptureFormats
import Testing
import Transport

/// Builds a device's usbmon events step by step (bus 1, device 2, a microsecond apart).
struct USBConversation {
    private(set) var events: [USBMonEvent] = []
    private var urb: UInt64 = 0x100
    private var time: Int64 = 1_700_000_000_000_000

    private mutating func add(_ type: USBMonEventType, _ transferType: USBTransferType, _ endpoint: UInt8, urb: UInt64,
                              setup: USBSetupPacket? = nil, status: Int32 = 0, length: Int, data: [UInt8] = []) {
        time += 1
        events.append(USBMonEvent(urbID: urb, type: type, transferType: transferType, endpoint: endpoint, device: 2, bus: 1,
                                  setup: setup, timestamp: time, status: status, length: length, data: data,
                                  fileOffset: events.count))
    }

    /// A bulk OUT transfer, submitted and completed.
    mutating func out(_ data: [UInt8], endpoint: UInt8 = 0x01) {
        urb += 1
        add(.submit, .bulk, endpoint, urb: urb, status: -115, length: data.count, data: data)
        add(.complete, .bulk, endpoint, urb: urb, length: data.count)
    }

    /// Submits a bulk IN read and returns its URB tag for `complete`.
    mutating func submitIn(endpoint: UInt8 = 0x81, length: Int = 64) -> UInt64 {
        urb += 1
        add(.submit, .bulk, endpoint, urb: urb, status: -115, length: length)
        return urb
    }

    mutating func complete(_ tag: UInt64, _ data: [UInt8], endpoint: UInt8 = 0x81, status: Int32 = 0) {
        add(.complete, .bulk, endpoint, urb: tag, status: status, length: data.count, data: data)
    }

    /// A bulk IN read submitted and at once answered.
    mutating func input(_ data: [UInt8], endpoint: UInt8 = 0x81, status: Int32 = 0) {
        let tag = submitIn(endpoint: endpoint)
        complete(tag, data, endpoint: endpoint, status: status)
    }

    mutating func control(_ setup: USBSetupPacket, out data: [UInt8] = [], answer: [UInt8] = []) {
        urb += 1
        let endpoint: UInt8 = setup.isDeviceToHost ? 0x80 : 0x00
        add(.submit, .control, endpoint, urb: urb, setup: setup, status: -115, length: Int(setup.length), data: data)
        add(.complete, .control, endpoint, urb: urb, length: answer.count, data: answer)
    }

    func replay() -> ReplayUSBDevice {
        ReplayUSBDevice(events: events, bus: 1, address: 2, device: USBDeviceDescription(vendorID: 0x0FCF, productID: 0x1008),
                        mode: .tolerant)
    }
}

/// The tolerant replay used by `ingestd decode` and `replay` for captures other software made.
struct ReplayUSBDeviceTolerantTests {
    static func read(_ replay: ReplayUSBDevice, length: Int = 64) throws(USBError) -> [UInt8] {
        try replay.read(endpoint: 0x81, length: length, timeout: .seconds(1))
    }

    static func write(_ replay: ReplayUSBDevice, _ data: [UInt8]) throws(USBError) -> Int {
        try replay.write(endpoint: 0x01, data: data, timeout: .seconds(1))
    }

    /// request A / answer a, an extra exchange X / x of the capturing program, request B / answer b.
    static var withAnExtraExchange: USBConversation {
        var conversation = USBConversation()
        conversation.out([0xA0])
        conversation.input([0x0A])
        conversation.out([0xEE])
        conversation.input([0x0E])
        conversation.out([0xB0])
        conversation.input([0x0B])
        return conversation
    }

    @Test func aWriteSeeksForwardPastTheExchangesTheSessionDoesNotMake() throws {
        let replay = Self.withAnExtraExchange.replay()
        #expect(try Self.write(replay, [0xA0]) == 1)
        #expect(try Self.read(replay) == [0x0A])
        #expect(try Self.write(replay, [0xB0]) == 1)
        #expect(try Self.read(replay) == [0x0B])
        #expect(replay.writesNotInCapture == 0)
        #expect(replay.isFinished)
        #expect(replay.timestamp == Self.withAnExtraExchange.events.last?.timestamp)
        #expect(throws: USBError.replayExhausted("no more IN transfers from endpoint 0x81")) { try Self.read(replay) }
    }

    @Test func aWriteTheCaptureLacksIsAcceptedWithoutMovingAndCounted() throws {
        let replay = Self.withAnExtraExchange.replay()
        #expect(try Self.write(replay, [0xC0, 0xC1]) == 2)
        #expect(replay.writesNotInCapture == 1)
        #expect(replay.timestamp == nil)
        // Reads go on from where the position was: the start.
        #expect(try Self.read(replay) == [0x0A])
        #expect(try Self.read(replay) == [0x0E])
        // A write the capture has only behind the position is not gone back to.
        #expect(try Self.write(replay, [0xA0]) == 1)
        #expect(replay.writesNotInCapture == 2)
        #expect(try Self.read(replay) == [0x0B])
    }

    @Test func readsTakeTheNextAnswerAfterThePositionWhenTheReadWasSubmittedEarlier() throws {
        // The capturing program kept a read pending while it wrote; an answer that came before the write is the
        // answer to something the session did not ask.
        var conversation = USBConversation()
        conversation.input([0x01])
        let pending = conversation.submitIn()
        conversation.out([0x4A])
        conversation.complete(pending, [0x6F])
        conversation.input([0x02])
        let replay = conversation.replay()
        #expect(try Self.write(replay, [0x4A]) == 1)
        #expect(try Self.read(replay) == [0x6F])
        #expect(try Self.read(replay) == [0x02])
    }

    @Test func anAnswerLongerThanTheReadIsServedOverSeveralReads() throws {
        var conversation = USBConversation()
        conversation.input(Array(0..<100))
        conversation.input([0xFF])
        let replay = conversation.replay()
        #expect(try Self.read(replay) == Array(0..<64))
        #expect(try Self.read(replay, length: 30) == Array(64..<94))
        #expect(try Self.read(replay) == Array(94..<100))
        #expect(try Self.read(replay) == [0xFF])
    }

    @Test func capturedStatusesAndTheCaptureEndAreReported() throws {
        var conversation = USBConversation()
        conversation.input([], status: -2)
        conversation.input([0x01])
        conversation.input([], status: -19)
        _ = conversation.submitIn()
        let replay = conversation.replay()
        #expect(throws: USBError.timeout(endpoint: 0x81)) { try Self.read(replay) }
        #expect(try Self.read(replay) == [0x01])
        #expect(throws: USBError.noDevice) { try Self.read(replay) }
        #expect(throws: USBError.replayExhausted("the capture ends before the transfer on endpoint 0x81 submitted at byte 6 completed")) {
            try Self.read(replay)
        }
        replay.close()
        #expect(throws: USBError.noDevice) { try Self.write(replay, [0x00]) }
    }

    @Test func controlTransfersAreFoundByTheirSetupBytes() throws {
        let getDevice = USBSetupPacket(requestType: 0x80, request: 0x06, value: 0x0100, index: 0, length: 18)
        let setReport = USBSetupPacket(requestType: 0x21, request: 0x09, value: 0x0300, index: 0, length: 2)
        var conversation = USBConversation()
        conversation.control(getDevice, answer: Array(repeating: 0x12, count: 18))
        conversation.control(setReport, out: [0x40, 0xAC])        // a mode the session does not select
        conversation.input([0x00])
        conversation.control(setReport, out: [0x01, 0x02])
        conversation.input([0x4F, 0x4B])
        let replay = conversation.replay()
        #expect(try replay.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0300, index: 0, data: [0x01, 0x02],
                                           length: 2, timeout: .seconds(1)) == [])
        #expect(try Self.read(replay) == [0x4F, 0x4B])
        // A descriptor asked for later is answered from the capture's earlier answer, with the length asked.
        #expect(try replay.controlTransfer(requestType: 0x80, request: 0x06, value: 0x0100, index: 0, data: [], length: 8,
                                           timeout: .seconds(1)) == Array(repeating: 0x12, count: 8))
        // An OUT request the capture lacks is accepted and counted; an IN request it never answered ends the replay.
        #expect(try replay.controlTransfer(requestType: 0x21, request: 0x0A, value: 0, index: 0, data: [], length: 0,
                                           timeout: .seconds(1)) == [])
        #expect(replay.writesNotInCapture == 1)
        #expect(throws: USBError.replayExhausted("no control transfer 81 06 00 22 00 00 40 00 in the capture")) {
            try replay.controlTransfer(requestType: 0x81, request: 0x06, value: 0x2200, index: 0, data: [], length: 64,
                                       timeout: .seconds(1))
        }
    }

    @Test func theHostsWritesAreShownToTheSession() throws {
        let replay = Self.withAnExtraExchange.replay()
        #expect(replay.capturedHostWrites(endpoint: 0x01) == [[0xA0], [0xEE], [0xB0]])
        #expect(replay.capturedHostWrites(endpoint: 0x02).isEmpty)
        // Through the transport-level questions every handle answers: a playback, with the host's writes.
        let handle: any USBDeviceHandle = replay
        #expect(handle.priorHostWrites(endpoint: 0x01) == [[0xA0], [0xEE], [0xB0]])
        #expect(handle.priorHostWrites(endpoint: 0x02) == [])
        #expect(!handle.answersWrites)
    }

    /// The strict mode stays the default and still refuses the same conversation.
    @Test func strictReplayStillRefusesAnExtraExchange() throws {
        let events = Self.withAnExtraExchange.events
        let strict = ReplayUSBDevice(events: events, bus: 1, address: 2, device: USBDeviceDescription(vendorID: 1, productID: 2))
        #expect(strict.mode == .strict)
        _ = try Self.write(strict, [0xA0])
        _ = try Self.read(strict)
        #expect(throws: USBError.self) { try Self.write(strict, [0xB0]) }
    }
}

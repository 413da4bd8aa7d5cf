import CaptureFormats
import Foundation
import Synchronization
import TestSupport
import Testing
import Transport

/// A device that answers from a script and says what it was asked; errors come from the script too.
final class ScriptedHandle: USBDeviceHandle {
    let device: USBDeviceDescription
    var reads: [Result<[UInt8], USBError>]
    var controlAnswers: [Result<[UInt8], USBError>]
    var writes: [[UInt8]] = []
    var closed = false

    init(device: USBDeviceDescription, reads: [Result<[UInt8], USBError>] = [],
         controlAnswers: [Result<[UInt8], USBError>] = []) {
        self.device = device
        self.reads = reads
        self.controlAnswers = controlAnswers
    }

    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {}
    func releaseInterface(_ number: UInt8) throws(USBError) {}

    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        guard !controlAnswers.isEmpty else { throw .replayExhausted("script") }
        return try controlAnswers.removeFirst().get()
    }

    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        writes.append(data)
        return data.count
    }

    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        guard !reads.isEmpty else { throw .replayExhausted("script") }
        return try reads.removeFirst().get()
    }

    func close() { closed = true }
}

@Suite struct USBMonRecorderTests {
    static let temper = USBDeviceDescription(
        vendorID: 0x413D, productID: 0x2107, bus: 3, address: 7, manufacturer: "RDing", product: "TEMPer2V1.4",
        deviceClass: 0, interfaces: [
            USBInterfaceDescription(number: 0, interfaceClass: 0x03, interfaceSubclass: 1, interfaceProtocol: 1,
                                    endpoints: [USBEndpointDescription(address: 0x81, transferType: .interrupt, maxPacketSize: 8)]),
            USBInterfaceDescription(number: 1, interfaceClass: 0x03, endpoints: [
                USBEndpointDescription(address: 0x82, transferType: .interrupt, maxPacketSize: 8),
                USBEndpointDescription(address: 0x02, transferType: .interrupt, maxPacketSize: 8),
            ]),
        ])

    /// A clock that ticks 1 ms per reading.
    static func ticking() -> @Sendable () -> Int64 {
        let now = Atomic<Int64>(1_700_000_000_000_000)
        return { now.add(1_000, ordering: .relaxed).newValue }
    }

    @Test func descriptorsDescribeTheDeviceAgain() throws {
        let device = USBDescriptorBuilder.device(Self.temper)
        #expect(device == hex("12 01 00 02 00 00 00 40 3d 41 07 21 00 01 01 02 00 01"))
        #expect(USBDescriptorParser.deviceIDs(device)?.vendorID == 0x413D)
        let configuration = USBDescriptorBuilder.configuration(Self.temper)
        #expect(Array(configuration.prefix(9)) == hex("09 02 30 00 02 01 00 80 32"))
        #expect(USBDescriptorParser.interfaces(ofConfiguration: configuration) == Self.temper.interfaces)
        #expect(USBDescriptorParser.string(USBDescriptorBuilder.string("TEMPer2V1.4")) == "TEMPer2V1.4")
    }

    @Test func aRecordingStartsWithTheEnumerationAReplayLearnsTheDeviceFrom() throws {
        let writer = PcapNGWriter(linkType: LinkType.usbLinuxMMapped)
        let recorder = USBMonRecorder(writer: writer, bus: 3, address: 7, clock: Self.ticking())
        recorder.recordEnumeration(of: Self.temper)
        #expect(recorder.transfers == 5)  // device, configuration, languages, manufacturer, product
        let events = try recordedEvents(recorder)
        let captured = USBCaptureDevices(events: events)
        #expect(captured.devices.count == 1)
        #expect(captured.devices.first?.description() == Self.temper)
        #expect(events.allSatisfy { $0.bus == 3 && $0.device == 7 && $0.transferType == .control })
    }

    @Test func transfersBecomeSubmitAndCompletePairsAndReplayAsTheyWent() throws {
        let inner = ScriptedHandle(
            device: Self.temper,
            reads: [.success(hex("80 80 0b 92 4e 20 00 00")), .failure(.timeout(endpoint: 0x82)),
                    .failure(.stall(endpoint: 0x82)), .failure(.noDevice)],
            controlAnswers: [.success([])])
        let (recording, recorder) = makeRecording(inner)
        try recording.claimInterface(1, detachKernelDriver: true)
        _ = try recording.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0200, index: 1,
                                          data: hex("01 80 33 01 00 00 00 00"), length: 0, timeout: .seconds(1))
        #expect(try recording.write(endpoint: 0x02, data: hex("01 80 33 01"), timeout: .seconds(1)) == 4)
        #expect(try recording.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) == hex("80 80 0b 92 4e 20 00 00"))
        #expect(throws: USBError.timeout(endpoint: 0x82)) { try recording.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
        #expect(throws: USBError.stall(endpoint: 0x82)) { try recording.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
        #expect(throws: USBError.noDevice) { try recording.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
        #expect(throws: USBError.replayExhausted("script")) { try recording.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
        recording.close()
        #expect(inner.closed)

        // After the enumeration's five GET_DESCRIPTOR exchanges:
        let events = Array(try recordedEvents(recorder).dropFirst(10))
        let lines = events.map { event in
            "\(event.type) \(event.transferType) \(String(format: "%02x", event.endpoint)) \(event.status) \(event.length) "
                + event.data.map { String(format: "%02x", $0) }.joined()
        }
        #expect(lines == [
            "S control 00 -115 8 0180330100000000", "C control 00 0 8 ",
            "S interrupt 02 -115 4 01803301", "C interrupt 02 0 4 ",
            "S interrupt 82 -115 8 ", "C interrupt 82 0 8 80800b924e200000",
            "S interrupt 82 -115 8 ", "C interrupt 82 -2 0 ",
            "S interrupt 82 -115 8 ", "C interrupt 82 -32 0 ",
            "S interrupt 82 -115 8 ", "E interrupt 82 -19 0 ",
            "S interrupt 82 -115 8 ",
        ])
        #expect(events.first?.setup == USBSetupPacket(requestType: 0x21, request: 0x09, value: 0x0200, index: 1, length: 8))

        // The recording replays as the device behaved, found by its recorded descriptors.
        let replay = try ReplayUSBDevice.replaying(try recordedEvents(recorder))
        #expect(replay.device.idString == "413d:2107")
        #expect(replay.device.product == "TEMPer2V1.4")
        try replay.claimInterface(1, detachKernelDriver: true)
        #expect(try replay.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0200, index: 1,
                                           data: hex("01 80 33 01 00 00 00 00"), length: 0, timeout: .seconds(1)) == [])
        #expect(try replay.write(endpoint: 0x02, data: hex("01 80 33 01"), timeout: .seconds(1)) == 4)
        #expect(try replay.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) == hex("80 80 0b 92 4e 20 00 00"))
        #expect(throws: USBError.timeout(endpoint: 0x82)) { try replay.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
        #expect(throws: USBError.stall(endpoint: 0x82)) { try replay.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
        #expect(throws: USBError.noDevice) { try replay.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
        #expect(throws: USBError.self) { try replay.read(endpoint: 0x82, length: 8, timeout: .seconds(1)) }
    }

    /// The ANT start-up of the fake ANT capture, recorded while it replays, replays again to the same messages.
    @Test func aReplayedSessionRecordedReplaysTheSame() throws {
        let original = try ReplayUSBDevice.open(path: USBFixture.antPcapng, vendorID: 0x0FCF, productID: 0x1008)
        let (recording, recorder) = makeRecording(original)
        let first = try antStartupSession(recording)
        let again = try ReplayUSBDevice.replaying(try recordedEvents(recorder))
        #expect(again.device.idString == "0fcf:1008")
        let second = try antStartupSession(again)
        #expect(first.messages == [USBMonTests.startup, USBMonTests.broadcast])
        #expect(second.messages == first.messages)
        #expect(second.end == .replayExhausted("the capture ends before the transfer on endpoint 0x81 submitted at byte 1092 completed"))
    }

    /// Recording a playback keeps it a playback for the session: the wrapped handle's prior host writes and
    /// `answersWrites` come through the wrapper.
    @Test func aRecordedPlaybackStillShowsItsHostWritesAndAnswersNoWrites() throws {
        let original = try ReplayUSBDevice.open(path: USBFixture.antPcapng, vendorID: 0x0FCF, productID: 0x1008)
        let (recording, _) = makeRecording(original)
        #expect(!recording.answersWrites)
        #expect(recording.priorHostWrites(endpoint: 0x01) == original.capturedHostWrites(endpoint: 0x01))
        #expect(recording.priorHostWrites(endpoint: 0x01)?.isEmpty == false)
    }

    /// Every event of the real captures, turned back into a frame, reads back as the same event.
    @Test func framesOfRealCapturesReadBackUnchanged() throws {
        for path in [USBFixture.antPcapng, USBFixture.omron, USBFixture.keyboard] {
            let events = try USBFixture.events(path)
            let writer = PcapNGWriter(linkType: LinkType.usbLinuxMMapped)
            for event in events { try writer.write(timestamp: event.timestamp, packet: event.frame()) }
            var again = try USBMonReader(bytes: writer.bytes).readAll()
            var originals = events
            for index in again.indices { again[index].fileOffset = 0 }
            for index in originals.indices { originals[index].fileOffset = 0 }
            #expect(again == originals, "\(path)")
        }
    }

    @Test func eventsAfterCloseAreDroppedAndTheFileStaysWhole() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("usbmon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("out.pcapng").path
        let recorder = USBMonRecorder(writer: try PcapNGWriter(path: path, linkType: LinkType.usbLinuxMMapped),
                                      bus: 1, address: 2)
        recorder.recordEnumeration(of: Self.temper)
        try recorder.close()
        recorder.recordEnumeration(of: Self.temper)  // after close: dropped
        let events = try USBMonReader(path: path).readAll()
        #expect(events.count == 10)
    }

    private func recordedEvents(_ recorder: USBMonRecorder) throws -> [USBMonEvent] {
        try USBMonReader(bytes: recorder.bytes).readAll()
    }

    private func makeRecording(_ inner: any USBDeviceHandle) -> (RecordingUSBDeviceHandle, USBMonRecorder) {
        let recorder = USBMonRecorder(writer: PcapNGWriter(linkType: LinkType.usbLinuxMMapped), bus: 3, address: 7,
                                      clock: Self.ticking())
        recorder.recordEnumeration(of: inner.device)
        return (RecordingUSBDeviceHandle(wrapping: inner, recorder: recorder), recorder)
    }
}

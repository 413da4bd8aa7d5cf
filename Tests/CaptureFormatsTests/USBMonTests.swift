import CaptureFormats
import Foundation
import Testing

/// usbmon captures in `Captures/usb/` (see its ORIGIN); every count below was also computed by
/// `Captures/usb/usbmon_check.py`, a separate minimal reading of the same bytes.
enum USBFixture {
    static func path(_ name: String) -> String { Fixture.path("usb/" + name) }
    static let antPcapng = path("fake_ant.pcapng")
    static let antPcap = path("fake_ant.pcap")
    static let omron = path("fake_omron.pcapng")
    static let keyboard = path("usbkbd.pcap.pcapng")

    static func events(_ path: String) throws -> [USBMonEvent] { try USBMonReader(path: path).readAll() }
}

/// Builds usbmon frames and pcap files byte by byte, in either byte order and header layout.
struct USBMonFrameBuilder {
    var bigEndian = false

    func integer(_ value: UInt64, width: Int) -> [UInt8] {
        let little = (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        return bigEndian ? little.reversed() : little
    }

    /// One frame: the 48 common header bytes, the 16 memory-mapped ones if asked, then `data`.
    func frame(urb: UInt64 = 0x1234, type: Character, transferType: UInt8, endpoint: UInt8, device: UInt8 = 2,
               bus: UInt16 = 1, setup: [UInt8]? = nil, seconds: Int64 = 1_700_000_000, microseconds: Int32 = 5,
               status: Int32 = 0, length: UInt32, data: [UInt8], capturedLength: UInt32? = nil,
               layout: USBMonHeaderLayout = .memoryMapped, interval: Int32 = 0, descriptors: UInt32 = 0,
               isoDescriptors: [UInt8] = []) -> [UInt8] {
        var bytes = integer(urb, width: 8)
        bytes += [type.asciiValue ?? 0, transferType, endpoint, device]
        bytes += integer(UInt64(bus), width: 2)
        bytes += [setup == nil ? 0x2D : 0x00, data.isEmpty ? 0x3C : 0x00]
        bytes += integer(UInt64(bitPattern: seconds), width: 8)
        bytes += integer(UInt64(UInt32(bitPattern: microseconds)), width: 4)
        bytes += integer(UInt64(UInt32(bitPattern: status)), width: 4)
        bytes += integer(UInt64(length), width: 4)
        bytes += integer(UInt64(capturedLength ?? UInt32(data.count)), width: 4)
        bytes += setup ?? [UInt8](repeating: 0, count: 8)
        if layout == .memoryMapped {
            bytes += integer(UInt64(UInt32(bitPattern: interval)), width: 4) + integer(0, width: 4)
            bytes += integer(0, width: 4) + integer(UInt64(descriptors), width: 4)
        }
        return bytes + isoDescriptors + data
    }

    /// A classic pcap file of these frames.
    func pcap(linkType: Int, frames: [[UInt8]], originalLengths: [Int]? = nil) -> [UInt8] {
        var bytes = integer(0xA1B2_C3D4, width: 4) + integer(2, width: 2) + integer(4, width: 2)
        bytes += integer(0, width: 4) + integer(0, width: 4) + integer(65_535, width: 4) + integer(UInt64(linkType), width: 4)
        for (index, frame) in frames.enumerated() {
            let original = originalLengths?[index] ?? frame.count
            bytes += integer(1_700_000_000, width: 4) + integer(0, width: 4)
            bytes += integer(UInt64(frame.count), width: 4) + integer(UInt64(original), width: 4) + frame
        }
        return bytes
    }
}

struct USBMonTests {
    static let reset: [UInt8] = [0xA4, 0x01, 0x4A, 0x00, 0xEF]
    static let startup: [UInt8] = [0xA4, 0x01, 0x6F, 0x00, 0xCA]
    static let broadcast: [UInt8] = [0xA4, 0x09, 0x4E, 0x00, 0x04, 0x00, 0x1A, 0x2B, 0x05, 0x1C, 0x21, 0x48, 0xA6]

    /// The fake ANT capture's events without their file offsets: (urb, type, endpoint, length, data, time).
    static func summary(_ events: [USBMonEvent]) -> [String] {
        events.map { event in
            let data = event.data.map { String(format: "%02x", $0) }.joined()
            return String(format: "%llx ", event.urbID) + "\(event.type) \(event.transferType) "
                + String(format: "%02x", event.endpoint) + " \(event.bus)/\(event.device) \(event.status) \(event.length) [\(data)] \(event.timestamp)"
        }
    }

    static let antSummary = [
        "ffff0001 S bulk 01 1/2 0 5 [a4014a00ef] 1700000000000000",
        "ffff0001 C bulk 01 1/2 0 5 [] 1700000000001000",
        "ffff0002 S bulk 81 1/2 0 64 [] 1700000000002000",
        "ffff0002 C bulk 81 1/2 0 5 [a4016f00ca] 1700000000010000",
        "ffff0003 S bulk 81 1/2 0 64 [] 1700000000011000",
        "ffff0003 C bulk 81 1/2 0 13 [a4094e0004001a2b051c2148a6] 1700000000250000",
    ]

    @Test func readsTheANTCaptureAsSubmitAndCompleteEvents() throws {
        let events = try USBFixture.events(USBFixture.antPcapng)
        #expect(Self.summary(events) == Self.antSummary)
        #expect(events.map(\.fileOffset) == [48, 152, 248, 344, 448, 544])
        #expect(events.allSatisfy { $0.setup == nil && $0.interval == 0 && $0.isochronousDescriptorCount == 0 })
        #expect(events.map(\.dataFlag) == [0, 0x3E, 0x3C, 0, 0x3C, 0])
        #expect(events.allSatisfy { !$0.isDataTruncated })
    }

    @Test func classicPcapGivesTheSameEvents() throws {
        let events = try USBFixture.events(USBFixture.antPcap)
        #expect(Self.summary(events) == Self.antSummary)
        #expect(events.map(\.fileOffset) == [24, 109, 189, 269, 354, 434])
    }

    /// LINKTYPE 189: the same frames with the 48-byte header (generated here from the 220 file).
    @Test func legacyLinkType189GivesTheSameEventsWithoutTheMappedFields() throws {
        let reader = try CaptureFile.open(path: USBFixture.antPcapng)
        var frames: [[UInt8]] = []
        while let record = try reader.next() {
            #expect(record.content == .linkLayerFrame(linkType: 220))
            frames.append(Array(record.bytes.prefix(48)) + Array(record.bytes.dropFirst(64)))
        }
        let capture = USBMonFrameBuilder().pcap(linkType: 189, frames: frames)
        let events = try USBMonReader(bytes: capture).readAll()
        #expect(Self.summary(events) == Self.antSummary)
        #expect(events.allSatisfy { $0.interval == nil && $0.transferFlags == nil && $0.isochronousDescriptorCount == nil })
    }

    /// A capture from a big-endian host: file header and usbmon header both big-endian.
    @Test func bigEndianCapturesReadTheHeaderInTheFilesByteOrder() throws {
        let builder = USBMonFrameBuilder(bigEndian: true)
        let frame = builder.frame(urb: 0x0102_0304_0506_0708, type: "C", transferType: 3, endpoint: 0x81, device: 7,
                                  bus: 0x0203, seconds: 1_600_000_000, microseconds: 250_000, status: -32, length: 5,
                                  data: Self.startup, interval: 8)
        let events = try USBMonReader(bytes: builder.pcap(linkType: 220, frames: [frame])).readAll()
        let event = try #require(events.first)
        #expect(event.urbID == 0x0102_0304_0506_0708)
        #expect(event.bus == 0x0203 && event.device == 7 && event.endpoint == 0x81)
        #expect(event.timestamp == 1_600_000_000_250_000)
        #expect(event.status == -32)
        #expect(event.length == 5 && event.data == Self.startup)
        #expect(event.interval == 8)
    }

    @Test func controlSubmissionsCarryTheirSetupPacket() throws {
        let events = try USBFixture.events(USBFixture.omron)
        let setup = try #require(events.first?.setup)
        #expect(setup == USBSetupPacket(requestType: 0x21, request: 0x09, value: 0x0300, index: 0, length: 2))
        #expect(setup.bytes == [0x21, 0x09, 0x00, 0x03, 0x00, 0x00, 0x02, 0x00])
        #expect(!setup.isDeviceToHost && !setup.isStandard && setup.requestedDescriptor == nil)
        #expect(events.first?.data == [0x01, 0x02])
        #expect(events.map(\.transferType) == [.control, .control, .interrupt, .interrupt, .interrupt, .interrupt])
        #expect(events.dropFirst().allSatisfy { $0.setup == nil })
        #expect(events.last?.data == [0x07, 0x4F, 0x4B, 0x00, 0x48, 0x4A, 0x2D, 0x37])
    }

    /// A real Wireshark usbmon capture (umockdev's Holtek keyboard recording).
    @Test func readsARealKeyboardCapture() throws {
        let events = try USBFixture.events(USBFixture.keyboard)
        #expect(events.count == 177)
        #expect(events.filter { $0.type == .submit }.count == 90)
        #expect(events.filter { $0.type == .complete }.count == 87)
        var perDevice: [String: Int] = [:]
        for event in events { perDevice["\(event.bus)/\(event.device)", default: 0] += 1 }
        #expect(perDevice == ["1/0": 2, "1/1": 101, "1/3": 10, "1/4": 8, "1/11": 56])
        #expect(events.filter { $0.transferType == .control }.count == 140)
        #expect(events.filter { $0.transferType == .interrupt }.count == 37)
        var statuses: [Int32: Int] = [:]
        for event in events { statuses[event.status, default: 0] += 1 }
        #expect(statuses == [-115: 90, 0: 84, -32: 2, -2: 1])
        let first = try #require(events.first)
        #expect(first.fileOffset == 256)
        #expect(first.timestamp == 1_622_588_474_037_327)
        // A hub class GET_STATUS to port 1 of the root hub.
        #expect(first.setup?.bytes == [0xA3, 0x00, 0x00, 0x00, 0x01, 0x00, 0x04, 0x00])
        #expect(first.device == 1 && first.endpoint == 0x80 && first.length == 4)
        let keyboardReports = events.filter { $0.device == 11 && $0.transferType == .interrupt && $0.type == .complete }
        #expect(keyboardReports.count == 14)
        #expect(keyboardReports.first?.data == [0x00, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    @Test func isochronousDescriptorsBetweenHeaderAndDataAreSkipped() throws {
        let builder = USBMonFrameBuilder()
        let descriptors = [UInt8](repeating: 0xDD, count: 32)
        let frame = builder.frame(type: "C", transferType: 0, endpoint: 0x83, length: 3, data: [1, 2, 3],
                                  descriptors: 2, isoDescriptors: descriptors)
        let event = try USBMonParser.event(frame: frame[...], layout: .memoryMapped, bigEndian: false)
        #expect(event.transferType == .isochronous)
        #expect(event.isochronousDescriptorCount == 2)
        #expect(event.data == [1, 2, 3])
    }

    // MARK: - Bad input

    @Test func aRecordShorterThanItsHeaderNamesItsOffset() throws {
        let builder = USBMonFrameBuilder()
        let good = builder.frame(type: "S", transferType: 3, endpoint: 0x01, length: 5, data: Self.reset)
        let short = Array(good.prefix(40))
        let capture = builder.pcap(linkType: 220, frames: [good, short])
        let reader = try USBMonReader(bytes: capture)
        #expect(try reader.next() != nil)
        // The second record starts after the 24-byte file header and the first 16 + 69-byte record.
        #expect(throws: USBMonError.shortHeader(recordOffset: 109, length: 40, headerLength: 64)) { try reader.next() }
    }

    @Test func garbledEventAndTransferTypesAreErrorsWithOffsets() throws {
        let builder = USBMonFrameBuilder()
        var badType = builder.frame(type: "S", transferType: 3, endpoint: 0x01, length: 5, data: Self.reset)
        badType[8] = 0x51
        #expect(throws: USBMonError.unknownEventType(recordOffset: 24, byte: 0x51)) {
            try USBMonReader(bytes: builder.pcap(linkType: 220, frames: [badType])).readAll()
        }
        var badTransfer = builder.frame(type: "C", transferType: 3, endpoint: 0x81, length: 5, data: Self.startup)
        badTransfer[9] = 7
        #expect(throws: USBMonError.unknownTransferType(recordOffset: 24, byte: 7)) {
            try USBMonReader(bytes: builder.pcap(linkType: 220, frames: [badTransfer])).readAll()
        }
        let message = USBMonError.unknownEventType(recordOffset: 24, byte: 0x51).description
        #expect(message == "usbmon record at byte 24: event type 0x51 at header byte 8 is not S, C or E")
    }

    @Test func dataPromisedBeyondTheRecordIsAnErrorUnlessTheSnapLengthCutIt() throws {
        let builder = USBMonFrameBuilder()
        let frame = builder.frame(type: "C", transferType: 3, endpoint: 0x81, length: 13, data: Self.broadcast)
        let cut = Array(frame.prefix(64 + 4))
        // The record claims to be whole: the header's 13 captured bytes are missing.
        #expect(throws: USBMonError.dataBeyondRecord(recordOffset: 24, declared: 13, available: 4)) {
            try USBMonReader(bytes: builder.pcap(linkType: 220, frames: [cut])).readAll()
        }
        // The record says the capture kept only a prefix (original length 77): the data is cut.
        let events = try USBMonReader(bytes: builder.pcap(linkType: 220, frames: [cut], originalLengths: [77])).readAll()
        #expect(events.first?.data == Array(Self.broadcast.prefix(4)))
        #expect(events.first?.isDataTruncated == true)
    }

    @Test func impossibleLengthsAreRejected() throws {
        let builder = USBMonFrameBuilder()
        let frame = builder.frame(type: "C", transferType: 3, endpoint: 0x81, length: 0xFFFF_FFF0, data: [])
        #expect(throws: USBMonError.impossibleLength(recordOffset: 0, headerByte: 32, value: 0xFFFF_FFF0)) {
            try USBMonParser.event(frame: frame[...], layout: .memoryMapped, bigEndian: false)
        }
    }

    @Test func aFileCutInsideItsLastRecordKeepsTheEventsBeforeIt() throws {
        let bytes = try Fixture.bytes(USBFixture.antPcap)
        let reader = try USBMonReader(bytes: Array(bytes.dropLast(10)))
        let events = try reader.readAll()
        #expect(events.count == 5)
        #expect(reader.warnings == [.truncatedFinalRecord(offset: 434)])
    }

    @Test func aCaptureOfAnotherLinkTypeIsNotUSBMon() throws {
        let firstRecord = try #require(try CaptureFile.open(path: Fixture.airbily).next())
        let reader = try USBMonReader(path: Fixture.airbily)
        #expect(throws: USBMonError.notUSBMon(recordOffset: firstRecord.fileOffset, linkType: nil)) { try reader.next() }
    }

    @Test func aMissingFileIsACaptureError() {
        #expect(throws: USBMonError.capture(.cannotOpen(path: "/nonexistent/x.pcapng", errno: ENOENT))) {
            try USBMonReader(path: "/nonexistent/x.pcapng")
        }
    }
}

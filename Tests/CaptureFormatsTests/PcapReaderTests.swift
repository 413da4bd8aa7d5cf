import CaptureFormats
import Foundation
import TestSupport
import Testing

/// Writes integers in a chosen byte order.
struct Endian {
    let big: Bool
    func u16(_ value: UInt16) -> [UInt8] {
        let bytes = [UInt8(value & 0xFF), UInt8(value >> 8)]
        return big ? bytes.reversed() : bytes
    }
    func u32(_ value: UInt32) -> [UInt8] {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        return big ? bytes.reversed() : bytes
    }
    func u64(_ value: UInt64) -> [UInt8] {
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        return big ? bytes.reversed() : bytes
    }
}

/// A classic pcap file: 24-byte header (magic, 2.4, zone, sigfigs, snaplen, link type) and
/// 16-byte record headers (seconds, fraction, captured length, original length).
struct PcapBuilder {
    let endian: Endian
    var bytes: [UInt8]

    init(bigEndian: Bool, nanoseconds: Bool = false, linkType: UInt32, snapLength: UInt32 = 65_535) {
        endian = Endian(big: bigEndian)
        bytes = endian.u32(nanoseconds ? 0xA1B2_3C4D : 0xA1B2_C3D4) + endian.u16(2) + endian.u16(4)
            + endian.u32(0) + endian.u32(0) + endian.u32(snapLength) + endian.u32(linkType)
    }

    mutating func add(seconds: UInt32, fraction: UInt32, payload: [UInt8], capturedLength: UInt32? = nil) {
        bytes += endian.u32(seconds) + endian.u32(fraction) + endian.u32(capturedLength ?? UInt32(payload.count))
            + endian.u32(UInt32(payload.count)) + payload
    }
}

@Suite struct PcapReaderTests {
    @Test(arguments: [false, true])
    func readsH4WithDirectionHeaderInBothByteOrders(bigEndian: Bool) throws {
        var file = PcapBuilder(bigEndian: bigEndian, linkType: 201)
        // LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR: u32 BE direction (0 sent, 1 received), then H4.
        file.add(seconds: 1_617_562_152, fraction: 723_014, payload: hex("00 00 00 00  01 03 0c 00"))
        file.add(seconds: 1_617_562_153, fraction: 1, payload: hex("00 00 00 01  04 0e 04 01 03 0c 00"))
        let reader = try PcapReader(bytes: file.bytes)
        #expect(reader.isBigEndian == bigEndian)
        #expect(reader.linkType == 201)
        let records = try readAll(reader)
        #expect(records.map(\.timestamp) == [1_617_562_152_723_014, 1_617_562_153_000_001])
        #expect(records.map(\.direction) == [.sent, .received])
        #expect(records.map(\.content) == [.hci(.command), .hci(.event)])
        #expect(records.map { Array($0.bytes) } == [hex("03 0c 00"), hex("0e 04 01 03 0c 00")])
        #expect(records.map(\.originalLength) == [3, 6])
        #expect(records.map(\.fileOffset) == [24, 24 + 16 + 8])
    }

    @Test func nanosecondTimestampsBecomeMicroseconds() throws {
        var file = PcapBuilder(bigEndian: false, nanoseconds: true, linkType: 187)
        file.add(seconds: 100, fraction: 999_999_999, payload: hex("04 0e 04 01 03 0c 00"))
        let records = try readAll(PcapReader(bytes: file.bytes))
        #expect(records.map(\.timestamp) == [100_999_999])
        #expect(try PcapReader(bytes: file.bytes).hasNanosecondTimestamps)
    }

    @Test func h4WithoutHeaderInfersDirectionFromType() throws {
        var file = PcapBuilder(bigEndian: true, linkType: 187)
        file.add(seconds: 1, fraction: 0, payload: hex("01 03 0c 00"))
        file.add(seconds: 2, fraction: 0, payload: hex("04 0e 04 01 03 0c 00"))
        file.add(seconds: 3, fraction: 0, payload: hex("02 40 00 00 00"))
        let records = try readAll(PcapReader(bytes: file.bytes))
        #expect(records.map(\.direction) == [.sent, .received, nil])
        #expect(records.map(\.content) == [.hci(.command), .hci(.event), .hci(.acl)])
    }

    @Test(arguments: [189, 220])
    func usbmonFramesPassThroughRaw(linkType: Int) throws {
        var file = PcapBuilder(bigEndian: false, linkType: UInt32(linkType))
        let frame = [UInt8](0..<48) + hex("12 01 00 02")
        file.add(seconds: 5, fraction: 6, payload: frame)
        let records = try readAll(PcapReader(bytes: file.bytes))
        #expect(records.count == 1)
        #expect(records.first?.content == .linkLayerFrame(linkType: linkType))
        #expect(records.first?.direction == nil)
        #expect(records.first.map { Array($0.bytes) } == frame)
        #expect(records.first?.timestamp == 5_000_006)
    }

    @Test func shortPseudoHeaderIsSkipped() throws {
        var file = PcapBuilder(bigEndian: false, linkType: 201)
        file.add(seconds: 1, fraction: 0, payload: hex("00 00 00"))
        file.add(seconds: 2, fraction: 0, payload: hex("00 00 00 00 01 03 0c 00"))
        let reader = try PcapReader(bytes: file.bytes)
        #expect(try readAll(reader).map(\.timestamp) == [2_000_000])
        #expect(reader.skipped == [.tooShortForLinkHeader: 1])
    }

    @Test func truncatedFinalRecordIsAWarning() throws {
        var file = PcapBuilder(bigEndian: false, linkType: 187)
        file.add(seconds: 1, fraction: 0, payload: hex("01 03 0c 00"))
        file.add(seconds: 2, fraction: 0, payload: hex("04 0e 04 01 03 0c 00"))
        let reader = try PcapReader(bytes: Array(file.bytes.dropLast(3)))
        #expect(try readAll(reader).count == 1)
        #expect(reader.warnings == [.truncatedFinalRecord(offset: 24 + 16 + 4)])
    }

    @Test func headerErrors() {
        #expect(throws: CaptureError.unsupportedDatalink(1)) {
            try PcapReader(bytes: PcapBuilder(bigEndian: false, linkType: 1).bytes)
        }
        var wrongVersion = PcapBuilder(bigEndian: false, linkType: 201).bytes
        wrongVersion[4] = 3
        #expect(throws: CaptureError.badHeader(offset: 4, reason: "pcap major version 3, expected 2")) {
            try PcapReader(bytes: wrongVersion)
        }
        #expect(throws: CaptureError.badHeader(offset: 0, reason: "magic is not a pcap magic number")) {
            try PcapReader(bytes: [UInt8](repeating: 0, count: 24))
        }
    }

    @Test func impossibleLengthNamesTheRecordOffset() throws {
        var file = PcapBuilder(bigEndian: true, linkType: 187)
        file.add(seconds: 1, fraction: 0, payload: hex("01 03 0c 00"))
        file.add(seconds: 2, fraction: 0, payload: hex("01 03 0c 00"), capturedLength: 0x7FFF_FFFF)
        let reader = try PcapReader(bytes: file.bytes)
        #expect(try reader.next() != nil)
        #expect(throws: CaptureError.impossibleRecordLength(offset: 24 + 16 + 4, length: 0x7FFF_FFFF)) {
            try reader.next()
        }
    }
}

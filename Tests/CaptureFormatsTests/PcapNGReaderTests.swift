import CaptureFormats
import Foundation
import TestSupport
import Testing

/// A pcapng file: blocks of type, total length, body padded to 4 bytes, total length again.
struct PcapNGBuilder {
    var endian: Endian
    var bytes: [UInt8] = []

    init(bigEndian: Bool) { endian = Endian(big: bigEndian) }

    mutating func block(_ type: UInt32, _ body: [UInt8]) {
        let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
        let total = UInt32(12 + padded.count)
        bytes += endian.u32(type) + endian.u32(total) + padded + endian.u32(total)
    }

    /// Section Header Block: byte-order magic, version 1.0, unknown section length.
    mutating func section(bigEndian: Bool) {
        endian = Endian(big: bigEndian)
        block(0x0A0D_0D0A, endian.u32(0x1A2B_3C4D) + endian.u16(1) + endian.u16(0) + endian.u64(.max))
    }

    /// Interface Description Block with options (code, value) and the end-of-options marker.
    mutating func interface(linkType: UInt16, snapLength: UInt32 = 0, options: [(UInt16, [UInt8])] = []) {
        var body = endian.u16(linkType) + endian.u16(0) + endian.u32(snapLength)
        for (code, value) in options {
            body += endian.u16(code) + endian.u16(UInt16(value.count)) + value
            body += [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
        }
        if !options.isEmpty { body += endian.u32(0) }
        block(1, body)
    }

    mutating func enhancedPacket(interface: UInt32, timestamp: UInt64, payload: [UInt8],
                                 capturedLength: UInt32? = nil) {
        block(6, endian.u32(interface) + endian.u32(UInt32(timestamp >> 32)) + endian.u32(UInt32(timestamp & 0xFFFF_FFFF))
            + endian.u32(capturedLength ?? UInt32(payload.count)) + endian.u32(UInt32(payload.count)) + payload)
    }

    mutating func simplePacket(_ payload: [UInt8]) {
        block(3, endian.u32(UInt32(payload.count)) + payload)
    }
}

@Suite struct PcapNGReaderTests {
    @Test func readsTheAirbilyCapture() throws {
        // Android HCI log exported by Wireshark: one IDB with link type 201 (captures.md).
        let reader = try PcapNGReader(path: Fixture.airbily)
        let records = try readAll(reader)
        #expect(records.count == 810)
        #expect(reader.interfaces.map(\.linkType) == [201])
        #expect(reader.warnings.isEmpty && reader.skipped.isEmpty)
        let first = try #require(records.first)
        #expect(first.timestamp == 1_617_562_152_723_014)
        #expect(first.direction == .sent)
        #expect(first.content == .hci(.command))
        #expect(Array(first.bytes) == hex("57 fd 03 01 01 07"))
        #expect(records.last?.timestamp == 1_617_562_355_294_912)
    }

    func sample(bigEndian: Bool) -> [UInt8] {
        var file = PcapNGBuilder(bigEndian: bigEndian)
        file.section(bigEndian: bigEndian)
        file.interface(linkType: 201, options: [(2, Array("hci0".utf8))])
        file.interface(linkType: 201, options: [(9, [9]), (14, file.endian.u64(3_600))])  // ns, +1 h
        file.interface(linkType: 189, options: [(9, [0x80 | 20])])                          // 2^-20 s
        file.block(4, file.endian.u16(0) + file.endian.u16(0))                              // name resolution
        file.enhancedPacket(interface: 0, timestamp: 1_617_562_152_723_014, payload: hex("00 00 00 00 01 03 0c 00"))
        file.block(0x0000_0BAD, hex("de ad be ef"))                                          // custom block
        file.enhancedPacket(interface: 1, timestamp: 1_617_562_152_723_014_999,
                            payload: hex("00 00 00 01 04 0e 04 01 03 0c 00"))
        file.simplePacket(hex("00 00 00 01 02 40 20 01 00 aa"))
        file.enhancedPacket(interface: 2, timestamp: 7 << 20 | 1 << 19, payload: hex("01 02 03"))
        return file.bytes
    }

    @Test func bothByteOrdersGiveTheSameRecords() throws {
        var results: [[String]] = []
        for bigEndian in [false, true] {
            let reader = try PcapNGReader(bytes: sample(bigEndian: bigEndian))
            let records = try readAll(reader)
            #expect(reader.isBigEndian == bigEndian)
            #expect(reader.skipped == [.pcapngBlock(type: 4): 1, .pcapngBlock(type: 0xBAD): 1])
            #expect(records.map(\.timestamp) == [
                1_617_562_152_723_014,
                1_617_562_152_723_014 + 3_600_000_000,
                1_617_562_152_723_014 + 3_600_000_000,  // a Simple Packet Block repeats the last timestamp
                7_500_000,
            ])
            #expect(records.map(\.direction) == [.sent, .received, .received, nil])
            #expect(records.map(\.content) == [.hci(.command), .hci(.event), .hci(.acl), .linkLayerFrame(linkType: 189)])
            results.append(records.map { $0.bytes.map { String($0, radix: 16) }.joined(separator: " ") })
        }
        #expect(results[0] == results[1])
        #expect(results[0] == ["3 c 0", "e 4 1 3 c 0", "40 20 1 0 aa", "1 2 3"])
    }

    @Test func sectionsMaySwitchByteOrder() throws {
        var file = PcapNGBuilder(bigEndian: false)
        file.section(bigEndian: false)
        file.interface(linkType: 187)
        file.enhancedPacket(interface: 0, timestamp: 1, payload: hex("01 03 0c 00"))
        file.section(bigEndian: true)
        file.interface(linkType: 201)
        file.enhancedPacket(interface: 0, timestamp: 2, payload: hex("00 00 00 01 04 0e 04 01 03 0c 00"))
        let reader = try PcapNGReader(bytes: file.bytes)
        let records = try readAll(reader)
        #expect(records.map(\.timestamp) == [1, 2])
        #expect(records.map(\.content) == [.hci(.command), .hci(.event)])
        #expect(reader.isBigEndian)
        #expect(reader.interfaces.map(\.linkType) == [201])
    }

    @Test func truncatedFinalBlockIsAWarning() throws {
        let file = sample(bigEndian: true)
        let reader = try PcapNGReader(bytes: Array(file.dropLast(5)))
        #expect(try readAll(reader).count == 3)
        let lastBlockLength = 12 + 20 + 4  // EPB with 3 payload bytes padded to 4
        #expect(reader.warnings == [.truncatedFinalRecord(offset: file.count - lastBlockLength)])
    }

    @Test func structuralErrorsNameTheirOffsets() throws {
        var start = PcapNGBuilder(bigEndian: false)
        start.section(bigEndian: false)
        start.interface(linkType: 201)
        let base = start.bytes

        var badTrailer = start
        badTrailer.enhancedPacket(interface: 0, timestamp: 1, payload: hex("00 00 00 00 01 03 0c 00"))
        badTrailer.bytes[badTrailer.bytes.count - 4] ^= 0x04
        #expect(throws: CaptureError.malformedRecord(offset: base.count, reason: "block length 40 at the start but 44 at the end")) {
            try readAll(PcapNGReader(bytes: badTrailer.bytes))
        }

        var unknownInterface = start
        unknownInterface.enhancedPacket(interface: 3, timestamp: 1, payload: hex("00 00 00 00 01 03 0c 00"))
        #expect(throws: CaptureError.malformedRecord(offset: base.count, reason: "packet on interface 3, which was not described")) {
            try readAll(PcapNGReader(bytes: unknownInterface.bytes))
        }

        let oddLength = base + hex("06 00 00 00  0e 00 00 00  00 00 00 00  0e 00 00 00")
        #expect(throws: CaptureError.impossibleRecordLength(offset: base.count, length: 14)) {
            try readAll(PcapNGReader(bytes: oddLength))
        }

        var oversized = start
        oversized.enhancedPacket(interface: 0, timestamp: 1, payload: hex("00 00 00 00 01 03 0c 00"), capturedLength: 900)
        #expect(throws: CaptureError.impossibleRecordLength(offset: base.count, length: 900)) {
            try readAll(PcapNGReader(bytes: oversized.bytes))
        }

        var ethernet = PcapNGBuilder(bigEndian: true)
        ethernet.section(bigEndian: true)
        ethernet.interface(linkType: 1)
        #expect(throws: CaptureError.unsupportedDatalink(1)) { try readAll(PcapNGReader(bytes: ethernet.bytes)) }
    }

    @Test func headerErrors() {
        var badByteOrder = PcapNGBuilder(bigEndian: false)
        badByteOrder.section(bigEndian: false)
        badByteOrder.bytes[8] = 0x00
        #expect(throws: CaptureError.badHeader(offset: 8, reason: "byte-order magic is not 0x1A2B3C4D")) {
            try readAll(PcapNGReader(bytes: badByteOrder.bytes))
        }
        var notFirst = PcapNGBuilder(bigEndian: false)
        notFirst.interface(linkType: 201)
        #expect(throws: CaptureError.badHeader(offset: 0, reason: "first block is not a pcapng Section Header Block")) {
            try PcapNGReader(bytes: notFirst.bytes)
        }
        var version2 = PcapNGBuilder(bigEndian: true)
        version2.section(bigEndian: true)
        version2.bytes[13] = 2
        #expect(throws: CaptureError.badHeader(offset: 12, reason: "pcapng major version 2, expected 1")) {
            try readAll(PcapNGReader(bytes: version2.bytes))
        }
    }

    @Test func bluezMonitorLinkType() throws {
        var file = PcapNGBuilder(bigEndian: false)
        file.section(bigEndian: false)
        file.interface(linkType: 254)
        // LINKTYPE_BLUETOOTH_LINUX_MONITOR: adapter index, opcode (both u16 BE), then the packet.
        file.enhancedPacket(interface: 0, timestamp: 1, payload: hex("00 00 00 00") + [UInt8](repeating: 0, count: 16))
        file.enhancedPacket(interface: 0, timestamp: 2, payload: hex("00 02 00 03  0e 04 01 03 0c 00"))
        let reader = try PcapNGReader(bytes: file.bytes)
        let records = try readAll(reader)
        #expect(records.map(\.content) == [.hci(.event)])
        #expect(records.first?.controllerIndex == 2)
        #expect(reader.skipped == [.monitorOpcode(0): 1])
    }
}

import CaptureFormats
import Foundation
import TestSupport
import Testing

/// btsnoop record header: original length, included length, flags, drops (u32 BE), timestamp (i64 BE).
func btsnoopRecord(flags: UInt32, timestamp: Int64, payload: [UInt8], originalLength: Int? = nil) -> [UInt8] {
    func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
    let raw = UInt64(bitPattern: timestamp + BTSnoopDatalink.epochOffset)
    return be32(UInt32(originalLength ?? payload.count)) + be32(UInt32(payload.count)) + be32(flags) + be32(0)
        + (0..<8).map { UInt8(truncatingIfNeeded: raw >> (56 - 8 * $0)) } + payload
}

func btsnoopHeader(datalink: UInt32, version: UInt32 = 1) -> [UInt8] {
    Array("btsnoop\0".utf8) + [0, 0, 0, UInt8(version)]
        + (0..<4).map { UInt8(truncatingIfNeeded: datalink >> (24 - 8 * $0)) }
}

@Suite struct BTSnoopReaderTests {
    // Counts from Captures/captures.md, checked independently by Captures/count_check.py.

    @Test func readsTheDSD6Capture() throws {
        let reader = try BTSnoopReader(path: Fixture.dsd6)
        #expect(reader.datalink == 1002)
        let records = try readAll(reader)
        #expect(records.count == 571)
        #expect(reader.warnings.isEmpty)
        #expect(reader.skipped.isEmpty)
        // The first record is HCI Reset (opcode 0x0C03), host to controller.
        let first = try #require(records.first)
        #expect(first.content == .hci(.command))
        #expect(first.direction == .sent)
        #expect(Array(first.bytes) == hex("03 0c 00"))
        #expect(first.fileOffset == 16)
        #expect(first.timestamp == 1_589_754_365_562_329)
        #expect(records.last?.timestamp == 1_589_754_441_115_215)
        // The second is its Command Complete, controller to host.
        #expect(records[1].content == .hci(.event))
        #expect(records[1].direction == .received)
        #expect(Array(records[1].bytes) == hex("0e 04 01 03 0c 00"))
    }

    @Test func readsTheScanOnlyAndHidrateCaptures() throws {
        #expect(try readAll(BTSnoopReader(path: Fixture.dsd6ScanOnly)).count == 470)
        let hidrate = try BTSnoopReader(path: Fixture.hidrate)
        let records = try readAll(hidrate)
        // 201,062 bytes: read through several 64 KiB buffer refills.
        #expect(records.count == 3_046)
        #expect(hidrate.warnings.isEmpty)
        #expect(records.first?.timestamp == 1_580_483_875_547_703)
        #expect(records.last?.timestamp == 1_580_484_089_919_556)
    }

    @Test func fileAndMemoryReadsAgree() throws {
        let fromFile = try readAll(BTSnoopReader(path: Fixture.hidrate))
        let fromMemory = try readAll(BTSnoopReader(bytes: Fixture.bytes(Fixture.hidrate)))
        #expect(fromFile.count == fromMemory.count)
        #expect(fromFile.map(\.timestamp) == fromMemory.map(\.timestamp))
        #expect(fromFile.map { Array($0.bytes) } == fromMemory.map { Array($0.bytes) })
        #expect(fromFile.map(\.fileOffset) == fromMemory.map(\.fileOffset))
    }

    @Test func truncatedFinalRecordIsAWarningAndEarlierRecordsAreKept() throws {
        let first = btsnoopRecord(flags: 2, timestamp: 1_000_000, payload: hex("01 03 0c 00"))
        let second = btsnoopRecord(flags: 3, timestamp: 2_000_000, payload: hex("04 0e 04 01 03 0c 00"))
        let file = btsnoopHeader(datalink: 1002) + first + second
        for cut in [1, 10, 24, 25, second.count - 1] {
            let reader = try BTSnoopReader(bytes: Array(file.dropLast(cut)))
            let records = try readAll(reader)
            #expect(records.count == 1, "cut \(cut)")
            #expect(records.first?.timestamp == 1_000_000)
            #expect(reader.warnings == [.truncatedFinalRecord(offset: 16 + first.count)], "cut \(cut)")
            #expect(try reader.next() == nil)
        }
    }

    @Test func badMagicIsAnErrorAtOffsetZero() {
        var file = btsnoopHeader(datalink: 1002)
        file[0] = UInt8(ascii: "B")
        #expect(throws: CaptureError.badHeader(offset: 0, reason: "magic is not \"btsnoop\\0\"")) {
            try BTSnoopReader(bytes: file)
        }
        #expect {
            try BTSnoopReader(bytes: Array("btsnoop".utf8))
        } throws: { error in
            guard case CaptureError.badHeader(offset: 0, _) = error else { return false }
            return true
        }
    }

    @Test func versionAndDatalinkAreChecked() {
        #expect(throws: CaptureError.badHeader(offset: 8, reason: "btsnoop version 2, expected 1")) {
            try BTSnoopReader(bytes: btsnoopHeader(datalink: 1002, version: 2))
        }
        #expect(throws: CaptureError.unsupportedDatalink(1003)) {
            try BTSnoopReader(bytes: btsnoopHeader(datalink: 1003))
        }
    }

    @Test func impossibleLengthIsAnErrorNamingTheRecordOffset() throws {
        let good = btsnoopRecord(flags: 2, timestamp: 0, payload: hex("01 03 0c 00"))
        var huge = btsnoopRecord(flags: 2, timestamp: 0, payload: hex("01 03 0c 00"))
        // included length 0x00100000: beyond any HCI packet (and beyond the original length).
        huge.replaceSubrange(0..<8, with: hex("00 10 00 00 00 10 00 00"))
        let reader = try BTSnoopReader(bytes: btsnoopHeader(datalink: 1002) + good + huge)
        #expect(try reader.next() != nil)
        #expect(throws: CaptureError.impossibleRecordLength(offset: 16 + good.count, length: 0x0010_0000)) {
            try reader.next()
        }
        // Included length larger than the original length.
        let inverted = btsnoopRecord(flags: 2, timestamp: 0, payload: hex("01 03 0c 00"), originalLength: 3)
        let second = try BTSnoopReader(bytes: btsnoopHeader(datalink: 1002) + inverted)
        #expect(throws: CaptureError.impossibleRecordLength(offset: 16, length: 4)) { try second.next() }
    }

    @Test func unencapsulatedHCITakesTheTypeFromTheFlags() throws {
        // Datalink 1001: flags bit0 direction, bit1 command/event.
        let file = btsnoopHeader(datalink: 1001)
            + btsnoopRecord(flags: 2, timestamp: 10, payload: hex("03 0c 00"))
            + btsnoopRecord(flags: 3, timestamp: 20, payload: hex("0e 04 01 03 0c 00"))
            + btsnoopRecord(flags: 0, timestamp: 30, payload: hex("40 00 05 00 01 00 04 00 0a"))
            + btsnoopRecord(flags: 1, timestamp: 40, payload: hex("40 20 05 00 01 00 04 00 0b"))
        let records = try readAll(BTSnoopReader(bytes: file))
        #expect(records.map(\.content) == [.hci(.command), .hci(.event), .hci(.acl), .hci(.acl)])
        #expect(records.map(\.direction) == [.sent, .received, .sent, .received])
        #expect(records.map(\.timestamp) == [10, 20, 30, 40])
        #expect(Array(records[0].bytes) == hex("03 0c 00"))
    }

    @Test func bluezMonitorMapsOpcodesAndSkipsTheRest() throws {
        // Datalink 2001 as `btmon -w` writes it: flags = index << 16 | opcode.
        let file = btsnoopHeader(datalink: 2001)
            + btsnoopRecord(flags: 0x0000_0000, timestamp: 1, payload: [UInt8](repeating: 0, count: 16))  // new index
            + btsnoopRecord(flags: 0x0000_000C, timestamp: 2, payload: Array("Bluetooth monitor\0".utf8))  // note
            + btsnoopRecord(flags: 0x0001_0002, timestamp: 3, payload: hex("03 0c 00"))                     // command
            + btsnoopRecord(flags: 0x0001_0003, timestamp: 4, payload: hex("0e 04 01 03 0c 00"))             // event
            + btsnoopRecord(flags: 0x0001_0004, timestamp: 5, payload: hex("40 00 00 00"))                   // ACL TX
            + btsnoopRecord(flags: 0x0001_0005, timestamp: 6, payload: hex("40 00 00 00"))                   // ACL RX
            + btsnoopRecord(flags: 0x0000_000D, timestamp: 7, payload: hex("06 03 61 62 00"))                // logging
        let reader = try BTSnoopReader(bytes: file)
        let records = try readAll(reader)
        #expect(records.map(\.content) == [.hci(.command), .hci(.event), .hci(.acl), .hci(.acl)])
        #expect(records.map(\.direction) == [.sent, .received, .sent, .received])
        #expect(records.allSatisfy { $0.controllerIndex == 1 })
        #expect(records.map(\.timestamp) == [3, 4, 5, 6])
        #expect(reader.skipped == [.monitorOpcode(0): 1, .monitorOpcode(12): 1, .monitorOpcode(13): 1])
    }

    @Test func emptyH4RecordIsSkippedNotFatal() throws {
        let file = btsnoopHeader(datalink: 1002)
            + btsnoopRecord(flags: 2, timestamp: 1, payload: [])
            + btsnoopRecord(flags: 2, timestamp: 2, payload: hex("01 03 0c 00"))
        let reader = try BTSnoopReader(bytes: file)
        #expect(try readAll(reader).map(\.timestamp) == [2])
        #expect(reader.skipped == [.tooShortForLinkHeader: 1])
    }

    @Test func missingFileIsCannotOpen() {
        #expect(throws: CaptureError.cannotOpen(path: "/nonexistent/x.btsnoop", errno: ENOENT)) {
            try BTSnoopReader(path: "/nonexistent/x.btsnoop")
        }
    }
}

@Suite struct BTSnoopReaderTruncationTests {
    /// Every prefix of a real capture: shorter than the header is an error at offset 0; anything
    /// else yields the complete records, plus a warning exactly when the cut is mid-record.
    @Test func everyPrefixOfARealCapture() throws {
        let file = Array(try Fixture.bytes(Fixture.dsd6).prefix(3_000))
        var boundaries: [Int] = [16]
        let full = try BTSnoopReader(bytes: file)
        while let record = try full.next() { boundaries.append(record.fileOffset + 24 + record.originalLength + 1) }
        for cut in 0...file.count {
            let prefix = Array(file.prefix(cut))
            if cut < 16 {
                #expect(throws: CaptureError.self) { try BTSnoopReader(bytes: prefix) }
                continue
            }
            let reader = try BTSnoopReader(bytes: prefix)
            let records = try readAll(reader)
            let complete = boundaries.filter { $0 <= cut }.count - 1
            #expect(records.count == complete, "cut \(cut)")
            let lastEnd = boundaries[complete]
            #expect(reader.warnings == (cut == lastEnd ? [] : [.truncatedFinalRecord(offset: lastEnd)]), "cut \(cut)")
        }
    }
}

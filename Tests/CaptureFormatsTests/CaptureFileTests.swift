import CaptureFormats
import Foundation
import TestSupport
import Testing

@Suite struct CaptureFileTests {
    @Test func sniffsTheMagicBytes() {
        #expect(CaptureFormat.sniff(Array("btsnoop\0".utf8)) == .btsnoop)
        #expect(CaptureFormat.sniff(hex("0a 0d 0d 0a 1c 00 00 00")) == .pcapng)
        #expect(CaptureFormat.sniff(hex("d4 c3 b2 a1")) == .pcap)
        #expect(CaptureFormat.sniff(hex("a1 b2 c3 d4")) == .pcap)
        #expect(CaptureFormat.sniff(hex("4d 3c b2 a1")) == .pcap)
        #expect(CaptureFormat.sniff(hex("a1 b2 3c 4d")) == .pcap)
        #expect(CaptureFormat.sniff(Array("btsnoo".utf8)) == nil)
        #expect(CaptureFormat.sniff(hex("7f 45 4c 46 02 01 01 00")) == nil)
        #expect(CaptureFormat.sniff([]) == nil)
    }

    @Test func opensEachFixtureWithTheRightReader() throws {
        let btsnoop = try CaptureFile.open(path: Fixture.dsd6)
        #expect(btsnoop.format == .btsnoop)
        #expect(btsnoop is BTSnoopReader)
        #expect(try readAll(btsnoop).count == 571)
        let pcapng = try CaptureFile.open(path: Fixture.airbily)
        #expect(pcapng.format == .pcapng)
        #expect(try readAll(pcapng).count == 810)
        var pcap = PcapBuilder(bigEndian: false, linkType: 201)
        pcap.add(seconds: 1, fraction: 2, payload: hex("00 00 00 00 01 03 0c 00"))
        let reader = try CaptureFile.reader(bytes: pcap.bytes)
        #expect(reader.format == .pcap)
        #expect(try readAll(reader).map(\.timestamp) == [1_000_002])
    }

    @Test func unknownMagicIsAnErrorAtOffsetZero() {
        #expect(throws: CaptureError.badHeader(
            offset: 0, reason: "unrecognised magic [7F 45 4C 46]: not btsnoop, pcap or pcapng")) {
            try CaptureFile.reader(bytes: hex("7f 45 4c 46 02 01 01 00 00 00"))
        }
        #expect(throws: CaptureError.badHeader(offset: 0, reason: "unrecognised magic []: not btsnoop, pcap or pcapng")) {
            try CaptureFile.reader(bytes: [])
        }
        #expect(throws: CaptureError.cannotOpen(path: "/nonexistent.pcapng", errno: ENOENT)) {
            try CaptureFile.open(path: "/nonexistent.pcapng")
        }
    }

    /// The one opening every format shares: a file and the same bytes in memory read alike, a missing
    /// file is `cannotOpen` naming the path, and a file shorter than the format's header says how long it is.
    @Test func everyFormatOpensAFileAsItsBytes() throws {
        func records(_ reader: any CaptureReader) throws -> [String] {
            try readAll(reader).map { "\($0.timestamp) \($0.fileOffset) \(Array($0.bytes))" }
        }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.dsd6)))
        let fromFile = try records(BTSnoopReader(path: Fixture.dsd6))
        #expect(fromFile.count == 571)
        #expect(try records(BTSnoopReader(bytes: bytes)) == fromFile)
        let pcapngBytes = Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.airbily)))
        #expect(try records(PcapNGReader(path: Fixture.airbily)) == records(PcapNGReader(bytes: pcapngBytes)))
        #expect(throws: CaptureError.cannotOpen(path: "/nonexistent.pcap", errno: ENOENT)) {
            try PcapReader(path: "/nonexistent.pcap")
        }
        #expect(throws: CaptureError.badHeader(offset: 0, reason: "file is 7 bytes, shorter than the 16-byte btsnoop header")) {
            try BTSnoopReader(bytes: Array("btsnoop".utf8))
        }
        #expect(throws: CaptureError.badHeader(offset: 0, reason: "file is 4 bytes, shorter than the 24-byte pcap header")) {
            try PcapReader(bytes: hex("d4 c3 b2 a1"))
        }
        #expect(throws: CaptureError.badHeader(offset: 0, reason: "file is 4 bytes, too short for a pcapng section header")) {
            try PcapNGReader(bytes: hex("0a 0d 0d 0a"))
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(CaptureError.impossibleRecordLength(offset: 40, length: 9).description
            == "impossible record length 9 at byte 40")
        #expect(CaptureWarning.truncatedFinalRecord(offset: 7).description
            == "file ends inside the record at byte 7; it was ignored")
    }
}

@Suite struct CaptureFileMutationTests {
    /// Real files with random bytes overwritten anywhere (headers included) either decode or
    /// fail with a CaptureError; nothing traps. Seeded, so every run sees the same files.
    @Test func mutatedFilesDecodeOrFailCleanly() throws {
        var random = SplitMix64(seed: 42)
        var outcomes: [String: Int] = [:]
        for path in [Fixture.dsd6, Fixture.airbily] {
            let original = try Fixture.bytes(path)
            for _ in 0..<60 {
                var bytes = original
                // Mostly near the start, where headers and length fields live.
                for _ in 0..<(1 + random.next() % 4) {
                    let window = random.next() % 2 == 0 ? min(600, bytes.count) : bytes.count
                    bytes[Int(random.next() % UInt64(window))] = UInt8(truncatingIfNeeded: random.next())
                }
                do {
                    let trace = try DecodedTrace(reading: CaptureFile.reader(bytes: bytes))
                    outcomes[trace.warnings.isEmpty ? "clean" : "warning", default: 0] += 1
                } catch {
                    outcomes["error", default: 0] += 1
                }
            }
        }
        #expect(outcomes.values.reduce(0, +) == 120)
        #expect(outcomes["error", default: 0] > 0)
        #expect(outcomes["clean", default: 0] > 0)
    }
}

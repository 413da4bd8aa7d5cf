import CaptureFormats
import Foundation
import TestSupport
import Testing

@Suite struct PcapNGWriterTests {
    @Test func writesSectionInterfaceAndPaddedPacketBlocks() throws {
        let writer = PcapNGWriter(linkType: LinkType.usbLinuxMMapped)
        // 1 s and 2 µs after the epoch; 5 bytes padded to 8.
        try writer.write(timestamp: 1_000_002, packet: hex("a4 01 4a 00 ef"))
        #expect(writer.bytes
            // Section Header Block: type, length 28, byte-order magic, version 1.0, length -1, length.
            == hex("0a 0d 0d 0a  1c 00 00 00  4d 3c 2b 1a  01 00 00 00  ff ff ff ff ff ff ff ff  1c 00 00 00")
            // Interface Description Block: link type 220, snap length 0 (unlimited).
            + hex("01 00 00 00  14 00 00 00  dc 00 00 00  00 00 00 00  14 00 00 00")
            // Enhanced Packet Block: interface 0, timestamp high/low, captured 5, original 5, data + padding.
            + hex("06 00 00 00  28 00 00 00  00 00 00 00  00 00 00 00  42 42 0f 00  05 00 00 00  05 00 00 00")
            + hex("a4 01 4a 00 ef 00 00 00  28 00 00 00"))
        let reader = try PcapNGReader(bytes: writer.bytes)
        let record = try #require(try reader.next())
        #expect(reader.interfaces.first?.linkType == 220)
        #expect(record.timestamp == 1_000_002)
        #expect(Array(record.bytes) == hex("a4 01 4a 00 ef"))
        #expect(record.content == .linkLayerFrame(linkType: 220))
        #expect(try reader.next() == nil)
    }

    @Test func aCutPacketKeepsItsOriginalLength() throws {
        let writer = PcapNGWriter(linkType: LinkType.bluetoothHCIH4WithPHDR)
        try writer.write(timestamp: 7, packet: hex("00 00 00 01 04 0e"), originalLength: 10)
        let record = try #require(try PcapNGReader(bytes: writer.bytes).next())
        #expect(record.originalLength == 10 - 5)
        #expect(Array(record.bytes) == hex("0e"))
    }

    @Test func writesAFileWithPrivatePermissions() throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("pcapng-writer-\(UUID().uuidString).pcapng").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try PcapNGWriter(path: path, linkType: LinkType.usbLinuxMMapped)
        let frame = USBMonEvent(urbID: 1, type: .complete, transferType: .interrupt, endpoint: 0x81, device: 2, bus: 1,
                                timestamp: 0, status: 0, length: 8, data: hex("00 00 0c 00 00 00 00 00")).frame()
        for index in 0..<5_000 { try writer.write(timestamp: Int64(index), packet: frame) }
        try writer.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let records = try readAll(PcapNGReader(path: path))
        #expect(records.count == 5_000)
        #expect(records.last?.timestamp == 4_999)
        #expect(records.allSatisfy { Array($0.bytes) == frame })
    }

    @Test func unwritablePathIsAnError() {
        #expect(throws: CaptureError.cannotWrite(path: "/nonexistent/dir/x.pcapng", errno: ENOENT)) {
            try PcapNGWriter(path: "/nonexistent/dir/x.pcapng", linkType: LinkType.usbLinuxMMapped)
        }
    }
}

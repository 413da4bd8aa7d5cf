import CaptureFormats
import Foundation
import TestSupport
import Testing

@Suite struct BTSnoopWriterTests {
    @Test func writesHeaderAndRecordLayout() throws {
        let writer = BTSnoopWriter()
        // HCI Reset (Core Vol 4 Part E 7.3.2: opcode 0x0C03, no parameters) at the Unix epoch.
        try writer.write(type: .command, direction: .sent, timestamp: 0, packet: hex("03 0c 00"))
        try writer.write(type: .acl, direction: .received, timestamp: 1, packet: hex("40 00"))
        #expect(writer.bytes == hex("62 74 73 6e 6f 6f 70 00  00 00 00 01  00 00 03 ea")
            + hex("00 00 00 04  00 00 00 04  00 00 00 02  00 00 00 00  00 dc dd b3 0f 2f 80 00  01 03 0c 00")
            + hex("00 00 00 03  00 00 00 03  00 00 00 01  00 00 00 00  00 dc dd b3 0f 2f 80 01  02 40 00"))
    }

    @Test func rewritingARealCaptureGivesTheSameBytes() throws {
        // Android writes datalink 1002 with original == included length and no drops, like this writer.
        for path in [Fixture.dsd6, Fixture.hidrate] {
            let original = try Fixture.bytes(path)
            let reader = try BTSnoopReader(bytes: original)
            let writer = BTSnoopWriter()
            while let record = try reader.next() { try writer.write(record) }
            #expect(writer.bytes == original, "\(path)")
        }
    }

    @Test func writesAFileWithPrivatePermissions() throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("btsnoop-writer-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try BTSnoopWriter(path: path)
        for index in 0..<5_000 {
            try writer.write(type: .event, direction: .received, timestamp: Int64(index),
                             packet: hex("0e 04 01 03 0c 00"))
        }
        try writer.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let records = try readAll(BTSnoopReader(path: path))
        #expect(records.count == 5_000)
        #expect(records.last?.timestamp == 4_999)
        #expect(records.allSatisfy { $0.content == .hci(.event) && $0.direction == .received })
    }

    @Test func unwritablePathIsAnError() {
        #expect(throws: CaptureError.cannotWrite(path: "/nonexistent/dir/x.log", errno: ENOENT)) {
            try BTSnoopWriter(path: "/nonexistent/dir/x.log")
        }
    }
}

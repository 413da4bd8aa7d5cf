import Foundation
import Testing
@testable import IngestRuntime

/// `LineReader` hands out the lines wholly inside a chunk as slices of it and sends the rest
/// through `LineSplitter`: whatever the chunk size, it must give the same lines, the same
/// over-long lengths and the same unterminated last line.
struct LineReaderTests {
    private func lines(of bytes: [UInt8], chunkSize: Int, maximumLineLength: Int = 10) throws -> [LineReader.Line] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("line-reader-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reader = try LineReader(path: path, chunkSize: chunkSize, maximumLineLength: maximumLineLength,
                                    maximumSkippedLength: 1 << 20)
        var lines: [LineReader.Line] = []
        while let line = try reader.nextLine() { lines.append(line) }
        return lines
    }

    @Test func everyChunkSizeGivesTheSameLines() throws {
        let text = "one\ntwo\r\n\nthis line is far too long\nten bytes!\n\r\neleven byte\nlast"
        let expected: [LineReader.Line] = [
            .text(Array("one".utf8)[...]), .text(Array("two".utf8)[...]), .text([][...]),
            .overlong(length: 25), .text(Array("ten bytes!".utf8)[...]), .text([][...]),
            .overlong(length: 11), .text(Array("last".utf8)[...]),
        ]
        for chunkSize in [1, 2, 3, 5, 7, 11, 16, 64, 1 << 16] {
            #expect(try lines(of: Array(text.utf8), chunkSize: chunkSize) == expected, "chunk size \(chunkSize)")
        }
    }

    @Test func aCarriageReturnOnlyBeforeTheLimitKeepsALineOfTheLimit() throws {
        // Ten bytes and `\r`: the `\r` does not count against the limit; eleven and `\r` does.
        let text = "0123456789\r\n0123456789A\r\n"
        for chunkSize in [1, 4, 12, 100] {
            #expect(try lines(of: Array(text.utf8), chunkSize: chunkSize)
                    == [.text(Array("0123456789".utf8)[...]), .overlong(length: 12)], "chunk size \(chunkSize)")
        }
    }

    @Test func aFileWithoutNewlinesIsGivenUpPastTheSkippedLength() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("line-reader-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: UInt8(ascii: "x"), count: 5_000).write(to: URL(fileURLWithPath: path))
        let reader = try LineReader(path: path, chunkSize: 1_000, maximumLineLength: 10, maximumSkippedLength: 2_000)
        #expect(try reader.nextLine() == .abandoned(skipped: 2_000))
        #expect(try reader.nextLine() == nil)
    }
}

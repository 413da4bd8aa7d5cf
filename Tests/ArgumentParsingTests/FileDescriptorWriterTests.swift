import Foundation
import Logging
import Testing

/// Buffering of `FileDescriptorWriter`, observed through a temporary file.
@Suite struct FileDescriptorWriterTests {
    /// Opens a fresh temporary file, runs `body` with its descriptor and returns a reader of
    /// its current contents.
    private func withTemporaryFile(_ body: (Int32, () -> String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("ingestd-writer-\(UUID().uuidString)").path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        try body(descriptor) { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<unreadable>" }
    }

    @Test func fullBufferingWritesOnlyOnFlush() throws {
        try withTemporaryFile { descriptor, contents in
            let writer = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .full)
            writer.writeLine("first")
            writer.write("second")
            #expect(contents() == "")
            writer.flush()
            #expect(contents() == "first\nsecond")
        }
    }

    @Test func lineBufferingWritesCompleteLines() throws {
        try withTemporaryFile { descriptor, contents in
            let writer = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .line)
            writer.write("one\ntw")
            #expect(contents() == "one\n")
            writer.write("o\nthr")
            #expect(contents() == "one\ntwo\n")
            writer.flush()
            #expect(contents() == "one\ntwo\nthr")
        }
    }

    @Test func bytesShareTheBufferWithText() throws {
        try withTemporaryFile { descriptor, contents in
            let writer = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .line)
            writer.write("a")
            writer.write(utf8: Array("b\u{00E9}\nc".utf8))
            #expect(contents() == "ab\u{00E9}\n")
            writer.write(utf8: Array("d\n".utf8))
            #expect(contents() == "ab\u{00E9}\ncd\n")
            let full = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .full)
            full.write(utf8: Array("e".utf8))
            #expect(contents() == "ab\u{00E9}\ncd\n")
            full.flush()
            #expect(contents() == "ab\u{00E9}\ncd\ne")
        }
    }

    @Test func noBufferingWritesAtOnce() throws {
        try withTemporaryFile { descriptor, contents in
            let writer = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .none)
            writer.write("partial")
            #expect(contents() == "partial")
        }
    }

    @Test func fullBufferWritesWhenLarge() throws {
        try withTemporaryFile { descriptor, contents in
            let writer = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .full)
            let chunk = String(repeating: "x", count: 1000)
            for _ in 0..<65 { writer.write(chunk) }
            #expect(contents().isEmpty)
            writer.write(chunk)
            #expect(contents().count == 66_000)
            for _ in 0..<4 { writer.write(chunk) }
            #expect(contents().count == 66_000)
        }
    }

    @Test func writingToAClosedPipeDoesNotStopTheProgram() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        close(ends[0])
        signal(SIGPIPE, SIG_IGN)
        let writer = FileDescriptorWriter(fileDescriptor: ends[1], buffering: .none)
        writer.writeLine("nobody reads this")
        close(ends[1])
    }
}

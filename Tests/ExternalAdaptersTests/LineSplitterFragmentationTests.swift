@testable import ExternalAdapters
import TestSupport
import Testing

/// A plugin's stdout gives the same lines however the reads cut it.
struct LineSplitterFragmentationTests {
    @Test func linesDoNotDependOnWhereReadsEnd() throws {
        let stream = Array("{\"done\":true}\n\nabcdefghijklmnopqrstuvwxyz0123456789\nok\n{\"log\":".utf8)
        let pieces = try verifyFragmentation(of: stream) { chunks in
            var splitter = LineSplitter(maximumLength: 16)
            var pieces: [LineSplitter.Piece] = []
            for chunk in chunks { splitter.append(Array(chunk)) { pieces.append($0) } }
            if let end = splitter.finish() { pieces.append(end) }
            return pieces
        }
        #expect(pieces == [.line(Array("{\"done\":true}".utf8)), .line([]), .overlong(length: 36),
                           .line(Array("ok".utf8)), .unterminated(Array("{\"log\":".utf8))])
    }
}

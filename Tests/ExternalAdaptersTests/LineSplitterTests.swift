import Testing
@testable import ExternalAdapters

@Suite("LineSplitter")
struct LineSplitterTests {
    func split(_ chunks: [String], maximum: Int = 8) -> (pieces: [LineSplitter.Piece], end: LineSplitter.Piece?) {
        var splitter = LineSplitter(maximumLength: maximum)
        var pieces: [LineSplitter.Piece] = []
        for chunk in chunks { splitter.append(Array(chunk.utf8)) { pieces.append($0) } }
        return (pieces, splitter.finish())
    }

    func line(_ text: String) -> LineSplitter.Piece { .line(Array(text.utf8)) }

    @Test("Lines are the same however the stream is cut")
    func fragmentation() {
        let stream = "ab\n\ncdef\nghi\n"
        let expected = [line("ab"), line(""), line("cdef"), line("ghi")]
        for cut in 0...stream.utf8.count {
            let bytes = Array(stream.utf8)
            let chunks = [String(decoding: bytes[..<cut], as: UTF8.self), String(decoding: bytes[cut...], as: UTF8.self)]
            let result = split(chunks)
            #expect(result.pieces == expected, "cut at \(cut)")
            #expect(result.end == nil)
        }
        #expect(split(stream.map { String($0) }).pieces == expected)
    }

    @Test("A line of exactly the maximum passes; one byte more is overlong and skipped to its newline")
    func limit() {
        let result = split(["12345678\n123456789\nok\n"])
        #expect(result.pieces == [line("12345678"), .overlong(length: 9), line("ok")])
        let fragmented = split(["12345", "6789", "0123", "45\nok\n"])
        #expect(fragmented.pieces == [.overlong(length: 15), line("ok")])
    }

    @Test("Bytes after the last newline are an unterminated line at the end")
    func unterminated() {
        #expect(split(["ok\n{\"type\":"]).end == .unterminated(Array("{\"type\":".utf8)))
        #expect(split(["ok\n", "123456789"]).end == .overlong(length: 9))
        #expect(split(["ok\n"]).end == nil)
    }
}

import CaptureFormats
import Foundation
import TestSupport
import Testing
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// Decoders of byte streams give the same output however their input is cut (TestSupport's
/// fragmentation verifier: whole, byte by byte, random chunks).
@Suite struct FragmentationTests {
    @Test func theVerifierCatchesADecoderThatDependsOnTheCuts() throws {
        // Counts newline-terminated lines per chunk and forgets a line split over two chunks.
        func forgetful(_ chunks: [ArraySlice<UInt8>]) -> Int {
            chunks.reduce(0) { count, chunk in count + chunk.split(separator: 0x0A, omittingEmptySubsequences: false).count - 1 }
        }
        let input = Array("one\ntwo\n".utf8)
        #expect(try verifyFragmentation(of: input) { chunks in chunks.flatMap { $0 } } == input)
        #expect(throws: FragmentationMismatch<[Int]>.self) {
            try verifyFragmentation(of: input) { chunks in [forgetful(chunks), chunks.count] }
        }
    }

    @Test func cutsCoverTheInputInOrder() {
        let input = Array(0..<200).map { UInt8($0) }
        for cut in [Fragmentation.whole, .byteByByte, .randomChunks(seed: 7)] {
            #expect(Array(cut.chunks(of: input).joined()) == input, "\(cut)")
        }
        #expect(Fragmentation.byteByByte.chunks(of: input).count == 200)
        #expect(Fragmentation.randomChunks(seed: 7).chunks(of: input).count > 1)
        #expect(Fragmentation.randomChunks(seed: 7).chunks(of: input) == Fragmentation.randomChunks(seed: 7).chunks(of: input))
    }

    /// The real keyboard capture, read through a pipe written in the verifier's chunks: the
    /// reader's refills see short reads wherever the chunks end.
    @Test func usbmonEventsDoNotDependOnHowTheFileArrives() throws {
        let capture = try Fixture.bytes(USBFixture.keyboard)
        let events = try verifyFragmentation(of: capture, randomSplits: 4) { chunks in
            try Self.usbmonEvents(readingThroughAPipe: chunks)
        }
        #expect(events == (try USBMonReader(bytes: capture).readAll()))
        #expect(events.count > 100)
    }

    /// Writes `chunks` into a pipe from another thread while a `USBMonReader` reads the other end.
    static func usbmonEvents(readingThroughAPipe chunks: [ArraySlice<UInt8>]) throws -> [USBMonEvent] {
        signal(SIGPIPE, SIG_IGN)  // a reader that stops early must not kill the test process
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw PipeFailure(errno: errno) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let writer = Thread {
            writing: for chunk in chunks {
                var written = 0
                while written < chunk.count {
                    let result = chunk.withUnsafeBytes { raw in
                        write(writeEnd, raw.baseAddress.map { $0 + written }, raw.count - written)
                    }
                    if result < 0 && errno == EINTR { continue }
                    if result <= 0 { break writing }
                    written += result
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        return try USBMonReader(path: "/proc/self/fd/\(readEnd)").readAll()
    }

    struct PipeFailure: Error {
        var errno: Int32
    }
}

extension HCITraceDecoderSyntheticTests {
    /// An indication's L2CAP frame cut into ACL fragments wherever the verifier cuts it.
    @Test func indicationsReassembleTheSameWhereverTheACLFragmentsEnd() throws {
        let frame = HCI.l2cap(hex("1d 03 00") + temperature)
        let values = try verifyFragmentation(of: frame) { chunks in
            var capture = SyntheticCapture()
            try discovery(&capture)
            try capture.acl(.received, handle: 0x40, att: hex("1d 03 00") + temperature,
                            fragmentSizes: chunks.map(\.count))
            let trace = try capture.decode()
            return [trace.statistics.malformed.isEmpty ? "clean" : "\(trace.statistics.malformed)"]
                + trace.events.compactMap(\.gattValue).map { "\($0.characteristicUUID.map(String.init(describing:)) ?? "-") \($0.kind) \($0.value)" }
        }
        #expect(values == ["clean", "\(BLEUUID(0x2A1C)) indication \(temperature)"])
    }
}

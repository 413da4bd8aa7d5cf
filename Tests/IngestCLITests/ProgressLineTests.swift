import ArgumentParsing
import Foundation
import Logging
import Testing
@testable import IngestCLI

/// The text of the progress line `import`, `replay`, `decode` and `sinks deliver` draw on a terminal.
@Suite struct ProgressLineTests {
    @Test func bytesOfAFileWithRecordsRateAndTimeLeft() {
        let text = ProgressLine.render(label: "import", measure: .bytes(total: 50_000_000), done: 12_500_000,
                                       records: 40_000, elapsed: 2)
        #expect(text == "import: 12.5 of 50.0 MB (25 %), 40000 records, 20000/s, 0:06 left")
    }

    @Test func itemsOfAKnownTotal() {
        let text = ProgressLine.render(label: "sink ha", measure: .items(name: "records", total: 1000), done: 250,
                                       records: 250, elapsed: 10)
        #expect(text == "sink ha: 250 of 1000 records (25 %), 25/s, 0:30 left")
    }

    @Test func noRateBeforeHalfASecondAndNoTimeLeftWithoutATotal() {
        #expect(ProgressLine.render(label: "decode x", measure: .bytes(total: 0), done: 4096, records: 3, elapsed: 0.1)
            == "decode x: 0.0 of 0.0 MB, 3 records")
        #expect(ProgressLine.render(label: "sink s", measure: .items(name: "records", total: nil), done: 90, records: 90, elapsed: 3)
            == "sink s: 90 records, 30/s")
        #expect(ProgressLine.render(label: "replay f", measure: .bytes(total: 100), done: 100, records: 7, elapsed: 1)
            == "replay f: 0.0 of 0.0 MB (100 %), 7 records, 7/s")
    }

    /// Nothing at all when stderr is not a terminal (the tests' writers, pipes, files).
    @Test func nothingIsDrawnOffATerminal() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString)").path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        #expect(descriptor >= 0)
        defer { close(descriptor); unlink(path) }
        let file = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .none)
        let context = CommandContext(stdout: file, stderr: file)
        let line = ProgressLine(label: "import", totalBytes: 10, context: context)
        #expect(!line.isShown)
        line.update(bytes: 5, records: 5)
        line.finish()
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
    }
}

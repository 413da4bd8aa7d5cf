import ArgumentParsing
import Foundation
import Logging

/// One self-overwriting progress line on stderr for long work (`import`, `replay`, `decode`,
/// `sinks deliver`): what is done (bytes of the file, or items of a known or unknown total),
/// the records, the rate and the time left. Only when stderr is a terminal; otherwise (a pipe,
/// a file, a test) it writes nothing at all.
final class ProgressLine {
    /// What the line measures the work in.
    enum Measure: Equatable {
        /// Bytes of a file of `total` bytes (0: unknown); records are counted beside them.
        case bytes(total: Int)
        /// Items named `name` ("packets", "samples") of `total` (nil: unknown).
        case items(name: String, total: Int?)
    }

    private let writer: (any TextWriter)?
    private let label: String
    private let measure: Measure
    private let started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var drawn = false

    /// A line measuring the bytes of a file of `totalBytes` bytes.
    convenience init(label: String, totalBytes: Int, context: CommandContext) {
        self.init(label: label, measure: .bytes(total: totalBytes), context: context)
    }

    init(label: String, measure: Measure, context: CommandContext) {
        let terminal = (context.stderr as? FileDescriptorWriter).map { isatty($0.fileDescriptor) == 1 } ?? false
        self.writer = terminal ? context.stderr : nil
        self.label = label
        self.measure = measure
    }

    /// Whether anything is drawn at all (stderr is a terminal).
    var isShown: Bool { writer != nil }

    /// Redraws the line (at most four times a second): `done` bytes or items, `records` stored.
    func update(done: Int, records: Int) {
        guard let writer else { return }
        let now = ContinuousClock.now
        if let lastDrawn, now - lastDrawn < .milliseconds(250) { return }
        lastDrawn = now
        let (seconds, attoseconds) = (now - started).components
        let elapsed = Double(seconds) + Double(attoseconds) / 1e18
        writer.write("\r" + Self.render(label: label, measure: measure, done: done, records: records, elapsed: elapsed) + "\u{1B}[K")
        writer.flush()
        drawn = true
    }

    /// `update(done:records:)` for a file read so far to byte `bytes`.
    func update(bytes: Int, records: Int) { update(done: bytes, records: records) }

    /// Removes the line (before the summary is printed).
    func finish() {
        guard let writer, drawn else { return }
        writer.write("\r\u{1B}[K")
        writer.flush()
    }

    /// The text of the line (without the carriage return and the erase), e.g.
    /// `import: 12.5 of 50.0 MB (25 %), 40000 records, 20000/s, 0:06 left`.
    static func render(label: String, measure: Measure, done: Int, records: Int, elapsed: Double) -> String {
        var text = "\(label): "
        let total: Int?
        switch measure {
        case .bytes(let bytes):
            total = bytes > 0 ? bytes : nil
            text += "\(megabytes(done)) of \(megabytes(bytes)) MB"
            if let total { text += " (\(min(100, done * 100 / total)) %)" }
            text += ", \(records) records"
        case .items(let name, let items):
            total = items.flatMap { $0 > 0 ? $0 : nil }
            text += "\(done)"
            if let items { text += " of \(items)" }
            text += " \(name)"
            if let total { text += " (\(min(100, done * 100 / total)) %)" }
        }
        if elapsed > 0.5 {
            let rateCount: Int
            if case .bytes = measure { rateCount = records } else { rateCount = done }
            text += ", \(Int(Double(rateCount) / elapsed))/s"
            if let total, done > 0, total > done {
                let left = elapsed * Double(total - done) / Double(done)
                text += ", \(Int(left / 60)):\(String(format: "%02d", Int(left) % 60)) left"
            }
        }
        return text
    }

    private static func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }
}

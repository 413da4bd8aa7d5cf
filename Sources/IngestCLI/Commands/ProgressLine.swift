import ArgumentParsing
import Foundation
import Logging

/// One self-overwriting progress line on stderr for long work (`import`, later `replay`,
/// `decode`): bytes done of the total, records, rate and time left. Only when stderr is a
/// terminal; otherwise (a pipe, a file, a test) it writes nothing at all.
final class ProgressLine {
    private let writer: (any TextWriter)?
    private let label: String
    private let totalBytes: Int
    private let started = ContinuousClock.now
    private var lastDrawn: ContinuousClock.Instant?
    private var drawn = false

    init(label: String, totalBytes: Int, context: CommandContext) {
        let terminal = (context.stderr as? FileDescriptorWriter).map { isatty($0.fileDescriptor) == 1 } ?? false
        self.writer = terminal ? context.stderr : nil
        self.label = label
        self.totalBytes = totalBytes
    }

    /// Redraws the line (at most four times a second).
    func update(bytes: Int, records: Int) {
        guard let writer else { return }
        let now = ContinuousClock.now
        if let lastDrawn, now - lastDrawn < .milliseconds(250) { return }
        lastDrawn = now
        let elapsed = Self.seconds(now - started)
        var text = "\r\(label): \(Self.megabytes(bytes)) of \(Self.megabytes(totalBytes)) MB"
        if totalBytes > 0 { text += " (\(min(100, bytes * 100 / totalBytes)) %)" }
        text += ", \(records) records"
        if elapsed > 0.5 {
            text += ", \(Int(Double(records) / elapsed))/s"
            if bytes > 0, totalBytes > bytes {
                let left = elapsed * Double(totalBytes - bytes) / Double(bytes)
                text += ", \(Int(left / 60)):\(String(format: "%02d", Int(left) % 60)) left"
            }
        }
        writer.write(text + "\u{1B}[K")
        writer.flush()
        drawn = true
    }

    /// Removes the line (before the summary is printed).
    func finish() {
        guard let writer, drawn else { return }
        writer.write("\r\u{1B}[K")
        writer.flush()
    }

    private static func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built `ingestd` binary, run as a child process.
enum IngestdProcess {
    /// `ingestd` next to the test bundle (SwiftPM builds every product into the same directory).
    static var path: String? {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        return candidates.map { $0.appendingPathComponent("ingestd").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// Runs `ingestd ARGUMENTS`; a run longer than `limit` seconds is killed and fails the test. The waiting
    /// happens on a thread of its own: the tests' cooperative threads (two on a two-core machine) stay free for the
    /// other suites' async tests.
    static func run(_ arguments: [String], limit: TimeInterval = 60) async throws -> Output {
        let binary = try #require(path, "the ingestd binary was not built next to the tests")
        let (output, timedOut) = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(binary, arguments, limit: limit) })
            }
        }
        if timedOut {
            Issue.record("ingestd \(arguments.joined(separator: " ")) did not finish within \(Int(limit)) s: killed")
        }
        return output
    }

    private static func runBlocking(_ binary: String, _ arguments: [String], limit: TimeInterval) throws
        -> (Output, timedOut: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        let stdout = PipeReader(out.fileHandleForReading)
        let stderr = PipeReader(err.fileHandleForReading)
        var timedOut = false
        if finished.wait(timeout: .now() + limit) == .timedOut {
            timedOut = true
            kill(process.processIdentifier, SIGKILL)
            _ = finished.wait(timeout: .now() + 5)
        }
        return (Output(status: process.terminationStatus, stdout: stdout.text(), stderr: stderr.text()), timedOut)
    }
}

/// Reads a pipe to its end on a background thread.
final class PipeReader: @unchecked Sendable {
    // @unchecked: `data` is written by the reading thread before `done` is signalled and read only after it.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

/// Capture files of the tests.
enum Fixtures {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `Tests/<folder>/...`.
    static func path(_ relative: String) -> String { tests.appendingPathComponent(relative).path }
}

/// One sample line of `ingestd decode --json` (or an `.expected.jsonl` line).
struct DecodedSample: Equatable, CustomStringConvertible {
    var type: String
    var value: Double
    var unit: String
    var start: Date
    var end: Date
    var source: String
    var deviceName: String?
    var deviceIdentifier: String?
    var metadata: [String: Double]

    init(json line: String) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        type = try #require(object["type"] as? String)
        value = try #require((object["value"] as? NSNumber)?.doubleValue)
        unit = try #require(object["unit"] as? String)
        start = try #require(Self.date(object["start"] as? String), "start of \(line)")
        end = try #require(Self.date(object["end"] as? String), "end of \(line)")
        source = try #require(object["source"] as? String)
        let device = object["device"] as? [String: Any]
        deviceName = device?["name"] as? String
        deviceIdentifier = device?["localIdentifier"] as? String
        var numbers: [String: Double] = [:]
        for (key, value) in object["metadata"] as? [String: Any] ?? [:] {
            if let number = value as? NSNumber { numbers[key] = number.doubleValue }
        }
        metadata = numbers
    }

    static func date(_ text: String?) -> Date? {
        guard let text else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        if let date = formatter.date(from: text) {
            // The formatter keeps milliseconds only: add the rest of the microseconds back.
            guard let dot = text.firstIndex(of: "."), let zone = text.lastIndex(of: "Z") else { return date }
            let digits = String(text[text.index(after: dot)..<zone]).padding(toLength: 6, withPad: "0", startingAt: 0)
            let micros = Double(Int(digits.prefix(6)) ?? 0)
            return Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down) + micros / 1_000_000)
        }
        return nil
    }

    /// The same sample: equal fields, times within a microsecond, values within 1e-9.
    func matches(_ other: DecodedSample) -> Bool {
        type == other.type && abs(value - other.value) < 1e-9 && unit == other.unit
            && abs(start.timeIntervalSince(other.start)) < 2e-6 && abs(end.timeIntervalSince(other.end)) < 2e-6
            && source == other.source && deviceName == other.deviceName && deviceIdentifier == other.deviceIdentifier
            && metadata == other.metadata
    }

    var description: String {
        "\(type) \(value) \(unit) \(start.timeIntervalSince1970)–\(end.timeIntervalSince1970) \(deviceIdentifier ?? "-") \(metadata)"
    }
}

import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `ingestd run` under `umockdev-run`, started in the background: the real libusb and the daemon's USB backend on
/// fake devices replaying usbmon captures. The test watches the store and the log while it runs and stops it with
/// SIGTERM sent to ingestd itself (signalling umockdev-run would take the fake devices away first).
final class UMockdevDaemon {
    let process = Process()
    private let stdout = StreamCollector()
    private let stderr = StreamCollector()
    private let finished = DispatchSemaphore(value: 0)
    private var exited = false

    /// `umockdev-run --device DEVICE (--pcap SYSFS=CAPTURE)... -- ingestd ARGUMENTS`; captures map sysfs paths to
    /// fixture names.
    init(device: String, captures: [(sysfs: String, capture: String)], ingestd: String, _ arguments: [String]) throws {
        let run = try #require(UMockdev.runPath)
        process.executableURL = URL(fileURLWithPath: run)
        var launch = ["--device", UMockdev.fixture(device)]
        for (sysfs, capture) in captures { launch += ["--pcap", "\(sysfs)=\(UMockdev.fixture(capture))"] }
        process.arguments = launch + ["--", ingestd] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let finished = self.finished
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        stdout.collect(out.fileHandleForReading)
        stderr.collect(err.fileHandleForReading)
    }

    deinit {
        if !exited, process.isRunning {
            if let pid = ingestdPID { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
        }
    }

    /// The log so far.
    var log: String { stderr.text }

    /// Whether ingestd (and so umockdev-run) is still running.
    var isRunning: Bool { process.isRunning }

    /// ingestd's process id: umockdev-run's child.
    var ingestdPID: pid_t? {
        let pid = process.processIdentifier
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else { return nil }
        return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }.first
    }

    /// Polls `condition` every 0.2 s for up to `limit` seconds; false when it never held.
    func wait(upTo limit: TimeInterval = 30, until condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        while Date() < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return try await condition()
    }

    /// Sends SIGTERM to ingestd and waits up to `limit` seconds for it to exit; returns its exit status and how long
    /// it took, or nil when it did not exit in time (it is then killed).
    func terminate(limit: TimeInterval = 10) async throws -> (status: Int32, seconds: TimeInterval)? {
        let pid = try #require(ingestdPID, "ingestd is not running under umockdev-run")
        let start = Date()
        kill(pid, SIGTERM)
        let finished = self.finished
        let exitedInTime = try await UMockdev.offThePool { finished.wait(timeout: .now() + limit) == .success }
        guard exitedInTime else {
            kill(pid, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
            _ = finished.wait(timeout: .now() + 5)
            return nil
        }
        exited = true
        return (process.terminationStatus, Date().timeIntervalSince(start))
    }
}

extension UMockdev {
    /// Runs blocking work (waiting for a child process) on a thread of its own, so that the tests' cooperative threads
    /// (two on a two-core machine) stay free for the other suites' async tests.
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let result: Swift.Result<T, any Error> = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Swift.Result { try work() }) }
        }
        return try result.get()
    }

    /// `execute` off the cooperative pool.
    static func executeOffThePool(_ path: String, _ arguments: [String]) async throws -> Result {
        try await offThePool { try execute(path, arguments) }
    }
}

/// Reads a pipe on a background thread; the text read so far can be looked at any time.
final class StreamCollector: Sendable {
    private let buffer = Mutex(Data())

    func collect(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                buffer.withLock { $0.append(chunk) }
            }
        }
    }

    var text: String { buffer.withLock { String(decoding: $0, as: UTF8.self) } }
}

import Dispatch
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Why the built `ingestd` could not be run.
public enum IngestdProcessError: Error, Equatable, CustomStringConvertible {
    /// No executable `ingestd` in any of the searched directories (the test bundle's own).
    case binaryNotBuilt(searched: [String])

    public var description: String {
        switch self {
        case .binaryNotBuilt(let searched):
            "the ingestd binary was not built next to the tests (searched \(searched.joined(separator: ", ")))"
        }
    }
}

/// The built `ingestd` binary, run as a child process by the tests that need the real executable.
public enum IngestdProcess {
    /// The directories SwiftPM may have put the test bundle in; every product is built beside it.
    private static var candidateDirectories: [URL] {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        return candidates
    }

    /// The path of `ingestd` next to the test bundle.
    public static func path() throws(IngestdProcessError) -> String {
        let paths = candidateDirectories.map { $0.appendingPathComponent("ingestd").path }
        guard let found = paths.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw .binaryNotBuilt(searched: paths)
        }
        return found
    }

    /// What a finished run printed and how it ended.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// The run took longer than its limit and was killed with SIGKILL.
        public var timedOut: Bool
        /// `stdout` split into lines.
        public var lines: [String] { stdout.split(separator: "\n").map(String.init) }

        public init(status: Int32, stdout: String, stderr: String, timedOut: Bool = false) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
            self.timedOut = timedOut
        }
    }

    /// Runs `ingestd ARGUMENTS`; a run longer than `limit` seconds is killed and fails the test.
    /// The waiting happens on a thread of its own, so the tests' cooperative threads (two on a
    /// two-core machine) stay free for the other suites' async tests.
    public static func run(_ arguments: [String], limit: TimeInterval = 60) async throws -> Output {
        let binary = try path()
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runToEnd(binary, arguments, limit: limit) })
            }
        }
    }

    /// ``run(_:limit:)`` for synchronous tests: blocks the calling thread until the run ends.
    public static func runBlocking(_ arguments: [String], limit: TimeInterval = 60) throws -> Output {
        try runToEnd(try path(), arguments, limit: limit)
    }

    private static func runToEnd(_ binary: String, _ arguments: [String], limit: TimeInterval) throws -> Output {
        try ChildProcess.run(binary, arguments, limit: limit, name: "ingestd", environment: environment)
    }

    /// The test process's environment with `INGESTD_CONFIG=/dev/null` (an empty configuration)
    /// unless it names a file itself: a run never reads the machine's /etc/ingestd/ingestd.conf
    /// or the real home's ~/.config/ingestd/config.
    public static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        if environment["INGESTD_CONFIG"] == nil { environment["INGESTD_CONFIG"] = "/dev/null" }
        return environment
    }

    /// A started `ingestd` the test signals, kills or waits for itself.
    public final class Running {
        public let process: Process
        /// The process's stdout.
        public let out = Pipe()
        /// The process's stderr (the log).
        public let err = Pipe()

        fileprivate init(process: Process) {
            self.process = process
            process.standardOutput = out
            process.standardError = err
        }

        /// Everything the process wrote on stdout; blocks until it closes the pipe.
        public func standardOutputData() -> Data { out.fileHandleForReading.readDataToEndOfFile() }
        /// Everything the process wrote on stderr; blocks until it closes the pipe.
        public func standardErrorData() -> Data { err.fileHandleForReading.readDataToEndOfFile() }
    }

    /// Starts `ingestd ARGUMENTS` (the built binary, or `binary`, e.g. a private copy) and
    /// returns at once; the caller must end the process.
    public static func start(_ arguments: [String], binary: String? = nil) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary ?? path())
        process.arguments = arguments
        process.environment = environment
        let running = Running(process: process)
        try process.run()
        return running
    }
}

/// Runs a program to its end, both pipes read so it never blocks on a full one; a run that
/// outlasts `limit` is ended by `kill` (SIGKILL by default) and recorded as a test issue, so a
/// hang shows up as a failure, never as a stuck test run.
public enum ChildProcess {
    /// `environment` nil inherits the test process's.
    public static func run(_ path: String, _ arguments: [String], limit: TimeInterval, name: String? = nil,
                           environment: [String: String]? = nil,
                           kill: (Int32) -> Void = { Glibc.kill($0, SIGKILL) }) throws -> IngestdProcess.Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
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
            kill(process.processIdentifier)
            _ = finished.wait(timeout: .now() + 5)
            Issue.record("\(name ?? path) \(arguments.joined(separator: " ")) did not finish within \(Int(limit)) s: killed")
        }
        return IngestdProcess.Output(status: process.terminationStatus, stdout: stdout.text(), stderr: stderr.text(),
                                     timedOut: timedOut)
    }
}

/// Reads a pipe to its end on a background thread, so a child never blocks on a full pipe.
public final class PipeReader: @unchecked Sendable {
    // @unchecked: `data` is written by the reading thread before `done` is signalled and read only after it.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `handle` at once.
    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    /// Everything read, once the writer closed its end; blocks until then.
    public func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

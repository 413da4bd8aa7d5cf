import Foundation
import Testing

/// The built `ingestd` next to the test bundle.
enum IngestdBinary {
    static var url: URL? {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        return candidates.map { $0.appendingPathComponent("ingestd") }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Starts `ingestd` with `arguments`, in `directory` (the current one when nil).
    static func start(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil) throws -> (Process, Pipe, Pipe) {
        let binary = try #require(url, "the ingestd binary was not built next to the tests")
        let process = Process()
        process.executableURL = binary
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil) throws -> Output {
        let (process, out, err) = try start(arguments, environment: environment, directory: directory)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}

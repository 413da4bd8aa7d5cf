import Foundation
import Testing

/// The built `ingestd` binary, run as a user would: `ingestd decode FILE --json --tz Europe/Berlin`.
@Suite struct DecodeTests {
    /// One capture per adapter, plus a malformed one.
    @Test(arguments: ["gatt-health/thermometer", "gatt-health/blood-pressure-fragmented",
                      "xiaomi-scale/mi-scale-v1", "bthome/bthome-mass"])
    func binaryPrintsTheExpectedRecords(_ name: String) throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == name })
        let output = try IngestdBinary.run(["decode", fixture.path, "--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        try expectSameRecords(lines, try fixture.expectedRecords(), name)
        #expect(output.stderr.contains("→ adapter \(fixture.folder)"), "\(output.stderr)")
    }

    /// Every held-back capture with expected records (every profile, both fragmentations) in
    /// one `ingestd decode FILE... --json` run: the output is each file's records in turn.
    @Test func binaryDecodesEveryProfileToThePublishedValues() throws {
        let fixtures = Captures.withExpectedRecords
        #expect(fixtures.count >= 20)
        let output = try IngestdBinary.run(["decode"] + fixtures.map(\.path) + ["--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        let expected = try fixtures.flatMap { try $0.expectedRecords() }
        try expectSameRecords(output.stdout.split(separator: "\n").map(String.init), expected, "all captures")
    }

    @Test func binaryReportsRejectionsAndStillSucceeds() throws {
        let fixture = try #require(Captures.all.first { $0.testDescription == "gatt-health/bad-weight-scale" })
        let output = try IngestdBinary.run(["decode", fixture.path, "--json", "--tz", Captures.zoneName])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("frames rejected, gatt-health: short-frame: 2"), "\(output.stderr)")
        #expect(output.stderr.contains("frames rejected, gatt-health: reserved-flags: 1"), "\(output.stderr)")
    }

    @Test func binaryDecodesAnUnsupportedDeviceToNothing() throws {
        let path = Captures.directory.appendingPathComponent("unsupported/dsd6_btsnoop_hci.log").path
        let output = try IngestdBinary.run(["decode", path, "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("571 records, 12 advertisements, 1 connections, 28 notifications"),
                "\(output.stderr)")
    }
}

/// Runs the `ingestd` built next to the test bundle (SwiftPM puts all products in one directory).
enum IngestdBinary {
    static var url: URL? {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for directory in candidates {
            let binary = directory.appendingPathComponent("ingestd")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return nil
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String]) throws -> Output {
        let binary = try #require(url, "the ingestd binary was not built next to the tests")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read stderr on another thread so that neither pipe can fill up and block the child.
        let errorData = ErrorCollector()
        let reader = Thread { errorData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = errorData.wait()
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Hands stderr's bytes from the reading thread to the test.
    private final class ErrorCollector: @unchecked Sendable {
        private let condition = NSCondition()
        private var data: Data?

        func set(_ value: Data) {
            condition.lock()
            data = value
            condition.signal()
            condition.unlock()
        }

        func wait() -> Data {
            condition.lock()
            defer { condition.unlock() }
            while data == nil { condition.wait() }
            return data ?? Data()
        }
    }
}

import ArgumentParsing
import Foundation
import Logging
import Testing

/// Issue 23: counts bounded by their range, one duration parser, and output streams whose
/// write errors end the run non-zero.
@Suite struct BoundedValuesTests {
    /// A command with a count and a duration, printing what it read.
    struct Counting: Command {
        static let configuration = CommandConfiguration(name: "counting")
        static let signature = Signature {
            Option("batch-size", valueName: "N", default: "1000")
            Option("backoff", valueName: "SECONDS", default: "1")
        }
        let batchSize: Int
        let backoff: Double
        init(_ arguments: ParsedValues) throws {
            batchSize = try arguments.count("batch-size", in: 1...100_000) ?? 1000
            backoff = try arguments.seconds("backoff", in: 0...60) ?? 1
        }
        func run(_ context: CommandContext) async throws { context.stdout.writeLine("\(batchSize) \(backoff)") }
    }

    private func run(_ arguments: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        let stdout = CapturingWriter()
        let stderr = CapturingWriter()
        let status = await CommandLineRunner.run(root: Counting.self, arguments: arguments,
                                                 context: CommandContext(stdout: stdout, stderr: stderr))
        return (status, stdout.text, stderr.text)
    }

    @Test(arguments: ["100000000", "2147483648", "0", "-1", "100001", "99999999999999999999"])
    func aCountOutsideItsRangeIsAUsageErrorNamingTheRange(value: String) async {
        let result = await run(["--batch-size", value])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: invalid value '\(value)' for --batch-size: "), "\(result.stderr)")
        if Int(value) != nil { #expect(result.stderr.contains("must be 1...100000"), "\(result.stderr)") }
        #expect(result.stdout.isEmpty)
    }

    @Test func countsAndDurationsInsideTheirRangesAreRead() async {
        #expect(await run(["--batch-size", "100000", "--backoff", "0.5"]).stdout == "100000 0.5\n")
        #expect(await run(["--backoff", "1m"]).stdout == "1000 60.0\n")
        #expect(await run(["--backoff", "250ms"]).stdout == "1000 0.25\n")
        #expect(await run(["--backoff", "61"]).status == 64)
    }

    @Test(arguments: ["0x10", "0x1p3", "1e1", "+5", "-1", ".5", "5.", "inf", "nan", " 5", "5 s", "5x", "", "1..2"])
    func oddDurationsAreRefused(text: String) async {
        #expect(throws: InvalidArgumentValue.self, "\(text)") { try DurationArgument.seconds(text) }
        let result = await run(["--backoff=\(text)"])
        #expect(result.status == 64, "\(text): \(result.stdout)")
    }

    @Test func durationsWithUnits() throws {
        #expect(try DurationArgument.seconds("30") == 30)
        #expect(try DurationArgument.seconds("0.25") == 0.25)
        #expect(try DurationArgument.seconds("30s") == 30)
        #expect(try DurationArgument.seconds("15m") == 900)
        #expect(try DurationArgument.seconds("1h") == 3600)
        #expect(try DurationArgument.seconds("1d") == 86_400)
        #expect(try DurationArgument.seconds("250ms") == 0.25)
    }

    @Test func numbersAreDecimalOnly() {
        #expect(Double(argument: "72.5") == 72.5)
        #expect(Double(argument: "-3") == -3)
        #expect(Double(argument: "0x10") == nil)
        #expect(Double(argument: "0x1p3") == nil)
        #expect(Double(argument: "infinity") == nil)
    }

    // MARK: Output streams

    @Test func aWriterOnAFullDeviceKeepsTheErrorAndStops() throws {
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let writer = FileDescriptorWriter(fileDescriptor: descriptor, buffering: .none)
        #expect(writer.writeError == nil)
        writer.writeLine("a line")
        #expect(writer.writeError == OutputWriteError(code: ENOSPC))
        #expect(writer.writeError?.description == "No space left on device")
        #expect(!writer.isReaderGone)
    }

    @Test func aSuccessfulCommandWhoseStdoutFailedExitsOneWithAnError() async throws {
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let stderr = CapturingWriter()
        let context = CommandContext(stdout: FileDescriptorWriter(fileDescriptor: descriptor, buffering: .full), stderr: stderr)
        let status = await CommandLineRunner.run(root: Counting.self, arguments: [], context: context)
        #expect(status == 1)
        #expect(stderr.text == "error: cannot write to standard output: No space left on device\n")
    }

    @Test func aReaderThatWentAwayStaysQuiet() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        signal(SIGPIPE, SIG_IGN)
        let stderr = CapturingWriter()
        let context = CommandContext(stdout: FileDescriptorWriter(fileDescriptor: ends[1], buffering: .full), stderr: stderr)
        let status = await CommandLineRunner.run(root: Counting.self, arguments: [], context: context)
        #expect(status == 0)
        #expect(stderr.text.isEmpty)
    }
}

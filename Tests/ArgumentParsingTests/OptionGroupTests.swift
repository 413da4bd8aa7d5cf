import ArgumentParsing
import Logging
import Testing

/// Option groups: declared once, listed in any signature, read into typed values.
@Suite struct OptionGroupTests {
    struct OutputOptions: OptionGroup {
        /// Declared and read through one typed handle.
        static let limitOption = TypedOption<Int>(Option("limit", valueName: "N", help: "At most N lines."))

        static var arguments: [ArgumentElement] {
            [limitOption.element, Flag("json", help: "Print JSON.").element]
        }

        var limit: Int?
        var json: Bool

        init(_ values: ParsedValues) throws {
            limit = try values.value(Self.limitOption)
            json = values.flag("json")
        }
    }

    struct List: Command {
        static let configuration = CommandConfiguration(name: "list", abstract: "Lists things.")
        static let signature = Signature {
            Positional("KIND", help: "What to list.")
            OutputOptions.self
        }

        var kind: String
        var output: OutputOptions

        init(_ arguments: ParsedValues) throws {
            kind = try arguments.required("kind")
            output = try OutputOptions(arguments)
        }

        func run(_ context: CommandContext) async throws {
            context.stdout.write("\(kind) limit=\(output.limit.map(String.init) ?? "-") json=\(output.json)\n")
        }
    }

    func run(_ arguments: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        await Self.run(List.self, arguments)
    }

    /// `root` run with `arguments`: its exit status and what it wrote.
    static func run(_ root: any Command.Type, _ arguments: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        let stdout = CapturingWriter()
        let stderr = CapturingWriter()
        let context = CommandContext(stdout: stdout, stderr: stderr, environment: [:],
                                     logger: Logger(label: "test", handler: RecordingLogHandler()))
        let status = await CommandLineRunner.run(root: root, arguments: arguments, context: context)
        return (status, stdout.text, stderr.text)
    }

    @Test func aGroupsOptionsAreParsedIntoItsTypedValues() async {
        let result = await run(["sources", "--limit", "3", "--json"])
        #expect(result.stdout == "sources limit=3 json=true\n", "\(result.stderr)")
        let defaults = await run(["sources"])
        #expect(defaults.stdout == "sources limit=- json=false\n", "\(defaults.stderr)")
    }

    @Test func aBadValueOfAGroupIsAUsageError() async {
        let result = await run(["sources", "--limit", "many"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("many"), "\(result.stderr)")
    }

    @Test func theGroupShowsInUsageWhereItIsListed() async {
        let result = await run(["--help"])
        #expect(result.stdout.contains("KIND [--limit N] [--json]"), "\(result.stdout)")
    }
}

import ArgumentParsing

/// `ingestd completions bash|zsh|fish`: a shell completion script generated from the command
/// tree, so it always knows the current commands and options.
struct CompletionsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "completions",
        abstract: "Print a shell completion script for bash, zsh or fish.",
        discussion: """
            The script completes command names, options and the values of options with a fixed \
            set of values. Load it in the current shell, or save it where your shell looks for \
            completions.
            """,
        examples: [
            "ingestd completions bash",
            "ingestd completions zsh",
            "ingestd completions fish",
        ]
    )

    static let shell = TypedPositional<String>(Positional("SHELL", help: "bash, zsh or fish."))
    static let signature = Signature {
        Self.shell
    }

    let shell: CompletionShell

    init(_ arguments: ParsedValues) throws {
        let name = try arguments.required(Self.shell)
        guard let shell = CompletionShell(rawValue: name) else {
            throw UsageError.invalidValue(
                name, argument: "SHELL",
                reason: "expected one of " + CompletionShell.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.shell = shell
    }

    func run(_ context: CommandContext) async throws {
        let generator = CompletionScriptGenerator(globalOptions: [CommandLineRunner.logLevelOption])
        context.stdout.write(generator.script(for: shell, root: Ingestd.self))
    }
}

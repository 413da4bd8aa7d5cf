/// A command of the command-line tool: its description, its arguments, and what it does.
///
/// Commands are plain types with no property wrappers: `signature` declares the arguments,
/// `init(_:)` reads the parsed values (throwing `UsageError` for combinations the signature
/// cannot express), and `run(_:)` does the work. A command with `subcommands` in its
/// configuration is a group: the runner never runs it, only its subcommands.
///
/// ```swift
/// struct Samples: Command {
///     static let configuration = CommandConfiguration(name: "samples", abstract: "List stored samples.")
///     static let signature = Signature {
///         Positional("TYPE", help: "The quantity type.")
///         Option("limit", valueName: "N", help: "At most N samples.")
///         Flag("json", help: "One JSON object per line.")
///     }
///     let type: String, limit: Int?, json: Bool
///     init(_ arguments: ParsedValues) throws {
///         type = try arguments.required("type")
///         limit = try arguments.value("limit")
///         json = arguments.flag("json")
///     }
///     func run(_ context: CommandContext) async throws {
///         context.stdout.writeLine("\(type) \(limit ?? 0) \(json)")
///     }
/// }
/// ```
public protocol Command: Sendable {
    /// Name, help texts and subcommands.
    static var configuration: CommandConfiguration { get }
    /// The positionals, options and flags the command accepts; empty by default.
    static var signature: Signature { get }
    /// Builds the command from parsed values; throw `UsageError` for invalid combinations.
    init(_ arguments: ParsedValues) throws
    /// Does the work. Throw `CLIError` (or `ExitCode`) to choose the exit status.
    func run(_ context: CommandContext) async throws
}

extension Command {
    public static var signature: Signature { Signature() }

    /// Groups of subcommands are never run; this default exists so they need not implement it.
    public func run(_ context: CommandContext) async throws {
        throw CommandFailure.failure("'\(Self.configuration.name)' needs a subcommand")
    }
}

/// The description of a command: its name, help texts and subcommands.
public struct CommandConfiguration: Sendable {
    /// The word that selects the command, e.g. `stats`; for the root, the program name.
    public var name: String
    /// One line for the OVERVIEW and the parent's SUBCOMMANDS list.
    public var abstract: String
    /// Longer help shown under the overview; paragraphs separated by blank lines.
    public var discussion: String
    /// Printed by `--version`; only meaningful on the root command.
    public var version: String?
    /// The commands under this one, in the order help lists them.
    public var subcommands: [any Command.Type]
    /// The subcommand run when none is named, e.g. `run` for `ingestd` alone.
    public var defaultSubcommand: (any Command.Type)?
    /// Replaces the generated usage after the command names, e.g. `SOURCE TYPE...|--all`.
    public var usage: String?
    /// Complete command lines shown under EXAMPLES in help and the man page, e.g.
    /// `ingestd samples HeartRate --newest 5`; each must parse against the command tree.
    public var examples: [String]

    public init(
        name: String,
        abstract: String = "",
        discussion: String = "",
        version: String? = nil,
        subcommands: [any Command.Type] = [],
        defaultSubcommand: (any Command.Type)? = nil,
        usage: String? = nil,
        examples: [String] = []
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        self.usage = usage
        self.examples = examples
    }
}

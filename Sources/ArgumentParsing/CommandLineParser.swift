/// What the command line asks for: which command, with which values, to do what.
public struct Invocation: Sendable {
    /// Run the command, show its help, print the version, or print the man page.
    public enum Action: Sendable, Equatable {
        case run
        case help
        case version
        /// `help --man`: the whole command tree as a roff man page.
        case manual
    }

    /// The commands from the root to the selected one; never empty.
    public var commandPath: [any Command.Type]
    /// Everything parsed along the path, for `Command.init(_:)`.
    public var values: ParsedValues
    public var action: Action

    /// The selected command.
    public var command: any Command.Type {
        commandPath[commandPath.count - 1]
    }

    /// The names along the path, e.g. `["ingestd", "units", "convert"]`.
    public var commandNames: [String] {
        commandPath.map { $0.configuration.name }
    }
}

/// A usage error together with the command it was found in, whose usage line goes with it.
public struct ParseFailure: Error, Sendable {
    public var error: UsageError
    /// The commands from the root to where parsing stopped; never empty.
    public var commandPath: [any Command.Type]
}

/// Parses arguments (without the program name) against a tree of commands.
///
/// Rules: `--name value` and `--name=value` for options, `-x` for short names, `--` ends
/// options, `-` alone and negative numbers are positionals. In a command with subcommands the
/// first positional word selects the subcommand; an unknown option or word there falls
/// through to the default subcommand when there is one. `-h`/`--help` anywhere before `--`
/// asks for the help of the command reached so far; `help COMMAND...` at the root asks for the
/// help of that command (`help --man` prints the man page of the whole tree); `-V`/`--version`
/// is accepted by every command when the root has a version.
public struct CommandLineParser: Sendable {
    public var root: any Command.Type
    /// Options every command accepts, e.g. `--log-level`.
    public var globalOptions: [Option]

    public init(root: any Command.Type, globalOptions: [Option] = []) {
        self.root = root
        self.globalOptions = globalOptions
    }

    public func parse(_ arguments: [String]) throws(ParseFailure) -> Invocation {
        var state = ParseState(arguments: arguments, path: [root], globalOptions: globalOptions)
        do {
            return try state.parse()
        } catch {
            throw ParseFailure(error: error, commandPath: state.path)
        }
    }
}

/// The meaning of one word of the command line.
private enum Token {
    case separator
    case positional(String)
    /// `--name` or `--name=value`.
    case long(name: String, inlineValue: String?)
    /// `-x`.
    case short(Character)
    /// Starts with a dash but names nothing we could look up, e.g. `-abc`.
    case malformed(String)

    init(_ word: String) {
        if word == "--" {
            self = .separator
        } else if word.hasPrefix("--") {
            let body = word.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                self = .long(name: String(body[..<equals]), inlineValue: String(body[body.index(after: equals)...]))
            } else {
                self = .long(name: String(body), inlineValue: nil)
            }
        } else if word.hasPrefix("-") && word.count > 1 {
            if Double(word) != nil {
                self = .positional(word)
            } else if word.count == 2, let letter = word.last {
                self = .short(letter)
            } else {
                self = .malformed(word)
            }
        } else {
            self = .positional(word)
        }
    }

    var isPositional: Bool {
        if case .positional = self { true } else { false }
    }
}

/// What a name on the command line refers to in the current command.
private enum NamedArgument {
    case option(Option)
    case flag(Flag)
    case groupFlag(Flag, group: ExclusiveFlags)
    case help
    case version
}

/// The options and flags one command accepts: its own, those its ancestors pass down, the
/// global ones and the built-in `--help` (and `--version` at the root).
private struct NameTable {
    private var long: [String: NamedArgument] = [:]
    private var short: [Character: NamedArgument] = [:]
    /// Every accepted spelling, for suggestions.
    private(set) var spellings: [String] = []

    init(path: [any Command.Type], globalOptions: [Option]) {
        for (depth, command) in path.enumerated() {
            let isCurrent = depth == path.count - 1
            for element in command.signature.elements {
                switch element {
                case .option(let option) where isCurrent || option.isInherited:
                    add(.option(option), long: option.name, short: option.shortName)
                case .flag(let flag) where isCurrent || flag.isInherited:
                    add(.flag(flag), long: flag.name, short: flag.shortName)
                case .exclusiveFlags(let group) where isCurrent:
                    for flag in group.flags {
                        add(.groupFlag(flag, group: group), long: flag.name, short: flag.shortName)
                    }
                default:
                    break
                }
            }
        }
        for option in globalOptions {
            add(.option(option), long: option.name, short: option.shortName)
        }
        add(.help, long: "help", short: "h")
        if path[0].configuration.version != nil {
            if long["version"] == nil { add(.version, long: "version", short: nil) }
            if short["V"] == nil { short["V"] = .version; spellings.append("-V") }
        }
    }

    private mutating func add(_ named: NamedArgument, long name: String, short letter: Character?) {
        long[name] = named
        spellings.append("--\(name)")
        if let letter {
            short[letter] = named
            spellings.append("-\(letter)")
        }
    }

    /// The argument a token names, or `nil` if this command knows no such name.
    func lookUp(_ token: Token) -> NamedArgument? {
        switch token {
        case .long(let name, _): long[name]
        case .short(let letter): short[letter]
        case .separator, .positional, .malformed: nil
        }
    }

    func unknownOptionError(_ word: String) -> UsageError {
        Self.unknownOptionError(word, among: spellings)
    }

    static func unknownOptionError(_ word: String, among spellings: [String]) -> UsageError {
        let typed = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
        return .unknownOption(typed, suggestion: EditDistance.nearest(to: typed, among: spellings))
    }
}

/// The mutable state of one parse.
private struct ParseState {
    let arguments: [String]
    var path: [any Command.Type]
    let globalOptions: [Option]
    var index = 0
    var values = ParsedValues()

    init(arguments: [String], path: [any Command.Type], globalOptions: [Option]) {
        self.arguments = arguments
        self.path = path
        self.globalOptions = globalOptions
        for option in globalOptions {
            values.declare(.option(option))
        }
        for command in path {
            declare(command)
        }
    }

    private var current: any Command.Type {
        path[path.count - 1]
    }

    private var commandNames: String {
        path.map { $0.configuration.name }.joined(separator: " ")
    }

    private mutating func declare(_ command: any Command.Type) {
        for element in command.signature.elements {
            values.declare(element)
        }
    }

    private mutating func descend(into command: any Command.Type) {
        path.append(command)
        declare(command)
    }

    private func invocation(_ action: Invocation.Action) -> Invocation {
        Invocation(commandPath: path, values: values, action: action)
    }

    mutating func parse() throws(UsageError) -> Invocation {
        while !current.configuration.subcommands.isEmpty {
            if let finished = try parseGroupLevel() {
                return finished
            }
        }
        return try parseLeaf()
    }

    /// Consumes the words belonging to a command with subcommands and descends one level.
    /// Returns an invocation when the words ask for help or the version instead.
    private mutating func parseGroupLevel() throws(UsageError) -> Invocation? {
        let configuration = current.configuration
        let table = NameTable(path: path, globalOptions: globalOptions)
        while index < arguments.count {
            let word = arguments[index]
            let token = Token(word)
            switch token {
            case .separator:
                guard let fallback = configuration.defaultSubcommand else {
                    throw .missingSubcommand(parent: commandNames)
                }
                descend(into: fallback)
                return nil
            case .positional(let name):
                if let subcommand = configuration.subcommands.first(where: { $0.configuration.name == name }) {
                    index += 1
                    descend(into: subcommand)
                    return nil
                }
                if path.count == 1 && name == "help" {
                    index += 1
                    return try parseHelpCommand()
                }
                if let fallback = configuration.defaultSubcommand, !fallback.signature.positionals.isEmpty {
                    descend(into: fallback)
                    return nil
                }
                var candidates = configuration.subcommands.map { $0.configuration.name }
                if path.count == 1 { candidates.append("help") }
                throw .unknownSubcommand(
                    name, parent: commandNames,
                    suggestion: EditDistance.nearest(to: name, among: candidates))
            case .long, .short, .malformed:
                guard let named = table.lookUp(token) else {
                    guard let fallback = configuration.defaultSubcommand else {
                        throw table.unknownOptionError(word)
                    }
                    descend(into: fallback)
                    let fallbackTable = NameTable(path: path, globalOptions: globalOptions)
                    if fallbackTable.lookUp(token) == nil {
                        // Known to neither: suggest from both, report in the default subcommand.
                        throw NameTable.unknownOptionError(word, among: table.spellings + fallbackTable.spellings)
                    }
                    return nil
                }
                if let action = try consume(named, token: token) {
                    return invocation(action)
                }
            }
        }
        guard let fallback = configuration.defaultSubcommand else {
            throw .missingSubcommand(parent: commandNames)
        }
        descend(into: fallback)
        return nil
    }

    /// `help [COMMAND [SUBCOMMAND...]]`: the help of the named command.
    private mutating func parseHelpCommand() throws(UsageError) -> Invocation {
        if index < arguments.count, arguments[index] == "--man" {
            index += 1
            guard index == arguments.count else { throw .unexpectedArgument(arguments[index]) }
            return invocation(.manual)
        }
        while index < arguments.count {
            let word = arguments[index]
            guard Token(word).isPositional else { break }
            let subcommands = current.configuration.subcommands
            guard !subcommands.isEmpty else { throw .unexpectedArgument(word) }
            guard let subcommand = subcommands.first(where: { $0.configuration.name == word }) else {
                throw .unknownSubcommand(
                    word, parent: commandNames,
                    suggestion: EditDistance.nearest(to: word, among: subcommands.map { $0.configuration.name }))
            }
            descend(into: subcommand)
            index += 1
        }
        return invocation(.help)
    }

    private mutating func parseLeaf() throws(UsageError) -> Invocation {
        let remainder = arguments[index...]
        let optionsPart = remainder.prefix { $0 != "--" }
        if optionsPart.contains("--help") || optionsPart.contains("-h") {
            return invocation(.help)
        }
        let table = NameTable(path: path, globalOptions: globalOptions)
        var positionalWords: [String] = []
        while index < arguments.count {
            let word = arguments[index]
            let token = Token(word)
            switch token {
            case .separator:
                positionalWords.append(contentsOf: arguments[(index + 1)...])
                index = arguments.count
            case .positional(let value):
                positionalWords.append(value)
                index += 1
            case .long, .short, .malformed:
                guard let named = table.lookUp(token) else {
                    throw table.unknownOptionError(word)
                }
                if let action = try consume(named, token: token) {
                    return invocation(action)
                }
            }
        }
        try assignPositionals(positionalWords)
        try checkRequired()
        return invocation(.run)
    }

    /// Records one option or flag starting at `index` and moves past it (and its value).
    /// Returns an action for `--help` and `--version`.
    private mutating func consume(_ named: NamedArgument, token: Token) throws(UsageError) -> Invocation.Action? {
        index += 1
        var inlineValue: String?
        if case .long(_, let value) = token { inlineValue = value }
        switch named {
        case .help:
            return .help
        case .version:
            return .version
        case .option(let option):
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, arguments[index] == "-" || Token(arguments[index]).isPositional {
                value = arguments[index]
                index += 1
            } else {
                throw .missingValue(option: option.spelling, valueName: option.valueName)
            }
            if let allowed = option.allowedValues, !allowed.contains(value) {
                throw .invalidValue(
                    value, argument: option.spelling,
                    reason: "expected one of " + allowed.joined(separator: ", "))
            }
            if !option.isRepeatable && values.hasValue(option.name) {
                throw .repeatedOption(option.spelling)
            }
            values.append(value, for: option.name)
        case .flag(let flag):
            if let inlineValue { throw .flagWithValue(flag.spelling, value: inlineValue) }
            values.setFlag(flag.name)
        case .groupFlag(let flag, let group):
            if let inlineValue { throw .flagWithValue(flag.spelling, value: inlineValue) }
            if let earlier = values.choiceIfDeclared(group.key), earlier != flag.name {
                throw .conflictingFlags("--\(earlier)", flag.spelling)
            }
            values.setChoice(flag.name, group: group.key)
        }
        return nil
    }

    /// Hands the positional words to the positionals in order: required ones first claim one
    /// word each, optional ones take a word if enough remain, a variadic one takes the rest.
    private mutating func assignPositionals(_ words: [String]) throws(UsageError) {
        let positionals = current.signature.positionals
        var remaining = words[...]
        for (position, positional) in positionals.enumerated() {
            let neededLater = positionals[(position + 1)...].reduce(0) { $0 + $1.minimumCount }
            switch positional.arity {
            case .required:
                guard let word = remaining.popFirst() else { throw .missingArgument(positional.valueName) }
                values.append(word, for: positional.key)
            case .optional:
                if remaining.count > neededLater, let word = remaining.popFirst() {
                    values.append(word, for: positional.key)
                }
            case .variadic(let minimum):
                let available = max(remaining.count - neededLater, 0)
                guard available >= minimum else { throw .missingArgument(positional.valueName) }
                for word in remaining.prefix(available) {
                    values.append(word, for: positional.key)
                }
                remaining = remaining.dropFirst(available)
            }
        }
        if let extra = remaining.first {
            throw .unexpectedArgument(extra)
        }
    }

    private func checkRequired() throws(UsageError) {
        for element in current.signature.elements {
            switch element {
            case .option(let option) where option.isRequired && !values.hasValue(option.name):
                throw .missingOption(option.spelling, valueName: option.valueName)
            case .exclusiveFlags(let group) where group.isRequired && values.choiceIfDeclared(group.key) == nil:
                throw .missingFlag(oneOf: group.flags.map(\.spelling))
            default:
                break
            }
        }
    }
}

extension Positional {
    /// The fewest words this positional needs.
    fileprivate var minimumCount: Int {
        switch arity {
        case .required: 1
        case .optional: 0
        case .variadic(let minimum): minimum
        }
    }
}

/// Finds mistakes in command declarations that the compiler cannot: positionals in an order
/// the parser cannot fill, names used twice, a default subcommand that is not a subcommand.
///
/// Meant for a test over the whole tree: `#expect(CommandTreeValidator.problems(root: Ingestd.self) == [])`.
public enum CommandTreeValidator {
    /// One sentence per problem, each naming the command path; empty when all is well.
    public static func problems(root: any Command.Type, globalOptions: [Option] = [CommandLineRunner.logLevelOption]) -> [String] {
        var problems: [String] = []
        visit([root], globalOptions: globalOptions, problems: &problems)
        return problems
    }

    private static func visit(_ path: [any Command.Type], globalOptions: [Option], problems: inout [String]) {
        let command = path[path.count - 1]
        let configuration = command.configuration
        let place = "'" + path.map { $0.configuration.name }.joined(separator: " ") + "'"
        let elements = command.signature.elements

        checkPositionals(command.signature.positionals, in: place, isGroup: !configuration.subcommands.isEmpty, problems: &problems)
        checkNames(path, globalOptions: globalOptions, in: place, problems: &problems)

        var keys: [String: Int] = [:]
        for element in elements {
            switch element {
            case .positional(let positional): keys[positional.key, default: 0] += 1
            case .option(let option):
                keys[option.name, default: 0] += 1
                if let allowed = option.allowedValues, let defaultValue = option.defaultValue, !allowed.contains(defaultValue) {
                    problems.append("\(place): default '\(defaultValue)' of \(option.spelling) is not an allowed value")
                }
            case .exclusiveFlags(let group):
                keys[group.key, default: 0] += 1
                if group.flags.count < 2 {
                    problems.append("\(place): exclusive group '\(group.key)' has fewer than two flags")
                }
            case .flag:
                break
            }
        }
        for (key, count) in keys.sorted(by: { $0.key < $1.key }) where count > 1 {
            problems.append("\(place): key '\(key)' is declared \(count) times")
        }

        var subcommandNames: Set<String> = []
        for subcommand in configuration.subcommands {
            let name = subcommand.configuration.name
            if !subcommandNames.insert(name).inserted {
                problems.append("\(place): subcommand '\(name)' appears twice")
            }
        }
        if let fallback = configuration.defaultSubcommand,
            !configuration.subcommands.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(fallback) })
        {
            problems.append("\(place): default subcommand '\(fallback.configuration.name)' is not among its subcommands")
        }
        for subcommand in configuration.subcommands {
            visit(path + [subcommand], globalOptions: globalOptions, problems: &problems)
        }
    }

    private static func checkPositionals(_ positionals: [Positional], in place: String, isGroup: Bool, problems: inout [String]) {
        if isGroup && !positionals.isEmpty {
            problems.append("\(place): a command with subcommands cannot take positionals")
        }
        // Required ones, then optional ones, then at most one variadic at the end.
        var stage = 0
        for positional in positionals {
            let positionalStage: Int
            switch positional.arity {
            case .required: positionalStage = 0
            case .optional: positionalStage = 1
            case .variadic: positionalStage = 2
            }
            if positionalStage < stage || (positionalStage == 2 && stage == 2) {
                problems.append("\(place): positional \(positional.label) cannot follow an optional or variadic one")
            }
            stage = max(stage, positionalStage)
        }
    }

    private static func checkNames(_ path: [any Command.Type], globalOptions: [Option], in place: String, problems: inout [String]) {
        var longNames: [String] = ["help"]
        var shortNames: [Character] = ["h"]
        if path.count == 1, path[0].configuration.version != nil { longNames.append("version") }
        for option in globalOptions {
            longNames.append(option.name)
            if let letter = option.shortName { shortNames.append(letter) }
        }
        for (depth, command) in path.enumerated() {
            let isCurrent = depth == path.count - 1
            for element in command.signature.elements where isCurrent || element.isInherited {
                switch element {
                case .option(let option):
                    longNames.append(option.name)
                    if let letter = option.shortName { shortNames.append(letter) }
                case .flag(let flag):
                    longNames.append(flag.name)
                    if let letter = flag.shortName { shortNames.append(letter) }
                case .exclusiveFlags(let group):
                    for flag in group.flags {
                        longNames.append(flag.name)
                        if let letter = flag.shortName { shortNames.append(letter) }
                    }
                case .positional:
                    break
                }
            }
        }
        for name in Set(longNames).sorted() where longNames.count(where: { $0 == name }) > 1 {
            problems.append("\(place): --\(name) is declared more than once")
        }
        for letter in Set(shortNames).sorted() where shortNames.count(where: { $0 == letter }) > 1 {
            problems.append("\(place): -\(letter) is declared more than once")
        }
    }
}

/// The commands of a tree in help order, each with its path from the root, depth first.
///
/// The tree is static, but the walk still stops at `maximumDepth` levels so a command that lists
/// an ancestor among its subcommands cannot make it loop.
struct CommandTreeWalk {
    static let maximumDepth = 8

    /// Every path from `root` (the root alone first), parents before their subcommands.
    static func paths(from root: any Command.Type) -> [[any Command.Type]] {
        var result: [[any Command.Type]] = []
        visit([root], into: &result)
        return result
    }

    private static func visit(_ path: [any Command.Type], into result: inout [[any Command.Type]]) {
        result.append(path)
        guard path.count < maximumDepth else { return }
        for subcommand in path[path.count - 1].configuration.subcommands {
            visit(path + [subcommand], into: &result)
        }
    }

    /// The long and short spellings a command accepts (its own, inherited ones, the global ones,
    /// `--help` and, when the root has a version, `--version`), with help texts.
    static func spellings(
        for path: [any Command.Type], globalOptions: [Option]
    ) -> [(long: String, short: Character?, takesValue: Bool, allowedValues: [String]?, help: String)] {
        var result: [(long: String, short: Character?, takesValue: Bool, allowedValues: [String]?, help: String)] = []
        for (depth, command) in path.enumerated() {
            let isCurrent = depth == path.count - 1
            for element in command.signature.elements where isCurrent || element.isInherited {
                switch element {
                case .positional:
                    break
                case .option(let option):
                    result.append((option.name, option.shortName, true, option.allowedValues, option.help))
                case .flag(let flag):
                    result.append((flag.name, flag.shortName, false, nil, flag.help))
                case .exclusiveFlags(let group):
                    for flag in group.flags { result.append((flag.name, flag.shortName, false, nil, flag.help)) }
                }
            }
        }
        for option in globalOptions {
            result.append((option.name, option.shortName, true, option.allowedValues, option.help))
        }
        result.append(("help", "h", false, nil, "Show help information."))
        if path[0].configuration.version != nil {
            result.append(("version", "V", false, nil, "Show the version."))
        }
        return result
    }
}

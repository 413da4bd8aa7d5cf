/// Generates usage lines, help pages and usage-error reports from command declarations.
///
/// A help page has the sections OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS and EXAMPLES (empty
/// ones left out). In ARGUMENTS, OPTIONS and SUBCOMMANDS the descriptions start in one common
/// column; a label too long for it stands on its own line.
public struct HelpFormatter: Sendable {
    /// Options every command accepts, listed at the end of each OPTIONS section.
    public var globalOptions: [Option]
    /// Lines are wrapped to this many columns.
    public var width: Int
    /// Labels longer than this do not widen the label column.
    public var maximumLabelWidth: Int

    public init(globalOptions: [Option] = [], width: Int = 80, maximumLabelWidth: Int = 26) {
        self.globalOptions = globalOptions
        self.width = width
        self.maximumLabelWidth = maximumLabelWidth
    }

    // MARK: Usage

    /// The usage of the last command of `path`, e.g. `ingestd stats TYPE --sum|--average [--json]`.
    public func usage(for path: [any Command.Type]) -> String {
        ([commandNames(path)] + usageItems(for: path)).joined(separator: " ")
    }

    /// The three lines printed for a usage error: the error, the usage, where to find help.
    public func usageError(_ error: UsageError, path: [any Command.Type]) -> String {
        """
        error: \(error.description)
        Usage: \(usage(for: path))
        See '\(helpCommand(for: path))' for more.

        """
    }

    /// How to ask for the help of the last command of `path`: `ingestd help stats`, or
    /// `ingestd --help` for the root.
    public func helpCommand(for path: [any Command.Type]) -> String {
        guard path.count > 1 else { return "\(path[0].configuration.name) --help" }
        let names = path.map { $0.configuration.name }
        return ([names[0], "help"] + names.dropFirst()).joined(separator: " ")
    }

    private func commandNames(_ path: [any Command.Type]) -> String {
        path.map { $0.configuration.name }.joined(separator: " ")
    }

    func usageItems(for path: [any Command.Type]) -> [String] {
        let command = path[path.count - 1]
        if let custom = command.configuration.usage {
            return [custom]
        }
        var items = command.signature.elements.map(usageItem)
        for ancestor in path.dropLast() {
            for element in ancestor.signature.elements where element.isInherited {
                items.append(usageItem(element))
            }
        }
        if !command.configuration.subcommands.isEmpty {
            items.append(command.configuration.defaultSubcommand == nil ? "<subcommand>" : "[<subcommand>]")
        }
        return items
    }

    private func usageItem(_ element: ArgumentElement) -> String {
        switch element {
        case .positional(let positional):
            switch positional.arity {
            case .required: positional.valueName
            case .optional: "[\(positional.valueName)]"
            case .variadic(let minimum): minimum > 0 ? "\(positional.valueName)..." : "[\(positional.valueName)...]"
            }
        case .option(let option):
            option.isRequired
                ? "\(option.spelling) \(option.valueName)" + (option.isRepeatable ? "..." : "")
                : "[\(option.spelling) \(option.valueName)]" + (option.isRepeatable ? "..." : "")
        case .flag(let flag):
            "[\(flag.spelling)]"
        case .exclusiveFlags(let group):
            group.isRequired ? group.label : "[\(group.label)]"
        }
    }

    // MARK: Help page

    /// The help page of the last command of `path`, ending in a newline.
    public func help(for path: [any Command.Type]) -> String {
        let command = path[path.count - 1]
        let configuration = command.configuration
        var sections: [String] = []

        if !configuration.abstract.isEmpty || !configuration.discussion.isEmpty {
            var overview = configuration.abstract.isEmpty
                ? ""
                : wrap(configuration.abstract, firstPrefix: "OVERVIEW: ", indent: 2)
            if !configuration.discussion.isEmpty {
                if !overview.isEmpty { overview += "\n\n" }
                overview += formatDiscussion(configuration.discussion)
            }
            sections.append(overview)
        }
        sections.append(wrapUsage(for: path))

        let argumentRows = command.signature.positionals.map { Row(label: $0.label, text: $0.help) }
        let optionRows = optionRows(for: path)
        var subcommandRows = configuration.subcommands.map { subcommand in
            let isDefault = configuration.defaultSubcommand.map { ObjectIdentifier($0) == ObjectIdentifier(subcommand) } ?? false
            return Row(
                label: subcommand.configuration.name + (isDefault ? " (default)" : ""),
                text: subcommand.configuration.abstract)
        }
        if path.count == 1 && !subcommandRows.isEmpty
            && !configuration.subcommands.contains(where: { $0.configuration.name == "help" })
        {
            subcommandRows.append(Row(label: "help", text: "Show help for a command."))
        }

        let allRows = argumentRows + optionRows + subcommandRows
        let labelWidth = min(allRows.map(\.label.count).max() ?? 0, maximumLabelWidth)
        let column = 2 + labelWidth + 2
        if !argumentRows.isEmpty {
            sections.append("ARGUMENTS:\n" + format(argumentRows, column: column))
        }
        if !optionRows.isEmpty {
            sections.append("OPTIONS:\n" + format(optionRows, column: column))
        }
        if !subcommandRows.isEmpty {
            let names = path.map { $0.configuration.name }
            let helpHint = ([names[0], "help"] + names.dropFirst() + ["<subcommand>"]).joined(separator: " ")
            sections.append(
                "SUBCOMMANDS:\n" + format(subcommandRows, column: column)
                    + "\n\n  See '\(helpHint)' for detailed help.")
        }
        if !configuration.examples.isEmpty {
            sections.append("EXAMPLES:\n" + configuration.examples.map { "  " + $0 }.joined(separator: "\n"))
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// One entry of ARGUMENTS, OPTIONS or SUBCOMMANDS.
    struct Row {
        var label: String
        var text: String
    }

    func optionRows(for path: [any Command.Type]) -> [Row] {
        var rows: [Row] = []
        for (depth, command) in path.enumerated() {
            let isCurrent = depth == path.count - 1
            for element in command.signature.elements where isCurrent || element.isInherited {
                switch element {
                case .positional:
                    break
                case .option(let option):
                    rows.append(row(for: option))
                case .flag(let flag):
                    rows.append(row(for: flag))
                case .exclusiveFlags(let group):
                    rows.append(contentsOf: group.flags.map(row(for:)))
                }
            }
        }
        rows.append(contentsOf: globalOptions.map(row(for:)))
        if let version = path[0].configuration.version, !version.isEmpty {
            rows.append(Row(label: "-V, --version", text: "Show the version."))
        }
        rows.append(Row(label: "-h, --help", text: "Show help information."))
        return rows
    }

    private func row(for option: Option) -> Row {
        var label = "\(option.spelling) \(option.valueName)"
        if let letter = option.shortName { label = "-\(letter), " + label }
        var notes: [String] = []
        if let allowed = option.allowedValues, option.valueName != allowed.joined(separator: "|") {
            notes.append("values: " + allowed.joined(separator: ", "))
        }
        if let defaultValue = option.defaultValue { notes.append("default: \(defaultValue)") }
        if option.isRepeatable { notes.append("repeatable") }
        var text = option.help
        if !notes.isEmpty {
            text += (text.isEmpty ? "" : " ") + "(" + notes.joined(separator: "; ") + ")"
        }
        return Row(label: label, text: text)
    }

    private func row(for flag: Flag) -> Row {
        Row(label: flag.shortName.map { "-\($0), \(flag.spelling)" } ?? flag.spelling, text: flag.help)
    }

    private func format(_ rows: [Row], column: Int) -> String {
        rows.map { row in
            let label = "  " + row.label
            if row.text.isEmpty { return label }
            let padding = String(repeating: " ", count: column)
            if label.count + 2 > column {
                return label + "\n" + wrap(row.text, firstPrefix: padding, indent: column)
            }
            let firstPrefix = label + String(repeating: " ", count: column - label.count)
            return wrap(row.text, firstPrefix: firstPrefix, indent: column)
        }.joined(separator: "\n")
    }

    private func wrapUsage(for path: [any Command.Type]) -> String {
        let prefix = "USAGE: " + commandNames(path)
        let indent = prefix.count + 1 <= width / 2 ? prefix.count + 1 : 8
        return wrap(words: usageItems(for: path), firstPrefix: prefix + " ", indent: indent)
    }

    /// The discussion with each paragraph wrapped; lines starting with a space are kept as
    /// written (examples, tables).
    private func formatDiscussion(_ discussion: String) -> String {
        let paragraphs = discussion.split(separator: "\n\n", omittingEmptySubsequences: true)
        return paragraphs.map { paragraph -> String in
            let lines = paragraph.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.contains(where: { $0.hasPrefix(" ") }) {
                return lines.map { "  " + $0 }.joined(separator: "\n")
            }
            return wrap(lines.joined(separator: " "), firstPrefix: "  ", indent: 2)
        }.joined(separator: "\n\n")
    }

    private func wrap(_ text: String, firstPrefix: String, indent: Int) -> String {
        wrap(words: text.split(separator: " ").map(String.init), firstPrefix: firstPrefix, indent: indent)
    }

    /// Places `words` after `firstPrefix`, starting a new line indented by `indent` whenever the
    /// next word would pass `width`. A word longer than a line stands alone.
    private func wrap(words: [String], firstPrefix: String, indent: Int) -> String {
        var lines: [String] = []
        var line = firstPrefix
        var lineHasWord = false
        for word in words {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent) + word
            } else {
                line += (lineHasWord ? " " : "") + word
            }
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}

extension ArgumentElement {
    /// Whether subcommands of the declaring command accept this element too.
    var isInherited: Bool {
        switch self {
        case .option(let option): option.isInherited
        case .flag(let flag): flag.isInherited
        case .positional, .exclusiveFlags: false
        }
    }
}

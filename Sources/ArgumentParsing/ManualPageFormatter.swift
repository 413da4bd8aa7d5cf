/// Writes a roff man page (section 1, the `man` macros) for a whole command tree, from the same
/// declarations help uses, so the page and `--help` cannot drift.
///
/// The page has NAME, SYNOPSIS, DESCRIPTION, COMMANDS (one subsection per command with its usage,
/// description, arguments, options and examples), GLOBAL OPTIONS and EXIT STATUS. Text is escaped
/// for roff: backslashes, leading dots and apostrophes, hyphens of options, and every non-ASCII
/// character as a `\[uXXXX]` escape, so the page renders without warnings with or without
/// `preconv`.
public struct ManualPageFormatter: Sendable {
    /// Options every command accepts, listed under GLOBAL OPTIONS.
    public var globalOptions: [Option]

    public init(globalOptions: [Option] = []) {
        self.globalOptions = globalOptions
    }

    /// The man page of `root` and everything under it, ending in a newline.
    public func manualPage(root: any Command.Type) -> String {
        let configuration = root.configuration
        let name = configuration.name
        let help = HelpFormatter(globalOptions: globalOptions)
        var lines: [String] = [
            ".TH \(escape(name.uppercased())) 1 \"\" \"\(escape(name + " " + (configuration.version ?? "")))\" \"User Commands\"",
            ".SH NAME",
            "\(escape(name)) \\- \(escape(configuration.abstract))",
            ".SH SYNOPSIS",
            ".B \(escape(name))",
            escape(help.usageItems(for: [root]).joined(separator: " ")),
            ".SH DESCRIPTION",
        ]
        lines += paragraphs(configuration.discussion)
        lines.append(".SH COMMANDS")
        for path in CommandTreeWalk.paths(from: root).dropFirst() {
            let command = path[path.count - 1].configuration
            lines.append(".SS \"\(escape(path.map { $0.configuration.name }.joined(separator: " ")))\"")
            if !command.abstract.isEmpty { lines.append(escape(command.abstract)) }
            lines.append(".PP")
            lines.append(".B Usage:")
            lines.append(escape(help.usage(for: path)))
            lines += paragraphs(command.discussion)
            let arguments = path[path.count - 1].signature.positionals
            for positional in arguments where !positional.help.isEmpty {
                lines += [".TP", ".I \(escape(positional.label))", escape(positional.help)]
            }
            let options = path[path.count - 1].signature.elements
            for element in options {
                switch element {
                case .positional:
                    break
                case .option(let option):
                    lines += optionEntry(label: "\(option.spelling) \(option.valueName)", short: option.shortName, help: option.help, defaultValue: option.defaultValue)
                case .flag(let flag):
                    lines += optionEntry(label: flag.spelling, short: flag.shortName, help: flag.help, defaultValue: nil)
                case .exclusiveFlags(let group):
                    for flag in group.flags {
                        lines += optionEntry(label: flag.spelling, short: flag.shortName, help: flag.help, defaultValue: nil)
                    }
                }
            }
            if !command.subcommands.isEmpty {
                lines += [".PP", "Subcommands: " + escape(command.subcommands.map { $0.configuration.name }.joined(separator: ", ")) + "."]
            }
            lines += examples(command.examples)
        }
        lines.append(".SH GLOBAL OPTIONS")
        for option in globalOptions {
            lines += optionEntry(label: "\(option.spelling) \(option.valueName)", short: option.shortName, help: option.help, defaultValue: option.defaultValue)
        }
        lines += optionEntry(label: "--help", short: "h", help: "Show help information.", defaultValue: nil)
        if configuration.version != nil {
            lines += optionEntry(label: "--version", short: "V", help: "Show the version.", defaultValue: nil)
        }
        lines += examples(configuration.examples)
        lines += [
            ".SH EXIT STATUS",
            ".TP", "0", "Success.",
            ".TP", "64", "Usage error: an unknown command, option or value; the message names it and suggests the nearest.",
            ".TP", "65", "Invalid input data.",
            ".TP", "66", "An input file could not be opened.",
            ".TP", "1", "Any other failure.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    private func optionEntry(label: String, short: Character?, help: String, defaultValue: String?) -> [String] {
        let spelled = (short.map { "-\($0), " } ?? "") + label
        var text = help
        if let defaultValue { text += (text.isEmpty ? "" : " ") + "(default: \(defaultValue))" }
        return [".TP", ".B \(escape(spelled, hyphens: true))", text.isEmpty ? "\\&" : escape(text)]
    }

    private func examples(_ examples: [String]) -> [String] {
        guard !examples.isEmpty else { return [] }
        return [".PP", ".B Examples:", ".RS", ".nf"] + examples.map { escape($0, hyphens: true) } + [".fi", ".RE"]
    }

    /// Paragraphs separated by blank lines; those with lines starting with a space are kept as
    /// written (examples, tables), the others filled by roff.
    private func paragraphs(_ text: String) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n\n", omittingEmptySubsequences: true) {
            let paragraphLines = paragraph.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            lines.append(".PP")
            if paragraphLines.contains(where: { $0.hasPrefix(" ") }) {
                lines += [".nf"] + paragraphLines.map { escape($0, hyphens: true) } + [".fi"]
            } else {
                lines.append(escape(paragraphLines.joined(separator: " ")))
            }
        }
        return lines
    }

    /// `text` safe as one roff text line.
    func escape(_ text: String, hyphens: Bool = false) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\e"
            case "-" where hyphens: result += "\\-"
            case "\n", "\r", "\t": result += " "
            default:
                if scalar.isASCII {
                    result.unicodeScalars.append(scalar)
                } else {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    result += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
                }
            }
        }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
        return result
    }
}

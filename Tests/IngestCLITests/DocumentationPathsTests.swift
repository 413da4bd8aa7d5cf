@testable import ArgumentParsing
import Foundation
import IngestCLI
import Testing

/// The user documentation stays true as the code moves: every repository path the documents
/// name exists, every link leads somewhere inside the repository (and its `#anchor` exists),
/// and every `ingestd` command shown, in a code block or backticked in the prose, is one
/// `ingestd help` knows: a concrete command parses with today's command tree (the commands
/// and options exist, the values fit); one with placeholders (`TYPE`, `<id>`, `T,…`) or
/// alternatives (`fhir|csv`) names known commands and options only.
@Suite struct DocumentationPathsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let topLevel = ["Sources/", "Tests/", "Plugins/", "scripts/", "udev/", "Fuzz/", ".ci/", "docs/"]

    /// README.md, Plugins/README.md and every guide under docs/.
    static let documents: [String] = {
        let guides = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return ["README.md", "Plugins/README.md"] + guides.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    static func text(of document: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
    }

    /// The backticked paths of a document: repository-relative, without placeholders (`<id>`) or globs.
    static func paths(in text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
            .filter { path in topLevel.contains { path.hasPrefix($0) } }
            .filter { !$0.contains("<") && !$0.contains("*") && !$0.contains(" ") }
    }

    @Test func theGuidesExist() {
        #expect(Self.documents.count >= 10, "documents: \(Self.documents)")
    }

    @Test(arguments: documents)
    func everyNamedPathExists(_ document: String) throws {
        let named = Self.paths(in: try Self.text(of: document))
        let missing = named.filter { !FileManager.default.fileExists(atPath: Self.root.appendingPathComponent($0).path) }
        #expect(missing.isEmpty, "\(document) names paths that do not exist: \(missing)")
    }

    // MARK: Links

    /// `[text](target)` links, `[name]: target` definitions and `<scheme://…>` autolinks of a
    /// Markdown text, outside code (spans in backticks are not links).
    static func links(in text: String) -> [String] {
        var targets: [String] = []
        for line in proseLines(of: text).map(withoutCodeSpans) {
            if line.hasPrefix("["), let definition = line.range(of: "]: ") {
                targets.append(String(line[definition.upperBound...].split(separator: " ").first ?? ""))
                continue
            }
            for word in line.split(separator: "<").dropFirst() where word.contains("://") {
                if let close = word.firstIndex(of: ">") { targets.append(String(word[..<close])) }
            }
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                targets.append(String(after[..<close]))
                rest = after[after.index(after: close)...]
            }
        }
        return targets
    }

    /// A line with its backticked spans removed.
    static func withoutCodeSpans(_ line: String) -> String {
        line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 0 }.map { String($0.element) }.joined()
    }

    /// The lines of a Markdown text that are not in a fenced or indented code block.
    static func proseLines(of text: String) -> [String] {
        var inFence = false
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if inFence || line.hasPrefix("    ") { continue }
            lines.append(line)
        }
        return lines
    }

    /// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes.
    static func anchor(ofHeading heading: String) -> String {
        String(heading.lowercased().compactMap { character -> Character? in
            if character == " " { return "-" }
            if character.isLetter || character.isNumber || character == "-" || character == "_" { return character }
            return nil
        })
    }

    static func anchors(in text: String) -> Set<String> {
        Set(proseLines(of: text).filter { $0.hasPrefix("#") }.map {
            anchor(ofHeading: $0.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces))
        })
    }

    @Test func linksOfEveryFormAreFound() {
        #expect(Self.links(in: "[a](x.md#b) and <https://example.com> `[c](code.md)`\n[d]: https://example.org \"t\"\n    [e](block.md)\n")
            == ["https://example.com", "x.md#b", "https://example.org"])
    }

    @Test func anchorsFollowGitHub() {
        #expect(Self.anchor(ofHeading: "A fleet: many gateways, one PostgreSQL database") == "a-fleet-many-gateways-one-postgresql-database")
        #expect(Self.anchor(ofHeading: "End-to-end tests in a VM (`scripts/vm-e2e/run`)") == "end-to-end-tests-in-a-vm-scriptsvm-e2erun")
    }

    @Test(arguments: documents)
    func everyRelativeLinkLeadsSomewhere(_ document: String) throws {
        let text = try Self.text(of: document)
        let base = Self.root.appendingPathComponent(document).deletingLastPathComponent()
        var broken: [String] = []
        for link in Self.links(in: text) {
            // The documents are read in the repository, offline too: nothing they link to may be outside it.
            if link.contains("://") || link.hasPrefix("mailto:") || link.hasPrefix("//") {
                broken.append(link + " (outside the repository)")
                continue
            }
            let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let file = parts[0].isEmpty ? Self.root.appendingPathComponent(document) : base.appendingPathComponent(parts[0]).standardized
            guard FileManager.default.fileExists(atPath: file.path) else { broken.append(link); continue }
            #expect(file.path.hasPrefix(Self.root.standardized.path + "/"), "\(document) links outside the repository: \(link)")
            if parts.count == 2, file.pathExtension == "md" {
                let targetText = try String(contentsOf: file, encoding: .utf8)
                if !Self.anchors(in: targetText).contains(parts[1]) { broken.append(link) }
            }
        }
        #expect(broken.isEmpty, "\(document) has links that lead nowhere: \(broken)")
    }

    // MARK: Commands

    /// The `ingestd …` command lines shown in a document's code blocks, one per command: a
    /// trailing ` # comment` dropped, backslash continuations joined, `a ; b` split, the optional
    /// parts written `[--json]` kept without their brackets.
    static func commands(in text: String) -> [String] {
        var inFence = false
        var codeLines: [String] = []
        var pending = ""
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            guard inFence || line.hasPrefix("    ") else { continue }
            var code = line.trimmingCharacters(in: .whitespaces)
            if code.hasSuffix("\\") {
                code.removeLast()
                pending += code.trimmingCharacters(in: .whitespaces) + " "
                continue
            }
            codeLines.append(pending + code)
            pending = ""
        }
        var commands: [String] = []
        for line in codeLines {
            let withoutComment = line.range(of: " #").map { String(line[..<$0.lowerBound]) } ?? line
            for part in withoutComment.components(separatedBy: " ; ") {
                if let command = ingestdCommand(in: part) { commands.append(command) }
            }
        }
        return commands
    }

    /// The `ingestd …` command of a shell line: after a `$ ` prompt, `sudo [-u ingestd]`,
    /// `NAME=value` settings, or inside `<(…)` / `$(…)`; nil when the line runs something else.
    static func ingestdCommand(in line: String) -> String? {
        var command = Substring(line.trimmingCharacters(in: .whitespaces))
        if let substitution = command.range(of: "(ingestd ") {
            command = command[command.index(after: substitution.lowerBound)...].prefix { $0 != ")" }
        }
        for prefix in ["$ ", "sudo -u ingestd ", "sudo "] where command.hasPrefix(prefix) { command = command.dropFirst(prefix.count) }
        while let first = command.split(separator: " ").first, first.contains("="), !first.hasPrefix("-"),
              first.first?.isUppercase == true {
            command = command.dropFirst(first.count).drop { $0 == " " }
        }
        return command.hasPrefix("ingestd ") || command == "ingestd" ? String(command) : nil
    }

    /// The `ingestd …` commands backticked in a document's prose (`ingestd stats TYPE --by day`),
    /// a span broken over lines joined; not `ingestd/…` topics, `ingestd:…` ids or
    /// `ingestd-adapter-…` programs.
    static func inlineCommands(in text: String) -> [String] {
        proseLines(of: text).joined(separator: "\n").split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }
            .compactMap { ingestdCommand(in: $0.element.replacingOccurrences(of: "\n", with: " ")) }
    }

    /// The part of a command line `ingestd` reads: what comes before a shell pipe (` | ` followed
    /// by a program, not by another option as in a synopsis `(--types T,… | --all-types)`) and
    /// without redirections (`2>&1`, `> file`).
    static func ingestdPart(of command: String) -> String {
        var words: [String] = []
        var skipNext = false
        let parts = command.components(separatedBy: " | ")
        var kept = parts[0]
        for next in parts.dropFirst() {
            guard next.trimmingCharacters(in: .whitespaces).hasPrefix("-") else { break }
            kept += " " + next
        }
        for word in kept.split(separator: " ").map(String.init) {
            if skipNext { skipNext = false; continue }
            if [">", ">>", "<", "2>", "&>"].contains(word) { skipNext = true; continue }
            if word.hasPrefix(">") || word.hasPrefix("2>") || word.hasPrefix("&>") || word.hasPrefix("<") && !word.hasSuffix(">") { continue }
            words.append(word)
        }
        return words.joined(separator: " ")
    }

    /// Shell words of a command line: single and double quotes group, `[` `]` of optional parts
    /// and `(` `)` of a synopsis' groups drop.
    static func words(of command: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in command {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == " " {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else if character == "[" || character == "]" || character == "(" || character == ")" {
                continue
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// The command lines a line with alternatives stands for: each word written `a|b|c` once as
    /// each of its alternatives (the other words as their first), the line itself when none.
    static func variants(of words: [String]) -> [[String]] {
        let first = words.map { String($0.split(separator: "|", omittingEmptySubsequences: false).first ?? "") }
        var variants = [first]
        for (index, word) in words.enumerated() where word.contains("|") {
            for alternative in word.split(separator: "|").dropFirst() {
                var variant = first
                variant[index] = String(alternative)
                variants.append(variant)
            }
        }
        return variants
    }

    /// A word standing for a value the reader chooses: `<id>`, `TYPE`, `T,…`, `FILE...`.
    static func isPlaceholder(_ word: String) -> Bool {
        word.contains("<") || word.contains("…") || word.contains("...")
            || (word.first?.isUppercase == true && word.allSatisfy { $0.isUppercase || $0.isNumber || "_-,=".contains($0) })
    }

    static let parser = CommandLineParser(root: Ingestd.self, globalOptions: [CommandLineRunner.logLevelOption])

    /// Why `ingestd help` would not know `arguments` (without the program name), nil when it
    /// does: the command words name a command, every option is one that command takes (its
    /// own, inherited or global), and a word where a group expects a command names one.
    /// Placeholders are not checked.
    static func unknownPart(of arguments: [String]) -> String? {
        var path: [any Command.Type] = [Ingestd.self]
        var rest = arguments[...]
        if rest.first == "help" { rest = rest.dropFirst() }
        while let word = rest.first, let current = path.last,
              let subcommand = current.configuration.subcommands.first(where: { $0.configuration.name == word }) {
            path.append(subcommand)
            rest = rest.dropFirst()
        }
        if path.count == 1, let word = rest.first, word.hasPrefix("-"), let run = Ingestd.configuration.defaultSubcommand {
            path.append(run)
        }
        let names = path.map { $0.configuration.name }.joined(separator: " ")
        let spellings = CommandTreeWalk.spellings(for: path, globalOptions: parser.globalOptions)
        guard let command = path.last else { return "no command" }
        var takesValue = false
        var positionals = 0
        for word in rest {
            if takesValue { takesValue = false; continue }
            if word.hasPrefix("--") {
                let name = String(word.dropFirst(2).prefix { $0 != "=" })
                guard let spelling = spellings.first(where: { $0.long == name }) else { return "\(names) has no option --\(name)" }
                takesValue = spelling.takesValue && !word.contains("=")
            } else if word.hasPrefix("-"), word.count == 2, let short = word.last, !short.isNumber {
                guard let spelling = spellings.first(where: { $0.short == short }) else { return "\(names) has no option \(word)" }
                takesValue = spelling.takesValue
            } else {
                if positionals == 0, !command.configuration.subcommands.isEmpty, command.signature.positionals.isEmpty,
                   !isPlaceholder(word) {
                    return "\(names) has no command \(word)"
                }
                positionals += 1
            }
        }
        return nil
    }

    @Test func wordsSplitLikeAShell() {
        #expect(Self.words(of: "ingestd sinks add s 'postgresql://a@b/c' --header 'Authorization: Bearer x' [--json]")
            == ["ingestd", "sinks", "add", "s", "postgresql://a@b/c", "--header", "Authorization: Bearer x", "--json"])
        #expect(Self.commands(in: "    ingestd a \\\n        --b c   # note\n    ingestd d ; ingestd e\n")
            == ["ingestd a --b c", "ingestd d", "ingestd e"])
        #expect(Self.inlineCommands(in: "Run `ingestd stats TYPE\n--by day`, not `ingestd/gw` or `ingestd:x`.\n    `ingestd code`\n")
            == ["ingestd stats TYPE --by day"])
        #expect(["$ ingestd scan", "sudo -u ingestd ingestd status", "INGESTD_LOG_LEVEL=debug ingestd run", "source <(ingestd completions bash)",
                 "journalctl -u ingestd"].map(Self.ingestdCommand(in:))
            == ["ingestd scan", "ingestd status", "ingestd run", "ingestd completions bash", nil])
        #expect(Self.ingestdPart(of: "ingestd replay f 2>&1 | head -c 10") == "ingestd replay f")
        #expect(Self.ingestdPart(of: "ingestd export > out.csv") == "ingestd export")
        #expect(Self.ingestdPart(of: "ingestd sinks add N U (--types T,… | --all-types)") == "ingestd sinks add N U (--types T,… --all-types)")
        #expect(Self.variants(of: ["export", "--format", "fhir|csv"]) == [["export", "--format", "fhir"], ["export", "--format", "csv"]])
    }

    /// The checks catch what they are for: an unknown command, option or value, in any of a
    /// line's alternatives, with or without placeholders.
    @Test func unknownCommandsAndOptionsAreFound() {
        func problems(_ line: String) -> [String] { Self.problems(ofCommand: line) }
        #expect(problems("ingestd stats stepCount --sum --by day").isEmpty)
        #expect(problems("ingestd auth deny SOURCE TYPE…|--all").isEmpty)
        #expect(problems("ingestd export --format fhir|csv|jsonl [--types T,…] [--out FILE]").isEmpty)
        #expect(problems("ingestd replay f 2>&1 | head -c 10").isEmpty)
        #expect(!problems("ingestd stats stepCount --sum --by fortnight").isEmpty)
        #expect(!problems("ingestd stats TYPE --by-day").isEmpty)
        #expect(!problems("ingestd statz TYPE").isEmpty)
        #expect(!problems("ingestd auth deni SOURCE TYPE…").isEmpty)
        #expect(!problems("ingestd auth deny SOURCE TYPE…|--every").isEmpty)
        #expect(!problems("ingestd export --format fhir|xml").isEmpty)
        #expect(!problems("ingestd samples heartRate --jsn | jq .").isEmpty)
        #expect(problems("ingestd help COMMAND").isEmpty && !problems("ingestd help statz").isEmpty)
        // Named in the prose, a command may leave out its required parts, not misspell them.
        #expect(Self.problems(ofCommand: "ingestd keys add", inProse: true).isEmpty && !problems("ingestd keys add").isEmpty)
        #expect(!Self.problems(ofCommand: "ingestd keys ad", inProse: true).isEmpty)
        #expect(!Self.problems(ofCommand: "ingestd today --dat", inProse: true).isEmpty)
    }

    /// What is wrong with a shown command line, one entry per variant that is wrong: a variant
    /// without placeholders must parse; one with placeholders must be known. A command named in
    /// the prose (`ingestd keys add`, `ingestd today --date`) may leave out what it requires.
    static func problems(ofCommand line: String, inProse: Bool = false) -> [String] {
        var problems: [String] = []
        for variant in variants(of: words(of: ingestdPart(of: line))) {
            let arguments = Array(variant.dropFirst())
            do {
                _ = try parser.parse(arguments)
            } catch {
                if arguments.contains(where: isPlaceholder) || inProse && error.error.isMissingPart {
                    if let unknown = unknownPart(of: arguments) { problems.append("\(line): \(unknown)") }
                } else {
                    problems.append("\(line): \(error.error)")
                }
            }
        }
        return problems
    }

    @Test(arguments: documents)
    func everyShownCommandIsKnown(_ document: String) throws {
        let text = try Self.text(of: document)
        let failures = Self.commands(in: text).flatMap { Self.problems(ofCommand: $0) }
            + Self.inlineCommands(in: text).flatMap { Self.problems(ofCommand: $0, inProse: true) }
        #expect(failures.isEmpty, "\(document) shows commands ingestd does not know:\n\(failures.joined(separator: "\n"))")
    }
}

extension UsageError {
    /// Whether the command line only left out something it requires.
    var isMissingPart: Bool {
        switch self {
        case .missingSubcommand, .missingValue, .missingArgument, .missingOption, .missingFlag: true
        default: false
        }
    }
}

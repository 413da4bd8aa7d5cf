import ArgumentParsing
import Foundation
import IngestCLI
import Testing

/// The user documentation stays true as the code moves: every repository path the documents
/// name exists, every relative link (and its `#anchor`) leads somewhere, and every `ingestd`
/// command shown in a code block parses with today's command tree (the commands and options
/// exist, the values fit).
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

    /// `[text](target)` links of a Markdown text, outside code.
    static func links(in text: String) -> [String] {
        var targets: [String] = []
        for line in proseLines(of: text) {
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
            if link.hasPrefix("http://") || link.hasPrefix("https://") || link.hasPrefix("mailto:") { continue }
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
                var command = part.trimmingCharacters(in: .whitespaces)
                if command.hasPrefix("sudo -u ingestd ") { command.removeFirst("sudo -u ingestd ".count) }
                if command.hasPrefix("ingestd ") || command == "ingestd" { commands.append(command) }
            }
        }
        return commands
    }

    /// Shell words of a command line: single and double quotes group, `[` `]` of optional parts drop.
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
            } else if character == "[" || character == "]" {
                continue
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    @Test func wordsSplitLikeAShell() {
        #expect(Self.words(of: "ingestd sinks add s 'postgresql://a@b/c' --header 'Authorization: Bearer x' [--json]")
            == ["ingestd", "sinks", "add", "s", "postgresql://a@b/c", "--header", "Authorization: Bearer x", "--json"])
        #expect(Self.commands(in: "    ingestd a \\\n        --b c   # note\n    ingestd d ; ingestd e\n")
            == ["ingestd a --b c", "ingestd d", "ingestd e"])
    }

    @Test(arguments: documents)
    func everyShownCommandParses(_ document: String) throws {
        let parser = CommandLineParser(root: Ingestd.self, globalOptions: [CommandLineRunner.logLevelOption])
        var failures: [String] = []
        for command in Self.commands(in: try Self.text(of: document)) {
            // A line showing alternatives (`grant SOURCE TYPE…|--all`) is a synopsis, not a command.
            if command.contains("|") || command.contains("…") { continue }
            let arguments = Array(Self.words(of: command).dropFirst())
            do {
                _ = try parser.parse(arguments)
            } catch {
                failures.append("\(command): \(error.error)")
            }
        }
        #expect(failures.isEmpty, "\(document) shows commands that do not parse:\n\(failures.joined(separator: "\n"))")
    }
}

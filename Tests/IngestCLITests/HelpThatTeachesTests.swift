import ArgumentParsing
import Foundation
import Testing
import TestSupport
@testable import IngestCLI

/// Issue 29 item 2: every help page has examples that parse, completion scripts load in real
/// shells and complete, the man page renders without warnings, `-V` works everywhere.
@Suite struct HelpThatTeachesTests {
    static let parser = CommandLineParser(root: Ingestd.self, globalOptions: [CommandLineRunner.logLevelOption])

    /// Every path from the root, e.g. `["ingestd", "auth", "grant"]`.
    static func allPaths() -> [[any Command.Type]] {
        var result: [[any Command.Type]] = []
        func visit(_ path: [any Command.Type]) {
            result.append(path)
            for subcommand in path[path.count - 1].configuration.subcommands { visit(path + [subcommand]) }
        }
        visit([Ingestd.self])
        return result
    }

    @Test func everyHelpPageHasExamplesThatParseToThatCommand() throws {
        let formatter = HelpFormatter(globalOptions: [CommandLineRunner.logLevelOption])
        var problems: [String] = []
        for path in Self.allPaths() {
            let names = path.map { $0.configuration.name }
            let help = formatter.help(for: path)
            let examples = path[path.count - 1].configuration.examples
            if examples.isEmpty || !help.contains("\nEXAMPLES:\n") {
                problems.append("\(names.joined(separator: " ")): no EXAMPLES")
            }
            for example in examples {
                let words = DocumentationPathsTests.words(of: example)
                guard words.first == "ingestd" else {
                    problems.append("\(example): does not start with ingestd")
                    continue
                }
                do {
                    let invocation = try Self.parser.parse(Array(words.dropFirst()))
                    // The example shows this command (or, for a group, one of its subcommands).
                    if !invocation.commandNames.starts(with: names) || (invocation.action != .run && invocation.action != .manual) {
                        problems.append("\(example): runs \(invocation.commandNames.joined(separator: " ")), shown under \(names.joined(separator: " "))")
                    }
                } catch {
                    problems.append("\(example): \(error.error.description)")
                }
            }
        }
        #expect(problems == [])
    }

    @Test func versionWorksAfterAnyCommand() async throws {
        let scenario = try Scenario()
        for arguments in [["-V"], ["--version"], ["samples", "-V"], ["auth", "grant", "--version"], ["stats", "-V"]] {
            let result = await scenario.run(arguments, withStore: false)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stdout == [Ingestd.version], "\(arguments)")
        }
        let help = await scenario.run(["help", "samples"], withStore: false)
        #expect(help.stdout.contains { $0.hasPrefix("  -V, --version") })
        #expect(help.stdout.contains("EXAMPLES:"))
        #expect(help.stdout.contains("  ingestd samples bodyMass --latest"))
    }

    /// Writes the script for `shell` to a file in `scenario`'s directory.
    func script(_ shell: CompletionShell, in scenario: Scenario) async throws -> String {
        let result = await scenario.run(["completions", shell.rawValue], withStore: false)
        #expect(result.status == 0)
        return try scenario.write("ingestd.\(shell.rawValue)", result.stdout)
    }

    /// The path of `name` when the shell is installed.
    static func shell(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// What the bash function offers for the words typed so far (the last is being completed).
    func bashCompletion(_ bash: String, script: String, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
            source '\(script)' || exit 3
            complete -p ingestd >/dev/null || exit 4
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            _ingestd
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let output = try ChildProcess.run(bash, ["--norc", "--noprofile", "-c", program], limit: 30)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.isEmpty, "\(output.stderr)")
        return output.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsAndValues() async throws {
        let bash = try #require(Self.shell("bash"))
        let scenario = try Scenario()
        let script = try await script(.bash, in: scenario)
        #expect(try bashCompletion(bash, script: script, ["ingestd", "sam"]) == ["samples"])
        #expect(try bashCompletion(bash, script: script, ["ingestd", "auth", "gr"]) == ["grant"])
        #expect(try bashCompletion(bash, script: script, ["ingestd", "samples", "heartRate", "--new"]) == ["--newest"])
        #expect(try bashCompletion(bash, script: script, ["ingestd", "stats", "stepCount", "--by", ""]) == ["hour", "day", "week", "month"])
        #expect(try bashCompletion(bash, script: script, ["ingestd", "completions", ""]).isEmpty == false)
    }

    @Test func zshLoadsTheScriptAndCompletes() async throws {
        guard let zsh = Self.shell("zsh") else {
            Issue.record("zsh is not installed (scripts/bootstrap installs it)")
            return
        }
        let scenario = try Scenario()
        let script = try await script(.zsh, in: scenario)
        // compinit, then the script registers _ingestd through bashcompinit; the function runs
        // as zsh's _bash_complete runs it (sh emulation: arrays from 0).
        let program = """
            autoload -U compinit && compinit -u -d '\(scenario.directory.path)/zcompdump' || exit 3
            source '\(script)' || exit 4
            [[ -n ${_comps[ingestd]} ]] || exit 5
            emulate sh
            COMP_WORDS=(ingestd auth gr); COMP_CWORD=2
            _ingestd
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let output = try ChildProcess.run(zsh, ["-f", "-c", program], limit: 30)
        #expect(output.status == 0, "\(output.stderr)")
        // zsh's compgen emulation leaves matching the typed prefix to compadd: the candidates are
        // auth's subcommands and options, never the root's.
        let candidates = output.stdout.split(separator: "\n").map(String.init)
        #expect(candidates.contains("grant") && candidates.contains("pending"))
        #expect(!candidates.contains("samples"))
    }

    @Test func fishLoadsTheScriptAndCompletes() async throws {
        guard let fish = Self.shell("fish") else {
            Issue.record("fish is not installed (scripts/bootstrap installs it)")
            return
        }
        let scenario = try Scenario()
        let script = try await script(.fish, in: scenario)
        let program = "source '\(script)'; or exit 3; complete -C 'ingestd sam'; complete -C 'ingestd auth gr'; complete -C 'ingestd stats stepCount --by '"
        let output = try ChildProcess.run(fish, ["--no-config", "-c", program], limit: 30)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.isEmpty, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("samples\t") })
        #expect(lines.contains { $0.hasPrefix("grant\t") })
        #expect(lines.contains { $0.hasPrefix("week\t") })
    }

    @Test func theManPageRendersWithoutWarnings() async throws {
        let scenario = try Scenario()
        let result = await scenario.run(["help", "--man"], withStore: false)
        #expect(result.status == 0)
        let page = try scenario.write("ingestd.1", result.stdout)
        #expect(result.stdout.first?.hasPrefix(".TH INGESTD 1") == true)
        // Every command has its subsection, so the page cannot drift from the tree.
        for path in Self.allPaths().dropFirst() {
            let names = path.map { $0.configuration.name }.joined(separator: " ")
            #expect(result.stdout.contains(".SS \"\(names)\""), "\(names)")
        }
        let groff = try #require(Self.shell("groff"))
        let checked = try ChildProcess.run(groff, ["-man", "-Tutf8", "-ww", "-z", page], limit: 60)
        #expect(checked.status == 0)
        #expect(checked.stderr.isEmpty, "\(checked.stderr)")
        let man = try #require(Self.shell("man"))
        let rendered = try ChildProcess.run(
            "/usr/bin/env", ["MANWIDTH=80", "MAN_KEEP_FORMATTING=0", man, "-P", "cat", "-l", page], limit: 60)
        #expect(rendered.status == 0)
        #expect(rendered.stderr.isEmpty, "\(rendered.stderr)")
        // Without a terminal, man may still print bold as overstrikes (X backspace X): drop them.
        let plain = rendered.stdout.replacing(/.\u{8}/, with: "")
        #expect(plain.contains("COMMANDS"), "\(plain.prefix(400))")
        // groff prints option dashes as its own hyphen glyphs: compare the words.
        #expect(plain.contains("ingestd samples bodyMass") && plain.contains("latest"))
    }
}

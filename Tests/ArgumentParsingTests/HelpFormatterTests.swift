import ArgumentParsing
import Testing

/// Generated help pages and usage lines, through the runner (`--help`, `-h`, `help COMMAND`).
@Suite struct HelpFormatterTests {
    @Test func statsHelpPageExactly() async {
        let result = await runSample(["stats", "--help"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        #expect(result.stdout == """
            OVERVIEW: Statistics of one type, optionally per interval.

            USAGE: ingestd stats TYPE --sum|--average|--min|--max|--latest
                                 [--by hour|day|week|month] [--json]

            ARGUMENTS:
              TYPE                      The quantity type.

            OPTIONS:
              --sum                     Total of the values.
              --average                 Mean of the values.
              --min                     Smallest value.
              --max                     Largest value.
              --latest                  Most recent value.
              --by hour|day|week|month  Interval of each bucket. (default: day)
              --json                    Print JSON.
              --log-level LEVEL         Show log messages of this level and above; also read
                                        from INGESTD_LOG_LEVEL. (values: trace, debug, info,
                                        notice, warning, error, critical)
              -V, --version             Show the version.
              -h, --help                Show help information.

            """)
    }

    @Test func rootHelpHasEverySectionInOrderAndMarksTheDefault() async {
        let result = await runSample(["--help"])
        let text = result.stdout
        let headings = text.split(separator: "\n").filter { $0.first?.isUppercase == true && $0.contains(":") }
            .map { String($0.prefix { $0 != ":" }) }
        #expect(headings == ["OVERVIEW", "USAGE", "OPTIONS", "SUBCOMMANDS"])
        #expect(text.hasPrefix("OVERVIEW: Turns wearables and home medical devices into health data.\n\n"
            + "  Run without a command to watch USB and Bluetooth devices.\n\nUSAGE: ingestd [<subcommand>]\n"))
        #expect(text.contains("\n  run (default)      Watch devices and store their measurements.\n"))
        #expect(text.contains("\n  help               Show help for a command.\n"))
        #expect(text.contains("\n  -V, --version      Show the version.\n"))
        #expect(text.hasSuffix("\n\n  See 'ingestd help <subcommand>' for detailed help.\n"))
    }

    /// In every help page of the tree, each description in ARGUMENTS, OPTIONS and SUBCOMMANDS
    /// starts in the same column, and no line passes 80 columns.
    @Test(arguments: [
        ["--help"], ["help", "run"], ["stats", "-h"], ["help", "units"], ["help", "units", "convert"],
        ["replay", "--help"], ["help", "auth", "grant"], ["profile", "--help"], ["help", "samples"],
    ])
    func descriptionsAreAlignedAndLinesFit(arguments: [String]) async throws {
        let result = await runSample(arguments)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count <= 80 })
        var columns: Set<Int> = []
        var inTable = false
        for line in lines {
            if ["ARGUMENTS:", "OPTIONS:", "SUBCOMMANDS:"].contains(line) {
                inTable = true
                continue
            }
            guard inTable, line.hasPrefix("  "), !line.hasPrefix("  See ") else {
                if line.isEmpty == false && !line.hasPrefix(" ") { inTable = false }
                continue
            }
            // A row: two spaces, the label, at least two spaces, the description; or a
            // continuation line that starts in the description column.
            let body = line.dropFirst(2)
            if body.first == " " {
                columns.insert(line.prefix { $0 == " " }.count)
            } else if let gap = body.firstRange(of: "  ") {
                let descriptionStart = body[gap.upperBound...].prefix { $0 == " " }.count
                columns.insert(2 + body.distance(from: body.startIndex, to: gap.upperBound) + descriptionStart)
            }
        }
        #expect(columns.count == 1, "description columns: \(columns.sorted())")
    }

    @Test func helpOfANestedCommandByEveryRoute() async {
        let byHelpCommand = await runSample(["help", "units", "convert"])
        let byFlag = await runSample(["units", "convert", "--help"])
        let byShortFlag = await runSample(["units", "convert", "1", "-h"])
        #expect(byHelpCommand.stdout == byFlag.stdout)
        #expect(byFlag.stdout == byShortFlag.stdout)
        #expect(byHelpCommand.stdout == """
            OVERVIEW: Convert a value from one unit to another.

            USAGE: ingestd units convert VALUE FROM TO

            ARGUMENTS:
              VALUE              The number to convert.
              FROM               Its unit.
              TO                 The unit wanted.

            OPTIONS:
              --log-level LEVEL  Show log messages of this level and above; also read from
                                 INGESTD_LOG_LEVEL. (values: trace, debug, info, notice,
                                 warning, error, critical)
              -V, --version      Show the version.
              -h, --help         Show help information.

            """)
    }

    @Test func groupHelpListsSubcommandsAndPointsToTheirHelp() async {
        let result = await runSample(["help", "profile"])
        #expect(result.stdout.contains("USAGE: ingestd profile [<subcommand>]\n"))
        #expect(result.stdout.contains("\n  show (default)     Show the profile.\n  set                Change the profile.\n"))
        #expect(result.stdout.hasSuffix("  See 'ingestd help profile <subcommand>' for detailed help.\n"))
        #expect(result.stdout.contains("\n  -V, --version      Show the version.\n"))
    }

    @Test func optionRowsShowShortNamesDefaultsAndRepetition() async {
        let result = await runSample(["help", "run"])
        #expect(result.stdout.contains("USAGE: ingestd run [--store PATH] [--plugins DIR]... [--no-usb] [--no-ble]\n"
            + "                   [--hci N]\n"))
        #expect(result.stdout.contains("\n  -s, --store PATH   The SQLite store. (default: health.sqlite)\n"))
        #expect(result.stdout.contains("\n  --plugins DIR      A directory of external adapters. (repeatable)\n"))
    }

    @Test func variadicPositionalsInUsage() {
        let formatter = HelpFormatter()
        #expect(formatter.usage(for: [SampleRoot.self, SampleReplay.self]) == "ingestd replay FILE... [--adapter ID]")
        #expect(formatter.helpCommand(for: [SampleRoot.self, SampleAuth.self, SampleGrant.self]) == "ingestd help auth grant")
        #expect(formatter.helpCommand(for: [SampleRoot.self]) == "ingestd --help")
    }

    @Test func longLabelStandsOnItsOwnLine() {
        struct Wide: Command {
            static let configuration = CommandConfiguration(name: "wide", abstract: "A command with a long option.")
            static let signature = Signature {
                Option("metadata-key-filter", valueName: "EXPRESSION", help: "Keep matching keys.")
                Flag("json", help: "Print JSON.")
            }
            init(_ arguments: ParsedValues) {}
        }
        let help = HelpFormatter(maximumLabelWidth: 20).help(for: [Wide.self])
        #expect(help.contains("""
            OPTIONS:
              --metadata-key-filter EXPRESSION
                                    Keep matching keys.
              --json                Print JSON.
              -h, --help            Show help information.
            """))
    }

    @Test func versionPrintsTheRootVersion() async {
        let result = await runSample(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "0.1.0\n")
    }
}

import ArgumentParsing
import Testing

/// Parsing through `CommandLineParser` and, for what commands read, through the runner.
@Suite struct ArgumentParserTests {
    // MARK: Command selection

    @Test func noArgumentsSelectsTheDefaultSubcommand() throws {
        let invocation = try parseSample([])
        #expect(invocation.commandNames == ["ingestd", "run"])
        #expect(invocation.action == .run)
    }

    @Test func optionOfTheDefaultSubcommandAtTheRootFallsThroughToIt() async {
        let result = await runSample(["--store", "x.sqlite", "--no-usb"])
        #expect(result.status == 0)
        #expect(result.stdout == "run store=x.sqlite plugins=[] usb=false hci=-\n")
    }

    @Test func nestedSubcommandIsSelected() throws {
        let invocation = try parseSample(["units", "convert", "1", "kg", "lb"])
        #expect(invocation.commandNames == ["ingestd", "units", "convert"])
    }

    @Test func groupAloneRunsItsDefaultSubcommand() async {
        let alone = await runSample(["profile"])
        #expect(alone.stdout == "profile show json=false\n")
        let withFlag = await runSample(["profile", "--json"])
        #expect(withFlag.stdout == "profile show json=true\n")
        let set = await runSample(["profile", "set", "--height", "180", "--unit", "cm"])
        #expect(set.stdout == "profile set\n")
    }

    // MARK: Options and flags

    @Test func optionsInEveryFormAndRepeatedOptionsCollect() async {
        let result = await runSample([
            "run", "-s", "a.sqlite", "--plugins", "/opt/one", "--plugins=/opt/two", "--hci=1", "--no-usb",
        ])
        #expect(result.stderr == "")
        #expect(result.stdout == "run store=a.sqlite plugins=[\"/opt/one\", \"/opt/two\"] usb=false hci=1\n")
    }

    @Test func defaultValueIsUsedWhenTheOptionIsAbsentButDoesNotCountAsPresent() throws {
        let invocation = try parseSample(["run"])
        #expect(try invocation.values.value("store") == "health.sqlite")
        #expect(invocation.values.isPresent("store") == false)
        #expect(invocation.values.rawValues("store") == [])
    }

    @Test func typedValuesIntDoubleAndCustomParse() async {
        let result = await runSample([
            "samples", "HKQuantityTypeIdentifierStepCount", "--limit=5", "--scale", "1.5", "--tz", "Europe/Berlin", "-j",
        ])
        #expect(result.stderr == "")
        #expect(result.stdout == "samples HKQuantityTypeIdentifierStepCount from=- limit=5 scale=1.5 tz=Europe/Berlin json=true\n")
    }

    @Test func optionValueMayLookLikeANegativeNumberOrBeADash() throws {
        let invocation = try parseSample(["samples", "T", "--limit", "-3", "--from", "-"])
        #expect(try invocation.values.value("limit", as: Int.self) == -3)
        #expect(try invocation.values.value("from", as: String.self) == "-")
    }

    @Test func exclusiveFlagChoiceAndAllowedValues() async {
        let result = await runSample(["stats", "HKQuantityTypeIdentifierStepCount", "--average", "--by", "week"])
        #expect(result.stdout == "stats HKQuantityTypeIdentifierStepCount average by=week\n")
        let defaulted = await runSample(["stats", "T", "--latest"])
        #expect(defaulted.stdout == "stats T latest by=day\n")
    }

    @Test func sameExclusiveFlagTwiceIsFine() throws {
        let invocation = try parseSample(["stats", "T", "--sum", "--sum"])
        #expect(invocation.values.choice("statistic") == "sum")
    }

    @Test func globalOptionIsAcceptedBeforeAndAfterTheSubcommand() throws {
        let before = try parseSample(["--log-level", "debug", "stats", "T", "--sum"])
        #expect(try before.values.value("log-level") == "debug")
        #expect(before.commandNames == ["ingestd", "stats"])
        let after = try parseSample(["units", "list", "--log-level=trace"])
        #expect(try after.values.value("log-level") == "trace")
    }

    // MARK: Positionals

    @Test func variadicPositionalTakesEveryWordAndDashIsAPositional() async {
        let result = await runSample(["replay", "a.btsnoop", "-", "b.pcapng"])
        #expect(result.stdout == "replay a.btsnoop,-,b.pcapng\n")
    }

    @Test func doubleDashEndsOptions() async {
        let result = await runSample(["replay", "--", "--weird-name", "-h"])
        #expect(result.status == 0)
        #expect(result.stdout == "replay --weird-name,-h\n")
    }

    @Test func negativeNumberIsAPositional() async {
        let result = await runSample(["units", "convert", "-40", "degC", "degF"])
        #expect(result.stdout == "convert -40.0 degC degF\n")
    }

    @Test func requiredThenVariadicPositionals() async {
        let result = await runSample(["auth", "grant", "gatt-weight-scale", "BodyMass", "BodyFat"])
        #expect(result.stdout == "grant gatt-weight-scale BodyMass,BodyFat\n")
        let all = await runSample(["auth", "grant", "gatt-weight-scale", "--all"])
        #expect(all.stdout == "grant gatt-weight-scale all\n")
    }

    // MARK: Errors

    /// Every kind of usage error with its exact message (the first line of stderr).
    @Test(arguments: [
        (["samples", "T", "--limt", "5"], "error: unknown option '--limt'; did you mean '--limit'?"),
        (["samples", "T", "--frobnicate"], "error: unknown option '--frobnicate'"),
        (["--stor=x.sqlite"], "error: unknown option '--stor'; did you mean '--store'?"),
        (["--verison"], "error: unknown option '--verison'; did you mean '--version'?"),
        (["samples", "T", "-limit"], "error: unknown option '-limit'; did you mean '--limit'?"),
        (["samples", "T", "-x"], "error: unknown option '-x'"),
        (["auth", "--json"], "error: unknown option '--json'"),
        (["run", "--store"], "error: missing value for --store PATH"),
        (["run", "--store", "--no-usb"], "error: missing value for --store PATH"),
        (["samples"], "error: missing required argument TYPE"),
        (["replay"], "error: missing required argument FILE"),
        (["units", "convert", "1", "kg"], "error: missing required argument TO"),
        (["units", "convrt", "1", "kg", "lb"], "error: unknown command 'convrt' for 'ingestd units'; did you mean 'convert'?"),
        (["statz", "T"], "error: unknown command 'statz' for 'ingestd'; did you mean 'stats'?"),
        (["frobnicate"], "error: unknown command 'frobnicate' for 'ingestd'"),
        (["units"], "error: 'ingestd units' needs a subcommand"),
        (["samples", "T", "--limit", "abc"], "error: invalid value 'abc' for --limit: not an integer"),
        (["samples", "T", "--scale", "fast"], "error: invalid value 'fast' for --scale: not a number"),
        (["samples", "T", "--tz", "Mars/Olympus"], "error: invalid value 'Mars/Olympus' for --tz: not a known time zone"),
        (["units", "convert", "abc", "kg", "lb"], "error: invalid value 'abc' for VALUE: not a number"),
        (["stats", "T", "--sum", "--by", "year"], "error: invalid value 'year' for --by: expected one of hour, day, week, month"),
        (["stats", "T", "--sum", "--average"], "error: --sum and --average cannot be used together"),
        (["stats", "T", "--max", "--min"], "error: --max and --min cannot be used together"),
        (["stats", "T"], "error: missing one of --sum|--average|--min|--max|--latest"),
        (["samples", "A", "B"], "error: unexpected argument 'B'"),
        (["samples", "T", "--json=yes"], "error: --json takes no value (got 'yes')"),
        (["samples", "T", "--limit", "1", "--limit", "2"], "error: --limit given more than once"),
        (["auth", "grant", "gatt-weight-scale"], "error: give either TYPE... or --all"),
        (["profile", "set", "--height", "180"], "error: --height and --unit go together"),
        (["--log-level", "loud"], "error: invalid value 'loud' for --log-level: expected one of trace, debug, info, notice, warning, error, critical"),
        (["help", "nosuch"], "error: unknown command 'nosuch' for 'ingestd'"),
        (["help", "stats", "extra"], "error: unexpected argument 'extra'"),
    ])
    func usageErrorMessage(arguments: [String], expected: String) async {
        let result = await runSample(arguments)
        #expect(result.status == 64)
        #expect(result.stdout == "")
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == expected)
        #expect(lines.count == 4)
        #expect(lines.dropFirst().first?.hasPrefix("Usage: ingestd") == true)
        #expect(lines.dropFirst(2).first?.hasPrefix("See 'ingestd ") == true)
    }

    @Test func usageErrorShowsTheUsageAndHelpOfTheCommandItHappenedIn() async {
        let result = await runSample(["stats", "HKQuantityTypeIdentifierStepCount", "--sum", "--average"])
        #expect(result.status == 64)
        #expect(result.stderr == """
            error: --sum and --average cannot be used together
            Usage: ingestd stats TYPE --sum|--average|--min|--max|--latest [--by hour|day|week|month] [--json]
            See 'ingestd help stats' for more.

            """)
    }

    @Test func usageErrorInAGroupShowsTheGroupUsage() async {
        let result = await runSample(["units"])
        #expect(result.stderr == """
            error: 'ingestd units' needs a subcommand
            Usage: ingestd units <subcommand>
            See 'ingestd help units' for more.

            """)
    }

    @Test func usageErrorAtTheRootPointsToDashDashHelp() async {
        let result = await runSample(["frobnicate"])
        #expect(result.stderr.hasSuffix("Usage: ingestd [<subcommand>]\nSee 'ingestd --help' for more.\n"))
    }

    @Test func customUsageReplacesTheGeneratedOne() async {
        let result = await runSample(["auth", "grant"])
        #expect(result.stderr == """
            error: missing required argument SOURCE
            Usage: ingestd auth grant SOURCE TYPE...|--all
            See 'ingestd help auth grant' for more.

            """)
    }

    @Test func parseFailureCarriesTheCommandPathReached() {
        #expect {
            try parseSample(["units", "convert", "1"])
        } throws: { error in
            guard let failure = error as? ParseFailure else { return false }
            return failure.error == .missingArgument("FROM")
                && failure.commandPath.map { $0.configuration.name } == ["ingestd", "units", "convert"]
        }
    }

    // MARK: Help and version requests

    @Test func helpFlagAnywhereBeforeDoubleDashAsksForHelpOfTheCommandReached() throws {
        #expect(try parseSample(["--help"]).action == .help)
        #expect(try parseSample(["--help"]).commandNames == ["ingestd"])
        let stats = try parseSample(["stats", "--limt", "-h"])
        #expect(stats.action == .help)
        #expect(stats.commandNames == ["ingestd", "stats"])
        let group = try parseSample(["units", "-h"])
        #expect(group.commandNames == ["ingestd", "units"])
        #expect(try parseSample(["replay", "--", "-h"]).action == .run)
    }

    @Test func helpCommandNamesThePathToDescribe() throws {
        let invocation = try parseSample(["help", "units", "convert"])
        #expect(invocation.action == .help)
        #expect(invocation.commandNames == ["ingestd", "units", "convert"])
        #expect(try parseSample(["help"]).commandNames == ["ingestd"])
    }

    @Test func versionAfterAnyCommand() throws {
        #expect(try parseSample(["--version"]).action == .version)
        #expect(try parseSample(["-V"]).action == .version)
        #expect(try parseSample(["stats", "T", "--sum", "--version"]).action == .version)
        #expect(try parseSample(["auth", "grant", "-V"]).action == .version)
    }

    @Test func helpManAsksForTheManPage() throws {
        #expect(try parseSample(["help", "--man"]).action == .manual)
        #expect(throws: ParseFailure.self) { try parseSample(["help", "--man", "stats"]) }
    }

    // MARK: Edit distance

    @Test(arguments: [
        ("--stor", "--store", 1), ("--sotre", "--store", 1), ("--json", "--json", 0),
        ("", "abc", 3), ("kitten", "sitting", 3),
    ])
    func editDistance(first: String, second: String, expected: Int) {
        #expect(EditDistance.distance(first, second) == expected)
    }

    @Test func suggestionOnlyWhenClose() {
        #expect(EditDistance.nearest(to: "--jsn", among: ["--json", "--store"]) == "--json")
        #expect(EditDistance.nearest(to: "--xyz", among: ["--json", "--store"]) == nil)
        #expect(EditDistance.nearest(to: "--lmt", among: ["--limit", "--from"]) == "--limit")
        #expect(EditDistance.nearest(to: "--fo", among: ["--to", "--from"]) == "--to")
        #expect(EditDistance.nearest(to: "-x", among: ["-j", "-h"]) == nil)
    }
}

/// Options a group declares as inherited reach its subcommands.
@Suite struct InheritedOptionTests {
    struct Tool: Command {
        static let configuration = CommandConfiguration(name: "tool", subcommands: [Show.self])
        static let signature = Signature {
            Option("store", valueName: "PATH", help: "The store.", default: "a.sqlite", inherited: true)
            Flag("verbose", short: "v", help: "Say more.", inherited: true)
            Flag("color", help: "Only for the group itself.")
        }
        init(_ arguments: ParsedValues) {}
    }

    struct Show: Command {
        static let configuration = CommandConfiguration(name: "show", abstract: "Show things.")
        static let signature = Signature { Positional("NAME", arity: .optional, help: "What to show.") }
        init(_ arguments: ParsedValues) {}
    }

    private func parse(_ arguments: [String]) throws(ParseFailure) -> Invocation {
        try CommandLineParser(root: Tool.self).parse(arguments)
    }

    @Test func inheritedOptionIsAcceptedOnEitherSideOfTheSubcommand() throws {
        let after = try parse(["show", "x", "--store", "b.sqlite", "-v"])
        #expect(try after.values.value("store") == "b.sqlite")
        #expect(after.values.flag("verbose"))
        #expect(try after.values.value("name") == "x")
        let before = try parse(["--store=c.sqlite", "--color", "show"])
        #expect(try before.values.value("store") == "c.sqlite")
        #expect(before.values.flag("color"))
        #expect(try before.values.value("name", as: String.self) == nil)
    }

    @Test func nonInheritedOptionIsRejectedAfterTheSubcommand() {
        #expect(throws: ParseFailure.self) { try parse(["show", "--color"]) }
    }

    @Test func inheritedOptionGivenOnBothSidesIsRepeated() {
        #expect {
            try parse(["--store", "a", "show", "--store", "b"])
        } throws: { error in
            (error as? ParseFailure)?.error == .repeatedOption("--store")
        }
    }

    @Test func usageAndHelpOfTheSubcommandShowInheritedOptions() {
        let formatter = HelpFormatter()
        #expect(formatter.usage(for: [Tool.self, Show.self]) == "tool show [NAME] [--store PATH] [--verbose]")
        let help = formatter.help(for: [Tool.self, Show.self])
        #expect(help == """
            OVERVIEW: Show things.

            USAGE: tool show [NAME] [--store PATH] [--verbose]

            ARGUMENTS:
              NAME           What to show.

            OPTIONS:
              --store PATH   The store. (default: a.sqlite)
              -v, --verbose  Say more.
              -h, --help     Show help information.

            """)
    }
}

import ArgumentParsing
import Testing

/// Typed handles: every kind of argument declared once and read through the same static.
@Suite struct TypedArgumentsTests {
    enum Shade: String { case light, dark }

    struct Paint: Command {
        static let configuration = CommandConfiguration(name: "paint", abstract: "Paints things.")
        static let wall = TypedPositional<String>(Positional("WALL", help: "Which wall."))
        static let colours = TypedPositionals<String>(Positional("COLOUR", key: "colours", arity: .zeroOrMore, help: "Colours."))
        static let coats = TypedOption<Int>(Option("coats", valueName: "N", help: "Coats.", default: "2"))
        static let dry = TypedOption<Duration>(Option("dry", valueName: "DURATION", help: "Drying time."))
        static let shade = TypedOption<Shade>(Option("shade", valueName: "SHADE", help: "Shade."), expected: "light or dark") {
            Shade(rawValue: $0)
        }
        static let tag = TypedOption<String>(Option("tag", valueName: "T", help: "A tag.", repeatable: true))
        static let glossy = TypedFlag(Flag("glossy", help: "Glossy."))
        static let finish = TypedFlagGroup(ExclusiveFlags("finish", flags: [Flag("matte"), Flag("satin")]))
        static let signature = Signature {
            wall
            colours
            coats
            dry
            shade
            tag
            glossy.withHelp("Shiny.")
            finish
        }

        var line: String

        init(_ arguments: ParsedValues) throws {
            let wall = try arguments.required(Self.wall)
            let colours = try arguments.values(Self.colours)
            let coats = try arguments.count(Self.coats, in: 1...5) ?? 0
            let dry = try arguments.seconds(Self.dry, in: 1...3600).map { String($0) } ?? "-"
            let shade = try arguments.value(Self.shade)?.rawValue ?? "-"
            let tags = try arguments.values(Self.tag)
            let given = arguments.isPresent(Self.coats)
            line = "\(wall) \(colours) coats=\(coats)\(given ? "" : "(default)") dry=\(dry) shade=\(shade) tags=\(tags) "
                + "glossy=\(arguments.flag(Self.glossy)) finish=\(arguments.choice(Self.finish) ?? "-")"
        }

        func run(_ context: CommandContext) async throws {
            context.stdout.write(line + "\n")
        }
    }

    func run(_ arguments: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        await OptionGroupTests.run(Paint.self, arguments)
    }

    @Test func everyHandleReadsWhatItDeclared() async {
        let result = await run(["north", "red", "blue", "--coats", "3", "--dry", "15m", "--shade", "dark",
                                "--tag", "a", "--tag", "b", "--glossy", "--satin"])
        #expect(result.stdout == #"north ["red", "blue"] coats=3 dry=900.0 shade=dark tags=["a", "b"] glossy=true finish=satin"# + "\n",
                "\(result.stderr)")
        let defaults = await run(["south"])
        #expect(defaults.stdout == "south [] coats=2(default) dry=- shade=- tags=[] glossy=false finish=-\n", "\(defaults.stderr)")
    }

    @Test func aHandlesRefusalNamesTheArgumentAndWhatIsExpected() async {
        let shade = await run(["north", "--shade", "grey"])
        #expect(shade.status == 64)
        #expect(shade.stderr.contains("invalid value 'grey' for --shade: not light or dark"), "\(shade.stderr)")
        let coats = await run(["north", "--coats", "9"])
        #expect(coats.stderr.contains("invalid value '9' for --coats: must be 1...5"), "\(coats.stderr)")
        let dry = await run(["north", "--dry", "soon"])
        #expect(dry.stderr.contains("invalid value 'soon' for --dry: not a duration such as 30, 0.5, 30s, 15m, 1h or 1d"), "\(dry.stderr)")
        let missing = await run([])
        #expect(missing.stderr.contains("missing required argument WALL"), "\(missing.stderr)")
    }

    @Test func withHelpKeepsTheNameAndChangesOnlyTheHelp() async {
        let help = await run(["--help"])
        #expect(help.stdout.contains("Shiny."), "\(help.stdout)")
        #expect(!help.stdout.contains("Glossy."), "\(help.stdout)")
        #expect(Paint.glossy.withHelp("Shiny.").spelling == "--glossy")
    }
}

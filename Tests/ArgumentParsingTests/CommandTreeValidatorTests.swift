import ArgumentParsing
import Testing

@Suite struct CommandTreeValidatorTests {
    @Test func sampleTreeIsClean() {
        #expect(CommandTreeValidator.problems(root: SampleRoot.self) == [])
    }

    @Test func everyKindOfDeclarationMistakeIsReported() {
        struct Child: Command {
            static let configuration = CommandConfiguration(name: "child")
            static let signature = Signature {
                Positional("FILE", arity: .oneOrMore)
                Positional("OUT")
                Option("by", default: "year", allowedValues: ["day", "week"])
                Option("log-level", short: "h")
                Flag("json")
                Flag("json")
                ExclusiveFlags("alone") { Flag("only") }
            }
            init(_ arguments: ParsedValues) {}
        }
        struct Stray: Command {
            static let configuration = CommandConfiguration(name: "stray")
            init(_ arguments: ParsedValues) {}
        }
        struct Root: Command {
            static let configuration = CommandConfiguration(
                name: "tool", subcommands: [Child.self, Child.self], defaultSubcommand: Stray.self)
            static let signature = Signature { Positional("X") }
            init(_ arguments: ParsedValues) {}
        }
        #expect(CommandTreeValidator.problems(root: Root.self) == [
            "'tool': a command with subcommands cannot take positionals",
            "'tool': subcommand 'child' appears twice",
            "'tool': default subcommand 'stray' is not among its subcommands",
            "'tool child': positional OUT cannot follow an optional or variadic one",
            "'tool child': --json is declared more than once",
            "'tool child': --log-level is declared more than once",
            "'tool child': -h is declared more than once",
            "'tool child': default 'year' of --by is not an allowed value",
            "'tool child': exclusive group 'alone' has fewer than two flags",
            "'tool child': positional OUT cannot follow an optional or variadic one",
            "'tool child': --json is declared more than once",
            "'tool child': --log-level is declared more than once",
            "'tool child': -h is declared more than once",
            "'tool child': default 'year' of --by is not an allowed value",
            "'tool child': exclusive group 'alone' has fewer than two flags",
        ])
    }
}

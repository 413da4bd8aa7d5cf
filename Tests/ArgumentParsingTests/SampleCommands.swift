import ArgumentParsing
import Foundation
import Logging

// A command tree shaped like ingestd's, used by the parser, help and runner tests. Each
// command prints what it parsed so tests can check the values through the runner.

struct SampleRoot: Command {
    static let configuration = CommandConfiguration(
        name: "ingestd",
        abstract: "Turns wearables and home medical devices into health data.",
        discussion: "Run without a command to watch USB and Bluetooth devices.",
        version: "0.1.0",
        subcommands: [
            SampleRun.self, SampleReplay.self, SampleSamples.self, SampleStats.self,
            SampleUnits.self, SampleAuth.self, SampleProfile.self,
        ],
        defaultSubcommand: SampleRun.self)

    init(_ arguments: ParsedValues) {}
}

struct SampleRun: Command {
    static let configuration = CommandConfiguration(
        name: "run", abstract: "Watch devices and store their measurements.")
    static let signature = Signature {
        Option("store", short: "s", valueName: "PATH", help: "The SQLite store.", default: "health.sqlite")
        Option("plugins", valueName: "DIR", help: "A directory of external adapters.", repeatable: true)
        Flag("no-usb", help: "Do not watch USB.")
        Flag("no-ble", help: "Do not watch Bluetooth LE.")
        Option("hci", valueName: "N", help: "The Bluetooth controller index.")
    }

    let store: String
    let plugins: [String]
    let usb: Bool
    let hci: Int?

    init(_ arguments: ParsedValues) throws {
        store = try arguments.required("store")
        plugins = try arguments.values("plugins")
        usb = !arguments.flag("no-usb")
        hci = try arguments.value("hci")
    }

    func run(_ context: CommandContext) async throws {
        context.logger.debug("starting")
        context.logger.info("watching")
        context.stdout.writeLine("run store=\(store) plugins=\(plugins) usb=\(usb) hci=\(hci.map(String.init) ?? "-")")
    }
}

struct SampleReplay: Command {
    static let configuration = CommandConfiguration(
        name: "replay", abstract: "Replay captured device logs into the store.")
    static let signature = Signature {
        Positional("FILE", arity: .oneOrMore, help: "A btsnoop, pcap or pcapng capture; - for stdin.")
        Option("adapter", valueName: "ID", help: "Use this adapter instead of recognising devices.")
    }

    struct Boom: Error {}

    let files: [String]

    init(_ arguments: ParsedValues) throws {
        files = try arguments.values("file")
    }

    func run(_ context: CommandContext) async throws {
        for file in files {
            switch file {
            case "missing.btsnoop": throw CommandFailure.noInput(path: file)
            case "bad.btsnoop": throw CommandFailure.dataError("bad.btsnoop: truncated record at byte 16")
            case "exit3": throw ExitCode(3)
            case "boom": throw Boom()
            case "foundation-missing":
                _ = try Data(contentsOf: URL(fileURLWithPath: "/nonexistent/ingestd-test-file"))
            default: break
            }
        }
        context.stdout.writeLine("replay " + files.joined(separator: ","))
    }
}

struct SampleSamples: Command {
    static let configuration = CommandConfiguration(name: "samples", abstract: "List stored samples of one type.")
    static let signature = Signature {
        Positional("TYPE", help: "The quantity type.")
        Option("from", valueName: "T", help: "Inclusive start.")
        Option("limit", valueName: "N", help: "At most N samples.")
        Option("scale", valueName: "X", help: "Multiply values.")
        Option("tz", valueName: "ZONE", help: "Time zone for dates.")
        Flag("json", short: "j", help: "One JSON object per line.")
    }

    let type: String
    let from: String?
    let limit: Int?
    let scale: Double?
    let zone: TimeZone?
    let json: Bool

    init(_ arguments: ParsedValues) throws {
        type = try arguments.required("type")
        from = try arguments.value("from")
        limit = try arguments.value("limit")
        scale = try arguments.value("scale")
        zone = try arguments.value("tz", expected: "a known time zone") { TimeZone(identifier: $0) }
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        context.stdout.writeLine(
            "samples \(type) from=\(from ?? "-") limit=\(limit.map(String.init) ?? "-") "
                + "scale=\(scale.map { String($0) } ?? "-") tz=\(zone?.identifier ?? "-") json=\(json)")
    }
}

struct SampleStats: Command {
    static let configuration = CommandConfiguration(
        name: "stats", abstract: "Statistics of one type, optionally per interval.")
    static let signature = Signature {
        Positional("TYPE", help: "The quantity type.")
        ExclusiveFlags("statistic", required: true) {
            Flag("sum", help: "Total of the values.")
            Flag("average", help: "Mean of the values.")
            Flag("min", help: "Smallest value.")
            Flag("max", help: "Largest value.")
            Flag("latest", help: "Most recent value.")
        }
        Option("by", help: "Interval of each bucket.", default: "day", allowedValues: ["hour", "day", "week", "month"])
        Flag("json", help: "Print JSON.")
    }

    enum Statistic: String { case sum, average, min, max, latest }

    let type: String
    let statistic: Statistic?
    let interval: String

    init(_ arguments: ParsedValues) throws {
        type = try arguments.required("type")
        statistic = arguments.choice("statistic", as: Statistic.self)
        interval = try arguments.required("by")
    }

    func run(_ context: CommandContext) async throws {
        context.stdout.writeLine("stats \(type) \(statistic?.rawValue ?? "-") by=\(interval)")
    }
}

struct SampleUnits: Command {
    static let configuration = CommandConfiguration(
        name: "units", abstract: "Convert between units.", subcommands: [SampleConvert.self, SampleListUnits.self])

    init(_ arguments: ParsedValues) {}
}

struct SampleConvert: Command {
    static let configuration = CommandConfiguration(name: "convert", abstract: "Convert a value from one unit to another.")
    static let signature = Signature {
        Positional("VALUE", help: "The number to convert.")
        Positional("FROM", help: "Its unit.")
        Positional("TO", help: "The unit wanted.")
    }

    let value: Double
    let from: String
    let to: String

    init(_ arguments: ParsedValues) throws {
        value = try arguments.required("value")
        from = try arguments.required("from")
        to = try arguments.required("to")
    }

    func run(_ context: CommandContext) async throws {
        context.stdout.writeLine("convert \(value) \(from) \(to)")
    }
}

struct SampleListUnits: Command {
    static let configuration = CommandConfiguration(name: "list", abstract: "List the known units.")

    init(_ arguments: ParsedValues) {}

    func run(_ context: CommandContext) async throws {
        context.stdout.writeLine("units list")
    }
}

struct SampleAuth: Command {
    static let configuration = CommandConfiguration(
        name: "auth", abstract: "Which sources may write which types.", subcommands: [SampleGrant.self])

    init(_ arguments: ParsedValues) {}
}

struct SampleGrant: Command {
    static let configuration = CommandConfiguration(
        name: "grant", abstract: "Allow a source to write types.", usage: "SOURCE TYPE...|--all")
    static let signature = Signature {
        Positional("SOURCE", help: "The source identifier.")
        Positional("TYPE", arity: .zeroOrMore, help: "The types to allow.")
        Flag("all", help: "Allow every type the source declares.")
    }

    let source: String
    let types: [String]

    init(_ arguments: ParsedValues) throws {
        source = try arguments.required("source")
        types = try arguments.values("type")
        let all = arguments.flag("all")
        if types.isEmpty == !all {
            throw UsageError.invalid("give either TYPE... or --all")
        }
    }

    func run(_ context: CommandContext) async throws {
        context.stdout.writeLine("grant \(source) \(types.isEmpty ? "all" : types.joined(separator: ","))")
    }
}

struct SampleProfile: Command {
    static let configuration = CommandConfiguration(
        name: "profile", abstract: "Show or change the user profile.",
        subcommands: [SampleShowProfile.self, SampleSetProfile.self], defaultSubcommand: SampleShowProfile.self)

    init(_ arguments: ParsedValues) {}
}

struct SampleShowProfile: Command {
    static let configuration = CommandConfiguration(name: "show", abstract: "Show the profile.")
    static let signature = Signature { Flag("json", help: "Print JSON.") }

    let json: Bool

    init(_ arguments: ParsedValues) {
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        context.stdout.writeLine("profile show json=\(json)")
    }
}

struct SampleSetProfile: Command {
    static let configuration = CommandConfiguration(name: "set", abstract: "Change the profile.")
    static let signature = Signature {
        Option("height", valueName: "H", help: "Body height.")
        Option("unit", valueName: "U", help: "Unit of the height.")
    }

    init(_ arguments: ParsedValues) throws {
        if arguments.isPresent("height") != arguments.isPresent("unit") {
            throw UsageError.invalid("--height and --unit go together")
        }
    }

    func run(_ context: CommandContext) async throws {
        context.stdout.writeLine("profile set")
    }
}

/// The outcome of one runner call with captured streams.
struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `arguments` against `SampleRoot` with captured streams and a logger feeding `handler`.
func runSample(
    _ arguments: [String], environment: [String: String] = [:], handler: RecordingLogHandler = RecordingLogHandler()
) async -> RunResult {
    let stdout = CapturingWriter()
    let stderr = CapturingWriter()
    let context = CommandContext(
        stdout: stdout, stderr: stderr, environment: environment,
        logger: Logger(label: "ingestd", handler: handler))
    let status = await CommandLineRunner.run(root: SampleRoot.self, arguments: arguments, context: context)
    return RunResult(status: status, stdout: stdout.text, stderr: stderr.text)
}

/// Parses `arguments` against `SampleRoot` with the runner's global options.
func parseSample(_ arguments: [String]) throws(ParseFailure) -> Invocation {
    try CommandLineParser(root: SampleRoot.self, globalOptions: [CommandLineRunner.logLevelOption]).parse(arguments)
}

import Delivery
import ArgumentParsing
import Foundation

/// `ingestd sinks deliver [NAME…]`: delivers the backlog now; exit 0 when every sink caught up,
/// 69 when one stayed unreachable through its retries.
struct SinksDeliverCommand: Command {
    static let configuration = CommandConfiguration(
        name: "deliver", abstract: "Deliver the backlog of the named sinks (default: all) now, then exit.",
        discussion: "Exits 0 when every sink caught up, 69 when a sink stayed unreachable after its retries.",
        examples: [
            "ingestd sinks deliver alice-server",
        ]
    )
    static let sinkNames = TypedPositionals<String>(Positional(
        "NAME", key: "names", arity: .zeroOrMore, help: "Sinks to deliver (default: every sink)."))
    static let retriesOption = TypedOption<Int>(Option("retries", valueName: "N", help: "Attempts per sink before giving up.", default: "5"))
    static let backoffOption = TypedOption<Duration>(Option(
        "backoff", valueName: "SECONDS", help: "The first wait after a failure (doubles, with jitter, up to 60 s).", default: "1"))
    static let signature = Signature {
        Self.sinkNames
        Self.retriesOption
        Self.backoffOption
        StoreOption.self
    }
    let names: [String]
    let retries: Int
    let backoff: Double
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        names = try arguments.values(Self.sinkNames)
        retries = try arguments.count(Self.retriesOption, in: 1...1000) ?? 5
        backoff = try arguments.seconds(Self.backoffOption, in: 0...60) ?? 1
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openSinks(context)
        defer { store.close() }
        let all = try store.sinks()
        let selected = names.isEmpty ? all : try names.map { name in try SinksCommand.mapErrors { try store.sink(named: name) } }
        let stderr = context.stderr
        var unreachable: [String] = []
        for state in selected {
            let configuration = try SinksCommand.mapErrors { try SinkConfiguration(state.definition) }
            let transport = SinkTransports.make(configuration, secrets: SecretResolver(environment: context.environment),
                                                softwareVersion: Ingestd.version)
            let backlog = try? store.backlogCount(after: state.cursor, types: configuration.readTypes,
                                                  sinkPerson: state.definition.person)
            let progress = ProgressLine(label: "sink \(configuration.name)", measure: .items(name: "records", total: backlog), context: context)
            var done = 0
            let deliverer = try SinkDeliverer(configuration: configuration, store: store, transport: transport) { event in
                switch event {
                case .failed(let sink, let attempt, let error, let retryIn?):
                    progress.finish()
                    stderr.writeLine("warning: sink \(sink): attempt \(attempt) failed: \(error); retrying in \(String(format: "%.1f", retryIn)) s")
                case .delivered(_, _, let count, _), .deadLettered(_, let count, _):
                    done += count
                    progress.update(done: done, records: done)
                default:
                    break
                }
            }
            let outcome = deliverer.deliverBacklog(retry: RetryPolicy(maximumAttempts: retries, initialDelay: backoff, maximumDelay: 60))
            progress.finish()
            deliverer.close()
            switch outcome {
            case .caughtUp(let delivered, let deadLettered):
                let cursor = (try? store.sink(named: configuration.name).cursor) ?? 0
                stderr.writeLine("sink \(configuration.name): delivered \(delivered), dead letters \(deadLettered), caught up at anchor \(cursor)")
            case .unreachable(let error):
                stderr.writeLine("error: sink \(configuration.name): \(error) (gave up after \(retries) attempts)")
                unreachable.append(configuration.name)
            case .stopped:
                break
            }
        }
        if !unreachable.isEmpty { throw ExitCode.unavailable }
    }
}

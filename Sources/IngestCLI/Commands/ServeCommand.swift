import ArgumentParsing
import Foundation
import IngestRuntime
import WebDashboard

/// `ingestd serve`: the local web dashboard, JSON API and /metrics over the store.
struct ServeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "serve", abstract: "A local web dashboard, JSON API (/api/v1/…) and /metrics over the store.",
        discussion: """
            Pages per person (today against the last 30 days, steps, weight and body fat, heart rate, \
            blood pressure with its categories, devices), first-contact decisions with grant and deny \
            buttons, and the sinks' backlog. Charts are SVG drawn by ingestd with a data table each; \
            the pages need no JavaScript and load nothing from the network. Listens on 127.0.0.1 by \
            default; any other address needs --token @FILE. Runs beside the daemon (the store is read \
            as a WAL reader). Ctrl-C or SIGTERM stops it.
            """,
        examples: [
            "ingestd serve",
            "ingestd serve --listen 127.0.0.1:9090 --tz Europe/Berlin",
            "ingestd serve --listen 0.0.0.0:8080 --token @/etc/ingestd/dashboard.token",
        ])
    static let listen = TypedOption<String>(Option("listen", valueName: "ADDR:PORT", help: "Where to listen.", default: "127.0.0.1:8080"))
    static let signature = Signature {
        Self.listen
        DashboardTokenOption.self
        TimeZoneOption.self
        QueryStoreOptions.self
    }

    let address: ListenAddress
    let token: String?
    let zone: TimeZoneOption
    let storeFile: QueryStoreOptions

    init(_ arguments: ParsedValues) throws {
        token = try DashboardTokenOption(arguments).token
        address = try DashboardTokenOption.address(try arguments.required(Self.listen), argument: Self.listen.spelling, token: token)
        zone = try TimeZoneOption(arguments)
        storeFile = try QueryStoreOptions(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        defer { signals.cancel() }
        let store = try storeFile.open(context)
        defer { store.close() }
        let server = try DashboardServing.start(store: store, storePath: storeFile.filePath(context), address: address,
                                                token: token, zone: zone, context: context)
        for await signal in signals.stream {
            context.stderr.writeLine("serve: \(signal == SIGINT ? "SIGINT" : "SIGTERM") received, stopping")
            break
        }
        server.stop()
    }
}

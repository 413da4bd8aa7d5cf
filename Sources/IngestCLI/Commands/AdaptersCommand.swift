import AdapterKit
import ArgumentParsing
import ExternalAdapters
import Foundation
import HealthModel

/// `ingestd adapters [--json | --markdown]`: the built-in and external adapters, with their state,
/// the models each covers, what each model offers and what we read; `--markdown` prints the
/// README's device table (made from the built-in adapters' models).
struct AdaptersCommand: Command {
    static let configuration = CommandConfiguration(
        name: "adapters",
        abstract: "List the built-in and external adapters and their state.",
        discussion: """
            Built-in adapters are compiled in. External adapters are executables named \
            ingestd-adapter-<id> in the plugin directories (--plugins DIR, else \
            ~/.local/lib/ingestd/adapters and /usr/lib/ingestd/adapters); each is asked to --describe \
            itself (within 5 s). State: ok; broken: the reason it is not used; restarting: when a \
            running daemon will next start it (from the daemon's status file). Plugins/README.md \
            describes the protocol. --json lists each adapter's models (maker, name, what the \
            model offers, what we read of it, the capture that shows it); --markdown prints the \
            built-in adapters' models as the README's device table (scripts/update-device-table).
            """,
        examples: [
            "ingestd adapters",
            "ingestd adapters --json",
            "ingestd adapters --markdown",
        ]
    )
    static let statusOption = TypedOption<String>(Option(
        "status", valueName: "FILE",
        help: "The running daemon's adapter status (default: $XDG_RUNTIME_DIR/ingestd/adapters.json, else /run/ingestd/adapters.json)."))
    static let markdownFlag = TypedFlag(Flag("markdown", help: "The built-in adapters' models as a Markdown table (the README's device table)."))
    static let signature = Signature {
        PluginsOption.self
        Self.statusOption
        JSONOption.self
        Self.markdownFlag
    }

    let plugins: [String]
    let statusPath: String?
    let json: Bool
    let markdown: Bool

    init(_ arguments: ParsedValues) throws {
        plugins = try PluginsOption(arguments).directories
        statusPath = try arguments.value(Self.statusOption)
        json = try JSONOption(arguments).isOn
        markdown = arguments.flag(Self.markdownFlag)
        if json && markdown { throw UsageError.invalid("--json and --markdown cannot be used together") }
    }

    func run(_ context: CommandContext) async throws {
        if markdown {
            context.stdout.write(DeviceTable.markdown(ExternalAdapterSupport.builtInDescriptors))
            return
        }
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: plugins, context: context)
        let live = ExternalAdapterStatusSnapshot.read(
            from: statusPath ?? ExternalAdapterStatusSnapshot.defaultPath(environment: context.environment))
        let listing = AdapterListing(builtIn: ExternalAdapterSupport.builtInDescriptors, external: catalogue.plugins, live: live)
        if json {
            for line in listing.jsonLines { context.stdout.writeLine(line) }
        } else {
            context.stdout.write(listing.table)
        }
    }
}

/// The rows of `ingestd adapters`: built-in adapters (always ok) and external plugins with their
/// state, the running daemon's live state taking precedence when it knows the plugin.
struct AdapterListing {
    struct Row: Equatable {
        var id: String
        var kind: String
        var name: String?
        var version: String?
        var path: String?
        var state: ExternalAdapterState
        var produces: [QuantityType]
        var matches: [DeviceMatch]
        var live: ExternalAdapterStatusSnapshot.Entry?
        /// The protocol version an external adapter speaks, and whether it holds conversations
        /// with connected devices (protocol 2, `"connect":true`).
        var protocolVersion: Int? = nil
        var connects = false
        /// Other adapters whose matches may claim the same devices (in precedence order: the
        /// device's connection goes to the first that is not broken or in back-off).
        var overlaps: [String] = []
        /// How the adapter gets its data, and the models it covers (built-in adapters).
        var how: String = ""
        var models: [AdapterModel] = []
    }

    var rows: [Row]

    init(builtIn: [AdapterDescriptor], external: [ExternalPlugin], live: ExternalAdapterStatusSnapshot? = nil) {
        rows = builtIn.map {
            Row(id: $0.id, kind: "built-in", name: $0.name, version: $0.version, path: nil, state: .ok,
                produces: $0.produces, matches: $0.matches, live: nil, how: $0.how, models: $0.models)
        }
        for plugin in external {
            let entry = live?.adapters.first { $0.id == plugin.id && $0.path == plugin.path }
            var state = plugin.state
            if let entry, plugin.brokenReason == nil { state = entry.adapterState }
            rows.append(Row(id: plugin.id, kind: "external", name: plugin.descriptor?.name, version: plugin.descriptor?.version,
                            path: plugin.path, state: state, produces: plugin.descriptor?.produces ?? [],
                            matches: plugin.descriptor?.matches ?? [], live: entry,
                            protocolVersion: plugin.adapter?.protocolVersion, connects: plugin.adapter?.connects ?? false,
                            how: plugin.descriptor?.how ?? "", models: plugin.descriptor?.models ?? []))
        }
        let descriptors = rows.map { AdapterDescriptor(id: $0.id, name: $0.name ?? $0.id, version: $0.version ?? "",
                                                        summary: "", matches: $0.matches, produces: $0.produces) }
        for index in rows.indices {
            rows[index].overlaps = descriptors.indices.filter { $0 != index && descriptors[index].mayOverlap(descriptors[$0]) }
                .map { rows[$0].id }
        }
    }

    var table: String {
        let body = rows.map { row -> [String] in
            [row.id, row.kind + (row.protocolVersion.map { " p\($0)" } ?? "") + (row.connects ? " connects" : ""),
             row.version ?? "-", row.state.description,
             row.matches.isEmpty ? "-" : row.matches.map(\.description).joined(separator: "; "),
             row.produces.isEmpty ? "-" : row.produces.map(\.shortName).joined(separator: ",")]
        }
        var text = Table(header: ["ID", "KIND", "VERSION", "STATE", "MATCHES", "PRODUCES"], rows: body).rendered
        let overlapping = rows.filter { !$0.overlaps.isEmpty }
        if !overlapping.isEmpty {
            text += "\nOverlapping claims (advertisements go to each; a connection or USB session to the first "
                + "available, `--adapter DEVICE=ID` pins one):\n"
                + overlapping.map { "\($0.id): also \($0.overlaps.joined(separator: ", "))" }.joined(separator: "\n") + "\n"
        }
        let external = rows.compactMap(\.path)
        if !external.isEmpty {
            text += "\n" + rows.filter { $0.path != nil }.map { "\($0.id): \($0.path ?? "")" }.joined(separator: "\n") + "\n"
        }
        return text
    }

    var jsonLines: [String] {
        rows.map { row in
            var fields = ["\"id\":\(JSONText.quoted(row.id))", "\"kind\":\(JSONText.quoted(row.kind))"]
            if let name = row.name { fields.append("\"name\":\(JSONText.quoted(name))") }
            if let version = row.version { fields.append("\"version\":\(JSONText.quoted(version))") }
            if let path = row.path { fields.append("\"path\":\(JSONText.quoted(path))") }
            if let version = row.protocolVersion { fields.append("\"protocol\":\(version),\"connects\":\(row.connects)") }
            switch row.state {
            case .ok:
                fields.append("\"state\":\"ok\"")
            case .broken(let reason):
                fields.append("\"state\":\"broken\"")
                fields.append("\"reason\":\(JSONText.quoted(reason))")
            case .restarting(let next, let reason):
                fields.append("\"state\":\"restarting\"")
                fields.append("\"nextAttempt\":\(JSONText.quoted(ISO8601DateTime.string(from: next)))")
                fields.append("\"reason\":\(JSONText.quoted(reason))")
            }
            fields.append("\"produces\":[" + row.produces.map { JSONText.quoted($0.identifier) }.joined(separator: ",") + "]")
            fields.append("\"matches\":[" + row.matches.map { JSONText.quoted($0.description) }.joined(separator: ",") + "]")
            if !row.overlaps.isEmpty {
                fields.append("\"overlaps\":[" + row.overlaps.map(JSONText.quoted).joined(separator: ",") + "]")
            }
            if !row.how.isEmpty { fields.append("\"how\":\(JSONText.quoted(row.how))") }
            if !row.models.isEmpty {
                fields.append("\"models\":[" + row.models.map(\.jsonObject).joined(separator: ",") + "]")
            }
            if let live = row.live {
                fields.append("\"starts\":\(live.starts),\"failures\":\(live.failures),\"records\":\(live.records),"
                    + "\"rejectedLines\":\(live.rejectedLines),\"droppedAdvertisements\":\(live.droppedAdvertisements)")
            }
            return "{" + fields.joined(separator: ",") + "}"
        }
    }

}

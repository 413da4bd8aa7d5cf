import AdapterKit
import Foundation
import Synchronization

/// One plugin file found in the plugin directories: usable (an `ExternalAdapter`) or broken.
public struct ExternalPlugin: Sendable {
    /// The id from the file name.
    public var id: String
    public var path: String
    /// The adapter, when `--describe` gave a valid descriptor and nothing else is wrong.
    public var adapter: ExternalAdapter?
    /// Why the plugin is not used; nil when it is.
    public var brokenReason: String?

    public init(id: String, path: String, adapter: ExternalAdapter?, brokenReason: String?) {
        self.id = id
        self.path = path
        self.adapter = adapter
        self.brokenReason = brokenReason
    }

    /// The descriptor, when the plugin described itself.
    public var descriptor: AdapterDescriptor? { adapter?.descriptor }

    /// `broken`, or the adapter's live state (`ok`, `restarting`).
    public var state: ExternalAdapterState {
        if let brokenReason { return .broken(reason: brokenReason) }
        return adapter?.state ?? .broken(reason: "not described")
    }
}

/// The external adapters of the plugin directories: found, described (concurrently, each within
/// the describe time limit) and checked against the built-in adapter ids.
public struct ExternalAdapterCatalogue: Sendable {
    /// Every plugin file found, in discovery order.
    public var plugins: [ExternalPlugin]

    public init(plugins: [ExternalPlugin]) {
        self.plugins = plugins
    }

    /// The usable adapters, in discovery order (for `AdapterRouter`, after the built-in ones).
    public var adapters: [ExternalAdapter] { plugins.compactMap(\.adapter) }

    /// Scans `directories`, describes each candidate and builds the adapters.
    ///
    /// A plugin whose id is in `reservedIDs` (the built-in adapters) is broken: its samples would
    /// be written under the built-in adapter's source and so use that adapter's grants.
    public static func load(directories: [String], reservedIDs: Set<String>,
                            configuration: ExternalAdapterConfiguration = ExternalAdapterConfiguration()) -> ExternalAdapterCatalogue {
        let candidates = PluginDiscovery.scan(directories: directories)
        let describer = PluginDescriber(timeout: configuration.describeTimeout, environment: configuration.environment,
                                        maximumOutput: configuration.maximumLineLength)
        let results = Mutex<[Int: ExternalPlugin]>([:])
        let group = DispatchGroup()
        for (index, candidate) in candidates.enumerated() {
            if let problem = candidate.problem ?? reservedProblem(candidate.id, reservedIDs) {
                results.withLock { $0[index] = ExternalPlugin(id: candidate.id, path: candidate.path, adapter: nil, brokenReason: problem) }
                continue
            }
            group.enter()
            let thread = Thread {
                let plugin: ExternalPlugin
                switch describer.describePlugin(executable: candidate.path, expectedID: candidate.id) {
                case .success(let description):
                    plugin = ExternalPlugin(id: candidate.id, path: candidate.path,
                                            adapter: ExternalAdapter(description: description, executable: candidate.path,
                                                                     configuration: configuration),
                                            brokenReason: nil)
                case .failure(let error):
                    plugin = ExternalPlugin(id: candidate.id, path: candidate.path, adapter: nil, brokenReason: error.description)
                }
                results.withLock { $0[index] = plugin }
                group.leave()
            }
            thread.name = "ingestd describe \(candidate.id)"
            thread.start()
        }
        group.wait()
        let plugins = results.withLock { found in candidates.indices.compactMap { found[$0] } }
        for plugin in plugins {
            if let reason = plugin.brokenReason {
                configuration.log(ExternalAdapterLogEntry(adapterID: plugin.id, device: nil, level: .warning,
                                                          message: "\(plugin.path) not used: \(reason)", origin: .supervisor))
            }
        }
        return ExternalAdapterCatalogue(plugins: plugins)
    }

    private static func reservedProblem(_ id: String, _ reserved: Set<String>) -> String? {
        reserved.contains(id) ? "id \"\(id)\" is a built-in adapter's; an external adapter may not write under its source" : nil
    }
}

import ArgumentParsing
import Foundation
import HealthModel
import IngestRuntime
import Pipeline
import WebDashboard

/// Starts the dashboard's HTTP server over a store (shared by `serve` and `run --http`).
enum DashboardServing {
    static func start(store: any QueryStore, storePath: String?, address: ListenAddress, token: String?, zone: TimeZoneOption,
                      context: CommandContext) throws -> HTTPServer {
        let dashboard = Dashboard(store: store, administration: storePath.map(StoreDashboardAdministration.init(path:)),
                                  configuration: DashboardConfiguration(token: token, zone: zone.zone, zoneName: zone.name))
        let server: HTTPServer
        do {
            server = try HTTPServer(address: address) { dashboard.respond($0) }
        } catch {
            throw CommandError.dashboardNotServed(error)
        }
        let shown = address.isIPv6 ? "[\(address.host)]:\(server.port)" : "\(address.host):\(server.port)"
        context.stderr.writeLine("serving the dashboard on http://\(shown)/"
            + (token == nil ? " (this machine only)" : " (token required: bearer header or the login form)"))
        return server
    }
}

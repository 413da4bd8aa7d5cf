import Foundation
import Logging
import Testing
@testable import IngestRuntime

/// Runs the daemon (without `--once`) until `done` holds, then cancels it: the stop a signal
/// gives, sessions cancelled, the store closed. The test waits for what it is about (a commit,
/// a command the peripheral received) instead of listening for a fixed time, which a loaded
/// machine may not be enough for. Records an issue when `done` still does not hold after `limit`.
func runDaemonUntil(store: String, backend: some DeviceBackend, logger: Logger, within limit: Duration = .seconds(60),
               until done: @escaping @Sendable () -> Bool) async throws {
    let running = Task {
        try await Daemon(options: DaemonOptions(storePath: store), backends: [backend], logger: logger).run()
    }
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: limit)
    while !done(), clock.now < deadline {
        try? await Task.sleep(for: .milliseconds(20))
    }
    let reached = done()
    running.cancel()
    try await running.value
    if !reached { Issue.record("the daemon did not get there within \(limit)") }
}

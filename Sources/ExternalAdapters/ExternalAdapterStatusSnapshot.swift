import Foundation
import HealthModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a running daemon publishes about its external adapters, so that a separate
/// `ingestd adapters` can show live states (`restarting: next attempt …`) and counters.
///
/// The daemon writes it (atomically, mode 0644) whenever an adapter's state changes; a reader
/// ignores a snapshot whose writer is no longer running.
public struct ExternalAdapterStatusSnapshot: Codable, Sendable, Hashable {
    /// One adapter's live state and counters.
    public struct Entry: Codable, Sendable, Hashable {
        public var id: String
        public var path: String
        /// `ok`, `broken` or `restarting`.
        public var state: String
        public var reason: String?
        public var nextAttempt: String?
        public var starts: Int
        public var failures: Int
        public var records: Int
        public var rejectedLines: Int
        public var droppedAdvertisements: Int

        /// The state as `ExternalAdapterState`.
        public var adapterState: ExternalAdapterState {
            switch state {
            case "broken": return .broken(reason: reason ?? "")
            case "restarting":
                let next = nextAttempt.flatMap { ISO8601DateTime.date(from: $0) } ?? Date(timeIntervalSince1970: 0)
                return .restarting(nextAttempt: next, reason: reason ?? "")
            default: return .ok
            }
        }
    }

    /// The daemon's process id.
    public var pid: Int32
    /// When the snapshot was written (ISO 8601).
    public var written: String
    public var adapters: [Entry]

    public init(pid: Int32, written: Date, adapters: [Entry]) {
        self.pid = pid
        self.written = ISO8601DateTime.string(from: written)
        self.adapters = adapters
    }

    /// The catalogue's plugins with their current states, for this process.
    public init(catalogue: ExternalAdapterCatalogue, now: Date = Date()) {
        let entries = catalogue.plugins.map { plugin -> Entry in
            let statistics = plugin.adapter?.supervisor.statistics ?? ExternalAdapterStatistics()
            var entry = Entry(id: plugin.id, path: plugin.path, state: "ok", reason: nil, nextAttempt: nil,
                              starts: statistics.starts, failures: statistics.failures, records: statistics.records,
                              rejectedLines: statistics.rejectedLines, droppedAdvertisements: statistics.droppedAdvertisements)
            switch plugin.state {
            case .ok: break
            case .broken(let reason):
                entry.state = "broken"
                entry.reason = reason
            case .restarting(let next, let reason):
                entry.state = "restarting"
                entry.reason = reason
                entry.nextAttempt = ISO8601DateTime.string(from: next)
            }
            return entry
        }
        self.init(pid: getpid(), written: now, adapters: entries)
    }

    /// `$XDG_RUNTIME_DIR/ingestd/adapters.json`, or `/run/ingestd/adapters.json` for the system
    /// service (no XDG_RUNTIME_DIR).
    public static func defaultPath(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return (runtime as NSString).appendingPathComponent("ingestd/adapters.json")
        }
        return "/run/ingestd/adapters.json"
    }

    /// Writes the snapshot atomically (a temporary file renamed over the old one), creating the
    /// directory if needed.
    public func write(to path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(self)
        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o644]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(code))])
        }
    }

    /// Reads a snapshot; nil when there is none, it cannot be read, or its daemon is not running.
    public static func read(from path: String) -> ExternalAdapterStatusSnapshot? {
        guard let data = FileManager.default.contents(atPath: path),
              let snapshot = try? JSONDecoder().decode(ExternalAdapterStatusSnapshot.self, from: data)
        else { return nil }
        guard snapshot.pid > 0, kill(snapshot.pid, 0) == 0 || errno == EPERM else { return nil }
        return snapshot
    }
}

/// Keeps the status snapshot file current: pass ``stateChanged`` as the configuration's
/// `stateChanged`, load the catalogue with that configuration, then ``attach(_:)`` it.
///
/// ```swift
/// let publisher = ExternalAdapterStatusPublisher(path: ExternalAdapterStatusSnapshot.defaultPath(environment: env))
/// configuration.stateChanged = publisher.stateChanged
/// let catalogue = ExternalAdapterCatalogue.load(directories: dirs, reservedIDs: builtIns, configuration: configuration)
/// publisher.attach(catalogue)
/// ```
public final class ExternalAdapterStatusPublisher: Sendable {
    public let path: String
    private let catalogue = Mutex<ExternalAdapterCatalogue?>(nil)
    private let onError: @Sendable (any Error) -> Void

    /// - Parameter onError: told when the file cannot be written (the daemon logs it once).
    public init(path: String, onError: @escaping @Sendable (any Error) -> Void = { _ in }) {
        self.path = path
        self.onError = onError
    }

    /// Starts publishing `catalogue`'s states; writes the first snapshot now.
    public func attach(_ catalogue: ExternalAdapterCatalogue) {
        self.catalogue.withLock { $0 = catalogue }
        publish()
    }

    /// For `ExternalAdapterConfiguration.stateChanged`.
    public var stateChanged: @Sendable (String) -> Void {
        { [self] _ in publish() }
    }

    /// Writes the current states (serialized: one writer at a time).
    public func publish() {
        catalogue.withLock { catalogue in
            guard let catalogue else { return }
            do {
                try ExternalAdapterStatusSnapshot(catalogue: catalogue).write(to: path)
            } catch {
                onError(error)
            }
        }
    }
}

import Foundation
import Pipeline
import SQLiteStore

/// The local store file as the composition root knows it: where it is by default, and the file
/// opened as one of the ports. Commands use these and never learn that it is an SQLite file.
public enum StoreFile {
    /// `$XDG_DATA_HOME/ingestd/health.sqlite`, else `~/.local/share/ingestd/health.sqlite`.
    public static func defaultPath(environment: [String: String]) -> String {
        HealthStore.defaultPath(environment: environment)
    }

    /// The store file at `path` as the delivery feed (its sinks, cursors and dead letters).
    public static func openFeed(path: String, readOnly: Bool = false) throws -> any DeliveryFeed {
        try HealthStore(path: path, readOnly: readOnly)
    }
}

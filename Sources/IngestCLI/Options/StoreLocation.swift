import ArgumentParsing
import Foundation
import PostgresStore

/// What a `--store` value names: the local store file or a fleet's PostgreSQL database. The one
/// place that decides: a value with a URL scheme (`postgresql://`, `postgres://`, any
/// `scheme://`) is never a file path, so no command creates a file named after a URL.
enum StoreLocation: Equatable {
    /// A store file; nil is the default store.
    case file(String?)
    /// A fleet's shared PostgreSQL database (`postgresql://…` or `postgres://…`).
    case fleet(url: String)

    /// Reads a `--store` value; a URL of another scheme is a usage error.
    init(_ value: String?) throws {
        guard let value, let scheme = Self.scheme(of: value) else {
            self = .file(value)
            return
        }
        guard PostgresURL.matches(value) else {
            throw UsageError.invalidValue(PostgresURL.redacted(value), argument: "--store",
                                          reason: "a '\(scheme)://' URL is not a store: give a store file's path or a fleet's postgresql://… URL")
        }
        self = .fleet(url: value)
    }

    /// The scheme of `value` when it is a URL (RFC 3986: a letter, then letters, digits, `+`, `-`
    /// or `.`, then `://`), lowercased; nil for a path.
    static func scheme(of value: String) -> String? {
        guard let separator = value.range(of: "://") else { return nil }
        let scheme = value[..<separator.lowerBound]
        guard let first = scheme.unicodeScalars.first, first.isASCII, CharacterSet.letters.contains(first),
              scheme.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0)) })
        else { return nil }
        return scheme.lowercased()
    }

    /// Why a command that works on the local store file refuses a fleet's database: the store it
    /// needs and how samples reach a fleet.
    static let localStoreOnly = """
        this command works on the local store file (--store PATH), not on a fleet's PostgreSQL database; \
        samples reach a fleet through a sink: 'ingestd sinks add NAME postgresql://… --all-types' on the gateway, \
        then 'ingestd sinks deliver' (samples, stats, today, changes, sources, status, export and watch read --store postgresql://…)
        """
}

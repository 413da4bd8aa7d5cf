import Foundation

// Positions in a store's change order, as the read port hands them out and takes them back
// (`changes --since`, `watch --since`). A store file counts one sequence of anchors; a fleet's
// database keeps one position per gateway. Commands parse and print them without knowing
// which store they opened.

/// Why a fleet change anchor given by the user cannot be read; carries the offending text.
public enum FleetAnchorError: Error, Equatable, CustomStringConvertible {
    /// The token is not one `changes --store postgresql://…` printed.
    case malformed(token: String, reason: String)

    public var description: String {
        switch self {
        case .malformed(let token, let reason):
            let shown = token.count > 40 ? String(token.prefix(40)) + "…" : token
            return "invalid fleet anchor '\(shown)': \(reason)"
        }
    }
}

/// The position of a reader in a fleet's change order: per gateway, the highest feed anchor of that
/// gateway already seen. Each gateway's sink delivers its own store's feed in anchor order, one
/// transaction per batch, so a gateway's rows with a higher anchor are exactly its changes since.
/// Like HealthKit's query anchors it is opaque to users: `token` encodes it, `init(token:)` reads it
/// back (`0` or an empty token is the beginning).
public struct FleetAnchor: Sendable, Equatable {
    /// Highest anchor seen per gateway id; a gateway not listed is read from its beginning.
    public var positions: [String: Int64]

    /// The longest token accepted (about 10,000 gateways).
    public static let maximumTokenLength = 1 << 20
    private static let prefix = "f1."

    public init(positions: [String: Int64] = [:]) {
        self.positions = positions
    }

    /// The position encoded as `f1.` followed by base64url (no padding) of `gateway<TAB>anchor` lines.
    public var token: String {
        let text = positions.keys.sorted().map { "\($0)\t\(positions[$0] ?? 0)\n" }.joined()
        let base64 = Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return Self.prefix + base64
    }

    /// Reads a token printed by `changes`; `0` and the empty string are the beginning.
    public init(token: String) throws(FleetAnchorError) {
        if token.isEmpty || token == "0" {
            self.init()
            return
        }
        guard token.utf8.count <= Self.maximumTokenLength else {
            throw .malformed(token: token, reason: "longer than \(Self.maximumTokenLength) bytes")
        }
        guard token.hasPrefix(Self.prefix) else {
            throw .malformed(token: token, reason: "not a fleet anchor (it starts with '\(Self.prefix)'; a number is a store file's anchor)")
        }
        var base64 = String(token.dropFirst(Self.prefix.count))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else {
            throw .malformed(token: token, reason: "not base64url-encoded UTF-8")
        }
        var positions: [String: Int64] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 2, !fields[0].isEmpty, let anchor = Int64(fields[1]), anchor >= 0 else {
                throw .malformed(token: token, reason: "bad entry '\(line)'")
            }
            guard positions.updateValue(anchor, forKey: String(fields[0])) == nil else {
                throw .malformed(token: token, reason: "gateway '\(fields[0])' listed twice")
            }
        }
        self.init(positions: positions)
    }
}

/// Why a `--since` anchor cannot be used; carries the offending text.
public enum ChangeAnchorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Neither a whole number nor a fleet token.
    case malformed(text: String, reason: String)
    /// An anchor of the other kind of store: a fleet token given to a store file, or a
    /// number other than 0 given to a fleet's database.
    case ofAnotherStore(text: String, reason: String)

    /// Why, without the text.
    public var reason: String {
        switch self {
        case .malformed(_, let reason), .ofAnotherStore(_, let reason): reason
        }
    }

    public var description: String {
        switch self {
        case .malformed(let text, let reason), .ofAnotherStore(let text, let reason):
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            return "invalid anchor '\(shown)': \(reason)"
        }
    }
}

/// A position in a store's change order: a store file's anchor (a whole number), or a fleet's
/// position per gateway (an opaque `f1.…` token). `0` is the beginning of either.
public enum ChangeAnchor: Sendable, Equatable, CustomStringConvertible {
    /// A store file's change-log anchor.
    case sequence(Int64)
    /// A fleet's position, per gateway.
    case gateways(FleetAnchor)

    /// The beginning of every store.
    public static let beginning = ChangeAnchor.sequence(0)

    /// Reads what `changes` printed: a whole number, or a fleet token.
    public init(text: String) throws(ChangeAnchorError) {
        if let number = Int64(text) {
            guard number >= 0 else { throw .malformed(text: text, reason: "must not be negative") }
            self = .sequence(number)
            return
        }
        guard text.hasPrefix("f1.") else {
            throw .malformed(text: text, reason: "not an anchor (a whole number, or a fleet's token printed by 'changes')")
        }
        do {
            self = .gateways(try FleetAnchor(token: text))
        } catch {
            switch error {
            case .malformed(_, let reason): throw .malformed(text: text, reason: reason)
            }
        }
    }

    /// The text `init(text:)` reads back.
    public var description: String {
        switch self {
        case .sequence(let number): String(number)
        case .gateways(let fleet): fleet.token
        }
    }

    /// The anchor as a JSON value: a number, or a fleet's token as a string.
    public var json: String {
        switch self {
        case .sequence(let number): String(number)
        case .gateways(let fleet): "\"\(fleet.token)\""
        }
    }

    /// A store file's anchor; a fleet's token is refused.
    public func sequence() throws(ChangeAnchorError) -> Int64 {
        switch self {
        case .sequence(let number): return number
        case .gateways(let fleet):
            throw .ofAnotherStore(text: fleet.token, reason: "a fleet's token; a store file's anchor is a whole number")
        }
    }

    /// A fleet's position; a store file's anchor other than 0 (the beginning) is refused.
    public func fleet() throws(ChangeAnchorError) -> FleetAnchor {
        switch self {
        case .gateways(let fleet): return fleet
        case .sequence(0): return FleetAnchor()
        case .sequence(let number):
            throw .ofAnotherStore(text: String(number),
                                  reason: "not a fleet anchor (it starts with 'f1.'; a number is a store file's anchor)")
        }
    }
}

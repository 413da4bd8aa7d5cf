import Foundation

// The answers of the read port (`QueryStore`) beyond samples and statistics: a store's status,
// the export cursor's summary and the events `watch` follows. Each store fills them with what
// it holds; a command prints what it is given.

/// Per source and type (and, in a fleet's database, per gateway): live samples and the end of the latest one.
public struct SourceTypeStatus: Sendable, Equatable {
    /// The gateway that delivered them; nil in a gateway's own store.
    public var gateway: String?
    public var source: String
    public var type: String
    public var count: Int
    public var lastSampleEnd: Date

    public init(gateway: String? = nil, source: String, type: String, count: Int, lastSampleEnd: Date) {
        self.gateway = gateway
        self.source = source
        self.type = type
        self.count = count
        self.lastSampleEnd = lastSampleEnd
    }
}

/// What a fleet's database holds for one gateway (`ingestd status --store postgresql://…`).
public struct GatewayStatus: Sendable, Equatable {
    public var gateway: String
    public var firstDelivery: Date
    public var lastDelivery: Date
    /// The gateway's position in its own feed: the highest anchor it delivered.
    public var lastAnchor: Int64
    public var liveSamples: Int
    public var deletedSamples: Int

    public init(gateway: String, firstDelivery: Date, lastDelivery: Date, lastAnchor: Int64, liveSamples: Int,
                deletedSamples: Int) {
        self.gateway = gateway
        self.firstDelivery = firstDelivery
        self.lastDelivery = lastDelivery
        self.lastAnchor = lastAnchor
        self.liveSamples = liveSamples
        self.deletedSamples = deletedSamples
    }
}

/// The schema of a shared database: its name and the version its tables are at.
public struct SchemaStatus: Sendable, Equatable {
    public var name: String
    public var version: Int

    public init(name: String, version: Int) {
        self.name = name
        self.version = version
    }
}

/// What a store holds and what it refused lately (`ingestd status`).
public struct StoreStatus: Sendable, Equatable {
    /// Where the store is, for people: a file's path, or a database's host, port and name (no password).
    public var location: String
    /// The shared database's schema; nil for a gateway's own store file.
    public var schema: SchemaStatus?
    /// Per gateway its deliveries (a fleet's database); empty for a gateway's own store.
    public var gateways: [GatewayStatus]
    /// Live samples per (gateway,) source and type, ordered.
    public var sourceTypes: [SourceTypeStatus]
    /// Samples held for undecided sources, per source (a gateway's own store only).
    public var held: [String: Int]
    /// Samples that belong to nobody yet.
    public var unassigned: Int
    /// Rejections since the time asked for, per (source, type, reason).
    public var rejections: [RejectionKey: Int]
    /// Per source the types refused because they are denied and not granted since.
    public var denied: [String: Set<String>]

    public init(location: String, schema: SchemaStatus? = nil, gateways: [GatewayStatus] = [],
                sourceTypes: [SourceTypeStatus] = [], held: [String: Int] = [:], unassigned: Int = 0,
                rejections: [RejectionKey: Int] = [:], denied: [String: Set<String>] = [:]) {
        self.location = location
        self.schema = schema
        self.gateways = gateways
        self.sourceTypes = sourceTypes
        self.held = held
        self.unassigned = unassigned
        self.rejections = rejections
        self.denied = denied
    }
}

/// Why the export cursor stopped.
public enum ExportReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A stored correlation with more members than the export holds at once (its uuid, the bound).
    case correlationTooLarge(uuid: UUID, limit: Int)

    public var description: String {
        switch self {
        case .correlationTooLarge(let uuid, let limit):
            "correlation \(uuid.uuidString) has more than \(limit) member samples; the export stops there"
        }
    }
}

/// What the export cursor could not turn into records: rows of types this build does not know.
public struct ExportReadSummary: Sendable, Equatable {
    /// Stored samples whose type identifier this build does not know, per identifier.
    public var unknownTypes: [String: Int] = [:]

    public init(unknownTypes: [String: Int] = [:]) {
        self.unknownTypes = unknownTypes
    }
}

/// Where a watcher stands in a store's commits and deliveries; opaque to commands (made by
/// `QueryStore.watchStart`, advanced by `QueryStore.watchEvents`).
public enum WatchCursor: Sendable, Equatable {
    /// A store file: the last commit and the last delivery seen; deliveries at or below
    /// `deliveredAbove`'s anchor are skipped (nil: none skipped).
    case log(commit: Int64, delivery: Int64, deliveredAbove: Int64?)
    /// A fleet's database: per gateway the highest anchor seen.
    case gateways(FleetAnchor)
}

/// One line of `ingestd watch`.
public enum WatchEvent: Sendable, Equatable {
    /// Samples of a type a source added in one commit (in a fleet's database: one gateway's
    /// delivered samples of a type and source since the last look), with the anchor reached.
    case committed(type: String, source: String, count: Int, anchor: Int64, gateway: String?)
    /// A batch a sink's receiver acknowledged.
    case delivered(sink: String, type: String, count: Int, anchor: Int64)
}

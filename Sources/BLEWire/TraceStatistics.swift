/// Why the trace decoder could not use (all of) a packet. Never fatal: counted and skipped.
public enum TraceMalformation: String, Hashable, Sendable, CaseIterable {
    /// An H4 packet indicator the decoder does not know.
    case unknownPacketType
    /// An HCI event shorter than its header or its declared parameter length.
    case eventTruncated
    /// An advertising report running past the end of its LE Meta event.
    case advertisingReportTruncated
    /// Advertising data whose AD structure lengths run past the end of the data (the
    /// structures before it are still decoded and the advertisement is emitted).
    case advertisingDataMalformed
    /// Extended advertising data the controller marked truncated (data status 2), or
    /// fragments dropped because they were never completed.
    case extendedAdvertisingDataTruncated
    /// An LE (Enhanced) Connection Complete event shorter than its fields.
    case connectionEventTruncated
    /// A Disconnection Complete event shorter than its fields.
    case disconnectionEventTruncated
    /// An ACL packet shorter than its 4-byte header.
    case aclHeaderTruncated
    /// An ACL packet holding fewer bytes than its header declares.
    case aclLengthMismatch
    /// A continuation fragment with no first fragment before it.
    case aclContinuationWithoutStart
    /// A first fragment arriving while the previous L2CAP frame was still incomplete.
    case aclFragmentAbandoned
    /// Fragments adding up to more bytes than the L2CAP header declares.
    case l2capLengthMismatch
    /// An ATT PDU shorter than its opcode's fixed fields.
    case attPDUTooShort
    /// An ATT discovery response whose element length or format is inconsistent.
    case attResponseMalformed
}

/// What the trace decoder saw, counted.
public struct TraceStatistics: Hashable, Sendable {
    /// HCI packets processed.
    public var records = 0
    /// Records of other link types (e.g. usbmon) that the decoder passed over.
    public var nonHCIRecords = 0
    /// Advertising reports decoded (legacy and extended, each report of an event counted).
    public var advertisements = 0
    /// Successful LE connections.
    public var connections = 0
    /// LE (Enhanced) Connection Complete events with a non-zero status.
    public var failedConnections = 0
    /// Successful Disconnection Complete events.
    public var disconnections = 0
    /// Handle Value Notifications.
    public var notifications = 0
    /// Handle Value Indications.
    public var indications = 0
    /// Read responses matched to their request (Read Response, Read By Type values).
    public var reads = 0
    /// Write Requests and Write Commands to attributes other than CCCDs.
    public var writes = 0
    /// Writes to Client Characteristic Configuration descriptors.
    public var subscriptions = 0
    /// ATT responses with no matching request (the request was before the capture started).
    public var unmatchedResponses = 0
    /// Packets or parts of packets that could not be used, by reason.
    public var malformed: [TraceMalformation: Int] = [:]

    /// Creates empty counters.
    public init() {}

    /// All malformations together.
    public var malformedTotal: Int { malformed.values.reduce(0, +) }

    mutating func count(_ malformation: TraceMalformation) {
        malformed[malformation, default: 0] += 1
    }
}

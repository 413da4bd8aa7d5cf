import Foundation
import HealthModel
import Transport

/// A device adapter: its descriptor and a factory for per-device sessions.
///
/// Adapters depend on the health model and the transport types only; they never see the store.
/// Decoding lives in pure decoders (bytes in, values or a typed error out); the session holds
/// per-device state (the previous cumulative counter, the last broadcast reading, …).
public protocol BLEAdapter: Sendable {
    var descriptor: AdapterDescriptor { get }
    /// A session for one BLE device the descriptor matched.
    func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession
    /// Whether the adapter can take a device now (default true; see ``AdapterPins``).
    var isAvailable: Bool { get }
}

/// Per-device decoding state. Fed transport events in order; writes records and rejections.
public protocol BLEAdapterSession: AnyObject {
    /// Handles one event of this device.
    func receive(_ event: TransportEvent, into output: inout AdapterOutput)
    /// The device's events have ended (capture end, disconnection, shutdown).
    func finish(into output: inout AdapterOutput)
    /// Hands out what the session produced since the last call without being given an event:
    /// sessions whose decoding runs elsewhere (an external adapter's process) produce records
    /// after `receive` returned. Live loops call it now and then; the default has nothing.
    func poll(into output: inout AdapterOutput)
    /// `finish(into:)` for a caller that commits in batches: whenever `output` holds `limit`
    /// records or more, the session hands it to `flush` and goes on with an empty one, so a
    /// session that still produces a lot at its end (an external adapter's process flooding
    /// samples) never makes the caller hold more than about `limit` records. An error from
    /// `flush` ends the session and is rethrown. The default is `finish(into:)`.
    func finish(into output: inout AdapterOutput, flushingAt limit: Int, flush: (AdapterOutput) throws -> Void) throws
}

extension BLEAdapterSession {
    public func finish(into output: inout AdapterOutput) {}
    public func finish(into output: inout AdapterOutput, flushingAt limit: Int, flush: (AdapterOutput) throws -> Void) throws {
        finish(into: &output)
    }
    public func poll(into output: inout AdapterOutput) {}
}

/// Settings every session gets.
public struct AdapterContext: Sendable {
    /// The zone device timestamps without a zone are read in; kept in `HKTimeZone` metadata.
    public var timeZone: TimeZone
    /// The sample source (the adapter id).
    public var source: String
    /// "Now" for the session (stamping what arrives, which day a pedometer calls today): the wall
    /// clock live, the capture's clock (the time of the last captured answer) when a capture is
    /// replayed. Sessions read the time here only, so they never need to know which it is.
    public var now: @Sendable () -> Date
    /// What the adapter remembers about devices between connections (this adapter's own
    /// entries); nil where nothing can be kept.
    public var memory: (any DeviceMemory)?
    /// Adapter configuration (`--adapter-option KEY=VALUE`), e.g. a user index and consent code.
    public var options: [String: String]
    /// The keys of devices that encrypt their advertisements (``AdvertisementKeys``).
    public var keys: AdvertisementKeys
    /// What the sessions and conversations of this run share (``AdapterRunState``); the daemon,
    /// a replay and a capture give every context of the run the same one.
    public var run: AdapterRunState
    /// Device clock times read in `timeZone` (``LocalClockTimes``); a router gives every session it
    /// makes the same one.
    public var clockTimes: LocalClockTimes

    public init(timeZone: TimeZone, source: String, now: @escaping @Sendable () -> Date = { Date() },
                memory: (any DeviceMemory)? = nil, options: [String: String] = [:], keys: AdvertisementKeys = AdvertisementKeys(),
                run: AdapterRunState = AdapterRunState(), clockTimes: LocalClockTimes? = nil) {
        self.clockTimes = clockTimes ?? LocalClockTimes(timeZone: timeZone)
        self.timeZone = timeZone
        self.source = source
        self.now = now
        self.memory = memory
        self.options = options
        self.keys = keys
        self.run = run
    }
}

/// What sessions produce: records for the pipeline, and counted rejections with reasons.
public struct AdapterOutput: Sendable {
    public var records: [HealthRecord] = []
    public var rejections: [AdapterRejection] = []
    /// Frames understood but carrying nothing to store (intermediate cuff pressure, a repeated broadcast).
    public var skipped: [String: Int] = [:]
    /// What a user should do about something a session met, said once per device and problem
    /// (a missing or wrong key): replay prints these in its summary, the daemon logs them.
    public var explanations: [String] = []
    /// Battery charges the devices said, at most one per device and change (not health samples:
    /// stored beside them for the devices page, only for sources with a grant).
    public var batteries: [DeviceBattery] = []

    public init() {}

    /// Adds an explanation (the session makes sure to say it once).
    public mutating func explain(_ text: String) { explanations.append(text) }

    public mutating func reject(_ adapter: String, reason: String, detail: String, time: Date, isExplained: Bool = false) {
        rejections.append(AdapterRejection(adapter: adapter, reason: reason, detail: detail, time: time, isExplained: isExplained))
    }

    public mutating func skip(_ reason: String) { skipped[reason, default: 0] += 1 }
}

/// A frame an adapter could not use, with a short stable reason and a detail naming the bytes.
public struct AdapterRejection: Sendable, Equatable, CustomStringConvertible {
    public var adapter: String
    /// Short stable reason key, e.g. `short-frame`, `reserved-flags`, `bad-checksum`, `encrypted`.
    public var reason: String
    public var detail: String
    public var time: Date
    /// Whether the session explains this kind of rejection once (``AdapterOutput/explain(_:)``),
    /// so that a live log need not warn about every such frame (a scale without its key sends
    /// several a second).
    public var isExplained: Bool

    public init(adapter: String, reason: String, detail: String, time: Date, isExplained: Bool = false) {
        self.adapter = adapter
        self.reason = reason
        self.detail = detail
        self.time = time
        self.isExplained = isExplained
    }

    public var description: String { "\(adapter): \(reason): \(detail)" }
}

/// Hex rendering of bytes for error messages (`0a 1b ff`).
public func hexString(_ bytes: some Collection<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
}

/// An adapter whose devices must be connected to (GATT) rather than only heard (advertisements).
/// The daemon connects to a matched, connectable device, reads `gattReads`, subscribes to
/// `gattSubscriptions` (indications where supported) and feeds the session what arrives.
public protocol ConnectingAdapter: BLEAdapter {
    /// Characteristics whose notifications or indications carry the measurements.
    var gattSubscriptions: Set<BLEUUID> { get }
    /// Characteristics read once after connecting (device information).
    var gattReads: Set<BLEUUID> { get }
}

import Foundation
import Transport

/// Sends each device's transport events to the sessions of the adapters that match it.
///
/// The same router serves a replayed capture and a live transport. Every adapter that matches
/// a device gets its own session and the device's advertisements (each adapter is its own
/// source; grants and deduplication apply as usual). Connections belong to one adapter: the
/// first by precedence (registry order, exact before generic, external before built-in) that
/// is available (an external adapter in restart back-off or broken is not), unless the device
/// is pinned (``AdapterPins``) or `forcedAdapter` takes every device. When that adapter holds
/// conversations (``BLEAdapter/holdsConversations``) the conversation has the connection and no
/// session sees its events; otherwise the adapter's session gets them. A device that no adapter
/// matches is remembered with its name and UUIDs for the summary.
public final class AdapterRouter {
    private struct Entry {
        var adapter: any BLEAdapter
        /// The adapter's id (its descriptor's, read once).
        var id: String
        var session: any BLEAdapterSession
    }

    private let adapters: [any BLEAdapter]
    /// The adapters' ids and Bluetooth matches, read from their descriptors once: adapters build
    /// descriptors on every access, and a crowd of new addresses asks on every report.
    private let ids: [String]
    private let bleMatches: [[BLEMatch]]
    /// Answers of the matches' name patterns, per (pattern, name): Foundation compiles a regular
    /// expression each time it is asked (about 5 µs).
    private let namePatternMatches = NamePatternMatches(capacity: 4_096)
    /// The adapters (indices) matching devices of given traits, the address aside: a crowd of
    /// devices alike (a shop's scales, ever new random addresses) is matched once. Bounded: past
    /// ``maximumMatchShapes`` kinds of traits it starts over.
    private var candidatesByShape: [BLEDeviceTraits: [Int]] = [:]
    private static let maximumMatchShapes = 1_024
    private let forced: (adapter: any BLEAdapter, id: String)?
    private let pins: [BLEAddress: String]
    private let timeZone: TimeZone
    /// Device clock times in `timeZone`, shared by every session the router makes.
    private let clockTimes: LocalClockTimes
    private var traits: [BLEAddress: BLEDeviceTraits] = [:]
    /// Devices whose matching adapters were found with their traits as they are now: the
    /// adapters are matched again only after a device's traits changed, not for every report.
    private var matchedWithCurrentTraits: Set<BLEAddress> = []
    /// Per device, the matching adapters' sessions in precedence order.
    private var sessions: [BLEAddress: [Entry]] = [:]
    private var connections: [UInt16: BLEAddress] = [:]
    /// Devices seen that no adapter took, with what they advertised: the latest
    /// `maximumUnmatchedDevices` of them (a crowded place, or a hostile capture, advertises from
    /// ever new random addresses); older ones are forgotten, traits and all, and counted.
    public private(set) var unmatched: [BLEAddress: BLEDeviceTraits] = [:]
    /// Unmatched devices forgotten to keep `unmatched` bounded.
    public private(set) var forgottenUnmatched = 0
    public let maximumUnmatchedDevices: Int
    /// Unmatched addresses, oldest first from `unmatchedOrderStart` (some may have been matched since).
    private var unmatchedOrder: [BLEAddress] = []
    private var unmatchedOrderStart = 0
    /// Devices with sessions beyond `maximumMatchedDevices` whose sessions (and what they
    /// remembered: frame counters, keys looked up) were ended and forgotten, oldest first.
    public private(set) var forgottenMatched = 0
    public let maximumMatchedDevices: Int
    /// Matched addresses in the order their sessions were made, oldest first from `matchedOrderStart`.
    private var matchedOrder: [BLEAddress] = []
    private var matchedOrderStart = 0
    private let keys: AdvertisementKeys
    /// What this run's sessions share (every session the router makes gets it); conversations of
    /// the same run are given it too.
    public let runState: AdapterRunState
    /// How many matched, and how many unmatched, devices are remembered unless told otherwise.
    public static let defaultMaximumDevices = 4_096

    /// - Parameters:
    ///   - forcedAdapterID: when set, that adapter takes every device (`--adapter ID` of replay).
    ///   - pins: devices served by one adapter only (`--adapter ADDRESS=ID`).
    ///   - maximumUnmatchedDevices: how many devices no adapter took are remembered.
    ///   - maximumMatchedDevices: how many devices' sessions are kept; past it the oldest device's
    ///     sessions are finished and forgotten (a crowd of ever new addresses that an adapter takes,
    ///     e.g. MiBeacon frames from random addresses, must not grow per-device state without bound).
    ///   - keys: the keys of devices that encrypt their advertisements, handed to every session.
    ///   - runState: what the run's sessions and conversations share (a fresh one unless given).
    public init(adapters: [any BLEAdapter], forcedAdapterID: String? = nil, pins: [BLEAddress: String] = [:],
                timeZone: TimeZone, maximumUnmatchedDevices: Int = defaultMaximumDevices, maximumMatchedDevices: Int = defaultMaximumDevices,
                keys: AdvertisementKeys = AdvertisementKeys(), runState: AdapterRunState = AdapterRunState()) throws(AdapterRouterError) {
        self.adapters = adapters
        let descriptors = adapters.map(\.descriptor)
        self.ids = descriptors.map(\.id)
        self.bleMatches = descriptors.map { descriptor in
            descriptor.matches.compactMap { match in if case .ble(let ble) = match { ble } else { nil } }
        }
        self.runState = runState
        self.maximumUnmatchedDevices = max(1, maximumUnmatchedDevices)
        self.maximumMatchedDevices = max(1, maximumMatchedDevices)
        self.keys = keys
        self.timeZone = timeZone
        self.clockTimes = LocalClockTimes(timeZone: timeZone)
        self.pins = pins
        let known = ids
        if let forcedAdapterID {
            guard let index = known.firstIndex(of: forcedAdapterID) else {
                throw .unknownAdapter(forcedAdapterID, known: known)
            }
            forced = (adapters[index], forcedAdapterID)
        } else {
            forced = nil
        }
        for id in Set(pins.values).sorted() where !known.contains(id) {
            throw .unknownAdapter(id, known: known)
        }
    }

    /// Routes one event; records and rejections go into `output`.
    public func route(_ event: TransportEvent, into output: inout AdapterOutput) {
        switch event {
        case .advertisement(let advertisement):
            let address = advertisement.address
            if traits[address, default: BLEDeviceTraits(address: address)].absorb(advertisement) {
                matchedWithCurrentTraits.remove(address)
            }
            for entry in entries(for: advertisement.address, output: &output) { entry.session.receive(event, into: &output) }
        case .connected(let connection):
            connections[connection.handle] = connection.peerAddress
            connectionSession(for: connection.peerAddress, output: &output)?.receive(event, into: &output)
        case .disconnected(let disconnection):
            let address = disconnection.peerAddress ?? connections[disconnection.handle]
            connections[disconnection.handle] = nil
            if let address { connectionSession(for: address, output: &output)?.receive(event, into: &output) }
        case .gattValue(let value):
            guard let address = value.peerAddress ?? connections[value.connection] else { return }
            if let service = value.serviceUUID,
               traits[address, default: BLEDeviceTraits(address: address)].serviceUUIDs.insert(service).inserted {
                matchedWithCurrentTraits.remove(address)
            }
            connectionSession(for: address, output: &output)?.receive(event, into: &output)
        case .subscriptionChanged(let subscription):
            guard let address = subscription.peerAddress ?? connections[subscription.connection] else { return }
            connectionSession(for: address, output: &output)?.receive(event, into: &output)
        }
    }

    /// Ends every session (at the end of a capture, or on shutdown).
    public func finish(into output: inout AdapterOutput) {
        for address in sessions.keys.sorted() {
            for entry in sessions[address] ?? [] { entry.session.finish(into: &output) }
        }
    }

    /// Ends every session like `finish(into:)`, handing `output` to `flush` whenever it holds
    /// `limit` records or more (see `BLEAdapterSession.finish(into:flushingAt:flush:)`), so what the
    /// sessions still produce is committed in batches instead of held.
    public func finish(into output: inout AdapterOutput, flushingAt limit: Int,
                       flush: (AdapterOutput) throws -> Void) throws {
        for address in sessions.keys.sorted() {
            for entry in sessions[address] ?? [] {
                try entry.session.finish(into: &output, flushingAt: limit, flush: flush)
                if output.records.count >= limit {
                    try flush(output)
                    output = AdapterOutput()
                }
            }
        }
    }

    /// Collects what sessions produced without an event (external adapters' processes); live
    /// loops call it before each commit so that a device's last reading does not wait for its
    /// next advertisement.
    public func poll(into output: inout AdapterOutput) {
        for address in sessions.keys.sorted() {
            for entry in sessions[address] ?? [] { entry.session.poll(into: &output) }
        }
    }

    /// The adapter id serving each matched device (the one its connections go to).
    public var matchedDevices: [BLEAddress: String] {
        sessions.compactMapValues { entries in primary(of: entries)?.id }
    }

    /// Every adapter matching each device, in precedence order (more than one: overlapping claims).
    public var matchingAdapters: [BLEAddress: [String]] { sessions.mapValues { $0.map(\.id) } }

    /// The adapter that gets `address`'s connections, once one matched it.
    public func adapter(for address: BLEAddress) -> (any BLEAdapter)? {
        sessions[address].flatMap(primary(of:))?.adapter
    }

    /// What the device advertised so far (name, services, companies), once it was heard.
    public func traits(for address: BLEAddress) -> BLEDeviceTraits? { traits[address] }

    /// The first available entry, else the first.
    private func primary(of entries: [Entry]) -> Entry? {
        entries.first { $0.adapter.isAvailable } ?? entries.first
    }

    /// The session for a connection's events: none when the adapter holds conversations (the
    /// conversation has the connection), but the device is matched all the same.
    private func connectionSession(for address: BLEAddress, output: inout AdapterOutput) -> (any BLEAdapterSession)? {
        guard let entry = primary(of: entries(for: address, output: &output)) else { return nil }
        return entry.adapter.holdsConversations ? nil : entry.session
    }

    /// The device's sessions, made for every adapter that matches it now (a later
    /// advertisement may add an adapter, e.g. once a scan response gave the name).
    private func entries(for address: BLEAddress, output: inout AdapterOutput) -> [Entry] {
        guard let known = traits[address] else { return sessions[address] ?? [] }
        guard !matchedWithCurrentTraits.contains(address) else { return sessions[address] ?? [] }
        matchedWithCurrentTraits.insert(address)
        // Candidates as (adapter, id) in precedence order.
        let candidates: [(adapter: any BLEAdapter, id: String)]
        if let forced {
            candidates = [forced]
        } else if let pinned = pins[address] {
            candidates = adapters.indices.filter { ids[$0] == pinned }.map { (adapters[$0], ids[$0]) }
        } else {
            candidates = matchingAdapters(known).map { (adapters[$0], ids[$0]) }
        }
        var entries = sessions[address] ?? []
        if entries.count < candidates.count {
            // A new device's sessions are made in precedence order; added ones are sorted in.
            let added = !entries.isEmpty
            for (adapter, id) in candidates where !entries.contains(where: { $0.id == id }) {
                entries.append(Entry(adapter: adapter, id: id,
                                     session: adapter.makeSession(for: known, context: AdapterContext(
                                        timeZone: timeZone, source: id, keys: keys, run: runState, clockTimes: clockTimes))))
            }
            if added {
                let order = candidates.map(\.id)
                entries.sort { (order.firstIndex(of: $0.id) ?? 0) < (order.firstIndex(of: $1.id) ?? 0) }
            }
            if sessions.updateValue(entries, forKey: address) == nil {
                matchedOrder.append(address)
                if sessions.count > maximumMatchedDevices { forgetOldestMatched(sparing: address, into: &output) }
            }
        }
        if entries.isEmpty {
            if unmatched.updateValue(known, forKey: address) == nil {
                unmatchedOrder.append(address)
                if unmatched.count > maximumUnmatchedDevices { forgetOldestUnmatched() }
            }
        } else {
            unmatched[address] = nil
        }
        return entries
    }

    /// The indices of the adapters whose descriptors match `traits` (`AdapterDescriptor.matches(_:)`
    /// on the matches read once), remembered per shape of traits.
    private func matchingAdapters(_ traits: BLEDeviceTraits) -> [Int] {
        var shape = traits
        shape.address = BLEAddress(truncatingIfNeeded: 0)
        if let known = candidatesByShape[shape] { return known }
        let matching = adapters.indices.filter { bleMatches[$0].contains { $0.matches(traits, names: namePatternMatches) } }
        if candidatesByShape.count >= Self.maximumMatchShapes { candidatesByShape.removeAll(keepingCapacity: true) }
        candidatesByShape[shape] = matching
        return matching
    }

    /// Ends and forgets the sessions of the device matched longest ago (not `sparing`, the one
    /// just matched, nor a device with an open connection); what they still had goes into `output`.
    private func forgetOldestMatched(sparing: BLEAddress, into output: inout AdapterOutput) {
        let connected = connections.isEmpty ? [] : Set(connections.values)
        var kept: [BLEAddress] = []
        while matchedOrderStart < matchedOrder.count {
            let address = matchedOrder[matchedOrderStart]
            matchedOrderStart += 1
            if address == sparing || connected.contains(address) {
                kept.append(address)
                continue
            }
            guard let forgotten = sessions.removeValue(forKey: address) else { continue }
            for entry in forgotten { entry.session.finish(into: &output) }
            traits[address] = nil
            matchedWithCurrentTraits.remove(address)
            forgottenMatched += 1
            break
        }
        matchedOrder.append(contentsOf: kept)
        if matchedOrderStart > 1_024, matchedOrderStart * 2 > matchedOrder.count {
            matchedOrder.removeFirst(matchedOrderStart)
            matchedOrderStart = 0
        }
    }

    /// Forgets the oldest device still unmatched: its traits go too, so a later advertisement
    /// starts it afresh.
    private func forgetOldestUnmatched() {
        while unmatchedOrderStart < unmatchedOrder.count {
            let address = unmatchedOrder[unmatchedOrderStart]
            unmatchedOrderStart += 1
            guard unmatched.removeValue(forKey: address) != nil, sessions[address] == nil else { continue }
            traits[address] = nil
            matchedWithCurrentTraits.remove(address)
            forgottenUnmatched += 1
            break
        }
        if unmatchedOrderStart > 1_024, unmatchedOrderStart * 2 > unmatchedOrder.count {
            unmatchedOrder.removeFirst(unmatchedOrderStart)
            unmatchedOrderStart = 0
        }
    }
}

/// Why a router could not be set up.
public enum AdapterRouterError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownAdapter(String, known: [String])

    public var description: String {
        switch self {
        case .unknownAdapter(let id, let known):
            "no adapter \"\(id)\" (known: \(known.joined(separator: ", ")))"
        }
    }
}

import Foundation
import HealthModel
import Transport

/// Sends each device's transport events to the session of the adapter that matches it.
///
/// The same router serves a replayed capture and a live transport. Adapters are tried in registry
/// order (exact matches before generic ones); `forcedAdapter` takes every device. A device that no
/// adapter matches is remembered with its name and UUIDs for the summary. The connections of a
/// device whose adapter holds conversations (``Adapter/holdsConversations``) are that
/// conversation's: its session is given the device's advertisements only.
public final class AdapterRouter {
    private let adapters: [any Adapter]
    private let forced: (any Adapter)?
    private let timeZone: TimeZone
    private var traits: [BLEAddress: BLEDeviceTraits] = [:]
    private var sessions: [BLEAddress: (adapter: any Adapter, session: any AdapterSession)] = [:]
    private var connections: [UInt16: BLEAddress] = [:]
    /// Devices seen that no adapter took, with what they advertised.
    public private(set) var unmatched: [BLEAddress: BLEDeviceTraits] = [:]

    /// - Parameter forcedAdapterID: when set, that adapter takes every device (`--adapter`).
    public init(adapters: [any Adapter], forcedAdapterID: String? = nil, timeZone: TimeZone) throws(AdapterRouterError) {
        self.adapters = adapters
        self.timeZone = timeZone
        if let forcedAdapterID {
            guard let adapter = adapters.first(where: { $0.descriptor.id == forcedAdapterID }) else {
                throw .unknownAdapter(forcedAdapterID, known: adapters.map(\.descriptor.id))
            }
            forced = adapter
        } else {
            forced = nil
        }
    }

    /// Routes one event; records and rejections go into `output`.
    public func route(_ event: TransportEvent, into output: inout AdapterOutput) {
        switch event {
        case .advertisement(let advertisement):
            traits[advertisement.address, default: BLEDeviceTraits(address: advertisement.address)].absorb(advertisement)
            session(for: advertisement.address)?.receive(event, into: &output)
        case .connected(let connection):
            connections[connection.handle] = connection.peerAddress
            connectionSession(for: connection.peerAddress)?.receive(event, into: &output)
        case .disconnected(let disconnection):
            let address = disconnection.peerAddress ?? connections[disconnection.handle]
            connections[disconnection.handle] = nil
            if let address { connectionSession(for: address)?.receive(event, into: &output) }
        case .gattValue(let value):
            guard let address = value.peerAddress ?? connections[value.connection] else { return }
            if let service = value.serviceUUID {
                traits[address, default: BLEDeviceTraits(address: address)].serviceUUIDs.insert(service)
            }
            connectionSession(for: address)?.receive(event, into: &output)
        case .subscriptionChanged(let subscription):
            guard let address = subscription.peerAddress ?? connections[subscription.connection] else { return }
            connectionSession(for: address)?.receive(event, into: &output)
        }
    }

    /// Ends every session (at the end of a capture, or on shutdown).
    public func finish(into output: inout AdapterOutput) {
        for address in sessions.keys.sorted() {
            sessions[address]?.session.finish(into: &output)
        }
    }

    /// Collects what sessions produced without an event (external adapters' processes); live
    /// loops call it before each commit so that a device's last reading does not wait for its
    /// next advertisement.
    public func poll(into output: inout AdapterOutput) {
        for address in sessions.keys.sorted() {
            sessions[address]?.session.poll(into: &output)
        }
    }

    /// The adapter id serving each matched device.
    public var matchedDevices: [BLEAddress: String] { sessions.mapValues(\.adapter.descriptor.id) }

    /// The adapter serving `address`, once one matched it.
    public func adapter(for address: BLEAddress) -> (any Adapter)? { sessions[address]?.adapter }

    /// What the device advertised so far (name, services, companies), once it was heard.
    public func traits(for address: BLEAddress) -> BLEDeviceTraits? { traits[address] }

    /// The session for a connection's events: none when the adapter holds conversations (the
    /// conversation has the connection), but the device is matched all the same.
    private func connectionSession(for address: BLEAddress) -> (any AdapterSession)? {
        guard let session = session(for: address) else { return nil }
        return sessions[address]?.adapter.holdsConversations == true ? nil : session
    }

    private func session(for address: BLEAddress) -> (any AdapterSession)? {
        if let existing = sessions[address] { return existing.session }
        guard let known = traits[address] else { return nil }
        let adapter = forced ?? adapters.first { $0.descriptor.matches(known) }
        guard let adapter else {
            unmatched[address] = known
            return nil
        }
        unmatched[address] = nil
        let id = adapter.descriptor.id
        let session = adapter.makeSession(for: known, context: AdapterContext(timeZone: timeZone, source: id))
        sessions[address] = (adapter, session)
        return session
    }
}

/// Why a router could not be set up.
public enum AdapterRouterError: Error, Equatable, CustomStringConvertible {
    case unknownAdapter(String, known: [String])

    public var description: String {
        switch self {
        case .unknownAdapter(let id, let known):
            "no adapter \"\(id)\" (known: \(known.joined(separator: ", ")))"
        }
    }
}

import Foundation
import Transport

/// The simplest conversation, that of a ``ConnectingAdapter``'s declarations: discover, read
/// the declared characteristics once, enable indications (or notifications) of the declared
/// ones, then hand every value to the adapter's session until the device disconnects,
/// delivering what it produces at once. Richer conversations (record access, current time,
/// user data) use its steps around their own.
public final class SubscribingConversation {
    /// How long the conversation waits for the next value before it ends the connection.
    public static let idleTimeout: Duration = .seconds(600)
    /// The values a device may send in one contact before the conversation takes them
    /// (stored measurements sent at subscription, each delivered as it is taken).
    public static let maximumValuesPerContact = 10_000

    /// The session that decodes the values.
    public let session: any BLEAdapterSession
    private let source: String

    public init(session: any BLEAdapterSession, source: String) {
        self.session = session
        self.source = source
    }

    /// Reads each characteristic of `reads` the device has with the read property, handing the
    /// values to the session; a refused or missing read is noted as a skipped frame, not an error.
    public func readAll(_ reads: Set<BLEUUID>, over link: any GATTConversationLink, into output: inout AdapterOutput)
        async throws(GATTConversationError)
    {
        let database = try await link.discover()
        for characteristic in database.characteristics
        where reads.contains(characteristic.uuid) && characteristic.properties & 0x02 != 0 {
            do {
                let value = try await link.read(characteristic.uuid)
                let time = await link.now()
                session.receive(.gattValue(GATTValue(
                    time: time, connection: 0, peerAddress: link.peerAddress,
                    serviceUUID: database.service(containing: characteristic.valueHandle)?.uuid,
                    characteristicUUID: characteristic.uuid, handle: characteristic.valueHandle, value: value,
                    kind: .read)), into: &output)
            } catch {
                if case .disconnected = error { throw error }
                output.skip("read-unavailable")
            }
        }
    }

    /// Enables indications (preferred) or notifications of each characteristic of
    /// `subscriptions` the device has. A refusal is recorded as a rejection naming the device
    /// and what to do (a device that wants an encrypted link must be paired).
    public func subscribeAll(_ subscriptions: Set<BLEUUID>, over link: any GATTConversationLink,
                             into output: inout AdapterOutput) async throws(GATTConversationError) {
        let database = try await link.discover()
        for characteristic in database.characteristics where subscriptions.contains(characteristic.uuid) {
            let mode: GATTNotificationMode
            if characteristic.properties & 0x20 != 0 {
                mode = .indications
            } else if characteristic.properties & 0x10 != 0 {
                mode = .notifications
            } else {
                continue
            }
            do {
                try await link.subscribe(to: characteristic.uuid, mode: mode)
            } catch {
                switch error {
                case .attError:
                    output.reject(source, reason: "subscription-refused",
                                  detail: "\(link.peerAddress): \(error)", time: await link.now())
                case .characteristicMissing, .operationNotPermitted:
                    continue
                default:
                    throw error
                }
            }
        }
    }

    /// Hands every notification and indication to the session until the device disconnects
    /// (the normal end) or stays silent for ``idleTimeout``; delivers each value's records.
    public func receiveUntilDisconnected(over link: any GATTConversationLink,
                                         deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        var output = AdapterOutput()
        while let value = await nextValueOrEnd(over: link) {
            session.receive(.gattValue(value), into: &output)
            if !output.records.isEmpty || !output.rejections.isEmpty {
                _ = try await deliver(output)
                output = AdapterOutput()
            }
        }
        session.receive(.disconnected(BLEDisconnection(time: await link.now(), handle: 0, peerAddress: link.peerAddress,
                                                       reason: 0x13)), into: &output)
        session.finish(into: &output)
        if !output.records.isEmpty || !output.rejections.isEmpty || !output.skipped.isEmpty {
            _ = try await deliver(output)
        }
    }
}

extension SubscribingConversation {
    /// The next value, or nil at the end of the connection (disconnected, the capture's end, or
    /// ``idleTimeout`` of silence, after which the link is closed).
    func nextValueOrEnd(over link: any GATTConversationLink) async -> GATTValue? {
        do {
            return try await link.nextValue(timeout: Self.idleTimeout) { _ in true }
        } catch {
            if case .timedOut = error { await link.disconnect() }
            return nil
        }
    }
}

extension ConnectingAdapter {
    /// The declarations as a conversation: read, subscribe, receive until disconnected.
    public func makeDeclaredConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        DeclaredConversation(steps: SubscribingConversation(session: makeSession(for: device, context: context),
                                                            source: context.source),
                             reads: gattReads, subscriptions: gattSubscriptions)
    }
}

/// A ``ConnectingAdapter``'s declarations run as a conversation.
final class DeclaredConversation: GATTConversation {
    private let steps: SubscribingConversation
    private let reads: Set<BLEUUID>
    private let subscriptions: Set<BLEUUID>

    var maximumValuesPerContact: Int { SubscribingConversation.maximumValuesPerContact }

    init(steps: SubscribingConversation, reads: Set<BLEUUID>, subscriptions: Set<BLEUUID>) {
        self.steps = steps
        self.reads = reads
        self.subscriptions = subscriptions
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        var output = AdapterOutput()
        try await steps.readAll(reads, over: link, into: &output)
        try await steps.subscribeAll(subscriptions, over: link, into: &output)
        if !output.records.isEmpty || !output.rejections.isEmpty { _ = try await deliver(output) }
        try await steps.receiveUntilDisconnected(over: link, deliver: deliver)
    }
}

extension BLEAdapter {
    /// Whether the adapter talks to connected devices: its own conversation
    /// (``ConversingAdapter``) or its declarations' (``ConnectingAdapter``).
    public var holdsConversations: Bool {
        if let conversing = self as? any ConversingAdapter { return conversing.conversesWithConnectedDevices }
        return self is any ConnectingAdapter
    }

    /// The conversation with a connected device, nil for an advertisement-only adapter.
    public func conversation(for device: BLEDeviceTraits, context: AdapterContext) -> (any GATTConversation)? {
        if let conversing = self as? any ConversingAdapter {
            return conversing.conversesWithConnectedDevices ? conversing.makeConversation(for: device, context: context) : nil
        }
        if let connecting = self as? any ConnectingAdapter {
            return connecting.makeDeclaredConversation(for: device, context: context)
        }
        return nil
    }
}

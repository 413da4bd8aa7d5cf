import Foundation
import Transport

/// An adapter whose devices hand over their data only through a conversation: it writes
/// commands, waits for replies and reads, step by step, over a ``GATTConversationLink``.
///
/// The daemon runs the conversation over the BlueZ GATT client once it connected to a matched,
/// connectable device; replay runs the same conversation against the connection found in a
/// capture (``GATTConversationLink`` answered from the captured values). Advertisements of the
/// device still go to the adapter's ``BLEAdapterSession`` (`makeSession`).
public protocol ConversingAdapter: BLEAdapter {
    /// A conversation with one connected device.
    func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation
    /// Whether this adapter does talk to connected devices (default true). An adapter whose
    /// kind is decided at run time (an external adapter: only a protocol-2 plugin that asked to
    /// connect does) answers false to be treated as advertisement-only.
    var conversesWithConnectedDevices: Bool { get }
}

extension ConversingAdapter {
    public var conversesWithConnectedDevices: Bool { true }

    /// Nothing from advertisements, the default of an adapter whose devices hand over their data
    /// only in a conversation.
    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        NothingAdvertisedSession()
    }
}

/// A step of a conversation that ends the contact with one rejection to report (a refused
/// handshake, a device that wants pairing), thrown inside ``reporting(source:device:deliver:_:)``.
public struct ConversationStop: Error, Sendable {
    public var reason: String
    public var detail: String
    public var time: Date

    public init(reason: String, detail: String, time: Date) {
        self.reason = reason
        self.detail = detail
        self.time = time
    }

    /// Runs `body`; a stop it throws is delivered as the rejection `<reason>: <device>: <detail>`
    /// and the link closed. Other errors end the conversation as they are.
    public static func reporting(source: String, device: BLEAddress, over link: any GATTConversationLink,
                                 deliver: (AdapterOutput) async throws -> DeliveryReceipt,
                                 _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let stop as ConversationStop {
            var output = AdapterOutput()
            output.reject(source, reason: stop.reason, detail: "\(device): \(stop.detail)", time: stop.time)
            _ = try await deliver(output)
            await link.disconnect()
        }
    }
}

/// Bounds of a conversation's link.
public enum GATTConversationLimits {
    /// The values a conversation that declares nothing may have waiting.
    public static let defaultValuesPerContact = 256
    /// The most values any conversation may have waiting, whatever it declares: a
    /// notification is kept with its bytes and times, so this bounds the link's memory (a few
    /// tens of megabytes at most).
    public static let ceilingValuesPerContact = 100_000

    /// What the link keeps for a conversation declaring `declared`: at least one value, at most the ceiling.
    public static func queueBound(declared: Int) -> Int {
        min(max(declared, 1), ceilingValuesPerContact)
    }
}

extension GATTConversation {
    public var maximumValuesPerContact: Int { GATTConversationLimits.defaultValuesPerContact }
}

/// How a bounded notification loop (``GATTConversationLink/notifications(matching:silence:maximum:_:)``) ended.
public enum NotificationLoopEnd: Sendable, Equatable {
    /// The handler had what it wanted.
    case done
    /// Nothing matching came within the silence period, or the link ended: the wait's error.
    case silent(GATTConversationError)
    /// The most values the loop may read were read without the handler being done.
    case exhausted
}

extension GATTConversationLink {
    /// The conversations' one "notify until silence" loop: hands `handle` each value that
    /// `matching` accepts, until `handle` returns true (done), nothing matching arrives within
    /// `silence` (or the link ends), or `maximum` values were handed. Errors `handle` throws end
    /// the loop as they are.
    public func notifications(matching: @escaping @Sendable (GATTValue) -> Bool, silence: Duration, maximum: Int,
                              _ handle: (GATTValue) async throws -> Bool) async throws -> NotificationLoopEnd {
        for _ in 0..<max(0, maximum) {
            let value: GATTValue
            do {
                value = try await nextValue(timeout: silence, matching: matching)
            } catch {
                return .silent(error)
            }
            if try await handle(value) { return .done }
        }
        return .exhausted
    }
}

/// One conversation with one connected device.
public protocol GATTConversation: AnyObject {
    /// The most notifications and indications the device may send in one contact that this
    /// conversation reads (its cap on records per contact times the values one record takes,
    /// plus its answers). The live link keeps that many waiting for the conversation, so a
    /// device that bursts its whole memory before the conversation reads loses nothing; past
    /// it the contact ends with ``GATTConversationError/tooManyValues(limit:)``, after which the
    /// link refuses every request (nothing is acknowledged or erased on the device) and what
    /// was committed stays. Default ``GATTConversationLimits/defaultValuesPerContact``.
    var maximumValuesPerContact: Int { get }
    /// Talks to the device over `link` until it has handed over what it has. Hands each batch of
    /// records to `deliver`, which returns after the commit with its receipt: a command that
    /// erases or acknowledges data on the device is sent only after `deliver` returned a receipt
    /// whose `deviceMayForget` is true. Errors of the link (``GATTConversationError``) end the
    /// conversation; records delivered before stay delivered.
    func run(over link: any GATTConversationLink,
             deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws
}

/// How a conversation is told about a characteristic's new values.
public enum GATTNotificationMode: String, Hashable, Sendable {
    /// Handle Value Notifications (not acknowledged).
    case notifications
    /// Handle Value Indications (each confirmed).
    case indications
}

/// What a conversation can ask of a connected device. Live, the daemon's GATT client answers;
/// in replay, a capture does (its writes matched tolerantly, its values answered in order).
public protocol GATTConversationLink: AnyObject, Sendable {
    /// The device's address.
    var peerAddress: BLEAddress { get }
    /// Discovers the services, characteristics and descriptors (once; later calls return the
    /// same table).
    func discover() async throws(GATTConversationError) -> GATTDatabase
    /// The ATT MTU in use (exchanged at discovery). A write with response longer than `mtu - 3`
    /// bytes goes as a long write (Prepare Write + Execute Write, up to 512 bytes); a write
    /// without response must fit `mtu - 3` bytes, so vendor protocols split their commands.
    func mtu() async -> Int
    /// Reads a characteristic's value (long values whole).
    func read(_ characteristic: BLEUUID) async throws(GATTConversationError) -> [UInt8]
    /// Writes a characteristic's value, with a Write Request (`withResponse`; a long write when
    /// longer than `mtu - 3`) or a Write Command.
    func write(_ value: [UInt8], to characteristic: BLEUUID, withResponse: Bool) async throws(GATTConversationError)
    /// Enables notifications or indications of a characteristic.
    func subscribe(to characteristic: BLEUUID, mode: GATTNotificationMode) async throws(GATTConversationError)
    /// Disables them.
    func unsubscribe(from characteristic: BLEUUID) async throws(GATTConversationError)
    /// Waits for the next notification or indication that `matching` accepts, at most `timeout`.
    /// Values that arrive meanwhile and do not match stay queued (bounded) for later waits.
    func nextValue(timeout: Duration, matching: @escaping @Sendable (GATTValue) -> Bool)
        async throws(GATTConversationError) -> GATTValue
    /// Ends the connection.
    func disconnect() async
    /// Why the link ended on the device's side, or nil while something may still come from it
    /// unasked: live, once the device disconnected (seen without a wait for a value, so a
    /// conversation that subscribed to nothing learns it too); a captured connection from the
    /// start, since in replay nothing comes that a request or a wait does not take from the capture.
    func endReason() async -> String?
    /// The time on the conversation's clock: the wall clock live, the capture's clock in replay.
    func now() async -> Date
}

/// Why a conversation step failed. Each case carries what it was about.
public enum GATTConversationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device answered with an ATT Error Response (`code` as in the ATT specification:
    /// 0x05 insufficient authentication, 0x0F insufficient encryption, …).
    case attError(operation: String, characteristic: BLEUUID, code: UInt8)
    /// Nothing (or nothing matching) came within the timeout.
    case timedOut(waitingFor: String, after: Duration)
    /// The link ended (the device disconnected or went out of range).
    case disconnected(String)
    /// Discovery found no such characteristic.
    case characteristicMissing(BLEUUID)
    /// The characteristic does not allow the operation (its property bits).
    case operationNotPermitted(operation: String, characteristic: BLEUUID)
    /// The device wants an authenticated (passkey) bond: it stays refused after the link was
    /// encrypted "Just Works". The text names the device and what to do.
    case pairingNeeded(device: BLEAddress, operation: String, characteristic: BLEUUID)
    /// Replay only: the capture holds no answer for this step.
    case notInCapture(String)
    /// The device sent more notifications and indications than the conversation may receive
    /// in one contact (``GATTConversation/maximumValuesPerContact``) before it read them. The
    /// contact ends: the link refuses every later request, so nothing is acknowledged or
    /// erased on the device, and the next contact resumes after what was committed.
    case tooManyValues(limit: Int)
    /// Any other failure of the transport, described.
    case transport(String)

    public var description: String {
        switch self {
        case .attError(let operation, let characteristic, let code):
            "\(operation) of \(characteristic) refused by the device: ATT error 0x\(String(code, radix: 16))"
                + (code == 0x05 || code == 0x0F || code == 0x08 || code == 0x0C
                    ? " (the device wants an encrypted link: pair it)" : "")
        case .timedOut(let what, let after): "no \(what) within \(after)"
        case .disconnected(let why): "the device disconnected (\(why))"
        case .characteristicMissing(let uuid): "the device has no characteristic \(uuid)"
        case .operationNotPermitted(let operation, let uuid): "characteristic \(uuid) does not allow \(operation)"
        case .pairingNeeded(let device, let operation, let characteristic):
            "\(device) refuses the \(operation) of \(characteristic) even on an encrypted link: it needs pairing with a "
                + "passkey; pair it once with `bluetoothctl pair \(device)` (enter the code the device shows), then "
                + "ingestd connects with that bond"
        case .notInCapture(let what): "the capture holds no \(what)"
        case .tooManyValues(let limit):
            "the device sent more than \(limit) notifications before the conversation read them: the contact ends "
                + "with nothing acknowledged or erased on the device; what was committed stays and the next contact continues"
        case .transport(let detail): detail
        }
    }
}

extension GATTDatabase {
    /// The first characteristic with this UUID.
    public func characteristic(_ uuid: BLEUUID) -> Characteristic? {
        characteristics.first { $0.uuid == uuid }
    }
}

/// The advertisement session of an adapter whose devices hand over their data only in a
/// conversation: their advertisements carry nothing to decode.
public final class NothingAdvertisedSession: BLEAdapterSession {
    public init() {}
    public func receive(_ event: TransportEvent, into output: inout AdapterOutput) {}
}

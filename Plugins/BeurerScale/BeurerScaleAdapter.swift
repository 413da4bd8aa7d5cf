import AdapterKit
import Foundation
import HealthModel
import Transport

/// Beurer BF700/BF710/BF800, Runtastic Libra and Sanitas SBF70/SilverCrest SBF75 scales: once
/// connected they are greeted, given the time, asked for their users and, per user, for the
/// measurements saved while no phone was near; each notification is acknowledged, and a user's
/// saved measurements are erased on the scale only after the store committed them. See README.md.
public struct BeurerScaleAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "beurer-sanitas"
    /// The one vendor characteristic (service 0xFFE0): commands written, answers notified.
    public static let characteristic = BLEUUID(0xFFE1)
    /// Advertised names of the 0xF7 family (Beurer BF700, BF800, Runtastic Libra).
    public static let beurerNamePattern = "^(BEURER BF[78]00|BF-?[78]00|RT-LIBRA)"
    /// Advertised names of the 0xE7 family (Beurer BF710, Sanitas SBF70, SilverCrest SBF75).
    public static let sanitasNamePattern = "^(BEURER BF710|SANITAS SBF7[05]|SBF7[05]|AICDSCALE1)"

    public let descriptor = AdapterDescriptor(
        id: BeurerScaleAdapter.id,
        name: "Beurer/Sanitas scales (BF700, BF710, BF800, SBF70)",
        version: "1.0.0",
        summary: "Saved weighings (body mass, body fat, BMI) of each user of Beurer BF700-class and Sanitas SBF70 scales",
        matches: [.ble(BLEMatch(namePattern: BeurerScaleAdapter.beurerNamePattern)),
                  .ble(BLEMatch(namePattern: BeurerScaleAdapter.sanitasNamePattern))],
        produces: [.bodyMass, .bodyFatPercentage, .bodyMassIndex],
            how: "GATT conversation: clock set, user list, each user's saved weighings part by part (each acknowledged), erased on the scale after the commit",
            models: [
                AdapterModel(maker: "Beurer", name: "BF700, BF710, BF800", offers: "weight, body fat, BMI, per-user history", reads: [.bodyMass, .bodyFatPercentage, .bodyMassIndex], note: "with the user's place on the scale", capture: "download-bf700"),
                AdapterModel(maker: "Runtastic / Sanitas / SilverCrest", name: "Libra, SBF70, SBF75", offers: "weight, body fat, BMI, per-user history", reads: [.bodyMass, .bodyFatPercentage, .bodyMassIndex], capture: "download"),
            ]
    )

    public init() {}

    /// The protocol family of a scale by its advertised name (0xE7 start bytes unless it is a
    /// BF700/BF800/Libra).
    public static func family(ofName name: String?) -> BeurerProtocol {
        let upper = (name ?? "").uppercased()
        let isF7 = upper.range(of: beurerNamePattern, options: .regularExpression) != nil
        return BeurerProtocol(family: isF7 ? 0xF0 : 0xE0)
    }

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        BeurerConversation(device: device, context: context)
    }
}

/// One conversation: greet, set the clock, list the users, download each user's saved
/// measurements (acknowledging every notification), deliver them, erase them on the scale once
/// committed, say goodbye.
///
/// Each saved measurement gives `BodyMass`, and when the scale computed them `BodyFatPercentage`
/// and `BodyMassIndex`, at the scale's time, with the user's place in the scale's list
/// (`IngestDeviceUserID`, 1…8, the index people are assigned by), the scale's user id and
/// initials and the impedance as metadata, sync identifier `beurer/<address>/<time>/<user id>`.
/// A download cut short or a malformed part keeps what arrived and erases nothing.
final class BeurerConversation: GATTConversation {
    /// The longest wait for one answer of the scale.
    static let answerTimeout: Duration = .seconds(5)
    /// The scale holds at most 8 users; more in a count is a broken frame.
    static let maximumUsers = 8
    /// Saved-measurement parts per user (two per measurement; the scale keeps about 30 each).
    static let maximumParts = 2 * 64
    /// Every user's parts, with an answer per user and the list itself.
    var maximumValuesPerContact: Int { Self.maximumUsers * (Self.maximumParts + 4) + 16 }
    /// Scale clocks before this are unset.
    static let earliestPlausibleTime: UInt32 = 1_388_534_400  // 2014-01-01

    private let device: BLEDeviceTraits
    private let context: AdapterContext
    private let wire: BeurerProtocol

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
        self.wire = BeurerScaleAdapter.family(ofName: device.name)
    }

    /// A frame that ends the download it came in.
    private struct Stop: Error {
        var error: BeurerFrameError
        var time: Date
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let database = try await link.discover()
        guard let vendor = database.characteristic(BeurerScaleAdapter.characteristic) else {
            throw GATTConversationError.characteristicMissing(BeurerScaleAdapter.characteristic)
        }
        let withResponse = vendor.properties & 0x08 != 0
        let uuid = BeurerScaleAdapter.characteristic
        let wire = self.wire
        func send(_ bytes: [UInt8]) async throws { try await link.write(bytes, to: uuid, withResponse: withResponse) }
        func next(_ matching: @escaping @Sendable ([UInt8]) -> Bool) async throws -> GATTValue {
            try await link.nextValue(timeout: Self.answerTimeout) { $0.characteristicUUID == uuid && matching($0.value) }
        }

        try await link.subscribe(to: uuid, mode: .notifications)
        try await send(wire.greeting)
        _ = try await next { $0.first == wire.greetingStart }
        try await send(wire.setTime(await link.now()))

        var output = AdapterOutput()
        let users: [BeurerUser]
        do {
            users = try await listUsers(send: send, next: next)
        } catch let stop as Stop {
            output.reject(context.source, reason: stop.error.reason, detail: "\(device.address): \(stop.error.description)",
                          time: stop.time)
            _ = try await deliver(output)
            return
        }
        for user in users {
            var output = AdapterOutput()
            var complete = false
            do {
                complete = try await download(user, send: send, next: next, into: &output)
            } catch let stop as Stop {
                output.reject(context.source, reason: stop.error.reason,
                              detail: "\(device.address): user \(user.id): \(stop.error.description)", time: stop.time)
            } catch {
                output.reject(context.source, reason: "transfer-incomplete",
                              detail: "\(device.address): user \(user.id): saved measurements cut short: \(error)",
                              time: await link.now())
                _ = try await deliver(output)
                throw error
            }
            let receipt = try await deliver(output)
            // Only now, with every measurement of this user committed, may the scale forget them.
            if complete && receipt.deviceMayForget && !output.records.isEmpty {
                try await send(wire.deleteSavedMeasurements(user: user.id))
                _ = try await next { wire.isScaleAck($0, of: BeurerProtocol.Command.deleteSavedMeasurements) }
            }
        }
        try await send(wire.farewell)
    }

    /// The users on the scale: the list's acknowledgement gives their count, then one user-info
    /// notification each, each acknowledged.
    private func listUsers(send: ([UInt8]) async throws -> Void,
                           next: (@escaping @Sendable ([UInt8]) -> Bool) async throws -> GATTValue) async throws -> [BeurerUser] {
        let wire = self.wire
        try await send(wire.userList)
        let ack = try await next { wire.isScaleAck($0, of: BeurerProtocol.Command.userList) }
        guard ack.value.count >= 5 else { throw Stop(error: .tooShort(expected: 5, bytes: ack.value), time: ack.time) }
        let count = Int(ack.value[4])
        guard count <= Self.maximumUsers else {
            throw Stop(error: .countTooLarge(count: count, limit: Self.maximumUsers, bytes: ack.value), time: ack.time)
        }
        var users: [BeurerUser] = []
        while users.count < count {
            let info = try await next { wire.isNumbered($0, BeurerProtocol.Command.userInfo) }
            let user: BeurerUser
            do { user = try BeurerUser(notification: info.value) } catch { throw Stop(error: error, time: info.time) }
            try await send(wire.acknowledge(info.value))
            guard user.slot == users.count + 1 else {
                throw Stop(error: .badPartNumber(count: count, part: user.slot, bytes: info.value), time: info.time)
            }
            users.append(user)
        }
        return users
    }

    /// Downloads `user`'s saved measurements into `output`; true when every part arrived.
    private func download(_ user: BeurerUser, send: ([UInt8]) async throws -> Void,
                          next: (@escaping @Sendable ([UInt8]) -> Bool) async throws -> GATTValue,
                          into output: inout AdapterOutput) async throws -> Bool {
        let wire = self.wire
        try await send(wire.getSavedMeasurements(user: user.id))
        let ack = try await next { wire.isScaleAck($0, of: BeurerProtocol.Command.getSavedMeasurements) }
        let parts = Int(ack.value[3])
        guard parts <= Self.maximumParts else {
            throw Stop(error: .countTooLarge(count: parts, limit: Self.maximumParts, bytes: ack.value), time: ack.time)
        }
        var firstPart: [UInt8] = []
        for expected in stride(from: 1, through: parts, by: 1) {
            let value = try await next { wire.isNumbered($0, BeurerProtocol.Command.savedMeasurement) }
            let bytes = value.value
            guard Int(bytes[2]) == parts, Int(bytes[3]) == expected else {
                throw Stop(error: .badPartNumber(count: Int(bytes[2]), part: Int(bytes[3]), bytes: bytes), time: value.time)
            }
            try await send(wire.acknowledge(bytes))
            if expected % 2 == 1 {
                firstPart = Array(bytes.dropFirst(4))
                continue
            }
            let measurement: BeurerMeasurement
            do { measurement = try BeurerMeasurement(firstPart + bytes.dropFirst(4)) } catch { throw Stop(error: error, time: value.time) }
            take(measurement, user: user, receivedAt: value.time, into: &output)
        }
        return true
    }

    private func take(_ measurement: BeurerMeasurement, user: BeurerUser, receivedAt: Date, into output: inout AdapterOutput) {
        var metadata = Metadata(syncIdentifier: "beurer/\(device.address)/\(measurement.time)/\(user.id)", syncVersion: 1,
                                timeZone: context.timeZone.identifier)
        metadata.entries[MetadataKey.deviceUserID] = .number(Double(user.slot))
        metadata.entries["IngestScaleUserID"] = .number(Double(user.id))
        metadata.entries["IngestScaleUserInitials"] = .string(user.initials)
        if measurement.impedanceOhms > 0 {
            metadata.entries["IngestImpedanceOhm"] = .number(Double(measurement.impedanceOhms))
        }
        let time: Date
        if measurement.time >= Self.earliestPlausibleTime {
            time = Date(timeIntervalSince1970: TimeInterval(measurement.time))
        } else {
            time = receivedAt
            metadata.entries["IngestDeviceClockUnset"] = .bool(true)
        }
        let deviceInfo = Device(name: device.name, manufacturer: "Beurer", localIdentifier: device.address.description)
        func append(_ type: QuantityType, _ value: Double, _ unit: HealthModel.Unit) {
            output.records.append(.sample(QuantitySample(type: type, quantity: Quantity(value: value, unit: unit),
                                                         start: time, end: time, source: context.source,
                                                         device: deviceInfo, metadata: metadata)))
        }
        append(.bodyMass, measurement.weightKilograms, .kilogram)
        if measurement.bodyFatPermille > 0 { append(.bodyFatPercentage, Double(measurement.bodyFatPermille) / 1000, .percent) }
        if measurement.bodyMassIndexTenths > 0 { append(.bodyMassIndex, Double(measurement.bodyMassIndexTenths) / 10, .count) }
    }
}

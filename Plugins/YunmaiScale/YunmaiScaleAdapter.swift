import AdapterKit
import Foundation
import HealthModel
import Transport

/// Yunmai body-composition scales (Mini, SE: M1301/M1302/M1303 and kin): once connected they are
/// given a user profile and the time, told to start, and notify the finished weighing with body
/// mass, resistance and (protocol 0x1E on) body fat. See README.md.
public struct YunmaiScaleAdapter: ConversingAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "yunmai-scale"
    /// Commands go to 0xFFE9 (service 0xFFE5); results come as notifications of 0xFFE4 (service 0xFFE0).
    public static let commandCharacteristic = BLEUUID(0xFFE9)
    public static let measurementCharacteristic = BLEUUID(0xFFE4)
    /// Options (`--adapter-option KEY=VALUE`): the profile the scale computes body fat with.
    public static let userIDOption = "yunmai-user-id"
    public static let heightOption = "yunmai-height-cm"
    public static let ageOption = "yunmai-age"
    public static let sexOption = "yunmai-sex"

    public let descriptor = AdapterDescriptor(
        id: YunmaiScaleAdapter.id,
        name: "Yunmai scales (Mini, SE)",
        version: "1.0.0",
        summary: "Body mass and body fat of Yunmai Mini/SE scales (vendor protocol on 0xFFE0/0xFFE5)",
        matches: [.ble(BLEMatch(namePattern: "^YUNMAI-(SIGNAL|ISM|ISSE)"))],
        produces: [.bodyMass, .bodyFatPercentage],
            how: "GATT conversation: user profile and clock written, measurement started, result by notification",
            models: [
                AdapterModel(maker: "Yunmai", name: "Mini, SE", offers: "weight, body fat", reads: [.bodyMass, .bodyFatPercentage], note: "with the scale's user id", capture: "weighing"),
            ]
    )

    public init() {}

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        YunmaiConversation(device: device, context: context)
    }
}

/// The profile written to the scale, from the adapter's options.
struct YunmaiProfile: Equatable {
    var userID: UInt16 = 1
    var heightCentimetres: UInt8 = 170
    var age: UInt8 = 30
    var isMale = true

    /// Reads the options; a bad value is named in the error.
    init(options: [String: String]) throws(AdapterOptionError) {
        let reader = AdapterOptionReader(options)
        userID = try reader.integer(YunmaiScaleAdapter.userIDOption, in: 1...UInt16.max) ?? userID
        heightCentimetres = try reader.integer(YunmaiScaleAdapter.heightOption, in: 50...250) ?? heightCentimetres
        age = try reader.integer(YunmaiScaleAdapter.ageOption, in: 6...120) ?? age
        isMale = try reader.choice(YunmaiScaleAdapter.sexOption, ["male": true, "female": false]) ?? isMale
    }
}

/// One conversation: subscribe, write the profile and the time, start a measurement, then take
/// finished weighings until the scale stays quiet.
///
/// Each finished weighing gives a `BodyMass` sample and, when the scale computed it, a
/// `BodyFatPercentage` sample, at the scale's clock (the reception time when the clock is before
/// 2014), with the recognised user id (`IngestDeviceUserID`) and the resistance
/// (`IngestImpedanceOhm`) as metadata and the sync identifier `yunmai/<address>/<clock>/<user>`
/// shared by both. Live (settling) frames are skipped. The scale keeps no history to erase.
final class YunmaiConversation: GATTConversation {
    /// How long a person may take to step on the scale and stand still.
    static let firstResultTimeout: Duration = .seconds(30)
    /// Quiet after a result that ends the conversation.
    static let quietAfterResult: Duration = .seconds(3)
    /// Bound on the notifications read in one conversation (settling frames come ~2 per second).
    static let maximumNotifications = 500
    var maximumValuesPerContact: Int { Self.maximumNotifications }
    /// Scale clocks before this are unset.
    static let earliestPlausibleTime: UInt32 = 1_388_534_400  // 2014-01-01

    private let device: BLEDeviceTraits
    private let context: AdapterContext

    init(device: BLEDeviceTraits, context: AdapterContext) {
        self.device = device
        self.context = context
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        var output = AdapterOutput()
        let profile: YunmaiProfile
        do {
            profile = try YunmaiProfile(options: context.options)
        } catch {
            output.reject(context.source, option: error, time: await link.now())
            _ = try await deliver(output)
            return
        }
        let database = try await link.discover()
        guard let command = database.characteristic(YunmaiScaleAdapter.commandCharacteristic) else {
            throw GATTConversationError.characteristicMissing(YunmaiScaleAdapter.commandCharacteristic)
        }
        let withResponse = command.properties & 0x04 == 0  // a Write Command when the scale takes one
        try await link.subscribe(to: YunmaiScaleAdapter.measurementCharacteristic, mode: .notifications)
        for bytes in [YunmaiCommand.user(id: profile.userID, heightCentimetres: profile.heightCentimetres,
                                         isMale: profile.isMale, age: profile.age),
                      YunmaiCommand.setTime(await link.now()), YunmaiCommand.startMeasurement] {
            try await link.write(bytes, to: YunmaiScaleAdapter.commandCharacteristic, withResponse: withResponse)
        }

        var seen: Set<YunmaiResult> = []
        do {
            for _ in 0..<Self.maximumNotifications {
                let timeout = seen.isEmpty ? Self.firstResultTimeout : Self.quietAfterResult
                let value = try await link.nextValue(timeout: timeout) {
                    $0.characteristicUUID == YunmaiScaleAdapter.measurementCharacteristic
                }
                take(value, seen: &seen, into: &output)
            }
        } catch {
            // Quiet (or gone) after the weighing: the conversation is over; without one, say why.
            if seen.isEmpty {
                output.reject(context.source, reason: "no-result", detail: "\(device.address): no finished weighing: \(error)",
                              time: await link.now())
            }
        }
        _ = try await deliver(output)
    }

    private func take(_ value: GATTValue, seen: inout Set<YunmaiResult>, into output: inout AdapterOutput) {
        let result: YunmaiResult
        do {
            let frame = try YunmaiFrame(value.value)
            guard frame.isResult else {
                output.skip("settling")
                return
            }
            result = try frame.result()
        } catch {
            output.reject(context.source, reason: error.reason, detail: "\(device.address): \(error.description)", time: value.time)
            return
        }
        guard seen.insert(result).inserted else {
            output.skip("repeated-result")
            return
        }
        var metadata = Metadata(syncIdentifier: "yunmai/\(device.address)/\(result.time)/\(result.userID)", syncVersion: 1,
                                timeZone: context.timeZone.identifier)
        metadata.entries[MetadataKey.deviceUserID] = .number(Double(result.userID))
        metadata.entries["IngestImpedanceOhm"] = .number(Double(result.resistanceOhms))
        let time: Date
        if result.time >= Self.earliestPlausibleTime {
            time = Date(timeIntervalSince1970: TimeInterval(result.time))
        } else {
            time = value.time
            metadata.entries["IngestDeviceClockUnset"] = .bool(true)
        }
        let deviceInfo = Device(name: device.name, manufacturer: "Yunmai", localIdentifier: device.address.description)
        output.records.append(.sample(QuantitySample(
            type: .bodyMass, quantity: Quantity(value: Double(result.weightCentikilograms) / 100, unit: .kilogram),
            start: time, end: time, source: context.source, device: deviceInfo, metadata: metadata)))
        if let fat = result.bodyFatCentipercent {
            output.records.append(.sample(QuantitySample(
                type: .bodyFatPercentage, quantity: Quantity(value: Double(fat) / 10_000, unit: .percent),
                start: time, end: time, source: context.source, device: deviceInfo, metadata: metadata)))
        }
    }
}

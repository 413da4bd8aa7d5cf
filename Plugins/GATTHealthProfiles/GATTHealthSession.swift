import AdapterKit
import Foundation
import HealthModel
import Transport

/// One device's session of the ``GATTHealthAdapter``: maps each notification, indication or
/// read of a known measurement characteristic to samples, and keeps what spans values (the
/// previous RSC measurement, the first half of a split body composition measurement, the
/// sensor location and Device Information strings read earlier).
///
/// Times: a device time stamp is the device's wall clock, read in the context's time zone;
/// without one (or when it lies more than a day after the receive time) the value's receive
/// time is used. Every sample carries `HKTimeZone` (the context's zone) and a sync identifier
/// `<address>/<characteristic or "scale">/<device time stamp, glucose sequence number, or
/// receive time>[/user-<n>]` with sync version 1, so a device re-sending stored readings
/// replaces nothing and duplicates nothing.
public final class GATTHealthSession: BLEAdapterSession {
    /// The device's Bluetooth address.
    public let address: BLEAddress
    private let context: AdapterContext
    private var device: Device
    private var serialNumber: String?
    /// Temperature Type read from 0x2A1D, for measurements that do not carry their own.
    private var temperatureType: UInt8?
    /// Body Sensor Location read from 0x2A38.
    private var bodySensorLocation: UInt8?
    private var rsc = RSCAccumulator()
    /// The first packet of a multiple-packet body composition measurement and when it came.
    private var pendingBodyComposition: (measurement: BodyCompositionMeasurement, time: Date)?
    /// The last weight measurement's time stamp and user, for the body composition measurement
    /// of the same weighing that follows it without its own (see ``pairingWindow``).
    private var lastWeighing: (timestamp: GATTDateTime?, userID: UInt8?, received: Date)?
    /// A body composition measurement without a time stamp or user that arrives at most this
    /// long after a weight measurement belongs to that weighing (scales exposing both services
    /// send the two values back to back, e.g. the Beurer BF720).
    static let pairingWindow: TimeInterval = 10
    /// A glucose record whose context is announced, held until that context arrives (or the
    /// next record, the end of the transfer, the end of the link).
    private var pendingGlucose: (measurement: GlucoseMeasurement, received: Date)?
    /// Seconds the glucose meter's clock is ahead of the conversation's; its records' times are
    /// corrected by it (set by the conversation from the meter's clock; nil: not corrected).
    var glucoseClockOffset: TimeInterval?

    public init(device traits: BLEDeviceTraits, context: AdapterContext) {
        self.address = traits.address
        self.context = context
        self.device = Device(name: traits.name, localIdentifier: traits.address.description)
    }

    public func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
        switch event {
        case .gattValue(let value):
            receive(value, into: &output)
        case .disconnected:
            flushBodyComposition(into: &output)
            flushGlucose(into: &output)
        case .advertisement, .connected, .subscriptionChanged:
            break
        }
    }

    public func finish(into output: inout AdapterOutput) {
        flushBodyComposition(into: &output)
        flushGlucose(into: &output)
    }

    /// The Manufacturer Name String read so far.
    var manufacturerName: String? { device.manufacturer }

    // MARK: Dispatch

    private func receive(_ value: GATTValue, into output: inout AdapterOutput) {
        switch value.kind {
        case .notification, .indication, .read: break
        case .write, .writeWithoutResponse: return
        }
        guard let characteristic = value.characteristicUUID else {
            output.skip("unidentified-attribute")
            return
        }
        do {
            try decode(value, characteristic: characteristic, into: &output)
        } catch {
            output.reject(
                context.source, reason: error.reason,
                detail: "\(characteristic) \(Self.name(of: characteristic)): \(error.description); value \(hexString(value.value))",
                time: value.time)
        }
    }

    private func decode(_ value: GATTValue, characteristic: BLEUUID, into output: inout AdapterOutput) throws(GATTDecodeError) {
        let bytes = value.value
        switch characteristic {
        case GATTHealthUUID.weightMeasurement:
            emitWeight(try WeightMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.bodyCompositionMeasurement:
            receiveBodyComposition(try BodyCompositionMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.temperatureMeasurement:
            emitTemperature(try TemperatureMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.heartRateMeasurement:
            emitHeartRate(try HeartRateMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.rscMeasurement:
            emitRSC(try RSCMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.bloodPressureMeasurement:
            emitBloodPressure(try BloodPressureMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.glucoseMeasurement:
            receiveGlucose(try GlucoseMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.plxSpotCheckMeasurement:
            emitSpotCheck(try PLXSpotCheckMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.plxContinuousMeasurement:
            emitContinuous(try PLXContinuousMeasurement(decoding: bytes), received: value.time, into: &output)
        case GATTHealthUUID.intermediateTemperature:
            output.skip("intermediate-temperature")
        case GATTHealthUUID.intermediateCuffPressure:
            output.skip("intermediate-cuff-pressure")
        case GATTHealthUUID.glucoseMeasurementContext:
            receiveGlucoseContext(try GlucoseMeasurementContext(decoding: bytes), into: &output)
        case GATTHealthUUID.temperatureType:
            temperatureType = bytes.first
        case GATTHealthUUID.bodySensorLocation:
            bodySensorLocation = bytes.first
        case GATTHealthUUID.manufacturerName:
            device.manufacturer = Self.text(bytes) ?? device.manufacturer
        case GATTHealthUUID.modelNumber:
            device.model = Self.text(bytes) ?? device.model
        case GATTHealthUUID.serialNumber:
            serialNumber = Self.text(bytes) ?? serialNumber
        case GATTHealthUUID.hardwareRevision:
            device.hardwareVersion = Self.text(bytes) ?? device.hardwareVersion
        case GATTHealthUUID.firmwareRevision:
            device.firmwareVersion = Self.text(bytes) ?? device.firmwareVersion
        case GATTHealthUUID.softwareRevision:
            device.softwareVersion = Self.text(bytes) ?? device.softwareVersion
        default:
            break
        }
    }

    // MARK: Weight and body composition

    private func emitWeight(_ measurement: WeightMeasurement, received: Date, into output: inout AdapterOutput) {
        lastWeighing = (measurement.timestamp, measurement.userID, received)
        let time = readingTime(measurement.timestamp, received: received)
        let identity = syncIdentifier("scale", time.identity, userID: measurement.userID)
        let extra = time.extra.merging(userEntry(measurement.userID)) { first, _ in first }
        let massUnit: HealthModel.Unit = measurement.unitSystem == .metric ? .kilogram : .pound
        let lengthUnit: HealthModel.Unit = measurement.unitSystem == .metric ? .meter : .inch
        output.records.append(.sample(sample(.bodyMass, measurement.weight, massUnit, at: time.date, identity, extra)))
        if let bmi = measurement.bodyMassIndex {
            output.records.append(.sample(sample(.bodyMassIndex, bmi, .count, at: time.date, identity, extra)))
        }
        if let height = measurement.height {
            output.records.append(.sample(sample(.height, height, lengthUnit, at: time.date, identity, extra)))
        }
    }

    /// Single packets go out at once; the first half of a split measurement waits for the second.
    private func receiveBodyComposition(_ measurement: BodyCompositionMeasurement, received: Date, into output: inout AdapterOutput) {
        guard measurement.isMultiplePacket else {
            flushBodyComposition(into: &output)
            emitBodyComposition(measurement, received: received, into: &output)
            return
        }
        guard let pending = pendingBodyComposition else {
            pendingBodyComposition = (measurement, received)
            return
        }
        pendingBodyComposition = nil
        if let merged = pending.measurement.merging(measurement) {
            emitBodyComposition(merged, received: pending.time, into: &output)
        } else {
            emitBodyComposition(pending.measurement, received: pending.time, into: &output)
            pendingBodyComposition = (measurement, received)
        }
    }

    /// Emits a waiting half whose partner did not come (next value, disconnection, end).
    private func flushBodyComposition(into output: inout AdapterOutput) {
        guard let pending = pendingBodyComposition else { return }
        pendingBodyComposition = nil
        emitBodyComposition(pending.measurement, received: pending.time, into: &output)
    }

    private func emitBodyComposition(_ measurement: BodyCompositionMeasurement, received: Date, into output: inout AdapterOutput) {
        var measurement = measurement
        var pairedWithAWeighing = false
        if let weighing = lastWeighing {
            lastWeighing = nil
            let delay = received.timeIntervalSince(weighing.received)
            if delay >= 0, delay <= Self.pairingWindow {
                measurement.timestamp = measurement.timestamp ?? weighing.timestamp
                measurement.userID = measurement.userID ?? weighing.userID
                pairedWithAWeighing = true
            }
        }
        // A placeholder composition that belongs to a weighing adds nothing to it (its weight, if
        // any, is the weighing's own).
        if measurement.isPlaceholder, pairedWithAWeighing {
            output.skip("body-composition-placeholder")
            return
        }
        let time = readingTime(measurement.timestamp, received: received)
        let identity = syncIdentifier("scale", time.identity, userID: measurement.userID)
        let extra = time.extra.merging(userEntry(measurement.userID)) { first, _ in first }
        let massUnit: HealthModel.Unit = measurement.unitSystem == .metric ? .kilogram : .pound
        let lengthUnit: HealthModel.Unit = measurement.unitSystem == .metric ? .meter : .inch
        var samples: [QuantitySample] = []
        // A placeholder composition (all zero) is no measurement: its weight and height, when it
        // has them, still are.
        let placeholder = measurement.isPlaceholder
        if let fraction = measurement.bodyFatFraction, !placeholder {
            var fatExtra = extra
            if let impedance = measurement.impedance { fatExtra[GATTMetadataKey.bodyImpedance] = .number(impedance) }
            samples.append(sample(.bodyFatPercentage, fraction, .percent, at: time.date, identity, fatExtra))
        }
        if let weight = measurement.weight {
            samples.append(sample(.bodyMass, weight, massUnit, at: time.date, identity, extra))
        }
        if let fatFreeMass = measurement.fatFreeMass, !placeholder {
            samples.append(sample(.leanBodyMass, fatFreeMass, massUnit, at: time.date, identity, extra))
        }
        if let height = measurement.height {
            samples.append(sample(.height, height, lengthUnit, at: time.date, identity, extra))
        }
        if placeholder, samples.isEmpty {
            output.skip("body-composition-placeholder")
            return
        }
        guard !samples.isEmpty else {
            output.reject(
                context.source, reason: "unsuccessful-measurement",
                detail: "2A9C \(Self.name(of: GATTHealthUUID.bodyCompositionMeasurement)): split measurement "
                    + "without body fat, weight, fat free mass or height (flags 0x\(String(measurement.flags, radix: 16)))",
                time: received)
            return
        }
        output.records.append(contentsOf: samples.map(HealthRecord.sample))
    }

    // MARK: Thermometer, heart rate, RSC

    private func emitTemperature(_ measurement: TemperatureMeasurement, received: Date, into output: inout AdapterOutput) {
        let time = readingTime(measurement.timestamp, received: received)
        var extra = time.extra
        // The Bluetooth types 1…9 and HealthKit's sensor locations 1…9 name the same places.
        if let type = measurement.temperatureType ?? temperatureType, (1...9).contains(type) {
            extra[GATTMetadataKey.bodyTemperatureSensorLocation] = .number(Double(type))
        }
        let unit: HealthModel.Unit = measurement.scale == .celsius ? .degreeCelsius : .degreeFahrenheit
        let identity = syncIdentifier("2A1C", time.identity, userID: nil)
        output.records.append(.sample(sample(.bodyTemperature, measurement.temperature, unit, at: time.date, identity, extra)))
    }

    private func emitHeartRate(_ measurement: HeartRateMeasurement, received: Date, into output: inout AdapterOutput) {
        if measurement.sensorContact == .notDetected {
            output.skip("no-sensor-contact")
            return
        }
        if measurement.heartRate == 0 {
            output.skip("no-heart-rate")
            return
        }
        var extra: [String: MetadataValue] = [:]
        // Body Sensor Location 0…6 and HealthKit's heart rate sensor locations are the same list.
        if let location = bodySensorLocation, location <= 6 {
            extra[GATTMetadataKey.heartRateSensorLocation] = .number(Double(location))
        }
        let identity = syncIdentifier("2A37", ISO8601DateTime.string(from: received), userID: nil)
        output.records.append(.sample(sample(
            .heartRate, Double(measurement.heartRate), .countPerMinute, at: received, identity, extra)))
    }

    private func emitRSC(_ measurement: RSCMeasurement, received: Date, into output: inout AdapterOutput) {
        let receivedText = ISO8601DateTime.string(from: received)
        let identity = syncIdentifier("2A53", receivedText, userID: nil)
        let speedType: QuantityType = measurement.isRunning ? .runningSpeed : .walkingSpeed
        output.records.append(.sample(sample(
            speedType, measurement.speed, .meter.unitDivided(by: .second), at: received, identity, [:])))
        let (distance, steps) = rsc.add(measurement, at: received)
        if let distance {
            output.records.append(.sample(sample(
                .distanceWalkingRunning, distance.amount, .meter, from: distance.start, to: distance.end, identity,
                [GATTMetadataKey.derivedFrom: .string("total-distance")])))
        }
        if let steps {
            output.records.append(.sample(sample(
                .stepCount, steps.amount, .count, from: steps.start, to: steps.end, identity,
                [GATTMetadataKey.derivedFrom: .string("cadence")])))
        }
    }

    // MARK: Blood pressure, glucose, pulse oximetry

    private func emitBloodPressure(_ measurement: BloodPressureMeasurement, received: Date, into output: inout AdapterOutput) {
        let time = readingTime(measurement.timestamp, received: received)
        let identity = syncIdentifier("2A35", time.identity, userID: measurement.userID)
        let extra = time.extra.merging(userEntry(measurement.userID)) { first, _ in first }
        let unit: HealthModel.Unit = switch measurement.unit {
        case .millimetersOfMercury: .millimeterOfMercury
        case .kilopascals: .pascalUnit(with: .kilo)
        }
        let systolic = sample(.bloodPressureSystolic, measurement.systolic, unit, at: time.date, identity, extra)
        let diastolic = sample(.bloodPressureDiastolic, measurement.diastolic, unit, at: time.date, identity, extra)
        var correlationExtra = extra
        if let status = measurement.measurementStatus {
            correlationExtra[GATTMetadataKey.bloodPressureMeasurementStatus] = .number(Double(status))
        }
        output.records.append(.correlation(Correlation(
            type: .bloodPressure, start: time.date, end: time.date, objects: [systolic, diastolic],
            source: context.source, device: device, metadata: metadata(identity, correlationExtra))))
        if let pulse = measurement.pulseRate, pulse > 0 {
            output.records.append(.sample(sample(.heartRate, pulse, .countPerMinute, at: time.date, identity, extra)))
        }
    }

    /// A record announcing its context waits for it; any other is emitted (after a held one).
    private func receiveGlucose(_ measurement: GlucoseMeasurement, received: Date, into output: inout AdapterOutput) {
        flushGlucose(into: &output)
        if measurement.contextFollows {
            pendingGlucose = (measurement, received)
        } else {
            emitGlucose(measurement, context: nil, received: received, into: &output)
        }
    }

    /// The context of the held record: its meal goes with it; a ketone reading (meal 6) is not
    /// glucose and is skipped; a context for no held record is skipped.
    private func receiveGlucoseContext(_ glucoseContext: GlucoseMeasurementContext, into output: inout AdapterOutput) {
        guard let pending = pendingGlucose, pending.measurement.sequenceNumber == glucoseContext.sequenceNumber else {
            output.skip("glucose-context-unmatched")
            return
        }
        pendingGlucose = nil
        if glucoseContext.meal == GlucoseMeasurementContext.ketoneMeal {
            output.skip("ketone-reading")
            return
        }
        emitGlucose(pending.measurement, context: glucoseContext, received: pending.received, into: &output)
    }

    /// Emits the held glucose record without its context (the context did not come).
    func flushGlucose(into output: inout AdapterOutput) {
        guard let pending = pendingGlucose else { return }
        pendingGlucose = nil
        emitGlucose(pending.measurement, context: nil, received: pending.received, into: &output)
    }

    private func emitGlucose(_ measurement: GlucoseMeasurement, context glucoseContext: GlucoseMeasurementContext?,
                             received: Date, into output: inout AdapterOutput) {
        // Control-solution tests check the meter, not the person (xDrip+ and Tidepool drop them).
        if measurement.type == 10 || measurement.sampleLocation == 4 {
            output.skip("control-solution")
            return
        }
        let value: Double
        let unit: HealthModel.Unit
        if let milligrams = measurement.milligramsPerDeciliter {
            (value, unit) = (milligrams, .milligramsPerDeciliter)
        } else if let millimoles = measurement.millimolesPerLiter {
            (value, unit) = (millimoles, .millimolesBloodGlucosePerLiter)
        } else {
            output.skip("no-glucose-concentration")
            return
        }
        var time = readingTime(measurement.measurementTime, received: received)
        if let offset = glucoseClockOffset, measurement.measurementTime != nil, time.extra.isEmpty {
            time.date = time.date.addingTimeInterval(-offset)
            time.extra[GATTMetadataKey.deviceClockOffset] = .number(offset.rounded())
        }
        var recordIdentity = String(measurement.sequenceNumber)
        if let baseTime = measurement.baseTime { recordIdentity += "/\(baseTime)" }
        let identity = syncIdentifier("2A18", recordIdentity, userID: nil)
        var extra = time.extra
        extra[GATTMetadataKey.glucoseSequenceNumber] = .number(Double(measurement.sequenceNumber))
        if let type = measurement.type { extra[GATTMetadataKey.glucoseSampleType] = .number(Double(type)) }
        if let location = measurement.sampleLocation {
            extra[GATTMetadataKey.glucoseSampleLocation] = .number(Double(location))
        }
        if let meal = glucoseContext?.meal {
            extra[GATTMetadataKey.glucoseMeal] = .number(Double(meal))
            if let mealTime = glucoseContext?.healthKitMealTime {
                extra[GATTMetadataKey.bloodGlucoseMealTime] = .number(Double(mealTime))
            }
        }
        output.records.append(.sample(sample(.bloodGlucose, value, unit, at: time.date, identity, extra)))
    }

    private func emitSpotCheck(_ measurement: PLXSpotCheckMeasurement, received: Date, into output: inout AdapterOutput) {
        let time = readingTime(measurement.timestamp, received: received)
        let identity = syncIdentifier("2A5E", time.identity, userID: nil)
        output.records.append(.sample(sample(
            .oxygenSaturation, measurement.oxygenSaturation, .percent, at: time.date, identity, time.extra)))
        if let pulse = measurement.pulseRate, pulse > 0 {
            output.records.append(.sample(sample(.heartRate, pulse, .countPerMinute, at: time.date, identity, time.extra)))
        }
    }

    private func emitContinuous(_ measurement: PLXContinuousMeasurement, received: Date, into output: inout AdapterOutput) {
        let identity = syncIdentifier("2A5F", ISO8601DateTime.string(from: received), userID: nil)
        output.records.append(.sample(sample(
            .oxygenSaturation, measurement.oxygenSaturation, .percent, at: received, identity, [:])))
        if let pulse = measurement.pulseRate, pulse > 0 {
            output.records.append(.sample(sample(.heartRate, pulse, .countPerMinute, at: received, identity, [:])))
        }
    }

    // MARK: Helpers

    /// When a reading happened and what identifies it.
    private struct ReadingTime {
        var date: Date
        /// The device time stamp as the device wrote it, or the receive time in ISO 8601 UTC.
        var identity: String
        /// Metadata noting a device time that was not used.
        var extra: [String: MetadataValue]
    }

    /// The device time stamp read in the context's zone, unless absent or more than a day in
    /// the future of the receive time (an unset clock); then the receive time.
    private func readingTime(_ timestamp: GATTDateTime?, received: Date) -> ReadingTime {
        guard let timestamp else {
            return ReadingTime(date: received, identity: ISO8601DateTime.string(from: received), extra: [:])
        }
        let date = timestamp.date(in: context.timeZone)
        if date.timeIntervalSince(received) > 86_400 {
            return ReadingTime(
                date: received, identity: timestamp.description,
                extra: [GATTMetadataKey.deviceTime: .string(timestamp.description)])
        }
        return ReadingTime(date: date, identity: timestamp.description, extra: [:])
    }

    private func syncIdentifier(_ namespace: String, _ identity: String, userID: UInt8?) -> String {
        var text = "\(address)/\(namespace)/\(identity)"
        if let userID { text += "/user-\(userID)" }
        return text
    }

    private func userEntry(_ userID: UInt8?) -> [String: MetadataValue] {
        guard let userID, userID != 0xFF else { return [:] }
        return [GATTMetadataKey.deviceUserID: .number(Double(userID))]
    }

    private func metadata(_ syncIdentifier: String, _ extra: [String: MetadataValue]) -> Metadata {
        Metadata(
            syncIdentifier: syncIdentifier, syncVersion: 1, timeZone: context.timeZone.identifier,
            deviceSerialNumber: serialNumber, entries: extra)
    }

    private func sample(
        _ type: QuantityType, _ value: Double, _ unit: HealthModel.Unit, at date: Date,
        _ syncIdentifier: String, _ extra: [String: MetadataValue]
    ) -> QuantitySample {
        sample(type, value, unit, from: date, to: date, syncIdentifier, extra)
    }

    private func sample(
        _ type: QuantityType, _ value: Double, _ unit: HealthModel.Unit, from start: Date, to end: Date,
        _ syncIdentifier: String, _ extra: [String: MetadataValue]
    ) -> QuantitySample {
        QuantitySample(
            type: type, quantity: Quantity(value: value, unit: unit), start: start, end: end,
            source: context.source, device: device, metadata: metadata(syncIdentifier, extra))
    }

    /// A Device Information string: UTF-8, trailing NULs and spaces dropped; nil when empty.
    private static func text(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
            .trimmingCharacters(in: CharacterSet(charactersIn: "\0").union(.whitespacesAndNewlines))
        return text.isEmpty ? nil : text
    }

    static func name(of characteristic: BLEUUID) -> String {
        switch characteristic {
        case GATTHealthUUID.weightMeasurement: "Weight Measurement"
        case GATTHealthUUID.bodyCompositionMeasurement: "Body Composition Measurement"
        case GATTHealthUUID.temperatureMeasurement: "Temperature Measurement"
        case GATTHealthUUID.heartRateMeasurement: "Heart Rate Measurement"
        case GATTHealthUUID.rscMeasurement: "RSC Measurement"
        case GATTHealthUUID.bloodPressureMeasurement: "Blood Pressure Measurement"
        case GATTHealthUUID.glucoseMeasurement: "Glucose Measurement"
        case GATTHealthUUID.plxSpotCheckMeasurement: "PLX Spot-check Measurement"
        case GATTHealthUUID.plxContinuousMeasurement: "PLX Continuous Measurement"
        default: "characteristic"
        }
    }
}

import AdapterKit
import Foundation

/// The built-in adapter for the Bluetooth SIG standard health profiles: Weight Scale, Body
/// Composition, Health Thermometer, Heart Rate, Running Speed and Cadence, Blood Pressure,
/// Glucose and Pulse Oximeter. It takes any device that advertises or exposes one of their services.
public struct GATTHealthAdapter: BLEAdapter {
    /// The adapter id, also the samples' source.
    public static let id = "gatt-health"

    public let descriptor = AdapterDescriptor(
        id: GATTHealthAdapter.id,
        name: "Bluetooth health profiles",
        version: "1.0.0",
        summary: "Standard GATT measurements: weight, body composition, body temperature, heart rate, "
            + "running speed and cadence, blood pressure, blood glucose, pulse oximetry",
        matches: [.ble(BLEMatch(serviceUUIDs: GATTHealthUUID.services))],
        produces: [
            .bodyMass, .bodyMassIndex, .height, .bodyFatPercentage, .leanBodyMass, .bodyTemperature,
            .heartRate, .runningSpeed, .walkingSpeed, .distanceWalkingRunning, .stepCount,
            .bloodPressureSystolic, .bloodPressureDiastolic, .bloodGlucose, .oxygenSaturation,
        ],
            how: "GATT: reads, indications/notifications",
            models: [
                AdapterModel(maker: "Bluetooth SIG profile", name: "Weight Scale", offers: "weight, BMI, height", reads: [.bodyMass, .bodyMassIndex, .height], capture: "weight-scale"),
                AdapterModel(maker: "Bluetooth SIG profile", name: "Body Composition", offers: "body fat, lean mass, weight", reads: [.bodyFatPercentage, .leanBodyMass, .bodyMass], capture: "body-composition"),
                AdapterModel(maker: "Bluetooth SIG profile", name: "Health Thermometer", offers: "body temperature", reads: [.bodyTemperature], capture: "thermometer"),
                AdapterModel(maker: "Bluetooth SIG profile", name: "Heart Rate", offers: "heart rate", reads: [.heartRate], capture: "heart-rate"),
                AdapterModel(maker: "Bluetooth SIG profile", name: "Running Speed and Cadence", offers: "speed, distance, steps", reads: [.runningSpeed, .walkingSpeed, .distanceWalkingRunning, .stepCount], capture: "running-speed-cadence"),
                AdapterModel(maker: "Bluetooth SIG profile", name: "Blood Pressure", offers: "systolic, diastolic, pulse", reads: [.bloodPressureSystolic, .bloodPressureDiastolic, .heartRate], capture: "blood-pressure"),
                AdapterModel(maker: "Bluetooth SIG profile", name: "Glucose", offers: "blood glucose", reads: [.bloodGlucose], capture: "glucose"),
                AdapterModel(maker: "Ascensia", name: "Contour Next One, Contour Plus One", offers: "blood glucose, meal context, stored records",
                             reads: [.bloodGlucose], note: "meal time; meter clock drift corrected; control tests skipped", capture: "contour-next-one"),
                AdapterModel(maker: "Roche", name: "Accu-Chek Guide, Instant, Aviva Connect", offers: "blood glucose, meal context, stored records",
                             reads: [.bloodGlucose], note: "clock read from Date Time; meal time; control tests skipped", capture: "accu-chek-guide"),
                AdapterModel(maker: "Bluetooth SIG profile", name: "Pulse Oximeter", offers: "SpO2, pulse", reads: [.oxygenSaturation, .heartRate], capture: "pulse-oximeter"),
            ]
    )

    public init() {}

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        GATTHealthSession(device: device, context: context)
    }
}

import AdapterKit
import Foundation
import HealthModel
import Transport

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
        ]
    )

    public init() {}

    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        GATTHealthSession(device: device, context: context)
    }
}

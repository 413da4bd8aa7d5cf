import AdapterKit
import Foundation
import Transport

/// TEMPer USB thermometers (`0c45:7401`, `0c45:7402`, `1a86:e025`): room temperature every `temper-interval`
/// seconds as `IngestQuantityTypeIdentifierAmbientTemperature` (a room, not a body).
public struct TEMPerAdapter: USBAdapter {
    public static let identifier = "temper"

    /// Waits between readings (injected by tests).
    public let sleep: @Sendable (Duration) -> Void

    public init(sleep: @escaping @Sendable (Duration) -> Void = { duration in
                    Thread.sleep(forTimeInterval: Double(duration.components.seconds)
                                 + Double(duration.components.attoseconds) / 1e18)
                }) {
        self.sleep = sleep
    }

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.identifier,
            name: "TEMPer USB thermometer",
            version: "1.0.0",
            summary: "Room temperature from TEMPer USB thermometers (FM75 and Si7021 models)",
            matches: [.usb(USBMatch(vendorID: 0x0C45, productID: 0x7401)), .usb(USBMatch(vendorID: 0x0C45, productID: 0x7402)),
                      .usb(USBMatch(vendorID: 0x1A86, productID: 0xE025))],
            produces: [.ambientTemperature],
            how: "USB",
            models: [
                AdapterModel(maker: "PCsensor / RDing", name: "TEMPer USB thermometers (TEMPerV1.4, TEMPer2, TEMPERHUM, …)", offers: "air temperature", reads: [.ambientTemperature], note: "never body temperature", capture: "temper-v1.4"),
            ])
    }

    public func makeSession(for device: USBDeviceDescription, context: AdapterContext,
                            options: [String: String]) -> any USBAdapterSession {
        let configuration: Result<TEMPerConfiguration, AdapterOptionError>
        do {
            configuration = .success(try TEMPerConfiguration(options: options))
        } catch {
            configuration = .failure(error)
        }
        return TEMPerSession(context: context, configuration: configuration, now: context.now, sleep: sleep)
    }
}

/// The TEMPer adapter's options.
public struct TEMPerConfiguration: Hashable, Sendable {
    /// `temper-interval`: seconds between readings (default 60).
    public var interval: Int
    /// `temper-scale` and `temper-offset`: °C = reading × scale + offset (default 1 and 0).
    public var scale: Double
    public var offset: Double

    public init(interval: Int = 60, scale: Double = 1, offset: Double = 0) {
        self.interval = interval
        self.scale = scale
        self.offset = offset
    }

    public init(options: [String: String]) throws(AdapterOptionError) {
        self.init()
        let reader = AdapterOptionReader(options)
        interval = try reader.integer("temper-interval", in: 1...86_400, expected: "whole seconds from 1 to 86400") ?? interval
        scale = try reader.number("temper-scale", expected: "a positive number") { $0 > 0 } ?? scale
        offset = try reader.number("temper-offset", expected: "°C from -20 to 20") { abs($0) <= 20 } ?? offset
    }
}

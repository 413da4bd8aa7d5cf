import AdapterKit
import Foundation
import Transport

/// ANT USB sticks (Dynastream/Garmin USB2 `0fcf:1008`, USB-m `0fcf:1009`) receiving ANT+ heart-rate monitors,
/// stride-based speed and distance monitors (foot pods) and weight scales.
public struct ANTPlusAdapter: USBAdapter {
    public static let identifier = "ant-plus"

    /// How to read a `@FILE` network key (injected by tests).
    public let readFile: @Sendable (String) throws -> String

    public init(readFile: @escaping @Sendable (String) throws -> String = { try String(contentsOfFile: $0, encoding: .utf8) }) {
        self.readFile = readFile
    }

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.identifier,
            name: "ANT+ USB stick",
            version: "1.0.0",
            summary: "Heart rate, foot-pod steps, distance and speed, and scale weights received by an ANT USB stick",
            matches: [.usb(USBMatch(vendorID: 0x0FCF, productID: 0x1008)), .usb(USBMatch(vendorID: 0x0FCF, productID: 0x1009))],
            produces: [.heartRate, .stepCount, .distanceWalkingRunning, .runningSpeed, .bodyMass],
            how: "USB",
            models: [
                AdapterModel(maker: "Garmin / Dynastream", name: "ANT+ USB sticks: heart rate monitors", offers: "heart rate", reads: [.heartRate], capture: "hrm"),
                AdapterModel(maker: "Garmin / Dynastream", name: "ANT+ USB sticks: stride-based speed and distance sensors", offers: "speed, distance, strides", reads: [.stepCount, .distanceWalkingRunning, .runningSpeed], capture: "sdm"),
                AdapterModel(maker: "Garmin / Dynastream", name: "ANT+ USB sticks: weight scales", offers: "weight", reads: [.bodyMass], capture: "scale"),
            ])
    }

    public func makeSession(for device: USBDeviceDescription, context: AdapterContext,
                            options: [String: String]) -> any USBAdapterSession {
        let configuration: Result<ANTPlusConfiguration, ANTSessionError>
        do {
            // A missing key is decided by the session once it sees the device: a capture's playback does not need one.
            configuration = .success(try ANTPlusConfiguration(options: options, readFile: readFile))
        } catch {
            configuration = .failure(error)
        }
        return ANTPlusSession(context: context, configuration: configuration, now: context.now)
    }
}

/// How the stick listens.
public enum ANTReceiveMode: String, Hashable, Sendable {
    /// Continuous scan on channel 0: every sensor in range at once (`ant-mode=scan`, the default).
    case scan
    /// One searching channel per profile (heart rate, stride sensor, scale), each pairing with the first sensor
    /// of its type (`ant-mode=channels`), for sticks or settings where scanning is not wanted.
    case channels
}

/// The ANT adapter's options.
public struct ANTPlusConfiguration: Hashable, Sendable {
    /// Nil when the options name none: a live stick then cannot be started (`ANTNetworkKeyError.missing`), a
    /// capture's playback uses the key the capture shows or `ANTNetworkKey.placeholder`.
    public var networkKey: ANTNetworkKey?
    public var mode: ANTReceiveMode
    /// Seconds between committed batches.
    public var batchInterval: TimeInterval
    public var receiver: ANTPlusReceiver.Settings

    public init(networkKey: ANTNetworkKey?, mode: ANTReceiveMode = .scan, batchInterval: TimeInterval = 10,
                receiver: ANTPlusReceiver.Settings = ANTPlusReceiver.Settings()) {
        self.networkKey = networkKey
        self.mode = mode
        self.batchInterval = batchInterval
        self.receiver = receiver
    }

    /// `ant-network-key` / `ant-network-key-file` (optional here, see `networkKey`), `ant-mode=scan|channels`,
    /// `ant-batch-seconds=N`.
    public init(options: [String: String], readFile: (String) throws -> String) throws(ANTSessionError) {
        let key: ANTNetworkKey?
        do {
            key = try ANTNetworkKey(options: options, readFile: readFile)
        } catch .missing {
            key = nil
        } catch {
            throw .networkKey(error)
        }
        self.init(networkKey: key)
        let reader = AdapterOptionReader(options)
        do {
            mode = try reader.value("ant-mode", expected: "scan or channels") { ANTReceiveMode(rawValue: $0.lowercased()) } ?? mode
            batchInterval = try reader.number("ant-batch-seconds", expected: "seconds from 1 to 3600") { (1...3600).contains($0) }
                ?? batchInterval
        } catch {
            throw .options(error)
        }
    }
}

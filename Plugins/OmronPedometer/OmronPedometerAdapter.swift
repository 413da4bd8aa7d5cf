import AdapterKit
import Foundation
import HealthModel
import Transport

/// The Omron HJ-720IT pedometer over USB HID: downloads the hourly steps of the stored days and each day's
/// distance, and clears the device's memory only when asked (`clear-after-sync=true`) after the commit.
public struct OmronPedometerAdapter: USBAdapter {
    public static let identifier = "omron-hj720it"

    /// The context's clock says which date the device's "today" (day 0) is.
    public init() {}

    public var descriptor: AdapterDescriptor {
        AdapterDescriptor(
            id: Self.identifier,
            name: "Omron HJ-720IT pedometer",
            version: "1.0.0",
            summary: "Hourly steps and daily walking distance from the Omron HJ-720IT's memory (USB HID)",
            matches: [.usb(USBMatch(vendorID: 0x0590, productID: 0x0028))],
            produces: [.stepCount, .distanceWalkingRunning],
            how: "USB",
            models: [
                AdapterModel(maker: "Omron", name: "HJ-720IT pedometer", offers: "steps, walking distance by hour", reads: [.stepCount, .distanceWalkingRunning], capture: "pedometerLog1"),
            ])
    }

    public func makeSession(for device: USBDeviceDescription, context: AdapterContext,
                            options: [String: String]) -> any USBAdapterSession {
        let configuration: Result<OmronPedometerConfiguration, AdapterOptionError>
        do {
            configuration = .success(try OmronPedometerConfiguration(options: options))
        } catch {
            configuration = .failure(error)
        }
        return OmronPedometerSession(context: context, configuration: configuration, now: context.now)
    }
}

/// Which stored days a session reads.
public enum OmronDaySelection: String, Hashable, Sendable {
    /// Every day in memory (re-reading is harmless: sync identifiers make it idempotent).
    case all
    /// Only the days the device counts as not yet cleared (what the vendor software reads).
    case untransferred = "new"
}

/// The unit the device reports distance in; it follows the device's unit setting, which it does not report.
public enum OmronDistanceUnit: String, Hashable, Sendable {
    case mile
    case kilometre

    /// Metres in one unit.
    public var metres: Double {
        switch self {
        case .mile: 1609.344
        case .kilometre: 1000
        }
    }
}

/// Options of the Omron adapter, from the `options` dictionary.
public struct OmronPedometerConfiguration: Hashable, Sendable {
    /// `clear-after-sync=true`: send CTD (clear) after the download is committed.
    public var clearAfterSync: Bool
    /// `omron-days=all|new` (default `all`).
    public var days: OmronDaySelection
    /// `omron-distance-unit=mile|km` (default `mile`, the US HJ-720IT's unit).
    public var distanceUnit: OmronDistanceUnit

    /// `omron-today=YYYY-MM-DD`: the date of the device's day 0 instead of the clock's today (for replaying a
    /// capture made on another day).
    public var today: CalendarDate?

    public init(clearAfterSync: Bool = false, days: OmronDaySelection = .all, distanceUnit: OmronDistanceUnit = .mile,
                today: CalendarDate? = nil) {
        self.clearAfterSync = clearAfterSync
        self.days = days
        self.distanceUnit = distanceUnit
        self.today = today
    }

    public init(options: [String: String]) throws(AdapterOptionError) {
        self.init()
        let reader = AdapterOptionReader(options)
        clearAfterSync = try reader.flag("clear-after-sync") ?? clearAfterSync
        days = try reader.value("omron-days", expected: "all or new") { OmronDaySelection(rawValue: $0.lowercased()) } ?? days
        today = try reader.value("omron-today", expected: "a date YYYY-MM-DD", CalendarDate.init) ?? today
        distanceUnit = try reader.choice("omron-distance-unit",
                                         ["mile": .mile, "miles": .mile, "mi": .mile, "km": .kilometre, "kilometre": .kilometre,
                                          "kilometer": .kilometre, "kilometres": .kilometre, "kilometers": .kilometre],
                                         expected: "mile or km") ?? distanceUnit
    }
}

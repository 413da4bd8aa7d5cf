import Foundation
import Transport

/// An adapter for a USB device: a conversation (start-up, history download, broadcast reception)
/// over a `USBDeviceHandle`, live through libusb or replayed from a usbmon capture.
public protocol USBAdapter: Sendable {
    var descriptor: AdapterDescriptor { get }
    /// A session for one matched device. `options` carries adapter configuration
    /// (e.g. `clear-after-sync`, the ANT+ network key) from the command line or a config file.
    func makeSession(for device: USBDeviceDescription, context: AdapterContext,
                     options: [String: String]) -> any USBAdapterSession
    /// Whether the adapter can take a device now: false while broken or in restart back-off,
    /// and the next matching adapter gets the device.
    var isAvailable: Bool { get }
}

extension USBAdapter {
    public var isAvailable: Bool { true }
}

extension Array where Element == any USBAdapter {
    /// The adapter for a USB device: the pinned one, else the first available that matches
    /// (in precedence order), else the first that matches.
    public func adapter(for device: USBDeviceDescription, pins: AdapterPins = AdapterPins()) -> (any USBAdapter)? {
        if let pinned = pins.adapterID(for: device) { return first { $0.descriptor.id == pinned } }
        let matching = filter { $0.descriptor.matches(device) }
        return matching.first { $0.isAvailable } ?? matching.first
    }
}

/// One conversation with one USB device.
public protocol USBAdapterSession: AnyObject {
    /// Talks to the device until it has nothing more to give (a history device) or until
    /// `shouldStop()` returns true (a receiver such as an ANT stick). Hands each batch to `deliver`,
    /// which returns only after the batch is committed (or throws when it could not be): anything
    /// the device must be told after a commit (erase its memory) happens after `deliver` returns,
    /// and only when its receipt says nothing is merely held (`DeliveryReceipt.deviceMayForget`).
    /// `USBError.noDevice` ends the session: the device was pulled out. The session reads the time
    /// from `AdapterContext.now` and learns whether `device` is a capture's playback from the handle
    /// (`priorHostWrites(endpoint:)`, `answersWrites`), never from being told it is replayed.
    func run(_ device: any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
             shouldStop: () -> Bool) throws
    /// Runs the session on the device `open` opens (the caller closes what `open` returned). A
    /// session that reaches the device by other means (an external adapter's process opens it
    /// itself) runs without calling `open`. The default opens the device and calls `run(_:deliver:shouldStop:)`.
    func run(opening open: () throws -> any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
             shouldStop: () -> Bool) throws
}

extension USBAdapterSession {
    public func run(opening open: () throws -> any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
                    shouldStop: () -> Bool) throws {
        try run(try open(), deliver: deliver, shouldStop: shouldStop)
    }
}

/// What became of a delivered batch after its commit: samples stored in the store proper, and
/// samples only held in the pending area (their source is undecided), which the device must keep.
public struct DeliveryReceipt: Sendable, Equatable {
    /// Samples newly stored or already stored (duplicates).
    public var stored: Int
    /// Samples held in the pending area until the user grants or denies their types.
    public var held: Int

    public init(stored: Int, held: Int) {
        self.stored = stored
        self.held = held
    }

    /// Nothing of the batch is only pending: the device may erase or acknowledge its history.
    /// Denied and invalid samples do not count: the user refused them, or they cannot be stored.
    public var deviceMayForget: Bool { held == 0 }
}

extension AdapterDescriptor {
    /// Whether this adapter takes the USB device.
    public func matches(_ device: USBDeviceDescription) -> Bool {
        matches.contains { match in
            guard case .usb(let usb) = match else { return false }
            return usb.vendorID == device.vendorID && (usb.productID == nil || usb.productID == device.productID)
        }
    }
}

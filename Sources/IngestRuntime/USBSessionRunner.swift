import AdapterKit
import Foundation
import Transport

/// Runs USB adapter sessions the same way wherever a device comes from (the daemon's libusb
/// devices, a replayed usbmon capture, `capture --usb`): the adapter is chosen among `adapters` in
/// their order (``AdapterCatalogue`` puts external adapters before built-in ones) or named by
/// `--adapter`, the session gets its context and options, and each batch goes to `deliver`.
public struct USBSessionRunner: Sendable {
    /// The USB adapters, in the order they are tried.
    public var adapters: [any USBAdapter]
    /// Adapter options (`--adapter-option`), handed to every session.
    public var options: [String: String]
    /// The zone device timestamps without a zone are read in.
    public var timeZone: TimeZone
    /// Devices pinned to one adapter (`--adapter VID:PID=ID`).
    public var pins: AdapterPins

    public init(adapters: [any USBAdapter], options: [String: String], timeZone: TimeZone,
                pins: AdapterPins = AdapterPins()) {
        self.adapters = adapters
        self.options = options
        self.timeZone = timeZone
        self.pins = pins
    }

    /// The adapter that takes `device`: the pinned one, else the first matching one that is not
    /// broken or waiting in restart back-off (else the first matching one).
    public func adapter(for device: USBDeviceDescription) -> (any USBAdapter)? {
        adapters.adapter(for: device, pins: pins)
    }

    /// With `forcedID` (`--adapter`), the adapter of that id whatever the device (an unknown id is
    /// a bad request); without, ``adapter(for:)``.
    public func adapter(for device: USBDeviceDescription, forcedID: String?) throws(RuntimeError) -> (any USBAdapter)? {
        guard let forcedID else { return adapter(for: device) }
        guard let forced = adapters.first(where: { $0.descriptor.id == forcedID }) else {
            throw .unknownUSBAdapter(id: forcedID, known: adapters.map(\.descriptor.id))
        }
        return forced
    }

    /// Makes `adapter`'s session for `device` and runs it on what `open` opens (not called for an
    /// adapter that reaches the device itself; the caller closes what it returned). `clock` is the
    /// session's "now" (`AdapterContext.now`): the wall clock live, the capture's clock when a capture
    /// drives the session. Blocks until the session ends.
    public func run(_ adapter: any USBAdapter, device: USBDeviceDescription, clock: @escaping @Sendable () -> Date = { Date() },
                    open: () throws -> any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
                    shouldStop: () -> Bool) throws {
        let context = AdapterContext(timeZone: timeZone, source: adapter.descriptor.id, now: clock)
        let session = adapter.makeSession(for: device, context: context, options: options)
        try session.run(opening: open, deliver: deliver, shouldStop: shouldStop)
    }
}

import Foundation

/// What a USB device says about itself: ids, location, strings and its interfaces and endpoints.
public struct USBDeviceDescription: Hashable, Sendable, CustomStringConvertible {
    public var vendorID: UInt16
    public var productID: UInt16
    /// Bus number and device address (as in `lsusb`), when known.
    public var bus: UInt8?
    public var address: UInt8?
    public var manufacturer: String?
    public var product: String?
    public var serialNumber: String?
    public var deviceClass: UInt8
    /// The interfaces of the active (or first) configuration.
    public var interfaces: [USBInterfaceDescription]

    public init(vendorID: UInt16, productID: UInt16, bus: UInt8? = nil, address: UInt8? = nil,
                manufacturer: String? = nil, product: String? = nil, serialNumber: String? = nil,
                deviceClass: UInt8 = 0, interfaces: [USBInterfaceDescription] = []) {
        self.vendorID = vendorID
        self.productID = productID
        self.bus = bus
        self.address = address
        self.manufacturer = manufacturer
        self.product = product
        self.serialNumber = serialNumber
        self.deviceClass = deviceClass
        self.interfaces = interfaces
    }

    /// `0fcf:1008`.
    public var idString: String { String(format: "%04x:%04x", vendorID, productID) }

    /// What `ingestd devices assign` may name this device by: `VID:PID` and its serial number.
    public var ownerKeys: [String] {
        [idString] + (serialNumber.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : [$0] } ?? [])
    }

    public var description: String {
        var text = idString
        if let bus, let address { text += String(format: " bus %03d address %03d", bus, address) }
        let names = [manufacturer, product].compactMap { $0 }
        if !names.isEmpty { text += " " + names.joined(separator: " ") }
        return text
    }
}

/// One interface (alternate setting) with its endpoints.
public struct USBInterfaceDescription: Hashable, Sendable {
    public var number: UInt8
    public var alternateSetting: UInt8
    public var interfaceClass: UInt8
    public var interfaceSubclass: UInt8
    public var interfaceProtocol: UInt8
    public var endpoints: [USBEndpointDescription]

    public init(number: UInt8, alternateSetting: UInt8 = 0, interfaceClass: UInt8, interfaceSubclass: UInt8 = 0,
                interfaceProtocol: UInt8 = 0, endpoints: [USBEndpointDescription]) {
        self.number = number
        self.alternateSetting = alternateSetting
        self.interfaceClass = interfaceClass
        self.interfaceSubclass = interfaceSubclass
        self.interfaceProtocol = interfaceProtocol
        self.endpoints = endpoints
    }

    /// USB class 0x03.
    public var isHID: Bool { interfaceClass == 0x03 }
}

/// How an endpoint moves data; the transfer call must match it.
public enum USBTransferType: UInt8, Hashable, Sendable {
    case control = 0, isochronous = 1, bulk = 2, interrupt = 3
}

/// One endpoint: its address (bit 7 set = IN, device to host), type and packet size.
public struct USBEndpointDescription: Hashable, Sendable {
    public var address: UInt8
    public var transferType: USBTransferType
    public var maxPacketSize: UInt16

    public init(address: UInt8, transferType: USBTransferType, maxPacketSize: UInt16) {
        self.address = address
        self.transferType = transferType
        self.maxPacketSize = maxPacketSize
    }

    public var isInput: Bool { address & 0x80 != 0 }
}

/// Why a USB operation failed. `noDevice` means the device went away: end the session cleanly.
public enum USBError: Error, Hashable, Sendable, CustomStringConvertible {
    case timeout(endpoint: UInt8)
    case noDevice
    case stall(endpoint: UInt8)
    case accessDenied(String)
    case busy(String)
    case notFound(String)
    case overflow(endpoint: UInt8)
    case io(String)
    /// A replayed capture has no (more) answer to this request.
    case replayExhausted(String)
    case other(code: Int32, name: String)

    public var description: String {
        switch self {
        case .timeout(let endpoint): String(format: "timeout on endpoint 0x%02x", endpoint)
        case .noDevice: "the device is gone"
        case .stall(let endpoint): String(format: "endpoint 0x%02x stalled", endpoint)
        case .accessDenied(let what): "access denied: \(what) (see 'ingestd udev-rules')"
        case .busy(let what): "busy: \(what)"
        case .notFound(let what): "not found: \(what)"
        case .overflow(let endpoint): String(format: "overflow on endpoint 0x%02x", endpoint)
        case .io(let what): "I/O error: \(what)"
        case .replayExhausted(let what): "the capture has no answer: \(what)"
        case .other(let code, let name): "libusb error \(code) (\(name))"
        }
    }
}

/// An opened USB device an adapter session talks to: the real one through libusb, or a replayed
/// usbmon capture. Calls block until done or timed out; a session runs on its own thread.
public protocol USBDeviceHandle: AnyObject {
    var device: USBDeviceDescription { get }
    /// Claims an interface; for HID devices the kernel driver is detached first and re-attached
    /// on release (`detachKernelDriver`).
    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError)
    func releaseInterface(_ number: UInt8) throws(USBError)
    /// A control transfer. For IN requests (`requestType & 0x80`) `data` is ignored and up to
    /// `length` bytes are returned; for OUT requests `data` is sent and `[]` returned.
    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8]
    /// Sends to an OUT endpoint with the transfer type its descriptor says (bulk or interrupt).
    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int
    /// Reads up to `length` bytes from an IN endpoint (bulk or interrupt per its descriptor).
    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8]
    /// Releases claimed interfaces (re-attaching kernel drivers) and closes the device.
    func close()
    /// What another host sent `endpoint` before this session (OUT transfers, in order), so a session can adopt a
    /// set-up that host made (an ANT network key, channel ids): for a handle playing back a usbmon capture, the
    /// captured host's writes; nil for a live device (the default), which has no such record.
    func priorHostWrites(endpoint: UInt8) -> [[UInt8]]?
    /// Whether the device's answers follow what the session writes: true for a live device (the default); false
    /// for a handle playing back a capture, which answers what was captured whatever is written, so a command it
    /// leaves unanswered or refuses is no failure, and writes that only change device state (closing channels at
    /// shutdown) achieve nothing.
    var answersWrites: Bool { get }
}

extension USBDeviceHandle {
    /// A live device: nothing was sent before this session, and its answers follow what the session writes.
    public func priorHostWrites(endpoint: UInt8) -> [[UInt8]]? { nil }
    public var answersWrites: Bool { true }
}

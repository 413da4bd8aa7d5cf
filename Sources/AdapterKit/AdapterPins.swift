import Foundation
import Transport

/// Devices pinned to one adapter (`--adapter ADDRESS=ID`, `--adapter VID:PID=ID`): the pinned
/// adapter alone serves the device, whatever else matches it.
public struct AdapterPins: Sendable, Equatable {
    /// Bluetooth devices by address.
    public var bluetooth: [BLEAddress: String] = [:]
    /// USB devices by vendor and product id.
    public var usb: [USBProductKey: String] = [:]

    /// A USB vendor and product id pair.
    public struct USBProductKey: Hashable, Sendable {
        public var vendorID: UInt16
        public var productID: UInt16

        public init(vendorID: UInt16, productID: UInt16) {
            self.vendorID = vendorID
            self.productID = productID
        }
    }

    public init() {}

    /// Parses `ADDRESS=ID` and `VID:PID=ID` (hex ids) values.
    public init(parsing values: [String]) throws(AdapterPinError) {
        for value in values {
            guard let equals = value.lastIndex(of: "="), equals != value.startIndex,
                  value.index(after: equals) != value.endIndex else { throw .malformed(value) }
            let device = String(value[..<equals])
            let id = String(value[value.index(after: equals)...])
            guard id.range(of: "^[a-z0-9]+(-[a-z0-9]+)*$", options: .regularExpression) != nil else {
                throw .badAdapterID(value, id: id)
            }
            if let address = BLEAddress(device) {
                bluetooth[address] = id
                continue
            }
            let parts = device.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.count == 4 }),
                  let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16) else {
                throw .badDevice(value, device: device)
            }
            usb[USBProductKey(vendorID: vendor, productID: product)] = id
        }
    }

    /// The adapter pinned to a USB device, if any.
    public func adapterID(for device: USBDeviceDescription) -> String? {
        usb[USBProductKey(vendorID: device.vendorID, productID: device.productID)]
    }

    /// Ids pinned that are not among `known`.
    public func unknownIDs(known: Set<String>) -> [String] {
        Set(bluetooth.values).union(usb.values).subtracting(known).sorted()
    }
}

/// Why an `--adapter` pin could not be read; each case carries the value given.
public enum AdapterPinError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)
    case badDevice(String, device: String)
    case badAdapterID(String, id: String)

    public var description: String {
        switch self {
        case .malformed(let value): "\"\(value)\": expected ADDRESS=ID or VID:PID=ID"
        case .badDevice(let value, let device):
            "\"\(value)\": \"\(device)\" is neither a Bluetooth address (AA:BB:CC:DD:EE:FF) nor VID:PID (0590:0028)"
        case .badAdapterID(let value, let id): "\"\(value)\": \"\(id)\" is not an adapter id (kebab-case)"
        }
    }
}

extension BLEAdapter {
    /// By default an adapter can always take a device; an external adapter that is broken or
    /// waiting in restart back-off says no, so the next matching adapter gets the device.
    public var isAvailable: Bool { true }
}

import Transport

/// USB standard descriptors as raw bytes (USB 2.0 §9.6), read the way a host reads them.
public enum USBDescriptorParser {
    /// Vendor id, product id and device class from a DEVICE descriptor (18 bytes; the first 12
    /// are enough for the ids); nil when it is not one.
    public static func deviceIDs(_ bytes: [UInt8]) -> (vendorID: UInt16, productID: UInt16, deviceClass: UInt8)? {
        guard bytes.count >= 12, bytes[1] == 0x01, bytes[0] >= 12 else { return nil }
        return (UInt16(bytes[8]) | UInt16(bytes[9]) << 8, UInt16(bytes[10]) | UInt16(bytes[11]) << 8, bytes[4])
    }

    /// The string indexes of a DEVICE descriptor: manufacturer, product, serial number (0 = none).
    public static func stringIndexes(_ bytes: [UInt8]) -> (manufacturer: UInt8, product: UInt8, serialNumber: UInt8)? {
        guard bytes.count >= 17, bytes[1] == 0x01 else { return nil }
        return (bytes[14], bytes[15], bytes[16])
    }

    /// The interfaces (with every alternate setting) and endpoints of a full CONFIGURATION
    /// descriptor set. Class-specific descriptors in between are skipped; a descriptor whose
    /// length byte runs past the end stops the walk (a capture may hold only a prefix).
    public static func interfaces(ofConfiguration bytes: [UInt8]) -> [USBInterfaceDescription] {
        guard bytes.count >= 9, bytes[1] == 0x02 else { return [] }
        var interfaces: [USBInterfaceDescription] = []
        var offset = Int(bytes[0])
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset])
            guard length >= 2, offset + length <= bytes.count else { break }
            switch bytes[offset + 1] {
            case 0x04 where length >= 9:
                interfaces.append(USBInterfaceDescription(
                    number: bytes[offset + 2], alternateSetting: bytes[offset + 3], interfaceClass: bytes[offset + 5],
                    interfaceSubclass: bytes[offset + 6], interfaceProtocol: bytes[offset + 7], endpoints: []))
            case 0x05 where length >= 7:
                if !interfaces.isEmpty {
                    interfaces[interfaces.count - 1].endpoints.append(USBEndpointDescription(
                        address: bytes[offset + 2],
                        transferType: USBTransferType(rawValue: bytes[offset + 3] & 0x03) ?? .bulk,
                        maxPacketSize: UInt16(bytes[offset + 4]) | UInt16(bytes[offset + 5]) << 8))
                }
            default:
                break
            }
            offset += length
        }
        return interfaces
    }

    /// The text of a STRING descriptor (UTF-16LE after the 2-byte head); nil when it is not one.
    public static func string(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 2, bytes[1] == 0x03 else { return nil }
        let end = min(bytes.count, Int(bytes[0]))
        guard end >= 2 else { return nil }
        let units = stride(from: 2, to: end - 1, by: 2).map { UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8 }
        return String(decoding: units, as: UTF16.self)
    }
}

/// A device seen in a usbmon capture: where it was, how much traffic it had and what its
/// descriptors say when the capture holds the GET_DESCRIPTOR exchanges.
public struct USBCaptureDevice: Hashable, Sendable, CustomStringConvertible {
    public var bus: UInt16
    public var address: UInt8
    /// Events of this device in the capture.
    public var eventCount: Int
    /// The DEVICE descriptor from a completed GET_DESCRIPTOR(DEVICE), if the capture has one.
    public var deviceDescriptor: [UInt8]?
    /// The longest CONFIGURATION descriptor set from completed GET_DESCRIPTOR(CONFIGURATION)s.
    public var configurationDescriptor: [UInt8]?
    /// Strings from completed GET_DESCRIPTOR(STRING) by descriptor index (index 0, the language
    /// list, is left out).
    public var strings: [UInt8: String]
    /// Bulk, interrupt and isochronous endpoints that carried traffic, with their transfer type.
    public var endpointsInTraffic: [UInt8: USBTransferType]

    public init(bus: UInt16, address: UInt8, eventCount: Int = 0, deviceDescriptor: [UInt8]? = nil,
                configurationDescriptor: [UInt8]? = nil, strings: [UInt8: String] = [:],
                endpointsInTraffic: [UInt8: USBTransferType] = [:]) {
        self.bus = bus
        self.address = address
        self.eventCount = eventCount
        self.deviceDescriptor = deviceDescriptor
        self.configurationDescriptor = configurationDescriptor
        self.strings = strings
        self.endpointsInTraffic = endpointsInTraffic
    }

    /// Vendor and product id from the captured device descriptor.
    public var vendorID: UInt16? { deviceDescriptor.flatMap(USBDescriptorParser.deviceIDs)?.vendorID }
    public var productID: UInt16? { deviceDescriptor.flatMap(USBDescriptorParser.deviceIDs)?.productID }

    /// What an adapter sees of this device: ids, class and strings from the captured descriptors
    /// and the interfaces of the captured configuration, else one interface listing the
    /// endpoints that carried traffic. `vendorID` / `productID` replace the captured ids (the
    /// `--usb VID:PID` of a capture that lacks them). Nil when the ids are unknown and not given.
    public func description(vendorID forcedVendor: UInt16? = nil, productID forcedProduct: UInt16? = nil)
        -> USBDeviceDescription? {
        let ids = deviceDescriptor.flatMap(USBDescriptorParser.deviceIDs)
        guard let vendor = forcedVendor ?? ids?.vendorID, let product = forcedProduct ?? ids?.productID else { return nil }
        var interfaces = configurationDescriptor.map(USBDescriptorParser.interfaces(ofConfiguration:)) ?? []
        if interfaces.isEmpty && !endpointsInTraffic.isEmpty {
            let endpoints = endpointsInTraffic.keys.sorted().compactMap { address in
                endpointsInTraffic[address].map { USBEndpointDescription(address: address, transferType: $0, maxPacketSize: 0) }
            }
            interfaces = [USBInterfaceDescription(number: 0, interfaceClass: 0xFF, endpoints: endpoints)]
        }
        let indexes = deviceDescriptor.flatMap(USBDescriptorParser.stringIndexes)
        func string(_ index: UInt8?) -> String? {
            guard let index, index != 0, let text = strings[index] else { return nil }
            let trimmed = text.drop { $0 == " " || $0 == "\0" }
            let kept = String(trimmed.reversed().drop { $0 == " " || $0 == "\0" }.reversed())
            return kept.isEmpty ? nil : kept
        }
        return USBDeviceDescription(
            vendorID: vendor, productID: product, bus: UInt8(truncatingIfNeeded: bus), address: address,
            manufacturer: string(indexes?.manufacturer), product: string(indexes?.product),
            serialNumber: string(indexes?.serialNumber), deviceClass: ids?.deviceClass ?? 0, interfaces: interfaces)
    }

    public var description: String {
        var text = "bus \(bus) device \(address)"
        if let vendorID, let productID { text += " " + USBIDText.pair(vendorID, productID) }
        return text + " (\(eventCount) events)"
    }
}

/// Why no single device of a capture can be replayed.
public enum USBCaptureSelectionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No device in the capture has these ids, and none without ids carries data traffic.
    case noMatch(wanted: String, devices: [String])
    /// Several devices could be meant.
    case ambiguous(wanted: String, candidates: [String])

    public var description: String {
        switch self {
        case .noMatch(let wanted, let devices):
            "no USB device \(wanted) in the capture (it has: \(devices.isEmpty ? "no USB traffic" : devices.joined(separator: "; ")))"
        case .ambiguous(let wanted, let candidates):
            "several devices could be \(wanted) in the capture: \(candidates.joined(separator: "; ")); the capture must hold one such device"
        }
    }
}

/// The devices of a usbmon capture, found from its events.
public struct USBCaptureDevices: Sendable {
    /// Every (bus, address) with traffic, ordered by bus and address.
    public let devices: [USBCaptureDevice]

    /// Scans the events: counts them per device, pairs each GET_DESCRIPTOR submission with its
    /// completion (by URB id, bus and device) and keeps the descriptors that completed.
    public init(events: [USBMonEvent]) {
        struct Key: Hashable { var bus: UInt16; var address: UInt8 }
        struct PendingKey: Hashable { var bus: UInt16; var address: UInt8; var urb: UInt64 }
        var found: [Key: USBCaptureDevice] = [:]
        var pending: [PendingKey: USBSetupPacket] = [:]
        for event in events {
            let key = Key(bus: event.bus, address: event.device)
            var device = found[key] ?? USBCaptureDevice(bus: event.bus, address: event.device)
            device.eventCount += 1
            if event.transferType != .control {
                device.endpointsInTraffic[event.endpoint] = event.transferType
            }
            let pendingKey = PendingKey(bus: event.bus, address: event.device, urb: event.urbID)
            switch event.type {
            case .submit:
                if event.transferType == .control, let setup = event.setup, setup.requestedDescriptor != nil {
                    pending[pendingKey] = setup
                } else {
                    pending[pendingKey] = nil
                }
            case .error:
                pending[pendingKey] = nil
            case .complete:
                if let setup = pending.removeValue(forKey: pendingKey), event.status == 0,
                   let (type, index) = setup.requestedDescriptor {
                    Self.absorb(descriptorType: type, index: index, data: event.data, into: &device)
                }
            }
            found[key] = device
        }
        devices = found.values.sorted { ($0.bus, $0.address) < ($1.bus, $1.address) }
    }

    private static func absorb(descriptorType: UInt8, index: UInt8, data: [UInt8], into device: inout USBCaptureDevice) {
        switch descriptorType {
        case 0x01 where USBDescriptorParser.deviceIDs(data) != nil:
            if (device.deviceDescriptor?.count ?? 0) <= data.count { device.deviceDescriptor = data }
        case 0x02 where data.count >= 9 && data[1] == 0x02:
            if (device.configurationDescriptor?.count ?? 0) < data.count { device.configurationDescriptor = data }
        case 0x03 where index != 0:
            if let text = USBDescriptorParser.string(data) { device.strings[index] = text }
        default:
            break
        }
    }

    /// The device at this place, if it has traffic.
    public func device(bus: UInt16, address: UInt8) -> USBCaptureDevice? {
        devices.first { $0.bus == bus && $0.address == address }
    }

    /// The device to replay for `VID:PID`: the one whose captured descriptor has these ids (at
    /// address 0, where a device answers before it gets its address, only if it is the only
    /// one); without such a descriptor, the one device without known ids that carried bulk or
    /// interrupt traffic (the `--usb VID:PID` case).
    public func select(vendorID: UInt16, productID: UInt16) throws(USBCaptureSelectionError) -> USBCaptureDevice {
        let wanted = USBIDText.pair(vendorID, productID)
        let byDescriptor = devices.filter { $0.vendorID == vendorID && $0.productID == productID }
        let addressed = byDescriptor.filter { $0.address != 0 }
        let candidates = addressed.isEmpty ? byDescriptor : addressed
        if candidates.count == 1 { return candidates[0] }
        if candidates.count > 1 { throw .ambiguous(wanted: wanted, candidates: candidates.map(\.description)) }
        let unknown = devices.filter { device in
            device.vendorID == nil && device.endpointsInTraffic.values.contains { $0 == .bulk || $0 == .interrupt }
        }
        if unknown.count == 1 { return unknown[0] }
        if unknown.count > 1 { throw .ambiguous(wanted: wanted, candidates: unknown.map(\.description)) }
        throw .noMatch(wanted: wanted, devices: devices.map(\.description))
    }
}

/// `0fcf:1008`.
enum USBIDText {
    static func pair(_ vendorID: UInt16, _ productID: UInt16) -> String { hex4(vendorID) + ":" + hex4(productID) }

    static func hex4(_ value: UInt16) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}

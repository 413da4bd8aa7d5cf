import Foundation
import CLibUSB
import Transport

/// Builds `USBDeviceDescription`s from libusb's cached descriptors of a `libusb_device`.
///
/// Nothing here performs I/O on the device except `readStringsFromDevice`, which opens it.
enum LibUSBDeviceDescriber {
    /// Where string descriptors may come from.
    enum StringSource {
        /// Only sysfs (safe inside a hotplug callback: no transfer, no open).
        case sysfsOnly
        /// sysfs, else open the device and ask it (strings stay nil if it cannot be opened).
        case sysfsThenDevice(timeoutMilliseconds: UInt32)
    }

    /// The description of `device`; nil when even its device descriptor cannot be read.
    static func describe(_ device: OpaquePointer, strings: StringSource) -> USBDeviceDescription? {
        var descriptor = libusb_device_descriptor()
        guard libusb_get_device_descriptor(device, &descriptor) == 0 else { return nil }
        let bus = libusb_get_bus_number(device)
        let address = libusb_get_device_address(device)
        var description = USBDeviceDescription(
            vendorID: descriptor.idVendor, productID: descriptor.idProduct, bus: bus, address: address,
            deviceClass: descriptor.bDeviceClass, interfaces: interfaces(of: device))
        if let sysfs = SysfsDeviceStrings.read(bus: bus, portNumbers: portNumbers(of: device)) {
            description.manufacturer = sysfs.manufacturer
            description.product = sysfs.product
            description.serialNumber = sysfs.serialNumber
        } else if case .sysfsThenDevice(let timeout) = strings {
            readStringsFromDevice(device, descriptor: descriptor, into: &description, timeoutMilliseconds: timeout)
        }
        return description
    }

    /// The port numbers from the root hub down to the device (empty for a root hub).
    static func portNumbers(of device: OpaquePointer) -> [UInt8] {
        var ports = [UInt8](repeating: 0, count: 8)
        let count = ports.withUnsafeMutableBufferPointer { buffer in
            libusb_get_port_numbers(device, buffer.baseAddress, Int32(buffer.count))
        }
        return count > 0 ? Array(ports.prefix(Int(count))) : []
    }

    /// The interfaces (every alternate setting) of the active configuration, or of the first one
    /// when the device is not configured.
    static func interfaces(of device: OpaquePointer) -> [USBInterfaceDescription] {
        var configuration: UnsafeMutablePointer<libusb_config_descriptor>?
        if libusb_get_active_config_descriptor(device, &configuration) != 0 || configuration == nil {
            configuration = nil
            guard libusb_get_config_descriptor(device, 0, &configuration) == 0 else { return [] }
        }
        guard let configuration else { return [] }
        defer { libusb_free_config_descriptor(configuration) }
        var result: [USBInterfaceDescription] = []
        let config = configuration.pointee
        guard let interfaceArray = config.interface else { return [] }
        for interfaceIndex in 0..<Int(config.bNumInterfaces) {
            let interface = interfaceArray[interfaceIndex]
            guard let alternates = interface.altsetting else { continue }
            for alternateIndex in 0..<Int(interface.num_altsetting) {
                let alternate = alternates[alternateIndex]
                var endpoints: [USBEndpointDescription] = []
                if let endpointArray = alternate.endpoint {
                    for endpointIndex in 0..<Int(alternate.bNumEndpoints) {
                        let endpoint = endpointArray[endpointIndex]
                        endpoints.append(USBEndpointDescription(
                            address: endpoint.bEndpointAddress,
                            transferType: USBTransferType(rawValue: endpoint.bmAttributes & 0x03) ?? .bulk,
                            maxPacketSize: endpoint.wMaxPacketSize))
                    }
                }
                result.append(USBInterfaceDescription(
                    number: alternate.bInterfaceNumber, alternateSetting: alternate.bAlternateSetting,
                    interfaceClass: alternate.bInterfaceClass, interfaceSubclass: alternate.bInterfaceSubClass,
                    interfaceProtocol: alternate.bInterfaceProtocol, endpoints: endpoints))
            }
        }
        return result
    }

    /// Opens the device and reads its manufacturer, product and serial string descriptors (first
    /// language). Leaves the strings nil when the device cannot be opened (permissions) or answers
    /// with an error.
    static func readStringsFromDevice(_ device: OpaquePointer, descriptor: libusb_device_descriptor,
                                      into description: inout USBDeviceDescription, timeoutMilliseconds: UInt32) {
        let indexes = [descriptor.iManufacturer, descriptor.iProduct, descriptor.iSerialNumber]
        guard indexes.contains(where: { $0 != 0 }) else { return }
        var handle: OpaquePointer?
        guard libusb_open(device, &handle) == 0, let handle else { return }
        defer { libusb_close(handle) }
        guard let language = languageID(handle, timeoutMilliseconds: timeoutMilliseconds) else { return }
        description.manufacturer = string(handle, index: descriptor.iManufacturer, language: language,
                                          timeoutMilliseconds: timeoutMilliseconds)
        description.product = string(handle, index: descriptor.iProduct, language: language,
                                     timeoutMilliseconds: timeoutMilliseconds)
        description.serialNumber = string(handle, index: descriptor.iSerialNumber, language: language,
                                          timeoutMilliseconds: timeoutMilliseconds)
    }

    /// GET_DESCRIPTOR(STRING) as a control transfer: request type 0x80, request 6, value 0x03nn.
    private static func stringDescriptor(_ handle: OpaquePointer, index: UInt8, language: UInt16,
                                         timeoutMilliseconds: UInt32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 255)
        let count = buffer.withUnsafeMutableBufferPointer { pointer in
            libusb_control_transfer(handle, 0x80, 0x06, UInt16(0x0300) | UInt16(index), language,
                                    pointer.baseAddress, UInt16(pointer.count), timeoutMilliseconds)
        }
        // A string descriptor: bLength, bDescriptorType 3, then UTF-16LE code units.
        guard count >= 2, buffer[1] == 0x03 else { return nil }
        let length = min(Int(count), Int(buffer[0]))
        return length >= 2 ? Array(buffer[2..<length]) : nil
    }

    private static func languageID(_ handle: OpaquePointer, timeoutMilliseconds: UInt32) -> UInt16? {
        guard let body = stringDescriptor(handle, index: 0, language: 0, timeoutMilliseconds: timeoutMilliseconds),
              body.count >= 2 else { return nil }
        return UInt16(body[0]) | UInt16(body[1]) << 8
    }

    private static func string(_ handle: OpaquePointer, index: UInt8, language: UInt16,
                               timeoutMilliseconds: UInt32) -> String? {
        guard index != 0,
              let body = stringDescriptor(handle, index: index, language: language, timeoutMilliseconds: timeoutMilliseconds)
        else { return nil }
        let units = stride(from: 0, to: body.count - 1, by: 2).map { UInt16(body[$0]) | UInt16(body[$0 + 1]) << 8 }
        let text = String(decoding: units, as: UTF16.self).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }
}

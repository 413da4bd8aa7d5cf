import Foundation
import Transport

/// A minimal reader of usbmon pcapng files (LINKTYPE 220) for the tests: enough to turn the converted
/// SnoopyPro fixtures back into transfers and descriptors.
struct UsbmonCapture {
    /// One usbmon event (the 64-byte header's fields the tests need, and the data).
    struct Event {
        var urbID: UInt64
        var kind: UInt8          // 'S', 'C' or 'E'
        var transferType: UInt8  // 0 iso, 1 interrupt, 2 control, 3 bulk
        var endpoint: UInt8
        var setup: [UInt8]?
        var length: Int
        var data: [UInt8]
    }

    /// A transfer as the program saw it.
    enum Transfer {
        case controlIn(setup: [UInt8], data: [UInt8])
        case controlOut(setup: [UInt8], data: [UInt8])
        case input(endpoint: UInt8, data: [UInt8])
        case output(endpoint: UInt8, data: [UInt8])
    }

    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    var events: [Event] = []

    init(url: URL) throws {
        let bytes = [UInt8](try Data(contentsOf: url))
        var offset = 0
        var linkType: UInt16?
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        while offset + 12 <= bytes.count {
            let type = u32(offset)
            let length = Int(u32(offset + 4))
            guard length >= 12, offset + length <= bytes.count else {
                throw FormatError(description: "block at \(offset) has length \(length)")
            }
            switch type {
            case 0x0000_0001:
                linkType = UInt16(bytes[offset + 8]) | UInt16(bytes[offset + 9]) << 8
            case 0x0000_0006:
                guard linkType == 220 else { throw FormatError(description: "link type \(String(describing: linkType))") }
                let captured = Int(u32(offset + 20))
                let packet = Array(bytes[(offset + 28)..<(offset + 28 + captured)])
                events.append(try Self.event(packet))
            default:
                break
            }
            offset += length
        }
    }

    static func event(_ packet: [UInt8]) throws -> Event {
        guard packet.count >= 64 else { throw FormatError(description: "usbmon record of \(packet.count) bytes") }
        var urbID: UInt64 = 0
        for index in (0..<8).reversed() { urbID = urbID << 8 | UInt64(packet[index]) }
        let length = Int(packet[32]) | Int(packet[33]) << 8 | Int(packet[34]) << 16 | Int(packet[35]) << 24
        return Event(urbID: urbID, kind: packet[8], transferType: packet[9], endpoint: packet[10],
                     setup: packet[14] == 0 ? Array(packet[40..<48]) : nil, length: length,
                     data: Array(packet[64...]))
    }

    /// Transfers in completion order (Submit paired with Complete by URB id).
    var transfers: [Transfer] {
        var submits: [UInt64: Event] = [:]
        var result: [Transfer] = []
        for event in events {
            if event.kind == UInt8(ascii: "S") {
                submits[event.urbID] = event
                continue
            }
            guard event.kind == UInt8(ascii: "C"), let submit = submits.removeValue(forKey: event.urbID) else { continue }
            switch submit.transferType {
            case 2:
                let setup = submit.setup ?? []
                if setup.first.map({ $0 & 0x80 != 0 }) ?? false {
                    result.append(.controlIn(setup: setup, data: event.data))
                } else {
                    result.append(.controlOut(setup: setup, data: submit.data))
                }
            default:
                if submit.endpoint & 0x80 != 0 {
                    result.append(.input(endpoint: submit.endpoint, data: event.data))
                } else {
                    result.append(.output(endpoint: submit.endpoint, data: submit.data))
                }
            }
        }
        return result
    }

    /// The device as its captured descriptors describe it (ids, interfaces, endpoints).
    func deviceDescription(bus: UInt8 = 1, address: UInt8 = 2) -> USBDeviceDescription? {
        var description: USBDeviceDescription?
        for transfer in transfers {
            guard case .controlIn(let setup, let data) = transfer, setup.count == 8, setup[1] == 0x06 else { continue }
            if setup[3] == 0x01, data.count >= 18 {
                description = USBDeviceDescription(
                    vendorID: UInt16(data[8]) | UInt16(data[9]) << 8, productID: UInt16(data[10]) | UInt16(data[11]) << 8,
                    bus: bus, address: address, deviceClass: data[4])
            } else if setup[3] == 0x02, data.count > 9, description != nil {
                description?.interfaces = Self.interfaces(configuration: data)
            }
        }
        return description
    }

    static func interfaces(configuration data: [UInt8]) -> [USBInterfaceDescription] {
        var interfaces: [USBInterfaceDescription] = []
        var offset = 0
        while offset + 2 <= data.count, data[offset] > 0 {
            let length = Int(data[offset])
            if data[offset + 1] == 0x04, offset + 9 <= data.count {
                interfaces.append(USBInterfaceDescription(
                    number: data[offset + 2], alternateSetting: data[offset + 3], interfaceClass: data[offset + 5],
                    interfaceSubclass: data[offset + 6], interfaceProtocol: data[offset + 7], endpoints: []))
            } else if data[offset + 1] == 0x05, offset + 7 <= data.count, !interfaces.isEmpty {
                let type = USBTransferType(rawValue: data[offset + 3] & 0x03) ?? .bulk
                interfaces[interfaces.count - 1].endpoints.append(USBEndpointDescription(
                    address: data[offset + 2], transferType: type,
                    maxPacketSize: UInt16(data[offset + 4]) | UInt16(data[offset + 5]) << 8))
            }
            offset += length
        }
        return interfaces
    }
}

/// Where the test fixtures are.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Captures")

    static func url(_ relativePath: String) -> URL {
        directory.appendingPathComponent(relativePath)
    }
}

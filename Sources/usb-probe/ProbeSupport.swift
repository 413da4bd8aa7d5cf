import Foundation
import Transport

/// Line-buffered output on stdout, flushed per line so a killed probe still shows its progress.
struct ProbeOutput: Sendable {
    func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    func describe(_ device: USBDeviceDescription) {
        var text = "DEVICE \(device.idString)"
        if let bus = device.bus, let address = device.address { text += " bus \(bus) address \(address)" }
        text += " class \(Self.hex(device.deviceClass))"
        if let manufacturer = device.manufacturer { text += " manufacturer=\"\(manufacturer)\"" }
        if let product = device.product { text += " product=\"\(product)\"" }
        if let serial = device.serialNumber { text += " serial=\"\(serial)\"" }
        line(text)
        for interface in device.interfaces {
            line("  INTERFACE \(interface.number) alt \(interface.alternateSetting) class \(Self.hex(interface.interfaceClass))")
            for endpoint in interface.endpoints {
                line("    ENDPOINT \(Self.hex(endpoint.address)) \(endpoint.transferType) \(endpoint.isInput ? "in" : "out") max \(endpoint.maxPacketSize)")
            }
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return "0x" + (text.count == 1 ? "0" + text : text)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }

    /// The case of a USBError as one word, for tests to match.
    static func caseName(_ error: USBError) -> String {
        switch error {
        case .timeout: "timeout"
        case .noDevice: "noDevice"
        case .stall: "stall"
        case .accessDenied: "accessDenied"
        case .busy: "busy"
        case .notFound: "notFound"
        case .overflow: "overflow"
        case .io: "io"
        case .replayExhausted: "replayExhausted"
        case .other: "other"
        }
    }
}

/// Why the probe could not do what it was asked.
enum ProbeFailure: Error, CustomStringConvertible {
    case usage(String)
    case notFound(String)
    case badStep(String)
    case umockdev(String)

    var description: String {
        switch self {
        case .usage(let text): "usage: usb-probe \(text)"
        case .notFound(let ids): "no device \(ids)"
        case .badStep(let step): "bad step '\(step)'"
        case .umockdev(let text): "umockdev: \(text)"
        }
    }
}

/// `VID:PID` in hex.
struct DeviceIDs: Sendable, CustomStringConvertible {
    var vendorID: UInt16
    var productID: UInt16

    init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16) else {
            return nil
        }
        vendorID = vendor
        productID = product
    }

    func matches(_ device: USBDeviceDescription) -> Bool {
        device.vendorID == vendorID && device.productID == productID
    }

    var description: String { String(format: "%04x:%04x", vendorID, productID) }
}

/// Parses hex digits (spaces allowed) into bytes.
func bytes(fromHex text: String) -> [UInt8]? {
    let digits = text.filter { !$0.isWhitespace }
    guard digits.count % 2 == 0 else { return nil }
    var result: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
        result.append(byte)
        index = next
    }
    return result
}

/// One step of a probe session.
enum SessionStep {
    case claim
    case write([UInt8])
    case read(Int)
    case drain(Int)
    case control(setup: [UInt8], data: [UInt8])

    init(_ text: String) throws {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch parts[0] {
        case "claim" where parts.count == 1: self = .claim
        case "write" where parts.count == 2:
            guard let data = bytes(fromHex: parts[1]) else { throw ProbeFailure.badStep(text) }
            self = .write(data)
        case "read" where parts.count == 2:
            guard let length = Int(parts[1]) else { throw ProbeFailure.badStep(text) }
            self = .read(length)
        case "drain" where parts.count == 2:
            guard let length = Int(parts[1]) else { throw ProbeFailure.badStep(text) }
            self = .drain(length)
        case "control" where parts.count == 2 || parts.count == 3:
            guard let setup = bytes(fromHex: parts[1]), setup.count == 8,
                  let data = bytes(fromHex: parts.count == 3 ? parts[2] : "") else { throw ProbeFailure.badStep(text) }
            self = .control(setup: setup, data: data)
        default: throw ProbeFailure.badStep(text)
        }
    }
}

/// Runs steps against an opened device, with endpoints taken from its descriptors.
final class ProbeSession {
    let handle: any USBDeviceHandle
    let output: ProbeOutput
    let interface: USBInterfaceDescription
    let inEndpoint: USBEndpointDescription
    let outEndpoint: USBEndpointDescription
    let timeout: Duration

    init(handle: any USBDeviceHandle, output: ProbeOutput, timeout: Duration = .milliseconds(1000)) throws {
        self.handle = handle
        self.output = output
        self.timeout = timeout
        let dataEndpoint: (USBEndpointDescription) -> Bool = { $0.transferType == .bulk || $0.transferType == .interrupt }
        guard let interface = handle.device.interfaces.first(where: { interface in
            interface.endpoints.contains { dataEndpoint($0) && $0.isInput }
                && interface.endpoints.contains { dataEndpoint($0) && !$0.isInput }
        }), let inEndpoint = interface.endpoints.first(where: { dataEndpoint($0) && $0.isInput }),
            let outEndpoint = interface.endpoints.first(where: { dataEndpoint($0) && !$0.isInput })
        else {
            throw ProbeFailure.notFound("interface with IN and OUT data endpoints on \(handle.device)")
        }
        self.interface = interface
        self.inEndpoint = inEndpoint
        self.outEndpoint = outEndpoint
        output.line("ENDPOINTS interface \(interface.number) in \(ProbeOutput.hex(inEndpoint.address)) \(inEndpoint.transferType) out \(ProbeOutput.hex(outEndpoint.address)) \(outEndpoint.transferType)")
    }

    /// Runs the steps; a failed step prints its error and the session goes on.
    func run(_ steps: [SessionStep]) {
        for step in steps {
            do {
                try perform(step)
            } catch {
                output.line("ERROR \(ProbeOutput.caseName(error)): \(error)")
            }
        }
    }

    /// Runs one step.
    func perform(_ step: SessionStep) throws(USBError) {
        switch step {
        case .claim:
            try handle.claimInterface(interface.number, detachKernelDriver: interface.isHID)
            output.line("CLAIMED \(interface.number)\(interface.isHID ? " (HID: kernel driver detached if bound)" : "")")
        case .write(let data):
            let count = try handle.write(endpoint: outEndpoint.address, data: data, timeout: timeout)
            output.line("WROTE \(ProbeOutput.hex(outEndpoint.address)) \(outEndpoint.transferType) \(count) \(ProbeOutput.hex(data))")
        case .read(let length):
            let data = try handle.read(endpoint: inEndpoint.address, length: length, timeout: timeout)
            output.line("READ \(ProbeOutput.hex(inEndpoint.address)) \(inEndpoint.transferType) \(ProbeOutput.hex(data))")
        case .drain(let length):
            while true {
                let data = try handle.read(endpoint: inEndpoint.address, length: length, timeout: timeout)
                output.line("READ \(ProbeOutput.hex(inEndpoint.address)) \(inEndpoint.transferType) \(ProbeOutput.hex(data))")
            }
        case .control(let setup, let data):
            let requestType = setup[0]
            let value = UInt16(setup[2]) | UInt16(setup[3]) << 8
            let index = UInt16(setup[4]) | UInt16(setup[5]) << 8
            let length = Int(UInt16(setup[6]) | UInt16(setup[7]) << 8)
            let answer = try handle.controlTransfer(requestType: requestType, request: setup[1], value: value, index: index,
                                                    data: data, length: length, timeout: timeout)
            output.line("CONTROL \(ProbeOutput.hex(setup)) -> \(answer.isEmpty ? "ok" : ProbeOutput.hex(answer))")
        }
    }
}

extension ProbeOutput {
    static func caseName(_ error: any Error) -> String {
        if let usb = error as? USBError { return caseName(usb) }
        return "error"
    }
}

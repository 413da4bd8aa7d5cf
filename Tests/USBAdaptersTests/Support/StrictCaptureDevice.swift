import Foundation
import Transport

/// A strict replay of a usbmon capture for the tests: each write must equal the next captured OUT transfer
/// of that endpoint, each read gets the next captured IN transfer of that endpoint, class control transfers
/// must come in the captured order (standard ones the session does not make are passed over). A difference
/// is recorded in `mismatches` and fails the call. (The same rules as CaptureFormats' ReplayUSBDevice.)
final class StrictCaptureDevice: USBDeviceHandle {
    let device: USBDeviceDescription
    private var outputs: [UInt8: [[UInt8]]] = [:]
    private var inputs: [UInt8: [[UInt8]]] = [:]
    private var controls: [(setup: [UInt8], data: [UInt8])] = []
    private(set) var mismatches: [String] = []
    /// Writes and control transfers in order, with `deliver` markers from the test.
    private(set) var log: [String] = []

    init(capture url: URL) throws {
        let capture = try UsbmonCapture(url: url)
        guard let description = capture.deviceDescription() else {
            throw UsbmonCapture.FormatError(description: "no descriptors in \(url.lastPathComponent)")
        }
        device = description
        for transfer in capture.transfers {
            switch transfer {
            case .output(let endpoint, let data): outputs[endpoint, default: []].append(data)
            case .input(let endpoint, let data): inputs[endpoint, default: []].append(data)
            case .controlOut(let setup, let data): controls.append((setup, data))
            case .controlIn(let setup, let data): controls.append((setup, data))
            }
        }
    }

    /// Whether every captured transfer was used.
    var isFinished: Bool {
        outputs.values.allSatisfy(\.isEmpty) && inputs.values.allSatisfy(\.isEmpty)
            && controls.allSatisfy { $0.setup.first.map { $0 & 0x60 == 0 } ?? true }
    }

    func markDelivery() { log.append("deliver") }

    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        guard device.interfaces.contains(where: { $0.number == number }) else { throw .notFound("interface \(number)") }
    }

    func releaseInterface(_ number: UInt8) throws(USBError) {}

    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        let wLength = requestType & 0x80 != 0 ? length : data.count
        let setup = [requestType, request, UInt8(value & 0xFF), UInt8(value >> 8), UInt8(index & 0xFF), UInt8(index >> 8),
                     UInt8(wLength & 0xFF), UInt8(wLength >> 8)]
        log.append("control " + OmronExchangeDevice.hex(setup) + " " + OmronExchangeDevice.hex(data))
        while let next = controls.first {
            controls.removeFirst()
            if next.setup == setup {
                guard requestType & 0x80 != 0 || next.data == data else { return try mismatch("control data \(data)") }
                return requestType & 0x80 != 0 ? next.data : []
            }
            guard next.setup.first.map({ $0 & 0x60 == 0 }) ?? true else {
                return try mismatch("control \(OmronExchangeDevice.hex(setup)) where the capture has \(OmronExchangeDevice.hex(next.setup))")
            }
        }
        throw .replayExhausted("no control transfer left")
    }

    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        log.append("write " + OmronExchangeDevice.hex(data))
        guard let next = outputs[endpoint]?.first else { throw .replayExhausted("no OUT transfer left on \(endpoint)") }
        guard next == data else {
            _ = try mismatch("wrote \(OmronExchangeDevice.hex(data)) where the capture has \(OmronExchangeDevice.hex(next))")
            return 0
        }
        outputs[endpoint]?.removeFirst()
        return data.count
    }

    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        guard let next = inputs[endpoint]?.first else { throw .replayExhausted("no IN transfer left on \(endpoint)") }
        inputs[endpoint]?.removeFirst()
        return next
    }

    func close() {}

    private func mismatch(_ text: String) throws(USBError) -> [UInt8] {
        mismatches.append(text)
        throw .io("replay mismatch: \(text)")
    }
}

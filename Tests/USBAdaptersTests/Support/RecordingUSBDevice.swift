import TestSupport
import Transport

/// Forwards every call to another handle and logs writes, control transfers and the test's `deliver` markers in
/// order, so a test can see what the session sent around the commit.
final class RecordingUSBDevice: USBDeviceHandle {
    let inner: any USBDeviceHandle
    private(set) var log: [String] = []

    init(wrapping inner: any USBDeviceHandle) {
        self.inner = inner
    }

    var device: USBDeviceDescription { inner.device }

    func markDelivery() { log.append("deliver") }

    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        try inner.claimInterface(number, detachKernelDriver: detachKernelDriver)
    }

    func releaseInterface(_ number: UInt8) throws(USBError) { try inner.releaseInterface(number) }

    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        log.append("control " + OmronExchangeDevice.hex(data))
        return try inner.controlTransfer(requestType: requestType, request: request, value: value, index: index, data: data,
                                         length: length, timeout: timeout)
    }

    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        log.append("write " + OmronExchangeDevice.hex(data))
        return try inner.write(endpoint: endpoint, data: data, timeout: timeout)
    }

    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        try inner.read(endpoint: endpoint, length: length, timeout: timeout)
    }

    func close() { inner.close() }
}

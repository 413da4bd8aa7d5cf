import CLibUSB
import Synchronization
import Transport

/// An opened USB device through libusb: claims interfaces (detaching a kernel driver only when
/// asked, re-attaching it on release) and runs control, bulk and interrupt transfers, picking
/// the libusb call from the endpoint's descriptor.
///
/// Calls block the calling thread until done or timed out. A device that is pulled out makes the
/// pending and later calls fail with `USBError.noDevice`.
public final class LibUSBDeviceHandle: USBDeviceHandle, @unchecked Sendable {
    // @unchecked: `handle` is an immutable pointer to a libusb_device_handle (libusb allows
    // transfers on one handle from several threads); the claim bookkeeping is behind a Mutex.

    public let device: USBDeviceDescription
    /// Keeps the libusb context alive as long as the handle.
    private let context: LibUSBContext
    private let handle: OpaquePointer
    /// Endpoint address to its transfer type, from the configuration descriptor.
    private let endpointTypes: [UInt8: USBTransferType]
    private let state = Mutex(ClaimState())

    private struct ClaimState {
        var claimed: Set<UInt8> = []
        /// Interfaces whose kernel driver this handle detached (to re-attach on release).
        var detached: Set<UInt8> = []
        var closed = false
    }

    init(context: LibUSBContext, handle: OpaquePointer, device: USBDeviceDescription) {
        self.context = context
        self.handle = handle
        self.device = device
        var types: [UInt8: USBTransferType] = [:]
        for interface in device.interfaces {
            for endpoint in interface.endpoints where types[endpoint.address] == nil {
                types[endpoint.address] = endpoint.transferType
            }
        }
        self.endpointTypes = types
    }

    deinit { close() }

    /// The kernel driver state of an interface: libusb reports 1 (a driver is bound), 0 (none),
    /// or an error. "Not supported" and the generic error some environments give (umockdev,
    /// other platforms) mean there is no driver we could detach.
    public func kernelDriverActive(on interface: UInt8) throws(USBError) -> Bool {
        let code = libusb_kernel_driver_active(handle, Int32(interface))
        switch code {
        case 1: return true
        case 0, LIBUSB_ERROR_NOT_SUPPORTED.rawValue, LIBUSB_ERROR_OTHER.rawValue, LIBUSB_ERROR_NOT_FOUND.rawValue:
            return false
        default: throw USBError(libusbCode: code, what: "kernel driver state of interface \(interface) of \(device)")
        }
    }

    public func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        try checkOpen()
        var detached = false
        if detachKernelDriver, try kernelDriverActive(on: number) {
            let code = libusb_detach_kernel_driver(handle, Int32(number))
            if code != 0, code != LIBUSB_ERROR_NOT_FOUND.rawValue {
                throw USBError(libusbCode: code, what: "detaching the kernel driver of interface \(number) of \(device)")
            }
            detached = code == 0
        }
        let code = libusb_claim_interface(handle, Int32(number))
        guard code == 0 else {
            if detached { _ = libusb_attach_kernel_driver(handle, Int32(number)) }
            throw USBError(libusbCode: code, what: "claiming interface \(number) of \(device)")
        }
        state.withLock { state in
            state.claimed.insert(number)
            if detached { state.detached.insert(number) }
        }
    }

    public func releaseInterface(_ number: UInt8) throws(USBError) {
        let (wasClaimed, reattach) = state.withLock { state in
            (state.claimed.remove(number) != nil, state.detached.remove(number) != nil)
        }
        guard wasClaimed else { return }
        let code = libusb_release_interface(handle, Int32(number))
        if reattach { _ = libusb_attach_kernel_driver(handle, Int32(number)) }
        // A device that is gone has nothing left to release.
        if code != 0, code != LIBUSB_ERROR_NO_DEVICE.rawValue, code != LIBUSB_ERROR_NOT_FOUND.rawValue {
            throw USBError(libusbCode: code, what: "releasing interface \(number) of \(device)")
        }
    }

    public func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                                length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        try checkOpen()
        let isInput = requestType & 0x80 != 0
        let size = isInput ? length : data.count
        guard size >= 0, size <= Int(UInt16.max) else {
            throw USBError.io("control transfer of \(size) bytes is longer than a USB control transfer can be")
        }
        var buffer = isInput ? [UInt8](repeating: 0, count: size) : data
        let milliseconds = Self.milliseconds(timeout)
        let code = buffer.withUnsafeMutableBufferPointer { pointer in
            libusb_control_transfer(handle, requestType, request, value, index, pointer.baseAddress,
                                    UInt16(size), milliseconds)
        }
        guard code >= 0 else {
            throw USBError(libusbCode: code, endpoint: requestType & 0x80,
                           what: "control transfer \(Self.hex([requestType, request])) to \(device)")
        }
        return isInput ? Array(buffer.prefix(Int(code))) : []
    }

    public func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        try checkOpen()
        guard endpoint & 0x80 == 0 else {
            throw USBError.notFound("endpoint \(Self.hex([endpoint])) is an IN endpoint; write needs an OUT endpoint")
        }
        var buffer = data
        let (code, transferred) = try transfer(endpoint: endpoint, buffer: &buffer, timeout: timeout)
        // A timeout after part of the data went out still reports what was sent.
        if code == LIBUSB_ERROR_TIMEOUT.rawValue, transferred > 0 { return transferred }
        guard code == 0 else {
            throw USBError(libusbCode: code, endpoint: endpoint, what: "writing to endpoint \(Self.hex([endpoint])) of \(device)")
        }
        return transferred
    }

    public func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        try checkOpen()
        guard endpoint & 0x80 != 0 else {
            throw USBError.notFound("endpoint \(Self.hex([endpoint])) is an OUT endpoint; read needs an IN endpoint")
        }
        guard length > 0, length <= Int(Int32.max) else { throw USBError.io("read of \(length) bytes") }
        var buffer = [UInt8](repeating: 0, count: length)
        let (code, transferred) = try transfer(endpoint: endpoint, buffer: &buffer, timeout: timeout)
        // Bytes that arrived before a timeout are data the device will not send again.
        if code == LIBUSB_ERROR_TIMEOUT.rawValue, transferred > 0 { return Array(buffer.prefix(transferred)) }
        guard code == 0 else {
            throw USBError(libusbCode: code, endpoint: endpoint, what: "reading from endpoint \(Self.hex([endpoint])) of \(device)")
        }
        return Array(buffer.prefix(transferred))
    }

    /// The transfer type of an endpoint according to the device's descriptors.
    public func transferType(of endpoint: UInt8) -> USBTransferType? { endpointTypes[endpoint] }

    /// Runs the bulk or interrupt transfer the endpoint's descriptor calls for.
    private func transfer(endpoint: UInt8, buffer: inout [UInt8], timeout: Duration) throws(USBError) -> (Int32, Int) {
        guard let type = endpointTypes[endpoint] else {
            throw USBError.notFound("endpoint \(Self.hex([endpoint])) is not in the descriptors of \(device)")
        }
        guard buffer.count <= Int(Int32.max) else { throw USBError.io("transfer of \(buffer.count) bytes") }
        let handle = self.handle
        let milliseconds = Self.milliseconds(timeout)
        var transferred: Int32 = 0
        let code: Int32
        switch type {
        case .bulk:
            code = buffer.withUnsafeMutableBufferPointer { pointer in
                libusb_bulk_transfer(handle, endpoint, pointer.baseAddress, Int32(pointer.count), &transferred, milliseconds)
            }
        case .interrupt:
            code = buffer.withUnsafeMutableBufferPointer { pointer in
                libusb_interrupt_transfer(handle, endpoint, pointer.baseAddress, Int32(pointer.count), &transferred, milliseconds)
            }
        case .control, .isochronous:
            throw USBError.notFound("endpoint \(Self.hex([endpoint])) is \(type); only bulk and interrupt endpoints are read or written")
        }
        return (code, Int(max(0, transferred)))
    }

    public func close() {
        let (wasOpen, claimed, detached) = state.withLock { state in
            defer {
                state.closed = true
                state.claimed.removeAll()
                state.detached.removeAll()
            }
            return (!state.closed, state.claimed, state.detached)
        }
        guard wasOpen else { return }
        for number in claimed.sorted() {
            _ = libusb_release_interface(handle, Int32(number))
            if detached.contains(number) { _ = libusb_attach_kernel_driver(handle, Int32(number)) }
        }
        libusb_close(handle)
    }

    private func checkOpen() throws(USBError) {
        if state.withLock({ $0.closed }) { throw USBError.io("\(device) was closed") }
    }

    /// A libusb timeout in milliseconds: at least 1 (libusb's 0 means "wait forever").
    static func milliseconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 1 }
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return UInt32.max }
        let milliseconds = total.partialValue + attoseconds / 1_000_000_000_000_000
        return UInt32(clamping: max(1, milliseconds))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let text = String(byte, radix: 16)
            return "0x" + (text.count == 1 ? "0" + text : text)
        }.joined(separator: " ")
    }
}

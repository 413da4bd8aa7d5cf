import Foundation
import Synchronization
import Transport

extension USBMonEvent {
    /// The event as a usbmon frame (header, then the captured data) in the given layout and
    /// byte order: what a `LINKTYPE_USB_LINUX` (189) or `_MMAPPED` (220) packet holds.
    ///
    /// The setup flag (header byte 14) is 0 when ``setup`` is set, `-` otherwise; the data flag
    /// (byte 15) is ``dataFlag``. Isochronous descriptors are not written.
    public func frame(layout: USBMonHeaderLayout = .memoryMapped, bigEndian: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(layout.headerLength + data.count)
        func append<Value: FixedWidthInteger>(_ value: Value) {
            var stored = bigEndian ? value.bigEndian : value.littleEndian
            withUnsafeBytes(of: &stored) { bytes.append(contentsOf: $0) }
        }
        append(urbID)
        bytes.append(type.rawValue)
        bytes.append(Self.usbmonNumber(transferType))
        bytes.append(endpoint)
        bytes.append(device)
        append(bus)
        bytes.append(setup == nil ? 0x2D : 0)
        bytes.append(dataFlag)
        let seconds = timestamp >= 0 ? timestamp / 1_000_000 : (timestamp - 999_999) / 1_000_000
        append(seconds)
        append(Int32(truncatingIfNeeded: timestamp - seconds * 1_000_000))
        append(status)
        append(UInt32(truncatingIfNeeded: length))
        append(UInt32(truncatingIfNeeded: data.count))
        if let setup {
            bytes.append(contentsOf: setup.bytes)
        } else {
            append(isochronousErrorCount ?? 0)
            append(Int32(0))
        }
        if layout == .memoryMapped {
            append(interval ?? 0)
            append(startFrame ?? 0)
            append(transferFlags ?? 0)
            append(UInt32(0))  // no isochronous descriptors follow
        }
        bytes.append(contentsOf: data)
        return bytes
    }

    /// usbmon numbers transfer types as the kernel's pipe types: 0 isochronous, 1 interrupt,
    /// 2 control, 3 bulk.
    static func usbmonNumber(_ type: USBTransferType) -> UInt8 {
        switch type {
        case .isochronous: 0
        case .interrupt: 1
        case .control: 2
        case .bulk: 3
        }
    }
}

/// Standard descriptors (USB 2.0 §9.6) made from a ``USBDeviceDescription``, for a recording
/// that starts with the GET_DESCRIPTOR exchanges a replay learns the device from.
public enum USBDescriptorBuilder {
    /// String descriptor indexes used for the manufacturer, product and serial number.
    public static let manufacturerIndex: UInt8 = 1
    public static let productIndex: UInt8 = 2
    public static let serialNumberIndex: UInt8 = 3

    /// The 18-byte DEVICE descriptor: USB 2.0, the description's class, ids and (when it has
    /// them) string indexes 1-3, one configuration.
    public static func device(_ device: USBDeviceDescription) -> [UInt8] {
        [18, 0x01, 0x00, 0x02, device.deviceClass, 0, 0, 64]
            + le16(device.vendorID) + le16(device.productID) + le16(0x0100)
            + [device.manufacturer == nil ? 0 : manufacturerIndex, device.product == nil ? 0 : productIndex,
               device.serialNumber == nil ? 0 : serialNumberIndex, 1]
    }

    /// The CONFIGURATION descriptor set: configuration 1, then each interface (alternate
    /// setting) with its endpoints in the order of the description.
    public static func configuration(_ device: USBDeviceDescription) -> [UInt8] {
        var body: [UInt8] = []
        for interface in device.interfaces {
            body += [9, 0x04, interface.number, interface.alternateSetting, UInt8(clamping: interface.endpoints.count),
                     interface.interfaceClass, interface.interfaceSubclass, interface.interfaceProtocol, 0]
            for endpoint in interface.endpoints {
                let interval: UInt8 = endpoint.transferType == .interrupt || endpoint.transferType == .isochronous ? 1 : 0
                body += [7, 0x05, endpoint.address, endpoint.transferType.rawValue] + le16(endpoint.maxPacketSize)
                    + [interval]
            }
        }
        let interfaceCount = Set(device.interfaces.map(\.number)).count
        let total = UInt16(clamping: 9 + body.count)
        return [9, 0x02] + le16(total) + [UInt8(clamping: interfaceCount), 1, 0, 0x80, 50] + body
    }

    /// A STRING descriptor: UTF-16LE text, cut to fit the one-byte length.
    public static func string(_ text: String) -> [UInt8] {
        var body: [UInt8] = []
        for unit in text.utf16 {
            guard body.count + 2 <= 253 else { break }
            body += le16(unit)
        }
        return [UInt8(2 + body.count), 0x03] + body
    }

    /// STRING descriptor 0: the supported languages (US English only).
    public static let languages: [UInt8] = [4, 0x03, 0x09, 0x04]

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
}

/// Records what a session does with a USB device as usbmon events (LINKTYPE 220, 64-byte
/// headers) into a ``PcapNGWriter``, so the recording reads back with ``USBMonReader`` and
/// replays with ``ReplayUSBDevice`` as if Wireshark had captured it on usbmon.
///
/// Each transfer becomes a submission ('S') and a completion ('C', or 'E' when the submission
/// itself failed) with a fresh URB id. Safe to use from several threads: events are written
/// in the order they are recorded. A failing file write does not disturb the session: the
/// first write error is kept and thrown by ``close()``.
public final class USBMonRecorder: Sendable {
    /// The place of the recorded device in the capture.
    public let bus: UInt16
    public let address: UInt8

    private struct State {
        var writer: PcapNGWriter
        var closed = false
        var nextURB: UInt64 = 0xFFFF_8880_0000_0000
        var submissions = 0
        var completions = 0
        var writeError: CaptureError?
    }

    private let state: Mutex<State>
    private let clock: @Sendable () -> Int64

    /// - Parameters:
    ///   - writer: a writer for LINKTYPE 220 (``LinkType/usbLinuxMMapped``); the recorder owns it.
    ///   - bus: the bus number written in every event (nonzero).
    ///   - address: the device address written in every event (nonzero: address 0 is a device
    ///     that is still being enumerated).
    ///   - clock: the event time in microseconds since 1970 (the wall clock by default).
    public init(writer: sending PcapNGWriter, bus: UInt16, address: UInt8,
                clock: @escaping @Sendable () -> Int64 = USBMonRecorder.wallClock) {
        self.bus = bus
        self.address = address
        self.clock = clock
        state = Mutex(State(writer: writer))
    }

    /// Microseconds since 1970 from the system clock.
    public static let wallClock: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// The recording so far, for a recorder whose writer collects the file in memory
    /// (``PcapNGWriter/init(linkType:)``); empty for a file writer.
    public var bytes: [UInt8] { state.withLock { $0.writer.bytes } }

    /// Completed (or failed) transfers recorded so far.
    public var transfers: Int { state.withLock { $0.completions } }

    /// Records the GET_DESCRIPTOR exchanges a host makes when the device appears: DEVICE, the
    /// CONFIGURATION set and the strings the description has, built by ``USBDescriptorBuilder``.
    /// A replay of the recording learns the ids, strings and interfaces from them.
    public func recordEnumeration(of device: USBDeviceDescription) {
        recordDescriptorRead(type: 0x01, index: 0, language: 0, USBDescriptorBuilder.device(device))
        recordDescriptorRead(type: 0x02, index: 0, language: 0, USBDescriptorBuilder.configuration(device))
        let strings: [(UInt8, String?)] = [
            (USBDescriptorBuilder.manufacturerIndex, device.manufacturer),
            (USBDescriptorBuilder.productIndex, device.product),
            (USBDescriptorBuilder.serialNumberIndex, device.serialNumber),
        ]
        guard strings.contains(where: { $0.1 != nil }) else { return }
        recordDescriptorRead(type: 0x03, index: 0, language: 0, USBDescriptorBuilder.languages, requested: 255)
        for case let (index, text?) in strings {
            recordDescriptorRead(type: 0x03, index: index, language: 0x0409, USBDescriptorBuilder.string(text),
                                 requested: 255)
        }
    }

    private func recordDescriptorRead(type: UInt8, index: UInt8, language: UInt16, _ bytes: [UInt8],
                                      requested: UInt16? = nil) {
        let setup = USBSetupPacket(requestType: 0x80, request: 0x06, value: UInt16(type) << 8 | UInt16(index),
                                   index: language, length: requested ?? UInt16(clamping: bytes.count))
        let urb = submit(endpoint: 0x80, transferType: .control, setup: setup, outData: [], requested: Int(setup.length))
        complete(urb, status: 0, length: bytes.count, inData: bytes)
    }

    /// Records a submission and returns its URB for ``complete(_:status:length:inData:)``.
    /// - Parameters:
    ///   - endpoint: with the direction bit; 0x80 / 0x00 for control transfers.
    ///   - outData: OUT data (empty for IN transfers).
    ///   - requested: the URB length (bytes to send or room to receive).
    public func submit(endpoint: UInt8, transferType: USBTransferType, setup: USBSetupPacket?, outData: [UInt8],
                       requested: Int) -> USBMonURB {
        let isInput = endpoint & 0x80 != 0
        return state.withLock { state in
            state.nextURB += 0x40
            let urb = USBMonURB(id: state.nextURB, endpoint: endpoint, transferType: transferType)
            state.submissions += 1
            let event = USBMonEvent(
                urbID: urb.id, type: .submit, transferType: transferType, endpoint: endpoint, device: address, bus: bus,
                setup: setup, timestamp: clock(), status: -115, length: requested, data: isInput ? [] : outData,
                dataFlag: isInput ? 0x3C : 0, interval: transferType == .interrupt ? 1 : 0, startFrame: 0,
                transferFlags: 0, isochronousDescriptorCount: 0)
            Self.write(event, state: &state)
            return urb
        }
    }

    /// Records the completion of a submitted URB.
    /// - Parameters:
    ///   - status: 0, or a negative errno as usbmon reports it (-32 stall, -2 unlinked after a timeout ...).
    ///   - length: bytes transferred.
    ///   - inData: IN data (empty for OUT transfers).
    ///   - submissionFailed: the submission itself failed (an 'E' event, e.g. -19 for a device that is gone).
    public func complete(_ urb: USBMonURB, status: Int32, length: Int, inData: [UInt8], submissionFailed: Bool = false) {
        let isInput = urb.endpoint & 0x80 != 0
        state.withLock { state in
            state.completions += 1
            let event = USBMonEvent(
                urbID: urb.id, type: submissionFailed ? .error : .complete, transferType: urb.transferType,
                endpoint: urb.endpoint, device: address, bus: bus, timestamp: clock(), status: status,
                length: isInput ? inData.count : length, data: isInput ? inData : [],
                dataFlag: isInput ? 0 : 0x3E, interval: urb.transferType == .interrupt ? 1 : 0, startFrame: 0,
                transferFlags: 0, isochronousDescriptorCount: 0)
            Self.write(event, state: &state)
        }
    }

    /// Flushes the buffered events to the file.
    public func flush() throws(CaptureError) {
        try state.withLock { state throws(CaptureError) in
            if let error = state.writeError { throw error }
            guard !state.closed else { return }
            try state.writer.flush()
        }
    }

    /// Writes what is buffered and closes the file; throws the first write error of the
    /// recording, if any. Later events are dropped.
    public func close() throws(CaptureError) {
        try state.withLock { state throws(CaptureError) in
            guard !state.closed else { return }
            state.closed = true
            if let error = state.writeError {
                try? state.writer.close()
                throw error
            }
            try state.writer.close()
        }
    }

    private static func write(_ event: USBMonEvent, state: inout State) {
        guard !state.closed, state.writeError == nil else { return }
        do {
            try state.writer.write(timestamp: event.timestamp, packet: event.frame())
        } catch {
            state.writeError = error
        }
    }
}

/// A URB a ``USBMonRecorder`` submitted and that waits for its completion.
public struct USBMonURB: Hashable, Sendable {
    public var id: UInt64
    public var endpoint: UInt8
    public var transferType: USBTransferType
}

/// A `USBDeviceHandle` that passes every call to another handle (libusb, a replay) and records
/// each transfer with a ``USBMonRecorder``: what `ingestd capture --usb` writes.
///
/// Errors are recorded the way usbmon shows them: a stall as status -32 (EPIPE), a timeout as
/// -2 (the URB unlinked), a device that left as a failed submission (-19); a replay that has no
/// answer leaves the submission without completion, like a capture that ended first.
///
/// `@unchecked Sendable`: its own state lives in the recorder (locked); concurrent calls are as
/// safe as the wrapped handle's (libusb allows them).
public final class RecordingUSBDeviceHandle: USBDeviceHandle, @unchecked Sendable {
    public let device: USBDeviceDescription
    /// The wrapped handle.
    public let inner: any USBDeviceHandle
    /// Where transfers are recorded.
    public let recorder: USBMonRecorder
    private let endpointTypes: [UInt8: USBTransferType]

    /// Wraps `inner`. Call ``USBMonRecorder/recordEnumeration(of:)`` first for a recording a
    /// replay can identify.
    public init(wrapping inner: any USBDeviceHandle, recorder: USBMonRecorder) {
        self.inner = inner
        self.recorder = recorder
        device = inner.device
        var types: [UInt8: USBTransferType] = [:]
        for interface in inner.device.interfaces {
            for endpoint in interface.endpoints where types[endpoint.address] == nil {
                types[endpoint.address] = endpoint.transferType
            }
        }
        endpointTypes = types
    }

    public func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        try inner.claimInterface(number, detachKernelDriver: detachKernelDriver)
    }

    public func releaseInterface(_ number: UInt8) throws(USBError) {
        try inner.releaseInterface(number)
    }

    public func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                                length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        let isInput = requestType & 0x80 != 0
        let setup = USBSetupPacket(requestType: requestType, request: request, value: value, index: index,
                                   length: UInt16(clamping: isInput ? length : data.count))
        let urb = recorder.submit(endpoint: requestType & 0x80, transferType: .control, setup: setup,
                                  outData: isInput ? [] : data, requested: Int(setup.length))
        do {
            let answer = try inner.controlTransfer(requestType: requestType, request: request, value: value,
                                                   index: index, data: data, length: length, timeout: timeout)
            recorder.complete(urb, status: 0, length: isInput ? answer.count : data.count, inData: isInput ? answer : [])
            return answer
        } catch {
            record(error, for: urb)
            throw error
        }
    }

    public func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        let urb = recorder.submit(endpoint: endpoint, transferType: endpointTypes[endpoint] ?? .bulk, setup: nil,
                                  outData: data, requested: data.count)
        do {
            let sent = try inner.write(endpoint: endpoint, data: data, timeout: timeout)
            recorder.complete(urb, status: 0, length: sent, inData: [])
            return sent
        } catch {
            record(error, for: urb)
            throw error
        }
    }

    public func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        let urb = recorder.submit(endpoint: endpoint, transferType: endpointTypes[endpoint] ?? .bulk, setup: nil,
                                  outData: [], requested: length)
        do {
            let received = try inner.read(endpoint: endpoint, length: length, timeout: timeout)
            recorder.complete(urb, status: 0, length: received.count, inData: received)
            return received
        } catch {
            record(error, for: urb)
            throw error
        }
    }

    /// The wrapped handle's (recording changes nothing about what it is).
    public func priorHostWrites(endpoint: UInt8) -> [[UInt8]]? { inner.priorHostWrites(endpoint: endpoint) }
    public var answersWrites: Bool { inner.answersWrites }

    public func close() {
        inner.close()
    }

    private func record(_ error: USBError, for urb: USBMonURB) {
        switch error {
        case .replayExhausted:
            return  // the capture being replayed had no answer: the URB stays pending
        case .noDevice:
            recorder.complete(urb, status: -19, length: 0, inData: [], submissionFailed: true)
        case .notFound, .accessDenied, .busy:
            recorder.complete(urb, status: -22, length: 0, inData: [], submissionFailed: true)
        default:
            recorder.complete(urb, status: Self.urbStatus(for: error), length: 0, inData: [])
        }
    }

    /// The usbmon status of a transfer that ended with `error`.
    static func urbStatus(for error: USBError) -> Int32 {
        switch error {
        case .timeout: -2        // ENOENT: usbfs unlinks the URB when the timeout expires
        case .stall: -32         // EPIPE
        case .noDevice: -19      // ENODEV
        case .overflow: -75      // EOVERFLOW
        case .notFound, .accessDenied, .busy: -22  // EINVAL
        case .io, .replayExhausted, .other: -71    // EPROTO
        }
    }
}

import Synchronization
import Transport

/// A `USBDeviceHandle` that answers an adapter session from a usbmon capture, so the session's
/// code runs unchanged against recorded traffic.
///
/// Two modes (`USBReplayMode`). **Strict** (for tests of our own sessions on captures made in
/// their exact order):
/// - Each `write` must equal the next captured OUT submission on that endpoint; a difference is
///   an error naming both byte strings and the record's file offset.
/// - Each `read` returns the next captured IN completion on that endpoint (in completion order),
///   or the error its status records (-EPIPE → `.stall`, -ENODEV → `.noDevice` ...).
/// - Control transfers are matched by their 8 setup bytes (and OUT data). Standard requests in
///   the capture that the session does not make (the kernel's enumeration) are passed over.
/// - When the capture has nothing more for a request: `USBError.replayExhausted`, which ends a
///   receive loop the way a pulled-out device ends a live one.
///
/// **Tolerant** (for `ingestd decode` / `replay` of captures that other software made, with its
/// own start-up and extra requests): the device keeps a position in the capture.
/// - A `write` moves the position forward to the next captured OUT submission on that endpoint
///   with the same bytes, passing over the exchanges in between; when no such write lies ahead it
///   is accepted without moving and counted in `writesNotInCapture`.
/// - A `read` returns the next captured IN completion on that endpoint after the position and
///   moves the position past it (a completion longer than the read is served over several reads).
/// - Control transfers are found by their setup bytes (and OUT data) the same way; an IN request
///   the capture never answered ahead is answered from an identical earlier one (descriptors do not
///   change), else it ends with `replayExhausted`.
///
/// Time never comes from the wall clock: `timestamp` is the capture time of the last answer.
public final class ReplayUSBDevice: USBDeviceHandle, Sendable {
    public let device: USBDeviceDescription
    /// The bus and address of the replayed device in the capture.
    public let bus: UInt16
    public let address: UInt8
    /// How closely the session must follow the capture.
    public let mode: USBReplayMode
    private let state: Mutex<ReplayState>
    private let timeline: Mutex<ReplayTimeline>
    /// OUT data per endpoint, in capture order (for `capturedHostWrites`).
    private let hostWrites: [UInt8: [[UInt8]]]

    /// One URB of the replayed device: its submission and (if captured) how it ended.
    struct Transfer: Sendable {
        var endpoint: UInt8
        var transferType: USBTransferType
        var setup: USBSetupPacket?
        /// OUT data (from the submission).
        var submittedData: [UInt8]
        var requestedLength: Int
        var submitOffset: Int
        var completion: Completion?
    }

    struct Completion: Sendable {
        var status: Int32
        var length: Int
        /// IN data (from the completion).
        var data: [UInt8]
        var timestamp: Int64
    }

    struct ReplayState: Sendable {
        var outQueues: [UInt8: [Transfer]] = [:]
        var inQueues: [UInt8: [Transfer]] = [:]
        var control: [Transfer] = []
        var claimed: Set<UInt8> = []
        var closed = false
        var timestamp: Int64?
    }

    /// Replays the traffic of the device at `bus`/`address` in `events`, presented to the
    /// session as `device` (from `USBCaptureDevice.description()`, or with forced ids).
    public init(events: [USBMonEvent], bus: UInt16, address: UInt8, device: USBDeviceDescription,
                mode: USBReplayMode = .strict) {
        self.device = device
        self.bus = bus
        self.address = address
        self.mode = mode
        let own = events.filter { $0.bus == bus && $0.device == address }
        state = Mutex(mode == .strict ? Self.transfers(of: own) : ReplayState())
        let timeline = mode == .tolerant ? ReplayTimeline(events: own) : ReplayTimeline(events: [])
        self.timeline = Mutex(timeline)
        var writes: [UInt8: [[UInt8]]] = [:]
        for event in own where event.type == .submit && !event.isInput && event.transferType != .control {
            writes[event.endpoint, default: []].append(event.data)
        }
        hostWrites = writes
    }

    /// Opens a capture file and replays the device `--usb VID:PID` names, or (without ids) the
    /// one device whose descriptors are in the capture and that carried bulk or interrupt traffic.
    public static func open(path: String, vendorID: UInt16? = nil, productID: UInt16? = nil,
                            mode: USBReplayMode = .strict) throws(USBReplayOpenError) -> ReplayUSBDevice {
        let events: [USBMonEvent]
        do {
            events = try USBMonReader(path: path).readAll()
        } catch {
            throw .capture(error)
        }
        return try replaying(events, vendorID: vendorID, productID: productID, mode: mode)
    }

    /// As `open(path:)` for events already read.
    public static func replaying(_ events: [USBMonEvent], vendorID: UInt16? = nil, productID: UInt16? = nil,
                                 mode: USBReplayMode = .strict) throws(USBReplayOpenError) -> ReplayUSBDevice {
        let devices = USBCaptureDevices(events: events)
        let chosen: USBCaptureDevice
        if let vendorID, let productID {
            do {
                chosen = try devices.select(vendorID: vendorID, productID: productID)
            } catch {
                throw .selection(error)
            }
        } else {
            let described = devices.devices.filter { device in
                device.vendorID != nil && device.address != 0
                    && device.endpointsInTraffic.values.contains { $0 == .bulk || $0 == .interrupt }
            }
            guard described.count == 1 else {
                throw .needsIDs(devices: devices.devices.map(\.description))
            }
            chosen = described[0]
        }
        guard let description = chosen.description(vendorID: vendorID, productID: productID) else {
            throw .needsIDs(devices: devices.devices.map(\.description))
        }
        return ReplayUSBDevice(events: events, bus: chosen.bus, address: chosen.address, device: description,
                               mode: mode)
    }

    /// The capture time (microseconds since 1970) of the last completion served, nil before any.
    public var timestamp: Int64? {
        mode == .strict ? state.withLock { $0.timestamp } : timeline.withLock { $0.timestamp }
    }

    /// Tolerant mode: the session's writes (bulk, interrupt and OUT control transfers) that had no
    /// identical transfer ahead in the capture and were accepted without moving.
    public var writesNotInCapture: Int { timeline.withLock { $0.writesNotInCapture } }

    /// The data of every captured OUT transfer (bulk or interrupt) to `endpoint`, in capture order.
    public func capturedHostWrites(endpoint: UInt8) -> [[UInt8]] { hostWrites[endpoint] ?? [] }
    /// The captured host's writes to `endpoint` (a playback always has a record, possibly empty).
    public func priorHostWrites(endpoint: UInt8) -> [[UInt8]]? { capturedHostWrites(endpoint: endpoint) }
    /// A playback answers what was captured, whatever the session writes.
    public var answersWrites: Bool { false }

    /// Whether every captured transfer of the device has been consumed (standard control
    /// requests the session never made do not count); tolerant: whether no IN completion or OUT
    /// submission lies ahead of the position.
    public var isFinished: Bool {
        if mode == .tolerant { return timeline.withLock { $0.isFinished } }
        return state.withLock { state in
            state.outQueues.values.allSatisfy(\.isEmpty) && state.inQueues.values.allSatisfy(\.isEmpty)
                && state.control.allSatisfy { $0.setup?.isStandard ?? true }
        }
    }

    public func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        try state.withLock { state throws(USBError) in
            guard !state.closed else { throw USBError.noDevice }
            if !device.interfaces.isEmpty, !device.interfaces.contains(where: { $0.number == number }) {
                throw USBError.notFound("interface \(number) is not in the descriptors of \(device)")
            }
            state.claimed.insert(number)
        }
    }

    public func releaseInterface(_ number: UInt8) throws(USBError) {
        _ = state.withLock { $0.claimed.remove(number) }
    }

    public func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                                length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        let isInput = requestType & 0x80 != 0
        let setup = USBSetupPacket(requestType: requestType, request: request, value: value, index: index,
                                   length: UInt16(clamping: isInput ? length : data.count))
        if mode == .tolerant {
            return try timeline.withLock { timeline throws(USBError) in
                try timeline.control(setup, data: data, length: length)
            }
        }
        return try state.withLock { state throws(USBError) -> [UInt8] in
            guard !state.closed else { throw USBError.noDevice }
            // The next control transfer with these setup bytes; standard requests before it are
            // the kernel's and are passed over, anything else before it means a different order.
            var position = 0
            while position < state.control.count {
                let candidate = state.control[position]
                if candidate.setup == setup { break }
                guard candidate.setup?.isStandard ?? true else {
                    throw USBError.io("replay mismatch: the session sent control \(setup) but the capture's next control transfer is \(candidate.setup.map(\.description) ?? "(no setup)") (record at byte \(candidate.submitOffset))")
                }
                position += 1
            }
            guard position < state.control.count else {
                throw USBError.replayExhausted("no control transfer \(setup) left in the capture")
            }
            let transfer = state.control[position]
            if !isInput, transfer.submittedData != data {
                throw USBError.io("replay mismatch: control \(setup) with data \(USBMonHex.spaced(data)) where the capture has \(USBMonHex.spaced(transfer.submittedData)) (record at byte \(transfer.submitOffset))")
            }
            state.control.removeFirst(position + 1)
            let completion = try Self.completion(of: transfer, endpoint: requestType & 0x80, state: &state)
            return isInput ? Array(completion.data.prefix(length)) : []
        }
    }

    public func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        if mode == .tolerant {
            return try timeline.withLock { timeline throws(USBError) in try timeline.write(endpoint: endpoint, data: data) }
        }
        return try state.withLock { state throws(USBError) -> Int in
            guard !state.closed else { throw USBError.noDevice }
            guard let transfer = state.outQueues[endpoint]?.first else {
                throw USBError.replayExhausted("no more OUT transfers to endpoint \(USBMonHex.byte(endpoint)) (the session wrote \(USBMonHex.spaced(data)))")
            }
            guard transfer.submittedData == data else {
                throw USBError.io("replay mismatch on endpoint \(USBMonHex.byte(endpoint)): the session wrote \(USBMonHex.spaced(data)) where the capture has \(USBMonHex.spaced(transfer.submittedData)) (record at byte \(transfer.submitOffset))")
            }
            state.outQueues[endpoint]?.removeFirst()
            let completion = try Self.completion(of: transfer, endpoint: endpoint, state: &state)
            return min(data.count, completion.length)
        }
    }

    public func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        if mode == .tolerant {
            return try timeline.withLock { timeline throws(USBError) in try timeline.read(endpoint: endpoint, length: length) }
        }
        return try state.withLock { state throws(USBError) -> [UInt8] in
            guard !state.closed else { throw USBError.noDevice }
            guard let transfer = state.inQueues[endpoint]?.first else {
                throw USBError.replayExhausted("no more IN transfers from endpoint \(USBMonHex.byte(endpoint))")
            }
            state.inQueues[endpoint]?.removeFirst()
            let completion = try Self.completion(of: transfer, endpoint: endpoint, state: &state)
            guard completion.data.count <= length else { throw USBError.overflow(endpoint: endpoint) }
            return completion.data
        }
    }

    public func close() {
        state.withLock { state in
            state.closed = true
            state.claimed.removeAll()
        }
        timeline.withLock { $0.closed = true }
    }

    /// The completion of a transfer, or the error it ended with.
    private static func completion(of transfer: Transfer, endpoint: UInt8, state: inout ReplayState)
        throws(USBError) -> Completion {
        guard let completion = transfer.completion else {
            throw USBError.replayExhausted("the capture ends before the transfer on endpoint \(USBMonHex.byte(endpoint)) submitted at byte \(transfer.submitOffset) completed")
        }
        state.timestamp = completion.timestamp
        if let error = USBError(urbStatus: completion.status, endpoint: endpoint) { throw error }
        return completion
    }

    /// Splits the device's events into per-endpoint queues of transfers (strict mode).
    private static func transfers(of events: [USBMonEvent]) -> ReplayState {
        var state = ReplayState()
        struct Open { var transfer: Transfer; var queue: Queue }
        enum Queue { case output, input, control }
        var open: [UInt64: Open] = [:]
        var inputOrder: [(UInt8, Transfer)] = []
        var unfinishedInput: [UInt64] = []
        for event in events {
            switch event.type {
            case .submit:
                let transfer = Transfer(endpoint: event.endpoint, transferType: event.transferType, setup: event.setup,
                                        submittedData: event.isInput ? [] : event.data,
                                        requestedLength: event.length, submitOffset: event.fileOffset)
                let queue: Queue = event.transferType == .control ? .control : (event.isInput ? .input : .output)
                open[event.urbID] = Open(transfer: transfer, queue: queue)
                if queue == .input { unfinishedInput.append(event.urbID) }
            case .complete, .error:
                guard var entry = open.removeValue(forKey: event.urbID) else { continue }
                entry.transfer.completion = Completion(status: event.status, length: event.length,
                                                       data: event.isInput ? event.data : [], timestamp: event.timestamp)
                switch entry.queue {
                case .output: state.outQueues[entry.transfer.endpoint, default: []].append(entry.transfer)
                case .control: state.control.append(entry.transfer)
                case .input:
                    inputOrder.append((entry.transfer.endpoint, entry.transfer))
                    unfinishedInput.removeAll { $0 == event.urbID }
                }
            }
        }
        // IN answers in completion order; submissions still pending when the capture ended come
        // last and have no answer. Pending OUT and control submissions keep their place too.
        for (endpoint, transfer) in inputOrder { state.inQueues[endpoint, default: []].append(transfer) }
        for urb in unfinishedInput {
            if let entry = open[urb] { state.inQueues[entry.transfer.endpoint, default: []].append(entry.transfer) }
        }
        for entry in open.values.sorted(by: { $0.transfer.submitOffset < $1.transfer.submitOffset }) {
            switch entry.queue {
            case .output: state.outQueues[entry.transfer.endpoint, default: []].append(entry.transfer)
            case .control: state.control.append(entry.transfer)
            case .input: break
            }
        }
        return state
    }
}

/// Why a capture cannot be opened for replay.
public enum USBReplayOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    case capture(USBMonError)
    case selection(USBCaptureSelectionError)
    /// The capture does not say which device to replay or what its ids are: give `--usb VID:PID`.
    case needsIDs(devices: [String])

    public var description: String {
        switch self {
        case .capture(let error): error.description
        case .selection(let error): error.description
        case .needsIDs(let devices):
            "the capture does not identify one USB device by its descriptors (it has: \(devices.isEmpty ? "no USB traffic" : devices.joined(separator: "; "))); give --usb VID:PID"
        }
    }
}

extension USBError {
    /// The error a URB status (negative errno from usbmon) stands for; nil for success.
    public init?(urbStatus status: Int32, endpoint: UInt8) {
        switch status {
        case 0: return nil
        case -32: self = .stall(endpoint: endpoint)                       // EPIPE
        case -19, -108: self = .noDevice                                  // ENODEV, ESHUTDOWN
        case -2, -104, -110: self = .timeout(endpoint: endpoint)          // ENOENT, ECONNRESET (unlinked after a timeout), ETIMEDOUT
        case -75: self = .overflow(endpoint: endpoint)                    // EOVERFLOW
        case -71, -84, -62: self = .io("URB status \(status) on endpoint \(USBMonHex.byte(endpoint))")  // EPROTO, EILSEQ, ETIME
        default: self = .io("URB status \(status) on endpoint \(USBMonHex.byte(endpoint))")
        }
    }
}

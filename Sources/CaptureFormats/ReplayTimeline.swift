import Transport

/// How closely a replayed session must follow the capture (see `ReplayUSBDevice`).
public enum USBReplayMode: String, Hashable, Sendable {
    /// Every write must be the capture's next one on its endpoint; for captures made in the
    /// session's own order (tests).
    case strict
    /// Writes seek forward to an identical captured one (or are accepted and counted); reads get
    /// the next captured answer after the position. For captures other software made.
    case tolerant
}

/// The tolerant replay's view of one device's traffic: every transfer with the place of its
/// submission and completion in the capture, and the position the session has reached.
struct ReplayTimeline: Sendable {
    struct Completion: Sendable {
        var status: Int32
        var length: Int
        var data: [UInt8]
        var timestamp: Int64
        /// Index of the completion event among the device's events.
        var index: Int
    }

    struct Transfer: Sendable {
        var endpoint: UInt8
        var transferType: USBTransferType
        var setup: USBSetupPacket?
        var isInput: Bool
        var submittedData: [UInt8]
        /// Index of the submission among the device's events; for a completion whose submission
        /// is not in the capture (the capture began while it was pending), the completion's.
        var submitIndex: Int
        var submitOffset: Int
        var completion: Completion?
        var consumed = false
    }

    private(set) var transfers: [Transfer] = []
    /// Indices into `transfers` of IN bulk/interrupt transfers per endpoint, in completion order
    /// (pending ones, never completed, last).
    private var inputs: [UInt8: [Int]] = [:]
    /// Per endpoint, how far into `inputs` reads have gone.
    private var inputCursor: [UInt8: Int] = [:]
    /// Bytes of a completion longer than the read that took it, served to the next reads.
    private var leftover: [UInt8: [UInt8]] = [:]
    /// Event index: everything before it has happened.
    private(set) var position = 0
    private(set) var timestamp: Int64?
    private(set) var writesNotInCapture = 0
    var closed = false

    init(events: [USBMonEvent]) {
        var open: [UInt64: Int] = [:]
        for (index, event) in events.enumerated() {
            switch event.type {
            case .submit:
                open[event.urbID] = transfers.count
                transfers.append(Transfer(endpoint: event.endpoint, transferType: event.transferType, setup: event.setup,
                                          isInput: event.isInput, submittedData: event.isInput ? [] : event.data,
                                          submitIndex: index, submitOffset: event.fileOffset))
            case .complete, .error:
                let completion = Completion(status: event.status, length: event.length,
                                            data: event.isInput ? event.data : [], timestamp: event.timestamp, index: index)
                if let place = open.removeValue(forKey: event.urbID) {
                    transfers[place].completion = completion
                } else if event.isInput, event.transferType != .control {
                    // The capture began while this read was pending: its answer still counts.
                    transfers.append(Transfer(endpoint: event.endpoint, transferType: event.transferType, setup: nil,
                                              isInput: true, submittedData: [], submitIndex: index,
                                              submitOffset: event.fileOffset, completion: completion))
                }
            }
        }
        for (place, transfer) in transfers.enumerated() where transfer.isInput && transfer.transferType != .control {
            inputs[transfer.endpoint, default: []].append(place)
        }
        for endpoint in inputs.keys {
            inputs[endpoint]?.sort { left, right in
                let a = transfers[left].completion?.index ?? Int.max
                let b = transfers[right].completion?.index ?? Int.max
                return a == b ? transfers[left].submitIndex < transfers[right].submitIndex : a < b
            }
        }
    }

    /// Whether nothing the session could still be given lies ahead of the position.
    var isFinished: Bool {
        leftover.values.allSatisfy(\.isEmpty) && !transfers.contains { transfer in
            guard !transfer.consumed else { return false }
            if transfer.isInput && transfer.transferType != .control {
                return (transfer.completion?.index ?? -1) >= position
            }
            return transfer.submitIndex >= position && !(transfer.setup?.isStandard ?? false)
        }
    }

    mutating func write(endpoint: UInt8, data: [UInt8]) throws(USBError) -> Int {
        guard !closed else { throw USBError.noDevice }
        guard let place = transfers.indices.first(where: { place in
            let transfer = transfers[place]
            return !transfer.consumed && !transfer.isInput && transfer.transferType != .control
                && transfer.endpoint == endpoint && transfer.submitIndex >= position && transfer.submittedData == data
        }) else {
            writesNotInCapture += 1
            return data.count
        }
        transfers[place].consumed = true
        position = transfers[place].submitIndex + 1
        guard let completion = transfers[place].completion else { return data.count }
        timestamp = completion.timestamp
        if let error = USBError(urbStatus: completion.status, endpoint: endpoint) { throw error }
        return min(data.count, completion.length)
    }

    mutating func read(endpoint: UInt8, length: Int) throws(USBError) -> [UInt8] {
        guard !closed else { throw USBError.noDevice }
        if let pending = leftover[endpoint], !pending.isEmpty {
            leftover[endpoint] = Array(pending.dropFirst(length))
            return Array(pending.prefix(length))
        }
        let queue = inputs[endpoint] ?? []
        var cursor = inputCursor[endpoint] ?? 0
        while cursor < queue.count, let completion = transfers[queue[cursor]].completion, completion.index < position {
            cursor += 1
        }
        inputCursor[endpoint] = cursor
        guard cursor < queue.count else {
            throw USBError.replayExhausted("no more IN transfers from endpoint \(USBMonHex.byte(endpoint))")
        }
        let place = queue[cursor]
        guard let completion = transfers[place].completion else {
            throw USBError.replayExhausted("the capture ends before the transfer on endpoint \(USBMonHex.byte(endpoint)) submitted at byte \(transfers[place].submitOffset) completed")
        }
        inputCursor[endpoint] = cursor + 1
        transfers[place].consumed = true
        position = completion.index + 1
        timestamp = completion.timestamp
        if let error = USBError(urbStatus: completion.status, endpoint: endpoint) { throw error }
        if completion.data.count > length {
            leftover[endpoint] = Array(completion.data.dropFirst(length))
            return Array(completion.data.prefix(length))
        }
        return completion.data
    }

    mutating func control(_ setup: USBSetupPacket, data: [UInt8], length: Int) throws(USBError) -> [UInt8] {
        guard !closed else { throw USBError.noDevice }
        let isInput = setup.isDeviceToHost
        func same(_ transfer: Transfer) -> Bool {
            guard transfer.transferType == .control, let captured = transfer.setup,
                  captured.requestType == setup.requestType, captured.request == setup.request,
                  captured.value == setup.value, captured.index == setup.index else { return false }
            return isInput || transfer.submittedData == data
        }
        if let place = transfers.indices.first(where: { place in
            !transfers[place].consumed && transfers[place].submitIndex >= position && same(transfers[place])
        }) {
            transfers[place].consumed = true
            position = transfers[place].submitIndex + 1
            guard let completion = transfers[place].completion else {
                if isInput {
                    throw USBError.replayExhausted("the capture ends before the control transfer \(setup) submitted at byte \(transfers[place].submitOffset) completed")
                }
                return []
            }
            timestamp = completion.timestamp
            if let error = USBError(urbStatus: completion.status, endpoint: setup.requestType & 0x80) { throw error }
            return isInput ? Array(completion.data.prefix(length)) : []
        }
        guard isInput else {
            writesNotInCapture += 1
            return []
        }
        // Descriptors and other answers that do not change: an identical earlier request's answer.
        if let earlier = transfers.last(where: { same($0) && $0.completion?.status == 0 }), let completion = earlier.completion {
            return Array(completion.data.prefix(length))
        }
        throw USBError.replayExhausted("no control transfer \(setup) in the capture")
    }
}

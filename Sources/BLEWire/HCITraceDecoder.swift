import Foundation
import Transport

/// Turns a stream of HCI packets into transport events: advertisements, connections,
/// disconnections, GATT values and subscriptions.
///
/// A pure state machine: feed it (timestamp, direction, HCI packet) in order, from a capture
/// or from a live HCI socket, and it reassembles fragmented ACL data per connection and
/// direction, follows ATT discovery to map handles to service and characteristic UUIDs, and
/// matches read responses to their requests. Garbled input is counted in ``statistics`` by
/// reason and never stops decoding.
///
/// GATT tables learnt on one connection are kept per peer address, so a reconnection that
/// skips discovery (the host cached it) still maps handles to UUIDs.
public struct HCITraceDecoder: Sendable {
    /// What the decoder has seen so far.
    public private(set) var statistics = TraceStatistics()

    private var connections: [ConnectionKey: ConnectionState] = [:]
    private var tablesByPeer: [BLEAddress: GATTDatabase] = [:]
    private var extendedFragments: [ExtendedAdvertisingKey: [UInt8]] = [:]

    /// At most this many advertisers may have unfinished extended advertising data at once.
    static let maximumPendingExtendedAdvertisers = 64
    /// Reassembled extended advertising data is cut off at this length (the spec's maximum).
    static let maximumExtendedAdvertisingDataLength = 1650

    /// Creates a decoder with no connections.
    public init() {}

    /// The GATT table discovered on the peer of a connection, if the connection is known.
    public func peerDatabase(connection handle: UInt16, controllerIndex: UInt16 = 0) -> GATTDatabase? {
        connections[ConnectionKey(controller: controllerIndex, handle: handle)]?.servers[0]
    }

    /// Emits what the end of the trace completes: reads whose last part filled the MTU, which a
    /// Read Blob Request would have continued (see ``ConnectionState``). Call once after the last
    /// packet; decoding may go on afterwards.
    public mutating func finish(into events: inout [TransportEvent]) {
        for key in connections.keys.sorted(by: { ($0.controller, $0.handle) < ($1.controller, $1.handle) }) {
            connections[key]?.completeLongReads(statistics: &statistics, events: &events)
        }
    }

    /// Counts a record of a capture that is not an HCI packet (``TraceStatistics/nonHCIRecords``).
    public mutating func countNonHCIRecord() {
        statistics.nonHCIRecords += 1
    }

    /// Processes one HCI packet, appending the events it produces to `events`.
    /// - Parameters:
    ///   - timestamp: microseconds since the Unix epoch.
    ///   - direction: `.sent` host to controller, `.received` controller to host, nil if unknown.
    ///   - type: the packet indicator.
    ///   - packet: the packet without the indicator byte.
    ///   - controllerIndex: the controller, when a trace mixes several (BlueZ monitor).
    public mutating func process(
        timestamp: Int64, direction: CaptureDirection?, type: HCIPacketType, packet: some ContiguousBytes,
        controllerIndex: UInt16 = 0, into events: inout [TransportEvent]
    ) {
        statistics.records += 1
        packet.withUnsafeBytes { bytes in
            switch type {
            case .event:
                processEvent(bytes, timestamp: timestamp, controller: controllerIndex, into: &events)
            case .acl:
                processACL(bytes, timestamp: timestamp, direction: direction, controller: controllerIndex,
                           into: &events)
            case .command, .sco, .iso:
                break
            default:
                statistics.count(.unknownPacketType)
            }
        }
    }

    // MARK: - Events

    private mutating func processEvent(_ packet: UnsafeRawBufferPointer, timestamp: Int64, controller: UInt16,
                                       into events: inout [TransportEvent]) {
        guard packet.count >= 2, packet.count >= 2 + Int(packet[1]) else {
            statistics.count(.eventTruncated)
            return
        }
        let parameters = packet.slice(2, 2 + Int(packet[1]))
        switch packet[0] {
        case 0x3E:
            guard parameters.count >= 1 else {
                statistics.count(.eventTruncated)
                return
            }
            processLEMeta(parameters, timestamp: timestamp, controller: controller, into: &events)
        case 0x05:
            processDisconnectionComplete(parameters, timestamp: timestamp, controller: controller, into: &events)
        default:
            break
        }
    }

    /// Processes an LE Meta event whose header a live reader has already parsed (``HCIEvent/leMeta(subevent:parameters:)``),
    /// as ``process(timestamp:direction:type:packet:controllerIndex:into:)`` would the whole received event, so the
    /// packet is not read twice.
    public mutating func processLEMeta(subevent: UInt8, parameters: [UInt8], timestamp: Int64, controllerIndex: UInt16 = 0,
                                       into events: inout [TransportEvent]) {
        statistics.records += 1
        ([subevent] + parameters).withUnsafeBytes { bytes in
            processLEMeta(bytes, timestamp: timestamp, controller: controllerIndex, into: &events)
        }
    }

    /// LE Meta event parameters, subevent code first.
    private mutating func processLEMeta(_ parameters: UnsafeRawBufferPointer, timestamp: Int64, controller: UInt16,
                                        into events: inout [TransportEvent]) {
        switch parameters[0] {
        case 0x02: processLegacyReports(parameters, timestamp: timestamp, into: &events)
        case 0x0D: processExtendedReports(parameters, timestamp: timestamp, into: &events)
        case 0x01: processConnectionComplete(parameters, enhanced: false, timestamp: timestamp,
                                             controller: controller, into: &events)
        case 0x0A, 0x29: processConnectionComplete(parameters, enhanced: true, timestamp: timestamp,
                                                   controller: controller, into: &events)
        default: break
        }
    }

    /// LE Advertising Report (subevent 0x02): reports laid out one after another.
    private mutating func processLegacyReports(_ parameters: UnsafeRawBufferPointer, timestamp: Int64,
                                               into events: inout [TransportEvent]) {
        guard parameters.count >= 2 else {
            statistics.count(.advertisingReportTruncated)
            return
        }
        let reportCount = Int(parameters[1])
        var offset = 2
        let time = Date(microsecondsSince1970: timestamp)
        for _ in 0..<reportCount {
            // event type, address type, address (6), data length, data, RSSI
            guard offset + 9 <= parameters.count else {
                statistics.count(.advertisingReportTruncated)
                return
            }
            let dataLength = Int(parameters[offset + 8])
            guard offset + 10 + dataLength <= parameters.count else {
                statistics.count(.advertisingReportTruncated)
                return
            }
            let dataStart = offset + 9
            let rssi = Int8(bitPattern: parameters[dataStart + dataLength])
            let advertisement = BLEAdvertisement(
                time: time, address: parameters.address(at: offset + 2),
                addressType: BLEAddressType(rawValue: parameters[offset + 1]),
                eventType: BLEAdvertisingEventType(legacyType: parameters[offset]),
                rssi: rssi == 127 ? nil : rssi,
                data: Array(parameters.slice(dataStart, dataStart + dataLength)))
            emit(advertisement, into: &events)
            offset = dataStart + dataLength + 1
        }
    }

    /// LE Extended Advertising Report (subevent 0x0D), reassembling data sent in fragments.
    private mutating func processExtendedReports(_ parameters: UnsafeRawBufferPointer, timestamp: Int64,
                                                 into events: inout [TransportEvent]) {
        guard parameters.count >= 2 else {
            statistics.count(.advertisingReportTruncated)
            return
        }
        let reportCount = Int(parameters[1])
        var offset = 2
        let time = Date(microsecondsSince1970: timestamp)
        for _ in 0..<reportCount {
            // event type (2), address type, address (6), primary PHY, secondary PHY, SID, TX power,
            // RSSI, periodic interval (2), direct address type, direct address (6), data length, data
            guard offset + 24 <= parameters.count else {
                statistics.count(.advertisingReportTruncated)
                return
            }
            let dataLength = Int(parameters[offset + 23])
            guard offset + 24 + dataLength <= parameters.count else {
                statistics.count(.advertisingReportTruncated)
                return
            }
            let eventType = parameters.uint16(at: offset)
            let address = parameters.address(at: offset + 3)
            let addressType = BLEAddressType(rawValue: parameters[offset + 2])
            let sid = parameters[offset + 11]
            let txPower = Int8(bitPattern: parameters[offset + 12])
            let rssi = Int8(bitPattern: parameters[offset + 13])
            let dataStart = offset + 24
            let fragment = parameters.slice(dataStart, dataStart + dataLength)
            offset = dataStart + dataLength

            let key = ExtendedAdvertisingKey(address: address, addressType: addressType.rawValue, sid: sid)
            let dataStatus = (eventType >> 5) & 0x03
            var data: [UInt8]
            if let earlier = extendedFragments.removeValue(forKey: key) {
                data = earlier
                data.append(contentsOf: fragment.prefix(max(0, Self.maximumExtendedAdvertisingDataLength - data.count)))
            } else {
                data = Array(fragment)
            }
            if dataStatus == 1 {
                if extendedFragments.count >= Self.maximumPendingExtendedAdvertisers {
                    for _ in extendedFragments { statistics.count(.extendedAdvertisingDataTruncated) }
                    extendedFragments.removeAll()
                }
                extendedFragments[key] = data
                continue
            }
            if dataStatus != 0 { statistics.count(.extendedAdvertisingDataTruncated) }
            var advertisement = BLEAdvertisement(
                time: time, address: address, addressType: addressType,
                eventType: BLEAdvertisingEventType(extendedEventType: eventType),
                rssi: rssi == 127 ? nil : rssi, data: data)
            if advertisement.txPower == nil && txPower != 127 { advertisement.txPower = txPower }
            emit(advertisement, into: &events)
        }
    }

    private mutating func emit(_ advertisement: BLEAdvertisement, into events: inout [TransportEvent]) {
        statistics.advertisements += 1
        if advertisement.malformedDataOffset != nil { statistics.count(.advertisingDataMalformed) }
        events.append(.advertisement(advertisement))
    }

    /// LE Connection Complete (0x01) and LE Enhanced Connection Complete (0x0A, 0x29).
    private mutating func processConnectionComplete(
        _ parameters: UnsafeRawBufferPointer, enhanced: Bool, timestamp: Int64, controller: UInt16,
        into events: inout [TransportEvent]
    ) {
        // subevent, status, handle (2), role, peer address type, peer address (6), ...
        guard parameters.count >= (enhanced ? 31 : 19) else {
            statistics.count(.connectionEventTruncated)
            return
        }
        guard parameters[1] == 0 else {
            statistics.failedConnections += 1
            return
        }
        let handle = parameters.uint16(at: 2) & 0x0FFF
        let peer = parameters.address(at: 6)
        let key = ConnectionKey(controller: controller, handle: handle)
        if var stale = connections.removeValue(forKey: key) {
            stale.completeLongReads(statistics: &statistics, events: &events)
            remember(stale)
        }
        var state = ConnectionState(handle: handle, peerAddress: peer)
        if let known = tablesByPeer[peer] { state.servers[0] = known }
        connections[key] = state
        statistics.connections += 1
        events.append(.connected(BLEConnection(
            time: Date(microsecondsSince1970: timestamp), handle: handle, peerAddress: peer,
            peerAddressType: BLEAddressType(rawValue: parameters[5]),
            role: BLEConnectionRole(rawValue: parameters[4]))))
    }

    /// Disconnection Complete (event 0x05).
    private mutating func processDisconnectionComplete(
        _ parameters: UnsafeRawBufferPointer, timestamp: Int64, controller: UInt16,
        into events: inout [TransportEvent]
    ) {
        // status, handle (2), reason
        guard parameters.count >= 4 else {
            statistics.count(.disconnectionEventTruncated)
            return
        }
        guard parameters[0] == 0 else { return }
        let handle = parameters.uint16(at: 1) & 0x0FFF
        var state = connections.removeValue(forKey: ConnectionKey(controller: controller, handle: handle))
        state?.completeLongReads(statistics: &statistics, events: &events)
        if let state { remember(state) }
        statistics.disconnections += 1
        events.append(.disconnected(BLEDisconnection(
            time: Date(microsecondsSince1970: timestamp), handle: handle, peerAddress: state?.peerAddress,
            reason: parameters[3])))
    }

    /// Keeps the peer's GATT table of a finished connection for a later reconnection.
    private mutating func remember(_ state: ConnectionState) {
        if let peer = state.peerAddress, !state.servers[0].isEmpty { tablesByPeer[peer] = state.servers[0] }
    }

    // MARK: - ACL

    private mutating func processACL(_ packet: UnsafeRawBufferPointer, timestamp: Int64,
                                     direction: CaptureDirection?, controller: UInt16,
                                     into events: inout [TransportEvent]) {
        guard packet.count >= 4 else {
            statistics.count(.aclHeaderTruncated)
            return
        }
        let header = packet.uint16(at: 0)
        let handle = header & 0x0FFF
        let boundary = (header >> 12) & 0x03
        let length = Int(packet.uint16(at: 2))
        guard packet.count >= 4 + length else {
            statistics.count(.aclLengthMismatch)
            return
        }
        let data = packet.slice(4, 4 + length)
        let key = ConnectionKey(controller: controller, handle: handle)
        connections[key, default: ConnectionState(handle: handle, peerAddress: nil)].receiveACL(
            data, isContinuation: boundary == 0b01, timestamp: timestamp, direction: direction,
            statistics: &statistics, events: &events)
    }
}

/// Identifies a connection across controllers.
struct ConnectionKey: Hashable, Sendable {
    var controller: UInt16
    var handle: UInt16
}

/// Identifies an advertiser's data set while its extended advertising data arrives in fragments.
struct ExtendedAdvertisingKey: Hashable, Sendable {
    var address: BLEAddress
    var addressType: UInt8
    var sid: UInt8
}

/// An ATT request waiting for its response.
enum PendingRequest: Hashable, Sendable {
    case read(handle: UInt16)
    case readBlob(handle: UInt16, offset: Int)
    case exchangeMTU(clientMTU: Int)
    case readByType(BLEUUID?)
    case readByGroupType(BLEUUID?)
    case findInformation
    case findByTypeValue(service: BLEUUID?)
    case write
    case other
}

/// The state of one connection: L2CAP reassembly per direction, the pending ATT request and
/// the discovered GATT table per server role.
struct ConnectionState: Sendable {
    let handle: UInt16
    var peerAddress: BLEAddress?
    /// Partial L2CAP frames; index 0 host to controller (or unknown), 1 controller to host.
    var fragments: [[UInt8]] = [[], []]
    /// Index 0: the peer is the GATT server (the usual case); 1: the host is the server.
    var servers: [GATTDatabase] = [GATTDatabase(), GATTDatabase()]
    /// Outstanding request addressed to the server of the same index.
    var pending: [PendingRequest?] = [nil, nil]
    /// A long write being prepared towards the server of the same index: its handle and the
    /// parts joined so far (Prepare Write Requests at consecutive offsets), until Execute Write.
    var preparedWrite: [(handle: UInt16, value: [UInt8])?] = [nil, nil]
    /// A long read being received from the server of the same index: a Read Response that filled
    /// the MTU, joined with the Read Blob Responses at consecutive offsets that follow it. It
    /// becomes one `read` value when a part comes back shorter than the MTU allows (or the value
    /// reaches 512 bytes), when the server answers a Read Blob with Attribute Not Long or Invalid
    /// Offset (the value is whole), when the client asks anything else, when the connection ends,
    /// or at ``HCITraceDecoder/finish(into:)``. Another error answering a Read Blob drops it: the
    /// read failed.
    var longRead: [(handle: UInt16, value: [UInt8], timestamp: Int64)?] = [nil, nil]
    /// The ATT MTU: 23 until an Exchange MTU Request and Response are seen.
    var mtu = ATTPDU.defaultMTU

    init(handle: UInt16, peerAddress: BLEAddress?) {
        self.handle = handle
        self.peerAddress = peerAddress
    }

    mutating func receiveACL(_ data: UnsafeRawBufferPointer, isContinuation: Bool, timestamp: Int64,
                             direction: CaptureDirection?, statistics: inout TraceStatistics,
                             events: inout [TransportEvent]) {
        let lane = direction == .received ? 1 : 0
        if isContinuation {
            guard !fragments[lane].isEmpty else {
                statistics.count(.aclContinuationWithoutStart)
                return
            }
            fragments[lane].append(contentsOf: data)
        } else {
            if !fragments[lane].isEmpty {
                statistics.count(.aclFragmentAbandoned)
                fragments[lane].removeAll(keepingCapacity: true)
            }
            // Fast path: the whole L2CAP frame in one packet needs no copy.
            if data.count >= 4 && data.count == 4 + Int(data.uint16(at: 0)) {
                processL2CAP(data, timestamp: timestamp, direction: direction, statistics: &statistics,
                             events: &events)
                return
            }
            if data.isEmpty { return }
            fragments[lane].append(contentsOf: data)
        }
        let buffered = fragments[lane].count
        guard buffered >= 4 else { return }
        let expected = 4 + (Int(fragments[lane][0]) | Int(fragments[lane][1]) << 8)
        if buffered < expected { return }
        var frame = fragments[lane]
        fragments[lane].removeAll(keepingCapacity: true)
        if buffered > expected {
            statistics.count(.l2capLengthMismatch)
            return
        }
        frame.withUnsafeBytes { bytes in
            processL2CAP(bytes, timestamp: timestamp, direction: direction, statistics: &statistics, events: &events)
        }
        frame.removeAll()
    }

    private mutating func processL2CAP(_ frame: UnsafeRawBufferPointer, timestamp: Int64,
                                       direction: CaptureDirection?, statistics: inout TraceStatistics,
                                       events: inout [TransportEvent]) {
        // length (2), channel id (2), payload; the caller checked the length.
        guard frame.uint16(at: 2) == 0x0004 else { return }
        processATT(frame.slice(4, frame.count), timestamp: timestamp, direction: direction,
                   statistics: &statistics, events: &events)
    }

    // MARK: - ATT

    private mutating func processATT(_ pdu: UnsafeRawBufferPointer, timestamp: Int64, direction: CaptureDirection?,
                                     statistics: inout TraceStatistics, events: inout [TransportEvent]) {
        guard let first = pdu.first else {
            statistics.count(.attPDUTooShort)
            return
        }
        let opcode = ATTOpcode(rawValue: first)
        guard pdu.count >= opcode.minimumPDULength else {
            statistics.count(.attPDUTooShort)
            return
        }
        // Which server a PDU concerns: a client's PDU travels towards the server, a server's
        // PDU away from it. Unknown direction counts as the usual case (the peer is the server).
        let fromClient = direction == .received ? 1 : 0
        let fromServer = direction == .sent ? 1 : 0
        if (opcode.isRequest || opcode.isCommand), let held = longRead[fromClient],
           !(opcode == .readBlobRequest && pdu.count >= 5 && pdu.uint16(at: 1) == held.handle
               && Int(pdu.uint16(at: 3)) == held.value.count) {
            // The client asks something else: the value read so far is all it wanted.
            completeLongRead(server: fromClient, statistics: &statistics, events: &events)
        }
        switch opcode {
        case .handleValueNotification, .handleValueIndication:
            receiveHandleValue(pdu, isNotification: opcode == .handleValueNotification, server: fromServer,
                               timestamp: timestamp, statistics: &statistics, events: &events)
        case .writeRequest, .writeCommand:
            if opcode == .writeRequest { pending[fromClient] = .write }
            receiveWrite(pdu, withResponse: opcode == .writeRequest, server: fromClient, timestamp: timestamp,
                         statistics: &statistics, events: &events)
        case .prepareWriteRequest where pdu.count >= 5:
            pending[fromClient] = .other
            receivePrepareWrite(pdu, server: fromClient, statistics: &statistics)
        case .executeWriteRequest where pdu.count >= 2:
            pending[fromClient] = .other
            let prepared = preparedWrite[fromClient]
            preparedWrite[fromClient] = nil
            if pdu[1] == 0x01, let prepared {
                statistics.writes += 1
                prepared.value.withUnsafeBytes { bytes in
                    events.append(.gattValue(value(handle: prepared.handle, bytes: bytes, kind: .write, server: fromClient,
                                                   timestamp: timestamp)))
                }
            }
        case _ where opcode.isRequest:
            pending[fromClient] = Self.pendingRequest(opcode, pdu)
        case _ where opcode.isResponse:
            let request = pending[fromServer]
            pending[fromServer] = nil
            receiveResponse(opcode, pdu, request: request, server: fromServer, timestamp: timestamp,
                            statistics: &statistics, events: &events)
        default:
            break
        }
    }

    /// What a client request asks for, remembered until its response arrives; the caller checked
    /// ``ATTOpcode/minimumPDULength``.
    private static func pendingRequest(_ opcode: ATTOpcode, _ pdu: UnsafeRawBufferPointer) -> PendingRequest {
        switch opcode {
        case .findInformationRequest:
            return .findInformation
        case .findByTypeValueRequest:  // start, end, attribute type, value
            let type = BLEUUID(pdu.uint16(at: 5))
            let isService = type == .primaryService || type == .secondaryService
            return .findByTypeValue(service: isService ? BLEUUID(littleEndianBytes: pdu.slice(7, pdu.count)) : nil)
        case .readByTypeRequest:  // start, end, type
            return .readByType(BLEUUID(littleEndianBytes: pdu.slice(5, pdu.count)))
        case .readRequest:
            return .read(handle: pdu.uint16(at: 1))
        case .readBlobRequest where pdu.count >= 5:  // handle, offset
            return .readBlob(handle: pdu.uint16(at: 1), offset: Int(pdu.uint16(at: 3)))
        case .exchangeMTURequest where pdu.count >= 3:  // the client's receive MTU
            return .exchangeMTU(clientMTU: Int(pdu.uint16(at: 1)))
        case .readByGroupTypeRequest:  // start, end, group type
            return .readByGroupType(BLEUUID(littleEndianBytes: pdu.slice(5, pdu.count)))
        default:
            return .other
        }
    }

    /// A server response, given the request it answers (nil when the request was not captured).
    private mutating func receiveResponse(
        _ opcode: ATTOpcode, _ pdu: UnsafeRawBufferPointer, request: PendingRequest?, server: Int, timestamp: Int64,
        statistics: inout TraceStatistics, events: inout [TransportEvent]
    ) {
        switch opcode {
        case .findInformationResponse:
            receiveFindInformation(pdu, server: server, statistics: &statistics)
        case .findByTypeValueResponse:
            receiveFindByTypeValue(pdu, request: request, server: server, statistics: &statistics)
        case .readByTypeResponse:
            receiveReadByType(pdu, request: request, server: server, timestamp: timestamp,
                              statistics: &statistics, events: &events)
        case .readResponse:
            guard case .read(let handle) = request else {
                statistics.unmatchedResponses += 1
                return
            }
            let part = Array(pdu.slice(1, pdu.count))
            longRead[server] = (handle, part, timestamp)
            // A part that fills the MTU may go on in Read Blob Responses.
            if part.count < mtu - 1 || part.count >= ATTPDU.maximumAttributeValueLength {
                completeLongRead(server: server, statistics: &statistics, events: &events)
            }
        case .readBlobResponse:
            receiveReadBlob(pdu, request: request, server: server, timestamp: timestamp,
                            statistics: &statistics, events: &events)
        case .errorResponse where pdu.count >= 5:  // request opcode, handle, code
            guard case .readBlob(let handle, _) = request, longRead[server]?.handle == handle else { return }
            if pdu[4] == ATTErrorCode.attributeNotLong.rawValue || pdu[4] == ATTErrorCode.invalidOffset.rawValue {
                completeLongRead(server: server, statistics: &statistics, events: &events)
            } else {
                longRead[server] = nil
            }
        case .exchangeMTUResponse where pdu.count >= 3:  // the server's receive MTU
            guard case .exchangeMTU(let clientMTU) = request else {
                statistics.unmatchedResponses += 1
                return
            }
            mtu = max(ATTPDU.defaultMTU, min(clientMTU, Int(pdu.uint16(at: 1))))
        case .readByGroupTypeResponse:
            receiveReadByGroupType(pdu, request: request, server: server, statistics: &statistics)
        default:
            break  // Error Response and responses that carry nothing the decoder maps
        }
    }

    /// Read Blob Response: the part of the held long read at the offset its request asked for.
    private mutating func receiveReadBlob(
        _ pdu: UnsafeRawBufferPointer, request: PendingRequest?, server: Int, timestamp: Int64,
        statistics: inout TraceStatistics, events: inout [TransportEvent]
    ) {
        guard case .readBlob(let handle, let offset) = request, var held = longRead[server], held.handle == handle,
              held.value.count == offset else {
            statistics.unmatchedResponses += 1
            return
        }
        let part = pdu.slice(1, pdu.count)
        guard offset + part.count <= ATTPDU.maximumAttributeValueLength else {
            longRead[server] = nil
            statistics.count(.attResponseMalformed)
            return
        }
        held.value.append(contentsOf: part)
        held.timestamp = timestamp
        longRead[server] = held
        if part.count < mtu - 1 || held.value.count == ATTPDU.maximumAttributeValueLength {
            completeLongRead(server: server, statistics: &statistics, events: &events)
        }
    }

    /// Emits the long reads still held (the connection ends, or the trace).
    mutating func completeLongReads(statistics: inout TraceStatistics, events: inout [TransportEvent]) {
        for server in longRead.indices { completeLongRead(server: server, statistics: &statistics, events: &events) }
    }

    /// Emits the value held for the server of this index as one `read`, stamped with its last part.
    private mutating func completeLongRead(server: Int, statistics: inout TraceStatistics,
                                           events: inout [TransportEvent]) {
        guard let held = longRead[server] else { return }
        longRead[server] = nil
        statistics.reads += 1
        held.value.withUnsafeBytes { bytes in
            events.append(.gattValue(value(handle: held.handle, bytes: bytes, kind: .read, server: server,
                                           timestamp: held.timestamp)))
        }
    }

    /// Handle Value Notification / Indication: handle, value.
    private mutating func receiveHandleValue(
        _ pdu: UnsafeRawBufferPointer, isNotification: Bool, server: Int, timestamp: Int64,
        statistics: inout TraceStatistics, events: inout [TransportEvent]
    ) {
        if isNotification { statistics.notifications += 1 } else { statistics.indications += 1 }
        events.append(.gattValue(value(
            handle: pdu.uint16(at: 1), bytes: pdu.slice(3, pdu.count),
            kind: isNotification ? .notification : .indication, server: server, timestamp: timestamp)))
    }

    /// Find By Type Value Response: {found handle, group end}*, for a service search.
    private mutating func receiveFindByTypeValue(_ pdu: UnsafeRawBufferPointer, request: PendingRequest?,
                                                 server: Int, statistics: inout TraceStatistics) {
        guard case .findByTypeValue(let service?) = request else { return }
        guard (pdu.count - 1) % 4 == 0 else {
            statistics.count(.attResponseMalformed)
            return
        }
        var offset = 1
        while offset + 4 <= pdu.count {
            servers[server].addService(.init(
                startHandle: pdu.uint16(at: offset), endHandle: pdu.uint16(at: offset + 2), uuid: service))
            offset += 4
        }
    }

    /// Find Information Response: format (1: 16-bit UUIDs, 2: 128-bit), then {handle, UUID}*.
    private mutating func receiveFindInformation(_ pdu: UnsafeRawBufferPointer, server: Int,
                                                 statistics: inout TraceStatistics) {
        let uuidLength: Int
        switch pdu[1] {
        case 1: uuidLength = 2
        case 2: uuidLength = 16
        default:
            statistics.count(.attResponseMalformed)
            return
        }
        let elementLength = 2 + uuidLength
        guard (pdu.count - 2) % elementLength == 0 else {
            statistics.count(.attResponseMalformed)
            return
        }
        var offset = 2
        while offset + elementLength <= pdu.count {
            if let uuid = BLEUUID(littleEndianBytes: pdu.slice(offset + 2, offset + elementLength)) {
                servers[server].addAttributeType(uuid, handle: pdu.uint16(at: offset))
            }
            offset += elementLength
        }
    }

    /// Read By Type Response: element length, then {handle, value}*. For a request of 0x2803
    /// the values are characteristic declarations; for a characteristic UUID they are values.
    private mutating func receiveReadByType(
        _ pdu: UnsafeRawBufferPointer, request: PendingRequest?, server: Int, timestamp: Int64,
        statistics: inout TraceStatistics, events: inout [TransportEvent]
    ) {
        let elementLength = Int(pdu[1])
        guard elementLength >= 2, (pdu.count - 2) % elementLength == 0 else {
            statistics.count(.attResponseMalformed)
            return
        }
        let declarations: Bool
        switch request {
        case .readByType(let type?):
            declarations = type == .characteristic
            let isOtherDeclaration = type == .primaryService || type == .secondaryService || type == .include
            if isOtherDeclaration { return }
        case .readByType(nil):
            return
        default:
            // Request not captured: the element sizes of characteristic declarations.
            statistics.unmatchedResponses += 1
            declarations = elementLength == 7 || elementLength == 21
        }
        if declarations && elementLength != 7 && elementLength != 21 {
            statistics.count(.attResponseMalformed)
            return
        }
        var offset = 2
        while offset + elementLength <= pdu.count {
            let handle = pdu.uint16(at: offset)
            let valueStart = offset + 2
            let valueEnd = offset + elementLength
            if declarations {
                // properties, value handle (2), UUID (2 or 16)
                if let uuid = BLEUUID(littleEndianBytes: pdu.slice(valueStart + 3, valueEnd)) {
                    servers[server].addCharacteristic(.init(
                        declarationHandle: handle, properties: pdu[valueStart],
                        valueHandle: pdu.uint16(at: valueStart + 1), uuid: uuid))
                }
            } else {
                statistics.reads += 1
                events.append(.gattValue(value(handle: handle, bytes: pdu.slice(valueStart, valueEnd), kind: .read,
                                               server: server, timestamp: timestamp)))
            }
            offset = valueEnd
        }
    }

    /// Read By Group Type Response: element length (6 or 20), then {start, end, UUID}*.
    private mutating func receiveReadByGroupType(_ pdu: UnsafeRawBufferPointer, request: PendingRequest?,
                                                 server: Int, statistics: inout TraceStatistics) {
        switch request {
        case .readByGroupType(let type?) where type != .primaryService && type != .secondaryService:
            return
        case .readByGroupType:
            break
        default:
            statistics.unmatchedResponses += 1
        }
        let elementLength = Int(pdu[1])
        guard elementLength == 6 || elementLength == 20, (pdu.count - 2) % elementLength == 0 else {
            statistics.count(.attResponseMalformed)
            return
        }
        var offset = 2
        while offset + elementLength <= pdu.count {
            if let uuid = BLEUUID(littleEndianBytes: pdu.slice(offset + 4, offset + elementLength)) {
                servers[server].addService(.init(
                    startHandle: pdu.uint16(at: offset), endHandle: pdu.uint16(at: offset + 2), uuid: uuid))
            }
            offset += elementLength
        }
    }

    /// Write Request / Write Command: a CCCD write is a subscription, anything else a value.
    private mutating func receiveWrite(
        _ pdu: UnsafeRawBufferPointer, withResponse: Bool, server: Int, timestamp: Int64,
        statistics: inout TraceStatistics, events: inout [TransportEvent]
    ) {
        let handle = pdu.uint16(at: 1)
        let table = servers[server]
        if table.isClientCharacteristicConfiguration(handle) {
            statistics.subscriptions += 1
            let characteristic = table.characteristic(owningDescriptor: handle)
            let configuration = pdu.count >= 5 ? pdu.uint16(at: 3) : UInt16(pdu.count >= 4 ? pdu[3] : 0)
            events.append(.subscriptionChanged(GATTSubscription(
                time: Date(microsecondsSince1970: timestamp), connection: self.handle, peerAddress: peerAddress,
                serviceUUID: table.service(containing: handle)?.uuid, characteristicUUID: characteristic?.uuid,
                characteristicHandle: characteristic?.valueHandle, descriptorHandle: handle,
                configuration: configuration)))
            return
        }
        statistics.writes += 1
        events.append(.gattValue(value(
            handle: handle, bytes: pdu.slice(3, pdu.count), kind: withResponse ? .write : .writeWithoutResponse,
            server: server, timestamp: timestamp)))
    }

    /// Prepare Write Request: handle, offset, part. A part at the offset where the value so far
    /// ends extends it; one at offset 0 starts a new value; any other (or a value beyond 512
    /// bytes) is counted malformed and drops the long write.
    private mutating func receivePrepareWrite(_ pdu: UnsafeRawBufferPointer, server: Int,
                                              statistics: inout TraceStatistics) {
        let handle = pdu.uint16(at: 1)
        let offset = Int(pdu.uint16(at: 3))
        let part = pdu.slice(5, pdu.count)
        var current = preparedWrite[server]
        if offset == 0 {
            current = (handle, [])
        }
        guard var joined = current, joined.handle == handle, joined.value.count == offset,
              offset + part.count <= 512 else {
            preparedWrite[server] = nil
            statistics.count(.attResponseMalformed)
            return
        }
        joined.value.append(contentsOf: part)
        preparedWrite[server] = joined
    }

    private func value(handle: UInt16, bytes: UnsafeRawBufferPointer, kind: GATTValueKind, server: Int,
                       timestamp: Int64) -> GATTValue {
        let table = servers[server]
        return GATTValue(
            time: Date(microsecondsSince1970: timestamp), connection: self.handle, peerAddress: peerAddress,
            serviceUUID: table.service(containing: handle)?.uuid,
            characteristicUUID: table.characteristic(valueHandle: handle)?.uuid, handle: handle,
            value: Array(bytes), kind: kind)
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes in `start..<end` as a buffer of their own (indices from 0). Callers check bounds.
    func slice(_ start: Int, _ end: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[start..<end])
    }

    /// A little-endian 16-bit integer at `offset`. Callers check bounds.
    func uint16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    /// A Bluetooth address in wire order (least significant byte first) at `offset`. Callers check bounds.
    func address(at offset: Int) -> BLEAddress {
        var value: UInt64 = 0
        for index in 0..<6 { value |= UInt64(self[offset + index]) << UInt64(8 * index) }
        return BLEAddress(truncatingIfNeeded: value)
    }
}

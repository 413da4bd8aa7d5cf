import Foundation
import Synchronization
import Transport

/// A simulated glucose meter: the Glucose service (0x1808) with Glucose Measurement (0x2A18,
/// notify), Glucose Measurement Context (0x2A34, notify) and the Record Access Control Point
/// (0x2A52, write and indicate). It keeps numbered records and answers Report Stored Records
/// (all, or sequence number >= N) with one notification per record and the RACP response
/// (success, or no records found); other requests get "op code not supported". It can drop
/// the link after a number of records of the next transfer. A meter made `withContexts`
/// announces a context with every record and sends it right after (meal 1, before a meal), as
/// the Contour Next One and Accu-Chek Guide do for readings marked with a meal; a dropped link
/// then falls between a record and its context.
public final class SimulatedGlucoseMeter: SimulatedResponder {
    public static let measurement = BLEUUID(0x2A18)
    public static let context = BLEUUID(0x2A34)
    public static let controlPoint = BLEUUID(0x2A52)

    /// The meter's GATT table.
    public static let profile = SimulatedProfile(name: "Glucose Meter", services: [
        .init(uuid: BLEUUID(0x1808), characteristics: [
            .init(uuid: measurement, properties: 0x10),
            .init(uuid: context, properties: 0x10),
            .init(uuid: controlPoint, properties: 0x28),
        ]),
    ])

    private struct State {
        var records: [UInt16] = []
        var dropAfter: Int?
        var requests: [[UInt8]] = []
    }
    private let state = Mutex(State())
    private let withContexts: Bool

    /// A meter holding records 1…`records`.
    public init(records: Int, withContexts: Bool = false) {
        self.withContexts = withContexts
        addRecords(records)
    }

    /// New readings: the next sequence numbers.
    public func addRecords(_ count: Int) {
        state.withLock { state in
            let next = (state.records.last ?? 0) + 1
            state.records += (0..<count).map { next + UInt16($0) }
        }
    }

    /// The next transfer stops after `records` records with the link closed.
    public func dropLink(afterRecords records: Int) { state.withLock { $0.dropAfter = records } }

    /// The RACP requests received, in order.
    public var requests: [[UInt8]] { state.withLock { $0.requests } }

    /// The bytes of record `sequence`: kg/L concentration (95 + sequence) mg/dL, capillary whole
    /// blood from a finger, base time 2026-11-30 08:00 plus `sequence` minutes.
    /// With `context`, flag bit 4 announces a Glucose Measurement Context.
    public static func recordBytes(_ sequence: UInt16, context: Bool = false) -> [UInt8] {
        let minutes = Int(sequence)
        let mantissa = UInt16(95 + minutes) & 0x0FFF
        return [context ? 0x12 : 0x02, UInt8(sequence & 0xFF), UInt8(sequence >> 8), 0xEA, 0x07, 11, 30,
                UInt8(8 + minutes / 60), UInt8(minutes % 60), 0,
                UInt8(mantissa & 0xFF), 0xB0 | UInt8(mantissa >> 8), 0x11]
    }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.controlPoint else { return [] }
        let (selected, dropAfter): ([UInt16]?, Int?) = state.withLock { state in
            state.requests.append(value)
            let dropAfter = state.dropAfter
            state.dropAfter = nil
            switch value {
            case [0x01, 0x01]: return (state.records, dropAfter)
            case let request where request.count == 5 && request[0] == 0x01 && request[1] == 0x03 && request[2] == 0x01:
                let first = UInt16(request[3]) | UInt16(request[4]) << 8
                return (state.records.filter { $0 >= first }, dropAfter)
            default: return (nil, dropAfter)
            }
        }
        guard let selected else {
            return [SimulatedReply(characteristic: Self.controlPoint, value: [0x06, 0x00, value.first ?? 0, 0x02], indicate: true)]
        }
        var replies: [SimulatedReply] = []
        for (index, sequence) in selected.enumerated() {
            let drop = dropAfter.map { index + 1 == $0 } ?? false
            replies.append(SimulatedReply(characteristic: Self.measurement,
                                          value: Self.recordBytes(sequence, context: withContexts), closesLink: drop))
            if drop { return replies }
            if withContexts {
                // Glucose Measurement Context: flags 0x02 (meal), the record's sequence number, meal 1.
                replies.append(SimulatedReply(characteristic: Self.context,
                                              value: [0x02, UInt8(sequence & 0xFF), UInt8(sequence >> 8), 0x01]))
            }
        }
        replies.append(SimulatedReply(characteristic: Self.controlPoint,
                                      value: [0x06, 0x00, 0x01, selected.isEmpty ? 0x06 : 0x01], indicate: true))
        return replies
    }
}

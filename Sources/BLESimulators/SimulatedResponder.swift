import Foundation
import Synchronization
import Transport

/// A value a responder sends back: a notification (or indication) of a characteristic.
public struct SimulatedReply: Hashable, Sendable {
    public var characteristic: BLEUUID
    public var value: [UInt8]
    public var indicate: Bool
    /// The peripheral closes the link right after sending this reply (a device that drops the
    /// link mid-transfer); later replies are not sent.
    public var closesLink: Bool

    public init(characteristic: BLEUUID, value: [UInt8], indicate: Bool = false, closesLink: Bool = false) {
        self.characteristic = characteristic
        self.value = value
        self.indicate = indicate
        self.closesLink = closesLink
    }
}

/// The behaviour behind a simulated peripheral's writable characteristics: a vendor command
/// protocol, a control point. Called for every write (request or command) to a value.
public protocol SimulatedResponder: Sendable {
    /// The replies to one write of `value` to `characteristic`, in the order they are sent.
    func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply]
    /// The replies once a client enabled notifications or indications of `characteristic`
    /// (stored measurements a device sends on subscription); none by default.
    func respond(toSubscriptionOf characteristic: BLEUUID) -> [SimulatedReply]
}

extension SimulatedResponder {
    public func respond(toSubscriptionOf characteristic: BLEUUID) -> [SimulatedReply] { [] }
}

/// A simulated DS-D6 fitness band: AT commands written to 0x0001 of service 0x190A (in pieces,
/// ended by CR LF), replies notified on 0x0002 in pieces of at most 20 bytes, as the real band
/// does (see Plugins/DSD6Band/README.md).
public final class SimulatedDSD6Band: SimulatedResponder {
    public static let service = BLEUUID(0x190A)
    public static let commandCharacteristic = BLEUUID(0x0001)
    public static let replyCharacteristic = BLEUUID(0x0002)

    /// The band's GATT table: the vendor service with the notify and write characteristics.
    public static let profile = SimulatedProfile(name: "DS-D6", services: [
        .init(uuid: service, characteristics: [
            .init(uuid: replyCharacteristic, properties: 0x10),
            .init(uuid: commandCharacteristic, properties: 0x0C),
        ]),
    ])

    private struct State {
        var steps: Int
        var pending: [UInt8] = []
        var commands: [String] = []
    }
    private let state: Mutex<State>
    private let serialNumber: String
    private let timeZoneOffset: Int

    public init(steps: Int, serialNumber: String = "567890123456", timeZoneOffset: Int = 3600) {
        state = Mutex(State(steps: steps))
        self.serialNumber = serialNumber
        self.timeZoneOffset = timeZoneOffset
    }

    /// The commands received, in order (without CR LF).
    public var commands: [String] { state.withLock { $0.commands } }

    /// Sets the band's step count (the wearer walked).
    public func setSteps(_ steps: Int) { state.withLock { $0.steps = steps } }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.commandCharacteristic else { return [] }
        let lines: [(String, Int)] = state.withLock { state in
            var complete: [(String, Int)] = []
            for byte in value {
                if byte == 0x0A {
                    if state.pending.last == 0x0D { state.pending.removeLast() }
                    let line = String(decoding: state.pending, as: UTF8.self)
                    state.pending.removeAll()
                    state.commands.append(line)
                    complete.append((line, state.steps))
                } else if state.pending.count < 256 {
                    state.pending.append(byte)
                }
            }
            return complete
        }
        return lines.flatMap { line, steps in reply(to: line, steps: steps) }
    }

    private func reply(to command: String, steps: Int) -> [SimulatedReply] {
        let text: String
        switch command {
        case "AT+TOPACE=0": text = "AT+TOPACE:\(steps)"
        case "AT+TIMEZONE": text = "AT+TIMEZONE:\(timeZoneOffset)"
        case "AT+SN": text = "AT+SN:\(serialNumber)"
        case "AT+BATT": text = "AT+BATT:80"
        default:
            if command.hasPrefix("AT+DT=") {
                text = "AT+DT:" + command.dropFirst(6)
            } else {
                text = "AT+ERR"
            }
        }
        let bytes = Array((text + "\r\n").utf8)
        return stride(from: 0, to: bytes.count, by: 20).map {
            SimulatedReply(characteristic: Self.replyCharacteristic, value: Array(bytes[$0..<min($0 + 20, bytes.count)]))
        }
    }
}

/// A simulated weight scale whose clock is set through Current Time (0x2A2B, service 0x1805):
/// once indications of Weight Measurement (0x2A9D) are enabled it indicates one reading of
/// 77.5 kg stamped with the time last written (flags 0x02: SI, time stamp present), or none
/// while its clock was never set.
public final class SimulatedCurrentTimeScale: SimulatedResponder {
    public static let currentTime = BLEUUID(0x2A2B)
    public static let weightMeasurement = BLEUUID(0x2A9D)

    /// The scale's GATT table: Weight Scale with Weight Measurement, Current Time (read, write, notify).
    public static let profile = SimulatedProfile(name: "Clock Scale", services: [
        .init(uuid: BLEUUID(0x181D), characteristics: [.init(uuid: weightMeasurement, properties: 0x20)]),
        .init(uuid: BLEUUID(0x1805), characteristics: [.init(uuid: currentTime, properties: 0x1A, value: [UInt8](repeating: 0, count: 10))]),
    ])

    private let written = Mutex<[UInt8]?>(nil)

    public init() {}

    /// The last Current Time value written.
    public var writtenTime: [UInt8]? { written.withLock { $0 } }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        if characteristic == Self.currentTime { written.withLock { $0 = value } }
        return []
    }

    public func respond(toSubscriptionOf characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.weightMeasurement, let clock = writtenTime, clock.count >= 7 else { return [] }
        return [SimulatedReply(characteristic: Self.weightMeasurement, value: [0x02, 0x8C, 0x3C] + clock.prefix(7),
                               indicate: true)]
    }
}

/// A simulated two-user scale with the User Data Service (0x181C): its User Control Point
/// (0x2A9F, write and indicate) takes Consent (`02 <index> <code LE>`) and Register New User
/// (`01 <code LE>`, answered with the new index 3). After a consent with the right code it
/// indicates that user's stored weighing on Weight Measurement (0x2A9D, flags 0x04: user index
/// present): user 1 (code 1234) 70.0 kg, user 2 (code 5678) 82.5 kg. A wrong code is answered
/// "user not authorized" (0x05).
public final class SimulatedUserDataScale: SimulatedResponder {
    public static let controlPoint = BLEUUID(0x2A9F)
    public static let weightMeasurement = BLEUUID(0x2A9D)

    /// The scale's GATT table.
    public static let profile = SimulatedProfile(name: "Family Scale", services: [
        .init(uuid: BLEUUID(0x181D), characteristics: [.init(uuid: weightMeasurement, properties: 0x20)]),
        .init(uuid: BLEUUID(0x181C), characteristics: [.init(uuid: controlPoint, properties: 0x28)]),
    ])

    /// Per user index: consent code and weight in units of 0.005 kg.
    private static let users: [UInt8: (code: UInt16, weight: UInt16)] = [1: (1234, 14_000), 2: (5678, 16_500)]
    private let requests = Mutex<[[UInt8]]>([])

    public init() {}

    /// The control point requests received, in order.
    public var received: [[UInt8]] { requests.withLock { $0 } }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        guard characteristic == Self.controlPoint, let op = value.first else { return [] }
        requests.withLock { $0.append(value) }
        func answer(_ result: UInt8, _ extra: [UInt8] = []) -> SimulatedReply {
            SimulatedReply(characteristic: Self.controlPoint, value: [0x20, op, result] + extra, indicate: true)
        }
        switch op {
        case 0x01 where value.count == 3:
            return [answer(0x01, [3])]
        case 0x02 where value.count == 4:
            let code = UInt16(value[2]) | UInt16(value[3]) << 8
            guard let user = Self.users[value[1]], user.code == code else { return [answer(0x05)] }
            return [answer(0x01),
                    SimulatedReply(characteristic: Self.weightMeasurement,
                                   value: [0x04, UInt8(user.weight & 0xFF), UInt8(user.weight >> 8), value[1]],
                                   indicate: true)]
        default:
            return [answer(0x02)]
        }
    }
}

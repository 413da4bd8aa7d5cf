import Foundation
import Synchronization
import Transport

/// A simulated Beurer BF788-class scale with the standard profiles: Weight Scale (0x2A9D),
/// Body Composition (0x2A9C), User Data Service (User Control Point 0x2A9F) and the vendor's
/// take-measurement characteristic 0x0006 (service 0xFFFF). Consent (`02 <index> <code LE>`) for
/// user 1 with code 3752 is accepted (`20 02 01`), any other "user not authorized" (`20 02 05`);
/// Register New User (`01 <code LE>`) gets index 2 (`20 01 01 02`), whose consent then takes
/// that code. After an accepted consent or registration, `00` written to 0x0006 makes it indicate
/// its `weighings` (weight, then composition, each pair in order).
public final class SimulatedStandardBeurerScale: SimulatedResponder {
    public static let weightMeasurement = BLEUUID(0x2A9D)
    public static let bodyComposition = BLEUUID(0x2A9C)
    public static let controlPoint = BLEUUID(0x2A9F)
    public static let takeMeasurement = BLEUUID(0x0006)
    /// The consent code of user 1.
    public static let consentCode: UInt16 = 3752

    /// The user data a BF788 held for user 1 in the capture of ble-scale-sync's issue #229 (as its
    /// tests record them): born 1983-08-08 (`bf 07 08 08`), male (`00`), 192 cm (`c0 00`), activity
    /// level 3 (`03`, vendor 0xFFF3), Database Change Increment 6 (`06 00 00 00`).
    public static let bf788UserData: [(BLEUUID, [UInt8])] = [
        (BLEUUID(0x2A85), [0xBF, 0x07, 0x08, 0x08]), (BLEUUID(0x2A8C), [0x00]), (BLEUUID(0x2A8E), [0xC0, 0x00]),
        (BLEUUID(0x2A99), [0x06, 0x00, 0x00, 0x00]), (BLEUUID(0xFFF3), [0x03]),
    ]

    /// The scale's GATT table with the User Data Service's user data, the Database Change
    /// Increment and the vendor's activity level (0xFFF3 in service 0xFFF0), readable and
    /// writable, holding ``bf788UserData``.
    public static let profileWithUserData: SimulatedProfile = {
        var table = profile
        func characteristic(_ uuid: BLEUUID) -> SimulatedProfile.Characteristic {
            .init(uuid: uuid, properties: 0x0A, value: bf788UserData.first { $0.0 == uuid }?.1 ?? [])
        }
        table.services[2].characteristics += [BLEUUID(0x2A85), BLEUUID(0x2A8C), BLEUUID(0x2A8E), BLEUUID(0x2A99)].map(characteristic)
        table.services.append(.init(uuid: BLEUUID(0xFFF0), characteristics: [characteristic(BLEUUID(0xFFF3))]))
        return table
    }()

    /// The scale's GATT table.
    public static let profile = SimulatedProfile(name: "BF788", services: [
        .init(uuid: BLEUUID(0x181D), characteristics: [.init(uuid: weightMeasurement, properties: 0x20)]),
        .init(uuid: BLEUUID(0x181B), characteristics: [.init(uuid: bodyComposition, properties: 0x20)]),
        .init(uuid: BLEUUID(0x181C), characteristics: [.init(uuid: controlPoint, properties: 0x28)]),
        .init(uuid: BLEUUID(0xFFFF), characteristics: [.init(uuid: takeMeasurement, properties: 0x08)]),
    ])

    private struct State {
        var consented = false
        var writes: [[UInt8]] = []
        var writesTo: [BLEUUID] = []
        /// Consent codes by user index.
        var codes: [UInt8: UInt16] = [1: SimulatedStandardBeurerScale.consentCode]
    }

    private let weighings: [(weight: [UInt8], composition: [UInt8])]
    private let state = Mutex(State())

    /// - Parameter weighings: Weight Measurement and Body Composition Measurement values.
    public init(weighings: [(weight: [UInt8], composition: [UInt8])]) {
        self.weighings = weighings
    }

    /// A new contact: the user must consent again (the registered users stay).
    public func disconnect() {
        state.withLock { $0.consented = false }
    }

    /// The values written to the control point and the take-measurement characteristic, in order.
    public var writes: [[UInt8]] { state.withLock { $0.writes } }
    /// The characteristic of each of ``writes``.
    public var writtenCharacteristics: [BLEUUID] { state.withLock { $0.writesTo } }

    public func respond(toWriteOf value: [UInt8], characteristic: BLEUUID) -> [SimulatedReply] {
        state.withLock {
            $0.writes.append(value)
            $0.writesTo.append(characteristic)
        }
        switch characteristic {
        case Self.controlPoint:
            guard let op = value.first else { return [] }
            func answer(_ result: UInt8, _ extra: [UInt8] = []) -> [SimulatedReply] {
                [SimulatedReply(characteristic: Self.controlPoint, value: [0x20, op, result] + extra, indicate: true)]
            }
            switch op {
            case 0x01 where value.count == 3:
                let code = UInt16(value[1]) | UInt16(value[2]) << 8
                state.withLock {
                    $0.codes[2] = code
                    $0.consented = true
                }
                return answer(0x01, [2])
            case 0x02 where value.count == 4:
                let code = UInt16(value[2]) | UInt16(value[3]) << 8
                let accepted = state.withLock { state in
                    guard state.codes[value[1]] == code else { return false }
                    state.consented = true
                    return true
                }
                return answer(accepted ? 0x01 : 0x05)
            default:
                return answer(0x02)
            }
        case Self.takeMeasurement:
            guard state.withLock({ $0.consented }) else { return [] }
            return weighings.flatMap { weighing in
                [SimulatedReply(characteristic: Self.weightMeasurement, value: weighing.weight, indicate: true),
                 SimulatedReply(characteristic: Self.bodyComposition, value: weighing.composition, indicate: true)]
            }
        default:
            return []
        }
    }
}

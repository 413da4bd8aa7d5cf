/// An HCI command opcode: OGF (6 bits) << 10 | OCF (10 bits).
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Builds an opcode from its group and command fields.
    public init(ogf: UInt16, ocf: UInt16) { self.rawValue = (ogf & 0x3F) << 10 | (ocf & 0x03FF) }

    /// Set Event Mask (Controller & Baseband).
    public static let setEventMask = HCIOpcode(rawValue: 0x0C01)
    /// Reset.
    public static let reset = HCIOpcode(rawValue: 0x0C03)
    /// LE Set Event Mask.
    public static let leSetEventMask = HCIOpcode(rawValue: 0x2001)
    /// LE Read Local Supported Features.
    public static let leReadLocalSupportedFeatures = HCIOpcode(rawValue: 0x2003)
    /// LE Set Scan Parameters (legacy scanning).
    public static let leSetScanParameters = HCIOpcode(rawValue: 0x200B)
    /// LE Set Scan Enable (legacy scanning).
    public static let leSetScanEnable = HCIOpcode(rawValue: 0x200C)
    /// LE Set Extended Scan Parameters.
    public static let leSetExtendedScanParameters = HCIOpcode(rawValue: 0x2041)
    /// LE Set Extended Scan Enable.
    public static let leSetExtendedScanEnable = HCIOpcode(rawValue: 0x2042)

    /// The name of the commands this module sends, for logs.
    public var name: String? {
        switch rawValue {
        case 0x0C01: "Set Event Mask"
        case 0x0C03: "Reset"
        case 0x2001: "LE Set Event Mask"
        case 0x2003: "LE Read Local Supported Features"
        case 0x200B: "LE Set Scan Parameters"
        case 0x200C: "LE Set Scan Enable"
        case 0x2041: "LE Set Extended Scan Parameters"
        case 0x2042: "LE Set Extended Scan Enable"
        default: nil
        }
    }

    public var description: String {
        let hex = "0x" + String(rawValue, radix: 16, uppercase: true).leftPadded(to: 4)
        return name.map { "\($0) (\(hex))" } ?? hex
    }
}

/// An HCI status / error code (Core spec Vol 1 Part F).
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00 Success.
    public static let success = HCIStatus(rawValue: 0x00)
    /// 0x01 Unknown HCI Command: the controller does not implement the command.
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    /// 0x0C Command Disallowed: valid command, wrong state (e.g. someone else is scanning).
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    /// 0x11 Unsupported Feature or Parameter Value.
    public static let unsupportedFeature = HCIStatus(rawValue: 0x11)
    /// 0x12 Invalid HCI Command Parameters.
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    /// 0x05 Authentication Failure (a disconnection reason).
    public static let authenticationFailure = HCIStatus(rawValue: 0x05)
    /// 0x08 Connection Timeout: the supervision timeout ran out (a disconnection reason).
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    /// 0x13 Remote User Terminated Connection (a disconnection reason).
    public static let remoteUserTerminated = HCIStatus(rawValue: 0x13)
    /// 0x16 Connection Terminated by Local Host (a disconnection reason).
    public static let localHostTerminated = HCIStatus(rawValue: 0x16)

    public var description: String {
        let hex = "0x" + String(rawValue, radix: 16, uppercase: true).leftPadded(to: 2)
        let name: String? = switch rawValue {
        case 0x00: "Success"
        case 0x01: "Unknown HCI Command"
        case 0x02: "Unknown Connection Identifier"
        case 0x03: "Hardware Failure"
        case 0x07: "Memory Capacity Exceeded"
        case 0x0C: "Command Disallowed"
        case 0x0D: "Connection Rejected due to Limited Resources"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x1F: "Unspecified Error"
        case 0x3A: "Controller Busy"
        default: nil
        }
        return name.map { "\($0) (\(hex))" } ?? hex
    }
}

/// An HCI command: opcode and parameters.
public struct HCICommand: Hashable, Sendable, CustomStringConvertible {
    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(opcode: HCIOpcode, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// The command as written to an HCI socket: indicator 0x01, opcode (LE), length, parameters.
    public var packet: [UInt8] {
        [HCIPacketType.command.rawValue, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8),
         UInt8(truncatingIfNeeded: parameters.count)] + parameters
    }

    public var description: String { "\(opcode) [\(parameters.hexString)]" }

    /// Reset (only on a controller this process owns exclusively).
    public static let reset = HCICommand(opcode: .reset)

    /// Set Event Mask with the given 64-bit mask.
    public static func setEventMask(_ mask: UInt64) -> HCICommand {
        HCICommand(opcode: .setEventMask, parameters: mask.littleEndianBytes(count: 8))
    }

    /// LE Set Event Mask with the given 64-bit mask.
    public static func leSetEventMask(_ mask: UInt64) -> HCICommand {
        HCICommand(opcode: .leSetEventMask, parameters: mask.littleEndianBytes(count: 8))
    }

    /// LE Read Local Supported Features.
    public static let leReadLocalSupportedFeatures = HCICommand(opcode: .leReadLocalSupportedFeatures)

    /// LE Set Scan Parameters: type (0 passive, 1 active), interval and window (0.625 ms units),
    /// own address type, filter policy.
    public static func leSetScanParameters(_ parameters: LEScanParameters) -> HCICommand {
        HCICommand(opcode: .leSetScanParameters,
                   parameters: [parameters.scanType.rawValue] + parameters.interval.littleEndianBytes(count: 2)
                       + parameters.window.littleEndianBytes(count: 2)
                       + [parameters.ownAddressType, parameters.filterPolicy])
    }

    /// LE Set Scan Enable.
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(opcode: .leSetScanEnable, parameters: [enable ? 1 : 0, filterDuplicates ? 1 : 0])
    }

    /// LE Set Extended Scan Parameters on the LE 1M PHY only.
    public static func leSetExtendedScanParameters(_ parameters: LEScanParameters) -> HCICommand {
        HCICommand(opcode: .leSetExtendedScanParameters,
                   parameters: [parameters.ownAddressType, parameters.filterPolicy, 0x01, parameters.scanType.rawValue]
                       + parameters.interval.littleEndianBytes(count: 2)
                       + parameters.window.littleEndianBytes(count: 2))
    }

    /// LE Set Extended Scan Enable, scanning until disabled (duration 0, period 0).
    public static func leSetExtendedScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(opcode: .leSetExtendedScanEnable,
                   parameters: [enable ? 1 : 0, filterDuplicates ? 1 : 0, 0, 0, 0, 0])
    }
}

/// Scan parameters shared by the legacy and the extended commands.
public struct LEScanParameters: Hashable, Sendable {
    /// Passive scanning only listens; active scanning sends SCAN_REQ and receives scan responses.
    public enum ScanType: UInt8, Hashable, Sendable {
        case passive = 0
        case active = 1
    }

    public var scanType: ScanType
    /// Time between the starts of two scan windows, 0.625 ms units (0x0004…0x4000).
    public var interval: UInt16
    /// Length of a scan window, 0.625 ms units, at most ``interval``.
    public var window: UInt16
    /// 0 public, 1 random (needs LE Set Random Address), 2/3 resolvable private with fallback.
    public var ownAddressType: UInt8
    /// 0 accept all advertisements (no accept list).
    public var filterPolicy: UInt8

    /// Defaults: passive, 60 ms interval, 30 ms window (BlueZ's passive-scan values), public
    /// own address, no accept list.
    public init(scanType: ScanType = .passive, interval: UInt16 = 0x0060, window: UInt16 = 0x0030,
                ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0) {
        self.scanType = scanType
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }
}

/// Why bytes read from an HCI socket are not a usable event.
public enum HCIPacketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The packet is empty.
    case empty
    /// The first byte is not the event indicator 0x04.
    case notAnEvent(indicator: UInt8)
    /// The packet ends before the header or the announced parameters: `need` bytes, `have` bytes.
    case truncated(need: Int, have: Int)

    public var description: String {
        switch self {
        case .empty: "empty HCI packet"
        case .notAnEvent(let indicator): "not an HCI event: packet indicator 0x\(String(indicator, radix: 16)) at offset 0"
        case .truncated(let need, let have): "truncated HCI event: \(need) bytes announced, \(have) present"
        }
    }
}

/// An HCI event as read from a socket, split into what the scanner acts on.
public enum HCIEvent: Hashable, Sendable {
    /// Command Complete (0x0E): the opcode and its return parameters (status first for all
    /// commands this module sends); opcode 0 only returns command credits.
    case commandComplete(opcode: HCIOpcode, returnParameters: [UInt8])
    /// Command Status (0x0F): the controller accepted (status 0) or refused the command.
    case commandStatus(opcode: HCIOpcode, status: HCIStatus)
    /// LE Meta event (0x3E): subevent code and the parameters after it.
    case leMeta(subevent: UInt8, parameters: [UInt8])
    /// Hardware Error (0x10) with the controller's code.
    case hardwareError(code: UInt8)
    /// Any other event.
    case other(code: UInt8, parameters: [UInt8])

    /// Parses an event packet with its 0x04 indicator, as a raw HCI socket delivers it.
    public init(packet: [UInt8]) throws(HCIPacketError) {
        guard let indicator = packet.first else { throw .empty }
        guard indicator == HCIPacketType.event.rawValue else { throw .notAnEvent(indicator: indicator) }
        guard packet.count >= 3 else { throw .truncated(need: 3, have: packet.count) }
        let length = Int(packet[2])
        guard packet.count >= 3 + length else { throw .truncated(need: 3 + length, have: packet.count) }
        let parameters = Array(packet[3..<(3 + length)])
        switch packet[1] {
        case 0x0E:
            guard parameters.count >= 3 else { throw .truncated(need: 6, have: packet.count) }
            self = .commandComplete(opcode: HCIOpcode(rawValue: UInt16(parameters[1]) | UInt16(parameters[2]) << 8),
                                    returnParameters: Array(parameters[3...]))
        case 0x0F:
            guard parameters.count >= 4 else { throw .truncated(need: 7, have: packet.count) }
            self = .commandStatus(opcode: HCIOpcode(rawValue: UInt16(parameters[2]) | UInt16(parameters[3]) << 8),
                                  status: HCIStatus(rawValue: parameters[0]))
        case 0x3E:
            guard let subevent = parameters.first else { throw .truncated(need: 4, have: packet.count) }
            self = .leMeta(subevent: subevent, parameters: Array(parameters[1...]))
        case 0x10:
            guard let code = parameters.first else { throw .truncated(need: 4, have: packet.count) }
            self = .hardwareError(code: code)
        default:
            self = .other(code: packet[1], parameters: parameters)
        }
    }
}

extension FixedWidthInteger {
    /// The low `count` bytes, least significant first.
    package func littleEndianBytes(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: self >> (8 * $0)) }
    }
}

extension String {
    package func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension Collection<UInt8> {
    /// Lower-case hex bytes separated by spaces (`0a 1b ff`).
    package var hexString: String {
        map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
    }
}

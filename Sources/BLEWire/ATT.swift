/// An ATT PDU opcode (Core spec Vol 3 Part F 3.4).
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(rawValue: 0x20)
    public static let readMultipleVariableResponse = ATTOpcode(rawValue: 0x21)
    public static let writeCommand = ATTOpcode(rawValue: 0x52)

    /// Commands (bit 6 set) never get a response.
    public var isCommand: Bool { rawValue & 0x40 != 0 }

    /// Client requests a server must answer (the even opcodes of the request/response pairs).
    public var isRequest: Bool {
        switch rawValue {
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20: true
        default: false
        }
    }

    /// Server responses that complete one of the ``isRequest`` requests (odd opcodes, plus Error Response).
    public var isResponse: Bool {
        switch rawValue {
        case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: true
        default: false
        }
    }

    /// The shortest well-formed PDU with this opcode (opcode byte included): a handle after the
    /// opcode, a handle range and a type, or a format / element length byte.
    public var minimumPDULength: Int {
        switch rawValue {
        case 0x0A, 0x12, 0x52, 0x1B, 0x1D: 3
        case 0x06, 0x08, 0x10: 7
        case 0x05, 0x09, 0x11: 2
        default: 1
        }
    }

    public var description: String {
        let name: String? = switch rawValue {
        case 0x01: "Error Response"
        case 0x02: "Exchange MTU Request"
        case 0x03: "Exchange MTU Response"
        case 0x04: "Find Information Request"
        case 0x05: "Find Information Response"
        case 0x06: "Find By Type Value Request"
        case 0x07: "Find By Type Value Response"
        case 0x08: "Read By Type Request"
        case 0x09: "Read By Type Response"
        case 0x0A: "Read Request"
        case 0x0B: "Read Response"
        case 0x0C: "Read Blob Request"
        case 0x0D: "Read Blob Response"
        case 0x10: "Read By Group Type Request"
        case 0x11: "Read By Group Type Response"
        case 0x12: "Write Request"
        case 0x13: "Write Response"
        case 0x1B: "Handle Value Notification"
        case 0x1D: "Handle Value Indication"
        case 0x1E: "Handle Value Confirmation"
        case 0x52: "Write Command"
        default: nil
        }
        let hex = "0x" + String(rawValue, radix: 16, uppercase: true).leftPadded(to: 2)
        return name.map { "\($0) (\(hex))" } ?? hex
    }
}

/// An ATT error code from an Error Response.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)

    /// The peer wants an encrypted (bonded) link: raise the socket's security level and retry.
    public var needsSecurity: Bool { rawValue == 0x05 || rawValue == 0x0C || rawValue == 0x0F || rawValue == 0x08 }

    public var description: String {
        let name: String? = switch rawValue {
        case 0x01: "Invalid Handle"
        case 0x02: "Read Not Permitted"
        case 0x03: "Write Not Permitted"
        case 0x04: "Invalid PDU"
        case 0x05: "Insufficient Authentication"
        case 0x06: "Request Not Supported"
        case 0x07: "Invalid Offset"
        case 0x08: "Insufficient Authorization"
        case 0x09: "Prepare Queue Full"
        case 0x0A: "Attribute Not Found"
        case 0x0B: "Attribute Not Long"
        case 0x0C: "Insufficient Encryption Key Size"
        case 0x0D: "Invalid Attribute Value Length"
        case 0x0E: "Unlikely Error"
        case 0x0F: "Insufficient Encryption"
        case 0x10: "Unsupported Group Type"
        case 0x11: "Insufficient Resources"
        case 0xFD: "CCCD Improperly Configured"
        case 0xFE: "Procedure Already in Progress"
        case 0xFF: "Out of Range"
        default: nil
        }
        let hex = "0x" + String(rawValue, radix: 16, uppercase: true).leftPadded(to: 2)
        return name.map { "\($0) (\(hex))" } ?? hex
    }
}

/// Builders for the PDUs a GATT client sends and the few a server answers with.
public enum ATTPDU {
    public static func exchangeMTURequest(_ mtu: UInt16) -> [UInt8] {
        [ATTOpcode.exchangeMTURequest.rawValue] + mtu.littleEndianBytes(count: 2)
    }

    public static func exchangeMTUResponse(_ mtu: UInt16) -> [UInt8] {
        [ATTOpcode.exchangeMTUResponse.rawValue] + mtu.littleEndianBytes(count: 2)
    }

    public static func readByGroupTypeRequest(start: UInt16, end: UInt16, type: UInt16) -> [UInt8] {
        [ATTOpcode.readByGroupTypeRequest.rawValue] + start.littleEndianBytes(count: 2)
            + end.littleEndianBytes(count: 2) + type.littleEndianBytes(count: 2)
    }

    public static func readByTypeRequest(start: UInt16, end: UInt16, type: UInt16) -> [UInt8] {
        [ATTOpcode.readByTypeRequest.rawValue] + start.littleEndianBytes(count: 2)
            + end.littleEndianBytes(count: 2) + type.littleEndianBytes(count: 2)
    }

    public static func findInformationRequest(start: UInt16, end: UInt16) -> [UInt8] {
        [ATTOpcode.findInformationRequest.rawValue] + start.littleEndianBytes(count: 2) + end.littleEndianBytes(count: 2)
    }

    public static func readRequest(handle: UInt16) -> [UInt8] {
        [ATTOpcode.readRequest.rawValue] + handle.littleEndianBytes(count: 2)
    }

    public static func readBlobRequest(handle: UInt16, offset: UInt16) -> [UInt8] {
        [ATTOpcode.readBlobRequest.rawValue] + handle.littleEndianBytes(count: 2) + offset.littleEndianBytes(count: 2)
    }

    public static func writeRequest(handle: UInt16, value: [UInt8]) -> [UInt8] {
        [ATTOpcode.writeRequest.rawValue] + handle.littleEndianBytes(count: 2) + value
    }

    /// A Write Command (no response).
    public static func writeCommand(handle: UInt16, value: [UInt8]) -> [UInt8] {
        [ATTOpcode.writeCommand.rawValue] + handle.littleEndianBytes(count: 2) + value
    }

    /// A Prepare Write Request: one part of a long value, queued by the server at `offset`.
    public static func prepareWriteRequest(handle: UInt16, offset: UInt16, part: [UInt8]) -> [UInt8] {
        [ATTOpcode.prepareWriteRequest.rawValue] + handle.littleEndianBytes(count: 2) + offset.littleEndianBytes(count: 2) + part
    }

    /// The server's echo of a Prepare Write Request.
    public static func prepareWriteResponse(handle: UInt16, offset: UInt16, part: [UInt8]) -> [UInt8] {
        [ATTOpcode.prepareWriteResponse.rawValue] + handle.littleEndianBytes(count: 2) + offset.littleEndianBytes(count: 2) + part
    }

    /// An Execute Write Request: write the queued parts (`execute`) or cancel them.
    public static func executeWriteRequest(execute: Bool) -> [UInt8] {
        [ATTOpcode.executeWriteRequest.rawValue, execute ? 0x01 : 0x00]
    }

    /// The largest attribute value ATT allows (a long write or read never exceeds it).
    public static let maximumAttributeValueLength = 512

    /// The ATT MTU of an LE link before an Exchange MTU.
    public static let defaultMTU = 23

    public static func errorResponse(request: UInt8, handle: UInt16, code: ATTErrorCode) -> [UInt8] {
        [ATTOpcode.errorResponse.rawValue, request] + handle.littleEndianBytes(count: 2) + [code.rawValue]
    }

    public static let handleValueConfirmation: [UInt8] = [ATTOpcode.handleValueConfirmation.rawValue]
}

extension Array<UInt8> {
    /// The little-endian 16-bit value at `offset`; the caller checked the length.
    package func uint16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }
}

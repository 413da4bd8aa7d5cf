import AdapterKit
import Foundation

/// The ANT message ids the adapter sends or reads.
public enum ANTMessageID {
    public static let channelEvent: UInt8 = 0x40
    public static let unassignChannel: UInt8 = 0x41
    public static let assignChannel: UInt8 = 0x42
    public static let channelPeriod: UInt8 = 0x43
    public static let searchTimeout: UInt8 = 0x44
    public static let radioFrequency: UInt8 = 0x45
    public static let networkKey: UInt8 = 0x46
    public static let resetSystem: UInt8 = 0x4A
    public static let openChannel: UInt8 = 0x4B
    public static let closeChannel: UInt8 = 0x4C
    public static let broadcastData: UInt8 = 0x4E
    public static let acknowledgedData: UInt8 = 0x4F
    public static let burstData: UInt8 = 0x50
    public static let channelID: UInt8 = 0x51
    public static let openRxScanMode: UInt8 = 0x5B
    public static let enableExtendedMessages: UInt8 = 0x66
    public static let startupMessage: UInt8 = 0x6F

    /// A name for logs and errors.
    public static func name(_ id: UInt8) -> String {
        switch id {
        case channelEvent: "channel response"
        case unassignChannel: "unassign channel"
        case assignChannel: "assign channel"
        case channelPeriod: "channel period"
        case searchTimeout: "search timeout"
        case radioFrequency: "RF frequency"
        case networkKey: "set network key"
        case resetSystem: "reset"
        case openChannel: "open channel"
        case closeChannel: "close channel"
        case broadcastData: "broadcast data"
        case acknowledgedData: "acknowledged data"
        case burstData: "burst data"
        case channelID: "channel id"
        case openRxScanMode: "open Rx scan mode"
        case enableExtendedMessages: "enable extended messages"
        case startupMessage: "startup"
        default: String(format: "message 0x%02x", id)
        }
    }
}

/// The host-to-stick commands of the start-up.
public enum ANTCommand {
    /// The ANT+ radio frequency: 2457 MHz, given as MHz above 2400.
    public static let antPlusFrequency: UInt8 = 57

    public static func reset() -> ANTMessage { ANTMessage(id: ANTMessageID.resetSystem, payload: [0x00]) }

    public static func setNetworkKey(network: UInt8, key: ANTNetworkKey) -> ANTMessage {
        ANTMessage(id: ANTMessageID.networkKey, payload: [network] + key.bytes)
    }

    /// Channel type 0x00 is a bidirectional receive ("slave") channel.
    public static func assignChannel(_ channel: UInt8, type: UInt8 = 0x00, network: UInt8 = 0) -> ANTMessage {
        ANTMessage(id: ANTMessageID.assignChannel, payload: [channel, type, network])
    }

    /// Device number 0, device type 0 and transmission type 0 are wildcards.
    public static func setChannelID(_ channel: UInt8, deviceNumber: UInt16 = 0, deviceType: UInt8 = 0,
                                    transmissionType: UInt8 = 0) -> ANTMessage {
        ANTMessage(id: ANTMessageID.channelID,
                   payload: [channel, UInt8(deviceNumber & 0xFF), UInt8(deviceNumber >> 8), deviceType, transmissionType])
    }

    /// The message period in 1/32768 s.
    public static func setPeriod(_ channel: UInt8, period: UInt16) -> ANTMessage {
        ANTMessage(id: ANTMessageID.channelPeriod, payload: [channel, UInt8(period & 0xFF), UInt8(period >> 8)])
    }

    /// Search timeout in units of 2.5 s; 255 searches without end.
    public static func setSearchTimeout(_ channel: UInt8, timeout: UInt8) -> ANTMessage {
        ANTMessage(id: ANTMessageID.searchTimeout, payload: [channel, timeout])
    }

    public static func setFrequency(_ channel: UInt8, frequency: UInt8 = antPlusFrequency) -> ANTMessage {
        ANTMessage(id: ANTMessageID.radioFrequency, payload: [channel, frequency])
    }

    /// Makes the stick append the sender's channel id (flag 0x80) to every received data message.
    public static func enableExtendedMessages() -> ANTMessage {
        ANTMessage(id: ANTMessageID.enableExtendedMessages, payload: [0x00, 0x01])
    }

    public static func openChannel(_ channel: UInt8) -> ANTMessage {
        ANTMessage(id: ANTMessageID.openChannel, payload: [channel])
    }

    /// Continuous scanning on channel 0: hears every device on the network at once.
    public static func openRxScanMode() -> ANTMessage {
        ANTMessage(id: ANTMessageID.openRxScanMode, payload: [0x00])
    }

    public static func closeChannel(_ channel: UInt8) -> ANTMessage {
        ANTMessage(id: ANTMessageID.closeChannel, payload: [channel])
    }
}

/// A channel response (to a command) or a channel event (from the radio): message 0x40.
public struct ANTChannelEvent: Hashable, Sendable {
    public var channel: UInt8
    /// The command answered, or 0x01 for a radio event.
    public var messageID: UInt8
    /// 0 = no error (for a response); for a radio event the event code (e.g. 0x07 channel closed).
    public var code: UInt8

    public static let noError: UInt8 = 0x00
    public static let radioEvent: UInt8 = 0x01
    public static let eventRxSearchTimeout: UInt8 = 0x01
    public static let eventRxFail: UInt8 = 0x02
    public static let eventChannelClosed: UInt8 = 0x07

    public init(channel: UInt8, messageID: UInt8, code: UInt8) {
        self.channel = channel
        self.messageID = messageID
        self.code = code
    }

    public init(_ message: ANTMessage) throws(ANTPayloadError) {
        guard message.payload.count >= 3 else {
            throw .tooShort(messageID: message.id, expected: 3, found: message.payload.count, payload: message.payload)
        }
        self.init(channel: message.payload[0], messageID: message.payload[1], code: message.payload[2])
    }

    /// Whether this answers `messageID` (a command response, not a radio event).
    public func answers(_ messageID: UInt8) -> Bool { self.messageID == messageID }
}

/// Who sent a data message: the channel id the stick appends in extended mode.
public struct ANTChannelID: Hashable, Sendable, CustomStringConvertible {
    public var deviceNumber: UInt16
    /// The device type without the pairing bit (bit 7).
    public var deviceType: UInt8
    public var transmissionType: UInt8

    public init(deviceNumber: UInt16, deviceType: UInt8, transmissionType: UInt8) {
        self.deviceNumber = deviceNumber
        self.deviceType = deviceType & 0x7F
        self.transmissionType = transmissionType
    }

    /// The 20-bit device number: the high nibble of the transmission type extends the 16-bit number.
    public var extendedDeviceNumber: UInt32 {
        UInt32(transmissionType >> 4) << 16 | UInt32(deviceNumber)
    }

    /// `ant+/120/12345`: stable across sessions, used as the sample's device identifier.
    public var description: String { "ant+/\(deviceType)/\(extendedDeviceNumber)" }
}

/// A data message (broadcast or acknowledged): 8 bytes of page data, and with extended data the sender.
public struct ANTDataMessage: Hashable, Sendable {
    public var channel: UInt8
    /// The 8 data bytes (byte 0 is the page number).
    public var data: [UInt8]
    public var channelID: ANTChannelID?
    /// Received signal strength in dBm when the stick appends it (flag 0x40).
    public var rssi: Int8?
    /// The stick's receive time in 1/32768 s (flag 0x20), when appended.
    public var rxTimestamp: UInt16?

    public init(channel: UInt8, data: [UInt8], channelID: ANTChannelID? = nil, rssi: Int8? = nil, rxTimestamp: UInt16? = nil) {
        self.channel = channel
        self.data = data
        self.channelID = channelID
        self.rssi = rssi
        self.rxTimestamp = rxTimestamp
    }

    /// Reads the payload of a 0x4E or 0x4F message: `[channel][8 data]`, optionally followed by a flag byte and
    /// the fields it announces (0x80 channel id: 4 bytes, 0x40 RSSI: 3 bytes, 0x20 timestamp: 2 bytes).
    public init(_ message: ANTMessage) throws(ANTPayloadError) {
        let payload = message.payload
        guard payload.count >= 9 else {
            throw .tooShort(messageID: message.id, expected: 9, found: payload.count, payload: payload)
        }
        self.init(channel: payload[0], data: Array(payload[1..<9]))
        guard payload.count > 9 else { return }
        let flags = payload[9]
        guard flags & 0x1F == 0 else { throw .unknownExtendedFlags(flags, payload: payload) }
        var needed = 10
        if flags & 0x80 != 0 { needed += 4 }
        if flags & 0x40 != 0 { needed += 3 }
        if flags & 0x20 != 0 { needed += 2 }
        guard payload.count >= needed else {
            throw .tooShort(messageID: message.id, expected: needed, found: payload.count, payload: payload)
        }
        var offset = 10
        if flags & 0x80 != 0 {
            channelID = ANTChannelID(deviceNumber: UInt16(payload[offset]) | UInt16(payload[offset + 1]) << 8,
                                     deviceType: payload[offset + 2], transmissionType: payload[offset + 3])
            offset += 4
        }
        if flags & 0x40 != 0 {
            rssi = Int8(bitPattern: payload[offset + 1])
            offset += 3
        }
        if flags & 0x20 != 0 {
            rxTimestamp = UInt16(payload[offset]) | UInt16(payload[offset + 1]) << 8
        }
    }
}

/// A message whose payload does not have the fields its id requires.
public enum ANTPayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooShort(messageID: UInt8, expected: Int, found: Int, payload: [UInt8])
    /// An extended-data flag byte with bits this decoder does not know.
    case unknownExtendedFlags(UInt8, payload: [UInt8])

    public var description: String {
        switch self {
        case .tooShort(let id, let expected, let found, let payload):
            "\(ANTMessageID.name(id)): \(found) payload bytes, \(expected) needed: \(hexString(payload))"
        case .unknownExtendedFlags(let flags, let payload):
            String(format: "extended data flags 0x%02x not understood: ", flags) + hexString(payload)
        }
    }

    public var reason: String {
        switch self {
        case .tooShort: "short-message"
        case .unknownExtendedFlags: "unknown-extended-flags"
        }
    }
}

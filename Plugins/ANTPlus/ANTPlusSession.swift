import AdapterKit
import Foundation
import HealthModel
import Transport

/// Why an ANT session could not start or went on. No case carries the network key.
public enum ANTSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    case networkKey(ANTNetworkKeyError)
    case options(AdapterOptionError)
    /// No interface with a bulk (or interrupt) IN and OUT endpoint.
    case noDataInterface(device: String)
    /// The stick answered a command with an error code.
    case commandFailed(command: String, code: UInt8)
    /// The stick did not answer a command.
    case noResponse(command: String)

    public var description: String {
        switch self {
        case .networkKey(let error): error.description
        case .options(let error):
            "ant-plus: \(error)"
        case .noDataInterface(let device):
            "ant-plus: \(device) has no interface with an IN and an OUT data endpoint"
        case .commandFailed(let command, let code):
            String(format: "ant-plus: the stick refused %@ (code 0x%02x)", command, code)
        case .noResponse(let command):
            "ant-plus: the stick did not answer \(command)"
        }
    }
}

/// One ANT stick: reset, network key, channel set-up with extended messages (so every page names its sensor),
/// then reception until `shouldStop`, committing a batch every `batchInterval` and at the end.
///
/// On a device handle that plays back a capture (`USBDeviceHandle.answersWrites` false,
/// `priorHostWrites` the capturing host's writes) the session transmits nothing real, and the capture may come
/// from other software with its own start-up: the network key is the one the capture shows (or a placeholder;
/// never printed, and none need be configured), a command the capture does not answer or refused is noted and
/// passed over instead of ending the session, channels are neither re-opened nor closed, and data without
/// extended data is attributed through the channel ids the capturing software configured (set channel id, 0x51)
/// or the stick reported. The session learns all this from the handle, not from being told it is replayed.
public final class ANTPlusSession: USBAdapterSession {
    static let readTimeout: Duration = .milliseconds(500)
    static let writeTimeout: Duration = .seconds(1)
    /// Reads (of `readTimeout` each) a command's response may take.
    static let responseReads = 8
    /// The profiles a channel is opened for in `channels` mode, in channel order.
    static let profiles: [UInt8] = [ANTPlusDeviceType.heartRate, ANTPlusDeviceType.strideSpeedDistance,
                                    ANTPlusDeviceType.weightScale]

    private let context: AdapterContext
    private let configuration: Result<ANTPlusConfiguration, ANTSessionError>
    private let now: @Sendable () -> Date

    private var decoder = ANTStreamDecoder()
    private var receiver: ANTPlusReceiver
    private var output = AdapterOutput()
    /// Device type per channel in `channels` mode (for pages without extended data).
    private var channelTypes: [UInt8: UInt8] = [:]
    /// Channel ids the stick reported (a 0x51 message answering a request).
    private var reportedChannels: [UInt8: ANTChannelID] = [:]
    /// Replay: the channel ids the capturing software set (0x51 commands with a device type).
    private var capturedChannels: [UInt8: ANTChannelID] = [:]
    /// Whether the device's answers follow what the session writes (`USBDeviceHandle.answersWrites`; false for a
    /// capture's playback). Set when the session starts on its device.
    private var deviceAnswersWrites = true

    public init(context: AdapterContext, configuration: Result<ANTPlusConfiguration, ANTSessionError>,
                now: @escaping @Sendable () -> Date) {
        self.context = context
        self.configuration = configuration
        self.now = now
        let settings = (try? configuration.get().receiver) ?? ANTPlusReceiver.Settings()
        self.receiver = ANTPlusReceiver(source: context.source, settings: settings)
    }

    public func run(_ device: any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
                    shouldStop: () -> Bool) throws {
        let (configuration, networkKey) = try resolvedConfiguration(device)
        let link = try ANTLink(device: device)
        try link.open()
        defer { link.close() }

        try startUp(link, configuration: configuration, networkKey: networkKey)
        var lastBatch = now()
        var deviceGone = false
        while !shouldStop() {
            let bytes: [UInt8]
            do {
                bytes = try link.read()
            } catch .noDevice, .replayExhausted {
                deviceGone = true
                break
            }
            let time = now()
            if !bytes.isEmpty { consume(bytes, at: time, link: link) }
            if time.timeIntervalSince(lastBatch) >= configuration.batchInterval {
                receiver.flush(at: time, into: &output)
                try deliverPending(deliver)
                lastBatch = time
            }
        }
        receiver.flush(at: now(), into: &output)
        try deliverPending(deliver)
        if !deviceGone { shutDown(link, configuration: configuration) }
    }

    /// The configuration and the network key to send. When another host set the stick up before (a capture's
    /// playback shows its writes), its network key is used and the channel ids it set are learnt. Without a key
    /// from either, a device that answers writes cannot be started (`networkKey(.missing)`); a playback gets the
    /// placeholder, which it answers as it answers anything.
    private func resolvedConfiguration(_ device: any USBDeviceHandle) throws -> (ANTPlusConfiguration, ANTNetworkKey) {
        let configuration = try self.configuration.get()
        deviceAnswersWrites = device.answersWrites
        var networkKey = configuration.networkKey
        if let outEndpoint = try? ANTLink(device: device).outEndpoint,
           let hostWrites = device.priorHostWrites(endpoint: outEndpoint) {
            let setUp = ANTCapturedSetUp(hostWrites: hostWrites)
            if let key = setUp.networkKey { networkKey = key }
            capturedChannels = setUp.channels
        }
        if let networkKey { return (configuration, networkKey) }
        guard !deviceAnswersWrites else { throw ANTSessionError.networkKey(.missing) }
        return (configuration, .placeholder)
    }

    private func deliverPending(_ deliver: (AdapterOutput) throws -> DeliveryReceipt) throws {
        guard !output.records.isEmpty || !output.rejections.isEmpty || !output.skipped.isEmpty else { return }
        let batch = output
        output = AdapterOutput()
        // Broadcasts are not acknowledged to the sensor: the receipt changes nothing here.
        _ = try deliver(batch)
    }

    // MARK: Start-up

    private func startUp(_ link: ANTLink, configuration: ANTPlusConfiguration, networkKey: ANTNetworkKey) throws {
        try link.send(ANTCommand.reset())
        // The stick announces itself after a reset; some do not, which is not an error.
        for _ in 0..<4 {
            if try waitFor(link, matching: { $0.id == ANTMessageID.startupMessage }) { break }
        }
        try command(link, ANTCommand.setNetworkKey(network: 0, key: networkKey))
        switch configuration.mode {
        case .scan:
            try configureChannel(link, 0, deviceType: 0, period: ANTPlusDeviceType.period(ANTPlusDeviceType.heartRate))
            try command(link, ANTCommand.enableExtendedMessages())
            try command(link, ANTCommand.openRxScanMode())
        case .channels:
            for (index, type) in Self.profiles.enumerated() {
                let channel = UInt8(index)
                try configureChannel(link, channel, deviceType: type, period: ANTPlusDeviceType.period(type))
                try command(link, ANTCommand.setSearchTimeout(channel, timeout: 0xFF))
                channelTypes[channel] = type
            }
            try command(link, ANTCommand.enableExtendedMessages())
            for channel in channelTypes.keys.sorted() { try command(link, ANTCommand.openChannel(channel)) }
        }
    }

    private func configureChannel(_ link: ANTLink, _ channel: UInt8, deviceType: UInt8, period: UInt16?) throws {
        try command(link, ANTCommand.assignChannel(channel))
        try command(link, ANTCommand.setChannelID(channel, deviceType: deviceType))
        if let period { try command(link, ANTCommand.setPeriod(channel, period: period)) }
        try command(link, ANTCommand.setFrequency(channel))
    }

    /// Sends a command and waits for the stick's response to it; data arriving meanwhile is handled.
    private func command(_ link: ANTLink, _ message: ANTMessage) throws {
        try link.send(message)
        let channel = message.payload.first ?? 0
        var failure: UInt8?
        let answered = try waitFor(link) { reply in
            guard reply.id == ANTMessageID.channelEvent, let event = try? ANTChannelEvent(reply),
                  event.answers(message.id), event.channel == channel || message.id == ANTMessageID.networkKey
                    || message.id == ANTMessageID.enableExtendedMessages else { return false }
            if event.code != ANTChannelEvent.noError { failure = event.code }
            return true
        }
        let name = ANTMessageID.name(message.id)
        if !deviceAnswersWrites, failure != nil || !answered {
            // A playback of another program's capture: its start-up differs from ours, no reason to stop reading it.
            output.skip(failure == nil ? "ant command not answered in the capture" : "ant command refused in the capture")
            return
        }
        if let failure { throw ANTSessionError.commandFailed(command: name, code: failure) }
        guard answered else { throw ANTSessionError.noResponse(command: name) }
    }

    /// Reads until a message satisfies `matching` (true) or the reads run out (false). Other messages are handled.
    private func waitFor(_ link: ANTLink, matching: (ANTMessage) -> Bool) throws -> Bool {
        for _ in 0..<Self.responseReads {
            let bytes: [UInt8]
            do {
                bytes = try link.read()
            } catch .replayExhausted {
                return false
            }
            decoder.append(bytes)
            while let result = decoder.next() {
                switch result {
                case .success(let message):
                    if matching(message) { return true }
                    handle(message, at: now(), link: link)
                case .failure(let error):
                    report(error, at: now())
                }
            }
        }
        return false
    }

    private func shutDown(_ link: ANTLink, configuration: ANTPlusConfiguration) {
        // A playback is not a stick to close channels on.
        guard deviceAnswersWrites else { return }
        let channels: [UInt8] = configuration.mode == .scan ? [0] : channelTypes.keys.sorted()
        for channel in channels { try? link.send(ANTCommand.closeChannel(channel)) }
    }

    // MARK: Reception

    private func consume(_ bytes: [UInt8], at time: Date, link: ANTLink) {
        decoder.append(bytes)
        while let result = decoder.next() {
            switch result {
            case .success(let message): handle(message, at: time, link: link)
            case .failure(let error): report(error, at: time)
            }
        }
    }

    private func report(_ error: ANTFrameError, at time: Date) {
        if case .missingSync(let bytes) = error, bytes.allSatisfy({ $0 == 0 }) {
            output.skip("ant padding")
            return
        }
        output.reject(context.source, reason: error.reason, detail: error.description, time: time)
    }

    private func handle(_ message: ANTMessage, at time: Date, link: ANTLink) {
        switch message.id {
        case ANTMessageID.broadcastData, ANTMessageID.acknowledgedData:
            let data: ANTDataMessage
            do {
                data = try ANTDataMessage(message)
            } catch {
                output.reject(context.source, reason: error.reason, detail: error.description, time: time)
                return
            }
            guard let sender = data.channelID ?? sender(onChannel: data.channel) else {
                output.reject(context.source, reason: "no-channel-id",
                              detail: "data without the sender's channel id: \(hexString(message.payload))", time: time)
                return
            }
            receiver.receive(data.data, from: sender, at: time, into: &output)
        case ANTMessageID.channelEvent:
            guard let event = try? ANTChannelEvent(message) else {
                output.reject(context.source, reason: "short-message", detail: message.description, time: time)
                return
            }
            if event.messageID == ANTChannelEvent.radioEvent, event.code == ANTChannelEvent.eventChannelClosed,
               channelTypes[event.channel] != nil, deviceAnswersWrites {
                // A pairing channel closed (search ended): search again.
                try? link.send(ANTCommand.openChannel(event.channel))
            }
            output.skip("ant channel event")
        case ANTMessageID.channelID:
            // The stick's answer to "request channel id": who a paired channel hears.
            if let id = ANTCapturedSetUp.channelID(message.payload), id.channelID.deviceType != 0 {
                reportedChannels[id.channel] = id.channelID
            }
            output.skip("ant channel id")
        default:
            output.skip("ant \(ANTMessageID.name(message.id))")
        }
    }

    /// Who sends on `channel` when a data message does not say: the id the stick reported, the id the capturing
    /// software set, or the profile this session opened the channel for.
    private func sender(onChannel channel: UInt8) -> ANTChannelID? {
        reportedChannels[channel] ?? capturedChannels[channel] ?? channelTypes[channel].map {
            ANTChannelID(deviceNumber: 0, deviceType: $0, transmissionType: 0)
        }
    }
}

/// What the host sent the stick in a capture: the network key of network 0 and the channel ids it set. A replayed
/// session uses these to speak the capture's language and to know who sends on a channel without extended data.
struct ANTCapturedSetUp {
    var networkKey: ANTNetworkKey?
    /// Per channel, the first set channel id with a device type (a wildcard type says nothing).
    var channels: [UInt8: ANTChannelID] = [:]

    init(hostWrites: [[UInt8]]) {
        var decoder = ANTStreamDecoder()
        for write in hostWrites { decoder.append(write) }
        while let result = decoder.next() {
            guard case .success(let message) = result else { continue }
            switch message.id {
            case ANTMessageID.networkKey where message.payload.count == 9 && message.payload[0] == 0:
                if networkKey == nil { networkKey = try? ANTNetworkKey(bytes: Array(message.payload[1...])) }
            case ANTMessageID.channelID:
                if let id = Self.channelID(message.payload), id.channelID.deviceType != 0, channels[id.channel] == nil {
                    channels[id.channel] = id.channelID
                }
            default:
                break
            }
        }
    }

    /// A 0x51 payload: channel, device number (u16 LE), device type, transmission type.
    static func channelID(_ payload: [UInt8]) -> (channel: UInt8, channelID: ANTChannelID)? {
        guard payload.count >= 5 else { return nil }
        return (payload[0], ANTChannelID(deviceNumber: UInt16(payload[1]) | UInt16(payload[2]) << 8,
                                         deviceType: payload[3], transmissionType: payload[4]))
    }
}

/// The stick's data interface: the first interface with an IN and an OUT bulk (or interrupt) endpoint.
final class ANTLink {
    let device: any USBDeviceHandle
    let interface: UInt8
    let inEndpoint: UInt8
    let outEndpoint: UInt8
    let readLength: Int

    init(device: any USBDeviceHandle) throws(ANTSessionError) {
        for candidate in device.device.interfaces {
            let data = candidate.endpoints.filter { $0.transferType == .bulk || $0.transferType == .interrupt }
            if let input = data.first(where: \.isInput), let output = data.first(where: { !$0.isInput }) {
                self.device = device
                self.interface = candidate.number
                self.inEndpoint = input.address
                self.outEndpoint = output.address
                self.readLength = max(Int(input.maxPacketSize), 64)
                return
            }
        }
        throw .noDataInterface(device: device.device.description)
    }

    /// Claims the interface; a kernel serial driver bound to the stick is detached.
    func open() throws(USBError) {
        try device.claimInterface(interface, detachKernelDriver: true)
    }

    func close() {
        try? device.releaseInterface(interface)
    }

    func send(_ message: ANTMessage) throws(USBError) {
        _ = try device.write(endpoint: outEndpoint, data: message.bytes, timeout: ANTPlusSession.writeTimeout)
    }

    /// The next bytes from the stick; `[]` when nothing came within the timeout.
    func read() throws(USBError) -> [UInt8] {
        do {
            return try device.read(endpoint: inEndpoint, length: readLength, timeout: ANTPlusSession.readTimeout)
        } catch .timeout {
            return []
        }
    }
}

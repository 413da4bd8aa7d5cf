import BLEWire
import BlueZTransport
import Glibc

/// A wait on a simulator that did not come true in time.
public struct SimulatorTimeout: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was awaited.
    public var waitingFor: String
    public var after: Duration

    public var description: String { "simulator: \(waitingFor) did not happen within \(after)" }
}

/// Creates connected AF_UNIX SOCK_SEQPACKET sockets: packet boundaries are kept, as on HCI and
/// L2CAP sockets, so an engine and a simulator can face each other.
public enum SocketPair {
    /// Returns the two ends; the caller owns both.
    public static func make() throws(SimulatorSetupError) -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw .socketpairFailed(errno: errno)
        }
        return (ends[0], ends[1])
    }
}

/// Why a simulator could not be set up.
public enum SimulatorSetupError: Error, Hashable, Sendable {
    case socketpairFailed(errno: Int32)
    case channel(PacketChannelError)
}

/// A simulated Bluetooth controller on one end of a socketpair, speaking H4-framed HCI: it
/// answers commands with Command Complete and, while scanning is enabled, sends the advertising
/// reports its script holds.
///
/// The simulator implements the parts of the Core spec an LE scanner meets: Command Complete
/// with a status for every command (or a scripted failure status such as Command Disallowed),
/// LE Read Local Supported Features, and scan enable / disable for both command sets.
public actor SimulatedController: ConditionWaiting {
    /// What the controller does.
    public struct Script: Sendable {
        /// The LE features bit mask LE Read Local Supported Features returns. The default is
        /// what a real Bluetooth 4.2 controller answered in the DSD6 capture (0xCF: no LE
        /// Extended Advertising); bit 12 (0x1000) makes the scanner use the extended commands.
        public var leFeatures: UInt64
        /// Statuses to answer instead of success, per opcode, used up in order (e.g.
        /// `[0x200C: [0x0C]]`: the first LE Set Scan Enable is refused with Command Disallowed).
        public var statusOverrides: [UInt16: [UInt8]]
        /// False: the controller never answers (a hung controller).
        public var answersCommands: Bool
        /// HCI event packets sent after the n-th successful scan enable (index n - 1); later
        /// enables send nothing, like a controller that went quiet.
        public var reportBatches: [[[UInt8]]]

        public init(leFeatures: UInt64 = 0xCF, statusOverrides: [UInt16: [UInt8]] = [:], answersCommands: Bool = true,
                    reportBatches: [[[UInt8]]] = []) {
            self.leFeatures = leFeatures
            self.statusOverrides = statusOverrides
            self.answersCommands = answersCommands
            self.reportBatches = reportBatches
        }
    }

    /// The command packets received, H4 indicator included, in order.
    public private(set) var commands: [[UInt8]] = []
    /// True while a scan enable (legacy or extended) is in effect.
    public private(set) var isScanning = false
    /// Successful scan enables so far.
    public private(set) var scanEnables = 0

    private let channel: PacketChannel
    private var script: Script
    private var readerTask: Task<Void, Never>?
    var waiters = ConditionWaiters()

    /// Takes ownership of `descriptor`.
    public init(descriptor: Int32, script: Script = Script()) throws(SimulatorSetupError) {
        do {
            channel = try PacketChannel(adopting: descriptor, threadName: "simulated-controller")
        } catch {
            throw .channel(error)
        }
        self.script = script
    }

    /// Starts answering.
    public func start() {
        guard readerTask == nil else { return }
        let channel = self.channel
        readerTask = Task {
            for await event in channel.events {
                guard case .packet(let packet) = event else { continue }
                self.receive(packet)
            }
        }
    }

    /// Closes the controller's end (the scanner sees its socket end).
    public func stop() async {
        channel.close()
        await readerTask?.value
    }

    /// Sends any packet (e.g. reports produced by another host's scan).
    public func emit(_ packet: [UInt8]) throws(PacketChannelError) {
        try channel.send(packet)
    }

    /// Replaces the report batches of the script.
    public func setReportBatches(_ batches: [[[UInt8]]]) {
        script.reportBatches = batches
    }

    /// The received commands with this opcode.
    public func commands(opcode: UInt16) -> [[UInt8]] {
        commands.filter { $0.count >= 3 && (UInt16($0[1]) | UInt16($0[2]) << 8) == opcode }
    }

    /// Waits until at least `count` commands with `opcode` were received.
    public func waitForCommands(opcode: UInt16, count: Int, within limit: Duration = .seconds(60))
        async throws(SimulatorTimeout) -> [[UInt8]]
    {
        try await waitUntil("\(count) commands 0x\(String(opcode, radix: 16))", within: limit) {
            self.commands(opcode: opcode).count >= count
        }
        return commands(opcode: opcode)
    }

    private func receive(_ packet: [UInt8]) {
        guard packet.count >= 4, packet[0] == HCIPacketType.command.rawValue else { return }
        commands.append(packet)
        defer { resumeSatisfiedWaiters() }
        guard script.answersCommands else { return }
        let opcode = HCIOpcode(rawValue: UInt16(packet[1]) | UInt16(packet[2]) << 8)
        let parameters = Array(packet.dropFirst(4))
        var status: UInt8 = 0
        if var queued = script.statusOverrides[opcode.rawValue], !queued.isEmpty {
            status = queued.removeFirst()
            script.statusOverrides[opcode.rawValue] = queued
        }
        var returnParameters: [UInt8] = [status]
        if opcode == .leReadLocalSupportedFeatures && status == 0 {
            returnParameters += (0..<8).map { UInt8(truncatingIfNeeded: script.leFeatures >> (8 * UInt64($0))) }
        }
        try? channel.send([HCIPacketType.event.rawValue]
                          + HCIEventBuilder.commandComplete(opcode: opcode, returnParameters: returnParameters))

        guard status == 0, opcode == .leSetScanEnable || opcode == .leSetExtendedScanEnable, let enable = parameters.first else {
            return
        }
        if enable == 0 {
            isScanning = false
            return
        }
        isScanning = true
        scanEnables += 1
        guard scanEnables <= script.reportBatches.count else { return }
        for report in script.reportBatches[scanEnables - 1] {
            try? channel.send(report)
        }
    }
}

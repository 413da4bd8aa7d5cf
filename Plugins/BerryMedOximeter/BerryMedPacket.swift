import Foundation

/// One packet of the BerryMed (BCI) stream: five bytes, the first with its high bit set, the
/// other four without. Byte 0: signal strength (bits 0–3), signal present (4), probe unplugged
/// (5), pulse beep (6); byte 1: plethysmogram 0…100; byte 2: bar graph (bits 0–3), no finger
/// (4), searching for the pulse (5), bit 7 of the pulse rate (6); byte 3: pulse rate bits 0–6;
/// byte 4: SpO2 0…100. A pulse rate of 255 and an SpO2 of 127 mean "no value". See README.md.
public struct BerryMedPacket: Sendable, Equatable {
    public static let length = 5

    public var signalStrength: Int
    public var probeUnplugged: Bool
    public var pleth: Int
    public var fingerOut: Bool
    public var searchingPulse: Bool
    /// Beats per minute, nil when the oximeter has none (255).
    public var pulseRate: Int?
    /// Percent 0…100, nil when the oximeter has none (127).
    public var oxygenSaturation: Int?

    /// Decodes five bytes; nil unless only the first has its high bit set.
    public init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count == Self.length, let header = bytes.first, header & 0x80 != 0,
              bytes.dropFirst().allSatisfy({ $0 & 0x80 == 0 }) else { return nil }
        let b = Array(bytes)
        signalStrength = Int(header & 0x0F)
        probeUnplugged = header & 0x20 != 0
        pleth = Int(b[1])
        fingerOut = b[2] & 0x10 != 0
        searchingPulse = b[2] & 0x20 != 0
        let pulse = Int(b[3]) | Int(b[2] & 0x40) << 1
        pulseRate = pulse == 255 ? nil : pulse
        oxygenSaturation = b[4] == 127 ? nil : Int(b[4])
    }

    /// Whether the packet carries a reading worth keeping: a finger in the probe, the pulse
    /// found, both values present and plausible (SpO2 35…100 %, pulse 25…250 /min).
    public var isReading: Bool {
        guard !fingerOut, !probeUnplugged, !searchingPulse, let spo2 = oxygenSaturation, let pulse = pulseRate else {
            return false
        }
        return (35...100).contains(spo2) && (25...250).contains(pulse)
    }
}

/// Cuts the byte stream of the oximeter's notifications into packets. A packet may be split
/// across notifications and a notification may hold several; bytes that do not form a packet
/// (a lost byte, a stray header) are dropped and counted, and the stream resynchronises on the
/// next byte with its high bit set. Holds at most one packet's bytes between notifications.
///
/// `FF AA` cannot occur in this stream (a data byte never has its high bit set): it is the
/// start of the 20-byte packets of BerryMed's newer protocol (V1.5), whose layout is not
/// decoded. Once seen, the stream is marked ``otherProtocol`` and takes nothing more, so those
/// bytes never pass for packets of this one.
public struct BerryMedStream: Sendable {
    private var pending: [UInt8] = []
    private var previous: UInt8?
    /// Bytes dropped because they did not form a packet.
    public private(set) var droppedBytes = 0
    /// The oximeter speaks the newer protocol (`FF AA` seen).
    public private(set) var otherProtocol = false

    public init() {}

    /// The whole packets `bytes` completes, in order.
    public mutating func append(_ bytes: [UInt8]) -> [BerryMedPacket] {
        var packets: [BerryMedPacket] = []
        guard !otherProtocol else { return [] }
        for byte in bytes {
            defer { previous = byte }
            if previous == 0xFF && byte == 0xAA {
                otherProtocol = true
                pending = []
                return packets
            }
            if byte & 0x80 != 0 {
                droppedBytes += pending.count  // a header before the last packet was whole
                pending = [byte]
                continue
            }
            guard !pending.isEmpty else {
                droppedBytes += 1  // a data byte without a header
                continue
            }
            pending.append(byte)
            if pending.count == BerryMedPacket.length {
                if let packet = BerryMedPacket(pending[...]) { packets.append(packet) }
                pending = []
            }
        }
        return packets
    }
}

/// One stored reading per second of the stream: the oximeter sends about 60 packets a second,
/// but its SpO2 and pulse rate are already averaged over several seconds and change at most
/// once a second on its display, so a second's packets repeat one value. Of each wall-clock
/// second with at least one packet that ``BerryMedPacket/isReading``, the median SpO2 and the
/// median pulse rate are kept (a single glitching packet does not move them).
public struct BerryMedSecondReducer: Sendable {
    /// One second's reading.
    public struct Reading: Sendable, Equatable {
        /// The whole second (Unix time) the packets arrived in.
        public var second: Int64
        public var oxygenSaturation: Int
        public var pulseRate: Int

        public init(second: Int64, oxygenSaturation: Int, pulseRate: Int) {
            self.second = second
            self.oxygenSaturation = oxygenSaturation
            self.pulseRate = pulseRate
        }
    }

    private var second: Int64?
    private var saturations: [Int] = []
    private var pulses: [Int] = []
    /// Packets of one second kept at most (the oximeter sends about 60).
    static let maximumPacketsPerSecond = 256

    public init() {}

    /// Adds a packet that arrived at `time`; returns the reading of the second before when
    /// this packet begins a new one.
    public mutating func add(_ packet: BerryMedPacket, at time: Date) -> Reading? {
        let now = Int64(time.timeIntervalSince1970.rounded(.down))
        var closed: Reading?
        if let second, second != now { closed = finish() }
        second = now
        if packet.isReading, saturations.count < Self.maximumPacketsPerSecond,
           let spo2 = packet.oxygenSaturation, let pulse = packet.pulseRate {
            saturations.append(spo2)
            pulses.append(pulse)
        }
        return closed
    }

    /// The reading of the second in progress (nil when it has no valid packet), and starts afresh.
    public mutating func finish() -> Reading? {
        defer {
            second = nil
            saturations = []
            pulses = []
        }
        guard let second, !saturations.isEmpty else { return nil }
        return Reading(second: second, oxygenSaturation: Self.median(saturations), pulseRate: Self.median(pulses))
    }

    /// The middle value (the lower of the two middle ones for an even count).
    static func median(_ values: [Int]) -> Int {
        let sorted = values.sorted()
        return sorted[(sorted.count - 1) / 2]
    }
}

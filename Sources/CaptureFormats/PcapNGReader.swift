/// Reads pcapng files (each section in its own byte order) with link types 187, 189, 201,
/// 220 and 254. Packets come from Enhanced Packet Blocks and Simple Packet Blocks; Section
/// Header and Interface Description Blocks set the context; all other blocks are skipped.
///
/// Block layout: type (u32), total length (u32), body, total length again. Timestamps use the
/// interface's `if_tsresol` (default microseconds) and `if_tsoffset` options. A Simple Packet
/// Block has no timestamp: it gets the timestamp of the packet before it (0 if none).
public final class PcapNGReader: CaptureFormatReader {
    /// Block lengths above this are impossible.
    public static let maximumBlockLength = 16 * 1024 * 1024

    static let sectionHeaderType: UInt32 = 0x0A0D_0D0A
    static let interfaceDescriptionType: UInt32 = 0x0000_0001
    static let simplePacketType: UInt32 = 0x0000_0003
    static let enhancedPacketType: UInt32 = 0x0000_0006

    /// What an Interface Description Block said.
    public struct Interface: Hashable, Sendable {
        /// The interface's link type.
        public var linkType: Int
        /// The snap length (0 = unlimited).
        public var snapLength: Int
        /// Timestamp units per second (from `if_tsresol`; 1,000,000 by default).
        public var unitsPerSecond: UInt64
        /// Seconds added to every timestamp (`if_tsoffset`).
        public var offsetSeconds: Int64
    }

    public var format: CaptureFormat { .pcapng }
    public private(set) var warnings: [CaptureWarning] = []
    public private(set) var skipped: [CaptureSkipReason: Int] = [:]
    /// The interfaces of the current section.
    public private(set) var interfaces: [Interface] = []
    /// True when the current section is big-endian.
    public private(set) var isBigEndian = false

    private let input: ChunkedInput

    public var bytesRead: Int { input.offset }
    private var finished = false
    private var lastTimestamp: Int64 = 0

    public init(input: ChunkedInput) throws(CaptureError) {
        self.input = input
        try input.requireHeader(12, "too short for a pcapng section header")
        guard input.uint32(at: 0, bigEndian: false) == Self.sectionHeaderType else {
            throw .badHeader(offset: 0, reason: "first block is not a pcapng Section Header Block")
        }
    }

    public func next() throws(CaptureError) -> CaptureRecord? {
        while !finished {
            let blockOffset = input.offset
            guard try input.fill(12) else {
                finish(truncatedAt: blockOffset)
                return nil
            }
            let isSectionHeader = input.uint32(at: 0, bigEndian: false) == Self.sectionHeaderType
            if isSectionHeader {
                switch (input.byte(at: 8), input.byte(at: 9), input.byte(at: 10), input.byte(at: 11)) {
                case (0x4D, 0x3C, 0x2B, 0x1A): isBigEndian = false
                case (0x1A, 0x2B, 0x3C, 0x4D): isBigEndian = true
                default: throw .badHeader(offset: blockOffset + 8, reason: "byte-order magic is not 0x1A2B3C4D")
                }
            }
            let type = input.uint32(at: 0, bigEndian: isBigEndian)
            let totalLength = Int(input.uint32(at: 4, bigEndian: isBigEndian))
            let minimumLength = isSectionHeader ? 28 : 12
            guard totalLength >= minimumLength, totalLength % 4 == 0, totalLength <= Self.maximumBlockLength else {
                throw .impossibleRecordLength(offset: blockOffset, length: totalLength)
            }
            guard try input.fill(totalLength) else {
                finish(truncatedAt: blockOffset)
                return nil
            }
            let trailingLength = Int(input.uint32(at: totalLength - 4, bigEndian: isBigEndian))
            guard trailingLength == totalLength else {
                throw .malformedRecord(
                    offset: blockOffset,
                    reason: "block length \(totalLength) at the start but \(trailingLength) at the end")
            }
            let record: CaptureRecord?
            switch type {
            case Self.sectionHeaderType:
                try readSectionHeader(offset: blockOffset)
                record = nil
            case Self.interfaceDescriptionType:
                try readInterfaceDescription(offset: blockOffset, totalLength: totalLength)
                record = nil
            case Self.enhancedPacketType:
                record = try readEnhancedPacket(offset: blockOffset, totalLength: totalLength)
            case Self.simplePacketType:
                record = try readSimplePacket(offset: blockOffset, totalLength: totalLength)
            default:
                skipped[.pcapngBlock(type: type), default: 0] += 1
                record = nil
            }
            input.advance(totalLength)
            if let record { return record }
        }
        return nil
    }

    private func readSectionHeader(offset: Int) throws(CaptureError) {
        let major = input.uint16(at: 12, bigEndian: isBigEndian)
        guard major == 1 else { throw .badHeader(offset: offset + 12, reason: "pcapng major version \(major), expected 1") }
        interfaces.removeAll()
    }

    private func readInterfaceDescription(offset: Int, totalLength: Int) throws(CaptureError) {
        guard totalLength >= 20 else {
            throw .badHeader(offset: offset, reason: "Interface Description Block of \(totalLength) bytes, minimum 20")
        }
        let linkType = Int(input.uint16(at: 8, bigEndian: isBigEndian))
        guard LinkType.supported.contains(linkType) else { throw .unsupportedDatalink(linkType) }
        var interface = Interface(
            linkType: linkType, snapLength: Int(input.uint32(at: 12, bigEndian: isBigEndian)),
            unitsPerSecond: 1_000_000, offsetSeconds: 0)
        var optionStart = 16
        let optionsEnd = totalLength - 4
        while optionStart + 4 <= optionsEnd {
            let code = input.uint16(at: optionStart, bigEndian: isBigEndian)
            let length = Int(input.uint16(at: optionStart + 2, bigEndian: isBigEndian))
            if code == 0 { break }
            guard optionStart + 4 + length <= optionsEnd else {
                throw .badHeader(offset: offset + optionStart, reason: "option \(code) of \(length) bytes runs past its block")
            }
            switch (code, length) {
            case (9, 1):
                let resolution = input.byte(at: optionStart + 4)
                let exponent = UInt64(resolution & 0x7F)
                if resolution & 0x80 != 0 {
                    guard exponent <= 63 else {
                        throw .badHeader(offset: offset + optionStart, reason: "if_tsresol 2^-\(exponent) out of range")
                    }
                    interface.unitsPerSecond = 1 << exponent
                } else {
                    guard exponent <= 19 else {
                        throw .badHeader(offset: offset + optionStart, reason: "if_tsresol 10^-\(exponent) out of range")
                    }
                    var units: UInt64 = 1
                    for _ in 0..<exponent { units *= 10 }
                    interface.unitsPerSecond = units
                }
            case (14, 8):
                interface.offsetSeconds = Int64(bitPattern: input.uint64(at: optionStart + 4, bigEndian: isBigEndian))
            default:
                break
            }
            optionStart += 4 + (length + 3) & ~3
        }
        interfaces.append(interface)
    }

    private func readEnhancedPacket(offset: Int, totalLength: Int) throws(CaptureError) -> CaptureRecord? {
        guard totalLength >= 32 else {
            throw .malformedRecord(offset: offset, reason: "Enhanced Packet Block of \(totalLength) bytes, minimum 32")
        }
        let interfaceID = Int(input.uint32(at: 8, bigEndian: isBigEndian))
        guard interfaceID < interfaces.count else {
            throw .malformedRecord(offset: offset, reason: "packet on interface \(interfaceID), which was not described")
        }
        let interface = interfaces[interfaceID]
        let high = UInt64(input.uint32(at: 12, bigEndian: isBigEndian))
        let low = UInt64(input.uint32(at: 16, bigEndian: isBigEndian))
        let capturedLength = Int(input.uint32(at: 20, bigEndian: isBigEndian))
        let originalLength = Int(input.uint32(at: 24, bigEndian: isBigEndian))
        guard capturedLength <= totalLength - 32 else {
            throw .impossibleRecordLength(offset: offset, length: capturedLength)
        }
        let timestamp = Self.microseconds(high << 32 | low, interface: interface)
        lastTimestamp = timestamp
        return makeRecord(interface: interface, payload: input.slice(at: 28, count: capturedLength),
                          timestamp: timestamp, originalLength: originalLength, offset: offset)
    }

    private func readSimplePacket(offset: Int, totalLength: Int) throws(CaptureError) -> CaptureRecord? {
        guard totalLength >= 16 else {
            throw .malformedRecord(offset: offset, reason: "Simple Packet Block of \(totalLength) bytes, minimum 16")
        }
        guard let interface = interfaces.first else {
            throw .malformedRecord(offset: offset, reason: "Simple Packet Block before any interface was described")
        }
        let originalLength = Int(input.uint32(at: 8, bigEndian: isBigEndian))
        var capturedLength = min(originalLength, totalLength - 16)
        if interface.snapLength > 0 { capturedLength = min(capturedLength, interface.snapLength) }
        return makeRecord(interface: interface, payload: input.slice(at: 12, count: capturedLength),
                          timestamp: lastTimestamp, originalLength: originalLength, offset: offset)
    }

    private func makeRecord(interface: Interface, payload: ArraySlice<UInt8>, timestamp: Int64,
                            originalLength: Int, offset: Int) -> CaptureRecord? {
        switch linkLayerRecord(linkType: interface.linkType, payload: payload, timestamp: timestamp,
                               originalLength: originalLength, fileOffset: offset) {
        case .record(let record): return record
        case .skip(let reason):
            skipped[reason, default: 0] += 1
            return nil
        }
    }

    /// Converts a raw timestamp in interface units to microseconds since the Unix epoch.
    static func microseconds(_ raw: UInt64, interface: Interface) -> Int64 {
        let units = interface.unitsPerSecond
        let seconds = raw / units
        let fraction = raw % units
        let product = UInt64(1_000_000).multipliedFullWidth(by: fraction)
        let micros = units.dividingFullWidth((product.high, product.low)).quotient
        let wholeMicros = Int64(truncatingIfNeeded: seconds) &* 1_000_000
        return wholeMicros &+ Int64(truncatingIfNeeded: micros) &+ interface.offsetSeconds &* 1_000_000
    }

    private func finish(truncatedAt offset: Int) {
        if input.available > 0 {
            warnings.append(.truncatedFinalRecord(offset: offset))
            input.consumeAll()
        }
        finished = true
    }
}

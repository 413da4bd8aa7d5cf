/// Reads classic libpcap files (either byte order, microsecond or nanosecond timestamps)
/// with link types 187, 189, 201, 220 and 254.
///
/// File header (24 bytes): magic, version major/minor (u16), thiszone (i32), sigfigs, snaplen,
/// link type (u32; low 16 bits). Each record: seconds, microseconds or nanoseconds, captured
/// length, original length (u32 each), then the captured bytes.
public final class PcapReader: CaptureFormatReader {
    /// Captured lengths above this (or above the file's snap length, if larger) are impossible.
    public static let maximumRecordLength = 262_144

    public var format: CaptureFormat { .pcap }
    /// The link type from the file header.
    public let linkType: Int
    /// True when the file's integers are big-endian.
    public let isBigEndian: Bool
    /// True when the fractional timestamp field counts nanoseconds instead of microseconds.
    public let hasNanosecondTimestamps: Bool
    /// The snap length from the file header.
    public let snapLength: Int
    public private(set) var warnings: [CaptureWarning] = []
    public private(set) var skipped: [CaptureSkipReason: Int] = [:]

    private let input: ChunkedInput

    public var bytesRead: Int { input.offset }
    private var finished = false

    public init(input: ChunkedInput) throws(CaptureError) {
        self.input = input
        try input.requireHeader(24, "shorter than the 24-byte pcap header")
        switch (input.byte(at: 0), input.byte(at: 1), input.byte(at: 2), input.byte(at: 3)) {
        case (0xD4, 0xC3, 0xB2, 0xA1): (isBigEndian, hasNanosecondTimestamps) = (false, false)
        case (0xA1, 0xB2, 0xC3, 0xD4): (isBigEndian, hasNanosecondTimestamps) = (true, false)
        case (0x4D, 0x3C, 0xB2, 0xA1): (isBigEndian, hasNanosecondTimestamps) = (false, true)
        case (0xA1, 0xB2, 0x3C, 0x4D): (isBigEndian, hasNanosecondTimestamps) = (true, true)
        default: throw .badHeader(offset: 0, reason: "magic is not a pcap magic number")
        }
        let major = input.uint16(at: 4, bigEndian: isBigEndian)
        guard major == 2 else { throw .badHeader(offset: 4, reason: "pcap major version \(major), expected 2") }
        snapLength = Int(input.uint32(at: 16, bigEndian: isBigEndian))
        linkType = Int(input.uint32(at: 20, bigEndian: isBigEndian) & 0xFFFF)
        guard LinkType.supported.contains(linkType) else { throw .unsupportedDatalink(linkType) }
        input.advance(24)
    }

    public func next() throws(CaptureError) -> CaptureRecord? {
        while !finished {
            let recordOffset = input.offset
            guard try input.fill(16) else {
                finish(truncatedAt: recordOffset)
                return nil
            }
            let seconds = Int64(input.uint32(at: 0, bigEndian: isBigEndian))
            let fraction = Int64(input.uint32(at: 4, bigEndian: isBigEndian))
            let capturedLength = Int(input.uint32(at: 8, bigEndian: isBigEndian))
            let originalLength = Int(input.uint32(at: 12, bigEndian: isBigEndian))
            guard capturedLength <= max(snapLength, Self.maximumRecordLength) else {
                throw .impossibleRecordLength(offset: recordOffset, length: capturedLength)
            }
            guard try input.fill(16 + capturedLength) else {
                finish(truncatedAt: recordOffset)
                return nil
            }
            let payload = input.slice(at: 16, count: capturedLength)
            input.advance(16 + capturedLength)
            let timestamp = seconds * 1_000_000 + (hasNanosecondTimestamps ? fraction / 1000 : fraction)
            switch linkLayerRecord(linkType: linkType, payload: payload, timestamp: timestamp,
                                   originalLength: originalLength, fileOffset: recordOffset) {
            case .record(let record): return record
            case .skip(let reason): skipped[reason, default: 0] += 1
            }
        }
        return nil
    }

    private func finish(truncatedAt offset: Int) {
        if input.available > 0 {
            warnings.append(.truncatedFinalRecord(offset: offset))
            input.consumeAll()
        }
        finished = true
    }
}

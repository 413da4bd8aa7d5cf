/// RSC Measurement (0x2A53, Running Speed and Cadence service 0x1814).
///
/// Layout: flags uint8 (bit 0 stride length, bit 1 total distance, bit 2 running (else walking),
/// bits 3–7 reserved) · speed uint16 (1/256 m/s) · cadence uint8 (steps/min) ·
/// [stride length uint16 (0.01 m)] · [total distance uint32 (0.1 m)].
public struct RSCMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xF8

    public var flags: UInt8
    /// Instantaneous speed in metres per second.
    public var speed: Double
    /// Instantaneous cadence in steps per minute.
    public var cadence: Int
    /// Instantaneous stride length in metres.
    public var strideLength: Double?
    /// The sensor's total distance counter in decimetres (it can be reset by the client).
    public var totalDistanceDecimeters: UInt32?
    /// Whether the user is running (else walking), flags bit 2.
    public var isRunning: Bool

    /// The total distance in metres.
    public var totalDistance: Double? { totalDistanceDecimeters.map { Double($0) / 10 } }

    /// Decodes a characteristic value.
    /// - Throws: `.reservedFlags`, `.tooShort`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint8("flags")
        try GATTByteReader.checkReserved(UInt16(flags), reservedBits: Self.reservedFlags)
        speed = Double(try reader.uint16("instantaneous-speed")) / 256
        cadence = Int(try reader.uint8("instantaneous-cadence"))
        strideLength = flags & 0x01 != 0 ? Double(try reader.uint16("instantaneous-stride-length")) / 100 : nil
        totalDistanceDecimeters = flags & 0x02 != 0 ? try reader.uint32("total-distance") : nil
        isRunning = flags & 0x04 != 0
    }
}

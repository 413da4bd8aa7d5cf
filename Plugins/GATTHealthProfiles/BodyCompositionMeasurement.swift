/// Body Composition Measurement (0x2A9C, Body Composition service 0x181B).
///
/// Layout: flags uint16 · body fat percentage uint16 (0.1 %, mandatory, 0xFFFF = unsuccessful) ·
/// then, each present when its flag bit is set and in this order: time stamp (bit 1, 7 bytes),
/// user id (bit 2, uint8), basal metabolism (bit 3, uint16 kJ), muscle percentage (bit 4, 0.1 %),
/// muscle mass (bit 5), fat free mass (bit 6), soft lean mass (bit 7), body water mass (bit 8),
/// impedance (bit 9, 0.1 Ω), weight (bit 10), height (bit 11). Masses are uint16 in 0.005 kg or
/// 0.01 lb (bit 0); height 0.001 m or 0.1 in. Bit 12: the measurement is split over two
/// packets; bits 13–15 are reserved.
///
/// Multiple-packet measurements: each packet carries its own flags and decodes on its own;
/// ``merging(_:)`` joins the two halves. In a packet with bit 12 set a body fat of 0xFFFF is
/// taken as "in the other packet" rather than as a failed measurement.
public struct BodyCompositionMeasurement: Hashable, Sendable {
    /// Flag bits the specification reserves.
    public static let reservedFlags: UInt16 = 0xE000
    /// The multiple-packet flag (bit 12).
    public static let multiplePacketFlag: UInt16 = 0x1000

    public var flags: UInt16
    public var unitSystem: GATTUnitSystem
    /// Body fat in tenths of a percent (235 = 23.5 %); nil only in one half of a multiple-packet
    /// measurement that left it to the other half.
    public var bodyFatPerMille: UInt16?
    public var timestamp: GATTDateTime?
    /// The user index on a multi-user scale; 255 means "unknown user".
    public var userID: UInt8?
    /// Basal metabolism in kilojoules (per day).
    public var basalMetabolism: Int?
    /// Muscle percentage in percent (0…100).
    public var musclePercentage: Double?
    /// Masses in kilograms (metric) or pounds (imperial).
    public var muscleMass: Double?
    public var fatFreeMass: Double?
    public var softLeanMass: Double?
    public var bodyWaterMass: Double?
    /// Impedance in ohms.
    public var impedance: Double?
    /// In kilograms or pounds.
    public var weight: Double?
    /// In metres or inches.
    public var height: Double?

    /// Whether this packet is one half of a measurement split over two packets (bit 12).
    public var isMultiplePacket: Bool { flags & Self.multiplePacketFlag != 0 }

    /// Whether this is a placeholder rather than a measurement: body fat 0 and every mass,
    /// percentage and impedance it carries 0 as well (basal metabolism, time stamp, user and
    /// height aside). The Beurer BF788 sends one for each stored weighing it has no analysis of
    /// (ble-scale-sync's real BF788 capture: `98 03 00 00 96 23 00 00 00 00 00 00 00 00`).
    public var isPlaceholder: Bool {
        guard bodyFatPerMille == 0 else { return false }
        return [musclePercentage, muscleMass, fatFreeMass, softLeanMass, bodyWaterMass, impedance, weight]
            .allSatisfy { $0 == nil || $0 == 0 }
    }

    /// Body fat in percent (23.5), if known.
    public var bodyFatPercentage: Double? { bodyFatPerMille.map { Double($0) / 10 } }

    /// Body fat as HealthKit's fraction (0.235 for 23.5 %), if known.
    public var bodyFatFraction: Double? { bodyFatPerMille.map { Double($0) / 1000 } }

    /// Decodes a characteristic value (one packet).
    /// - Throws: `.unsuccessfulMeasurement` for body fat 0xFFFF in a single-packet measurement,
    ///   `.reservedFlags`, `.tooShort`, `.invalidDateTime`.
    public init(decoding bytes: [UInt8]) throws(GATTDecodeError) {
        var reader = GATTByteReader(bytes)
        flags = try reader.uint16("flags")
        try GATTByteReader.checkReserved(flags, reservedBits: Self.reservedFlags)
        let units: GATTUnitSystem = flags & 0x0001 == 0 ? .metric : .imperial
        unitSystem = units
        let fatOffset = reader.offset
        let rawFat = try reader.uint16("body-fat-percentage")
        if rawFat == 0xFFFF {
            guard flags & Self.multiplePacketFlag != 0 else {
                throw .unsuccessfulMeasurement(field: "body-fat-percentage", offset: fatOffset)
            }
            bodyFatPerMille = nil
        } else {
            bodyFatPerMille = rawFat
        }
        let flags = flags
        func has(_ bit: UInt16) -> Bool { flags & (1 << bit) != 0 }
        timestamp = has(1) ? try reader.dateTime("time-stamp") : nil
        userID = has(2) ? try reader.uint8("user-id") : nil
        basalMetabolism = has(3) ? Int(try reader.uint16("basal-metabolism")) : nil
        musclePercentage = has(4) ? Double(try reader.uint16("muscle-percentage")) / 10 : nil
        muscleMass = has(5) ? units.mass(try reader.uint16("muscle-mass")) : nil
        fatFreeMass = has(6) ? units.mass(try reader.uint16("fat-free-mass")) : nil
        softLeanMass = has(7) ? units.mass(try reader.uint16("soft-lean-mass")) : nil
        bodyWaterMass = has(8) ? units.mass(try reader.uint16("body-water-mass")) : nil
        impedance = has(9) ? Double(try reader.uint16("impedance")) / 10 : nil
        weight = has(10) ? units.mass(try reader.uint16("weight")) : nil
        height = has(11) ? units.height(try reader.uint16("height")) : nil
    }

    /// Joins two halves of a multiple-packet measurement: the union of both packets' fields,
    /// this packet's value winning where both carry one. The result's flags describe the union
    /// with the multiple-packet bit cleared. Halves in different unit systems cannot be joined
    /// (nil).
    public func merging(_ other: BodyCompositionMeasurement) -> BodyCompositionMeasurement? {
        guard unitSystem == other.unitSystem else { return nil }
        var merged = self
        merged.flags = (flags | other.flags) & ~Self.multiplePacketFlag
        merged.bodyFatPerMille = bodyFatPerMille ?? other.bodyFatPerMille
        merged.timestamp = timestamp ?? other.timestamp
        merged.userID = userID ?? other.userID
        merged.basalMetabolism = basalMetabolism ?? other.basalMetabolism
        merged.musclePercentage = musclePercentage ?? other.musclePercentage
        merged.muscleMass = muscleMass ?? other.muscleMass
        merged.fatFreeMass = fatFreeMass ?? other.fatFreeMass
        merged.softLeanMass = softLeanMass ?? other.softLeanMass
        merged.bodyWaterMass = bodyWaterMass ?? other.bodyWaterMass
        merged.impedance = impedance ?? other.impedance
        merged.weight = weight ?? other.weight
        merged.height = height ?? other.height
        return merged
    }
}

/// How a BTHome object's value bytes are read.
public enum BTHomeValueFormat: String, Sendable, Hashable {
    /// Little-endian unsigned integer of the definition's fixed width.
    case unsigned
    /// Little-endian two's-complement integer of the definition's fixed width.
    case signed
    /// A length byte, then that many bytes of UTF-8 text.
    case lengthPrefixedText
    /// A length byte, then that many opaque bytes.
    case lengthPrefixedRaw
}

/// One BTHome v2 object id: its width, sign, scale factor and unit.
///
/// The value of an integer object is `raw × numerator ÷ denominator` in ``unit``; the factor is
/// kept as a fraction so that e.g. `8030 × 1/100` is exactly the double nearest 80.3.
public struct BTHomeObjectDefinition: Sendable, Hashable, CustomStringConvertible {
    public let id: UInt8
    /// What the object measures, in words (`temperature`, `mass`, `packet id`).
    public let name: String
    public let format: BTHomeValueFormat
    /// Width of the value in bytes; for length-prefixed formats, 0 (the width is in the data).
    public let byteCount: Int
    public let numerator: Int64
    public let denominator: Int64
    /// The unit of the scaled value as the BTHome format lists it (nil for counts, states, ids).
    public let unit: String?

    public init(id: UInt8, name: String, format: BTHomeValueFormat, byteCount: Int,
                numerator: Int64 = 1, denominator: Int64 = 1, unit: String? = nil) {
        self.id = id
        self.name = name
        self.format = format
        self.byteCount = byteCount
        self.numerator = numerator
        self.denominator = denominator
        self.unit = unit
    }

    /// The scale factor as a number (`0.01` for 1/100).
    public var factor: Double { Double(numerator) / Double(denominator) }

    /// Whether the width is given by a length byte in the data.
    public var isLengthPrefixed: Bool { format == .lengthPrefixedText || format == .lengthPrefixedRaw }

    /// E.g. `0x02 temperature sint16 ×0.01 °C`.
    public var description: String {
        let width: String
        switch format {
        case .unsigned: width = "uint\(byteCount * 8)"
        case .signed: width = "sint\(byteCount * 8)"
        case .lengthPrefixedText: width = "text"
        case .lengthPrefixedRaw: width = "raw"
        }
        var text = String(format: "0x%02X ", id) + name + " " + width
        if numerator != 1 || denominator != 1 { text += " ×\(factor)" }
        if let unit { text += " " + unit }
        return text
    }
}

/// The BTHome v2 object ids whose layout is confirmed (bthome.io format table, cross-checked
/// against the bthome-ble object table). An id missing here has an unknown width, so a packet
/// cannot be read past it.
public enum BTHomeObjectTable {
    /// Every known definition, keyed by object id.
    public static let definitions: [UInt8: BTHomeObjectDefinition] = {
        var table: [UInt8: BTHomeObjectDefinition] = [:]
        for definition in all { table[definition.id] = definition }
        return table
    }()

    /// The definition of `id`, or nil when its layout is unknown.
    public static func definition(for id: UInt8) -> BTHomeObjectDefinition? { definitions[id] }

    private static func u(_ id: UInt8, _ name: String, _ bytes: Int, _ numerator: Int64 = 1, _ denominator: Int64 = 1,
                          _ unit: String? = nil) -> BTHomeObjectDefinition {
        BTHomeObjectDefinition(id: id, name: name, format: .unsigned, byteCount: bytes,
                               numerator: numerator, denominator: denominator, unit: unit)
    }

    private static func s(_ id: UInt8, _ name: String, _ bytes: Int, _ numerator: Int64 = 1, _ denominator: Int64 = 1,
                          _ unit: String? = nil) -> BTHomeObjectDefinition {
        BTHomeObjectDefinition(id: id, name: name, format: .signed, byteCount: bytes,
                               numerator: numerator, denominator: denominator, unit: unit)
    }

    /// Binary sensors (one byte, 0 or 1) 0x0F...0x11 and 0x15...0x2D.
    private static let binarySensors: [(UInt8, String)] = [
        (0x0F, "generic boolean"), (0x10, "power"), (0x11, "opening"),
        (0x15, "battery low"), (0x16, "battery charging"), (0x17, "carbon monoxide"), (0x18, "cold"),
        (0x19, "connectivity"), (0x1A, "door"), (0x1B, "garage door"), (0x1C, "gas"), (0x1D, "heat"),
        (0x1E, "light"), (0x1F, "lock"), (0x20, "moisture"), (0x21, "motion"), (0x22, "moving"),
        (0x23, "occupancy"), (0x24, "plug"), (0x25, "presence"), (0x26, "problem"), (0x27, "running"),
        (0x28, "safety"), (0x29, "smoke"), (0x2A, "sound"), (0x2B, "tamper"), (0x2C, "vibration"),
        (0x2D, "window"),
    ]

    private static let all: [BTHomeObjectDefinition] = [
        u(0x00, "packet id", 1),
        u(0x01, "battery", 1, 1, 1, "%"),
        s(0x02, "temperature", 2, 1, 100, "°C"),
        u(0x03, "humidity", 2, 1, 100, "%"),
        u(0x04, "pressure", 3, 1, 100, "hPa"),
        u(0x05, "illuminance", 3, 1, 100, "lx"),
        u(0x06, "mass", 2, 1, 100, "kg"),
        u(0x07, "mass", 2, 1, 100, "lb"),
        s(0x08, "dew point", 2, 1, 100, "°C"),
        u(0x09, "count", 1),
        u(0x0A, "energy", 3, 1, 1000, "kWh"),
        u(0x0B, "power", 3, 1, 100, "W"),
        u(0x0C, "voltage", 2, 1, 1000, "V"),
        u(0x0D, "pm2.5", 2, 1, 1, "µg/m³"),
        u(0x0E, "pm10", 2, 1, 1, "µg/m³"),
        u(0x12, "co2", 2, 1, 1, "ppm"),
        u(0x13, "tvoc", 2, 1, 1, "µg/m³"),
        u(0x14, "moisture", 2, 1, 100, "%"),
        u(0x2E, "humidity", 1, 1, 1, "%"),
        u(0x2F, "moisture", 1, 1, 1, "%"),
        u(0x3A, "button event", 1),
        u(0x3C, "dimmer event", 2),
        u(0x3D, "count", 2),
        u(0x3E, "count", 4),
        s(0x3F, "rotation", 2, 1, 10, "°"),
        u(0x40, "distance", 2, 1, 1, "mm"),
        u(0x41, "distance", 2, 1, 10, "m"),
        u(0x42, "duration", 3, 1, 1000, "s"),
        u(0x43, "current", 2, 1, 1000, "A"),
        u(0x44, "speed", 2, 1, 100, "m/s"),
        s(0x45, "temperature", 2, 1, 10, "°C"),
        u(0x46, "uv index", 1, 1, 10),
        u(0x47, "volume", 2, 1, 10, "L"),
        u(0x48, "volume", 2, 1, 1, "mL"),
        u(0x49, "volume flow rate", 2, 1, 1000, "m³/h"),
        u(0x4A, "voltage", 2, 1, 10, "V"),
        u(0x4B, "gas", 3, 1, 1000, "m³"),
        u(0x4C, "gas", 4, 1, 1000, "m³"),
        u(0x4D, "energy", 4, 1, 1000, "kWh"),
        u(0x4E, "volume", 4, 1, 1000, "L"),
        u(0x4F, "water", 4, 1, 1000, "L"),
        u(0x50, "timestamp", 4, 1, 1, "s"),
        u(0x51, "acceleration", 2, 1, 1000, "m/s²"),
        u(0x52, "gyroscope", 2, 1, 1000, "°/s"),
        BTHomeObjectDefinition(id: 0x53, name: "text", format: .lengthPrefixedText, byteCount: 0),
        BTHomeObjectDefinition(id: 0x54, name: "raw", format: .lengthPrefixedRaw, byteCount: 0),
        u(0x55, "volume storage", 4, 1, 1000, "L"),
        u(0x56, "conductivity", 2, 1, 1, "µS/cm"),
        s(0x57, "temperature", 1, 1, 1, "°C"),
        s(0x58, "temperature", 1, 35, 100, "°C"),
        s(0x59, "count", 1),
        s(0x5A, "count", 2),
        s(0x5B, "count", 4),
        s(0x5C, "power", 4, 1, 100, "W"),
        s(0x5D, "current", 2, 1, 1000, "A"),
        u(0x5E, "direction", 2, 1, 100, "°"),
        u(0x5F, "precipitation", 2, 1, 10, "mm"),
        u(0x60, "channel", 1),
        u(0x61, "rotational speed", 2, 1, 1, "rpm"),
        s(0x62, "speed", 4, 1, 1_000_000, "m/s"),
        s(0x63, "acceleration", 4, 1, 1_000_000, "m/s²"),
        u(0x64, "light level", 1),
        u(0xF0, "device type id", 2),
        u(0xF1, "firmware version", 4),
        u(0xF2, "firmware version", 3),
    ] + binarySensors.map { u($0.0, $0.1, 1) }
}

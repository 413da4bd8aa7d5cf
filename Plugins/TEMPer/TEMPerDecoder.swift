import AdapterKit
import Foundation

/// The sensor chip behind a TEMPer model; it decides how raw values become °C and %RH.
public enum TEMPerChip: String, Hashable, Sendable {
    /// FM75-type: temperature is a signed 16-bit value in 1/256 °C; humidity (on the models that have it)
    /// is raw × 32 / 1000 %RH.
    case fm75
    /// Si7021: °C = raw × 175.72 / 65536 − 46.85, %RH = raw × 125 / 65536 − 6.
    case si7021
}

/// A TEMPer model: which chip, and where in the 8-byte answer each sensor's big-endian value sits.
public struct TEMPerModel: Hashable, Sendable {
    /// The product-string prefix that names the model (`TEMPer2`), or `generic`.
    public var name: String
    public var chip: TEMPerChip
    public var temperatureOffsets: [Int]
    public var humidityOffsets: [Int]

    public init(name: String, chip: TEMPerChip, temperatureOffsets: [Int], humidityOffsets: [Int] = []) {
        self.name = name
        self.chip = chip
        self.temperatureOffsets = temperatureOffsets
        self.humidityOffsets = humidityOffsets
    }

    /// Known models, the longer prefixes first so that `TEMPer1F_H1` is not taken for `TEMPer1F`.
    public static let known: [TEMPerModel] = [
        TEMPerModel(name: "TEMPer1F_H1", chip: .fm75, temperatureOffsets: [2], humidityOffsets: [4]),
        TEMPerModel(name: "TEMPer1F", chip: .fm75, temperatureOffsets: [4]),
        TEMPerModel(name: "TEMPERHUM1", chip: .si7021, temperatureOffsets: [2], humidityOffsets: [4]),
        TEMPerModel(name: "TEMPerHumi", chip: .fm75, temperatureOffsets: [2], humidityOffsets: [4]),
        TEMPerModel(name: "TEMPerNTC", chip: .fm75, temperatureOffsets: [2, 4, 6]),
        TEMPerModel(name: "TEMPer2", chip: .fm75, temperatureOffsets: [2, 4]),
        TEMPerModel(name: "TEMPer1V1", chip: .fm75, temperatureOffsets: [2, 4]),
        TEMPerModel(name: "TEMPerV1", chip: .fm75, temperatureOffsets: [2]),
    ]

    /// Used when the product string names no known model: two FM75 sensors at offsets 2 and 4.
    public static let generic = TEMPerModel(name: "generic", chip: .fm75, temperatureOffsets: [2, 4])

    /// The model a USB product string (e.g. `TEMPer2V1.3`) names.
    public static func forProduct(_ product: String?) -> TEMPerModel {
        guard let product else { return generic }
        return known.first { product.hasPrefix($0.name) } ?? generic
    }

    /// Bytes an answer needs to hold every sensor of this model.
    public var requiredLength: Int {
        ((temperatureOffsets + humidityOffsets).max() ?? 0) + 2
    }
}

/// One answer decoded: a temperature per temperature sensor and a relative humidity per humidity sensor.
public struct TEMPerReading: Hashable, Sendable {
    public var temperatures: [Double]
    public var humidities: [Double]

    public init(temperatures: [Double], humidities: [Double]) {
        self.temperatures = temperatures
        self.humidities = humidities
    }
}

/// Why an answer could not be read.
public enum TEMPerDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The answer is shorter than the model's sensor offsets need.
    case tooShort(model: String, needed: Int, found: Int, bytes: [UInt8])

    public var description: String {
        switch self {
        case .tooShort(let model, let needed, let found, let bytes):
            "\(model): answer of \(found) bytes, \(needed) needed: \(hexString(bytes))"
        }
    }
}

/// Pure decoding of the 8-byte interrupt answer to the read command.
public enum TEMPerDecoder {
    /// The command, sent as a HID SET_REPORT (output report, id 0) to the data interface.
    public static let readCommand: [UInt8] = [0x01, 0x80, 0x33, 0x01, 0x00, 0x00, 0x00, 0x00]

    public static func decode(_ answer: [UInt8], model: TEMPerModel) throws(TEMPerDecodingError) -> TEMPerReading {
        guard answer.count >= model.requiredLength else {
            throw .tooShort(model: model.name, needed: model.requiredLength, found: answer.count, bytes: answer)
        }
        func raw(_ offset: Int) -> UInt16 { UInt16(answer[offset]) << 8 | UInt16(answer[offset + 1]) }
        let temperatures = model.temperatureOffsets.map { offset in
            switch model.chip {
            case .fm75: Double(Int16(bitPattern: raw(offset))) / 256
            case .si7021: Double(raw(offset)) * 175.72 / 65536 - 46.85
            }
        }
        let humidities = model.humidityOffsets.map { offset in
            switch model.chip {
            case .fm75: Double(raw(offset)) * 32 / 1000
            case .si7021: Double(raw(offset)) * 125 / 65536 - 6
            }
        }
        return TEMPerReading(temperatures: temperatures, humidities: humidities)
    }
}

import Testing
import TEMPer

/// Model-dependent decoding on the answers and stated values of temper-python's device tests.
struct TEMPerDecoderTests {
    static func decode(_ product: String?, _ answer: [UInt8]) throws -> TEMPerReading {
        try TEMPerDecoder.decode(answer, model: TEMPerModel.forProduct(product))
    }

    static func rounded(_ values: [Double], _ places: Double = 10) -> [Double] {
        values.map { ($0 * places).rounded() / places }
    }

    @Test func productStringsPickTheModel() {
        #expect(TEMPerModel.forProduct("TEMPerV1.4").name == "TEMPerV1")
        #expect(TEMPerModel.forProduct("TEMPer1F_H1_V1.4").name == "TEMPer1F_H1")
        #expect(TEMPerModel.forProduct("TEMPer1F_V1.3").name == "TEMPer1F")
        #expect(TEMPerModel.forProduct("TEMPERHUM1V1.3").chip == .si7021)
        #expect(TEMPerModel.forProduct("TEMPerHumiV1.1").chip == .fm75)
        #expect(TEMPerModel.forProduct("something else") == .generic)
        #expect(TEMPerModel.forProduct(nil) == .generic)
    }

    @Test func fm75Models() throws {
        #expect(Self.rounded(try Self.decode("generic_unmatched", [0x00, 0x00, 0x20, 0x1A, 0x2B, 0x33]).temperatures) == [32.1, 43.2])
        #expect(Self.rounded(try Self.decode("TEMPer2V1.3", [0x80, 0x04, 0x0A, 0xE0, 0x15, 0x00, 0x1D, 0x15]).temperatures)
                == [10.9, 21.0])
        #expect(Self.rounded(try Self.decode("TEMPerV1.2", [0x00, 0x00, 0x20, 0x1A]).temperatures) == [32.1])
        #expect(Self.rounded(try Self.decode("TEMPerV1.4", [0x00, 0x00, 0x20, 0x1A]).temperatures) == [32.1])
        #expect(Self.rounded(try Self.decode("TEMPer1F_V1.3", [0x00, 0x00, 0x00, 0x00, 0x20, 0x1A]).temperatures) == [32.1])
        #expect(Self.rounded(try Self.decode("TEMPerNTC1.O", [0x00, 0x00, 0x20, 0x1A, 0x2B, 0x33, 0x36, 0x4D]).temperatures)
                == [32.1, 43.2, 54.3])
    }

    @Test func humidityModels() throws {
        let si7021 = try Self.decode("TEMPERHUM1V1.3", [0x00, 0x00, 0x56, 0x2C, 0xBF, 0xB1])
        #expect(Self.rounded(si7021.temperatures) == [12.3])
        #expect(Self.rounded(si7021.humidities) == [87.6])
        let fm75 = try Self.decode("TEMPerHumiV1.1", [0x00, 0x00, 0x20, 0x1A, 0x0C, 0x0C])
        #expect(Self.rounded(fm75.temperatures) == [32.1])
        #expect(Self.rounded(fm75.humidities) == [98.7])
        let probe = try Self.decode("TEMPer1F_H1_V1.4", [0x00, 0x00, 0x20, 0x1A, 0x0C, 0x0C])
        #expect(Self.rounded(probe.humidities) == [98.7])
    }

    @Test func belowFreezingIsNegative() throws {
        // 0xFB00 as a signed value is -1280: -5 °C.
        #expect(try Self.decode("TEMPerV1.4", [0x80, 0x02, 0xFB, 0x00, 0x00, 0x00, 0x00, 0x00]).temperatures == [-5])
    }

    @Test func aShortAnswerNamesTheModelAndTheBytes() {
        #expect(throws: TEMPerDecodingError.tooShort(model: "TEMPer2", needed: 6, found: 4, bytes: [0x80, 0x04, 0x0A, 0xE0])) {
            try Self.decode("TEMPer2V1.3", [0x80, 0x04, 0x0A, 0xE0])
        }
    }
}

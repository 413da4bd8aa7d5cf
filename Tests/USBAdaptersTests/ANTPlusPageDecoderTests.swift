import ANTPlus
import Testing

/// ANT+ page layouts. The stride-sensor vectors are the ant-plus (Loghorn) project's test pages with their stated
/// values; heart-rate and weight pages are built by the profiles' byte layouts (no published vector with decoded
/// values was found for them).
struct ANTPlusPageDecoderTests {
    @Test func strideSensorPage1() throws {
        let page = try ANTPlusPageDecoder.decode(deviceType: 124, data: [0x01, 0x80, 0x05, 0x2A, 0xD3, 0x40, 0x0C, 0x07])
        guard case .strideDistance(let distance) = page else {
            Issue.record("not page 1: \(page)")
            return
        }
        #expect(distance.elapsedTime == 5 + 128.0 / 200)
        #expect(distance.distance == 42 + 13.0 / 16)
        #expect(distance.distanceSixteenths == 42 * 16 + 13)
        #expect(distance.speed == 3 + 64.0 / 256)
        #expect(distance.strideCount == 12)
        #expect(distance.updateLatency == 7.0 / 32)
    }

    @Test func strideSensorPages2And3() throws {
        let two = try ANTPlusPageDecoder.decode(deviceType: 124, data: [0x02, 0xFF, 0xFF, 0xB4, 0x72, 0x19, 0x00, 0x01])
        #expect(two == .strideStatus(StrideStatusPage(page: 2, cadence: 180 + 7.0 / 16, speed: 2 + 25.0 / 256, status: 1,
                                                      calories: nil)))
        let three = try ANTPlusPageDecoder.decode(deviceType: 124, data: [0x03, 0x00, 0x00, 0x5A, 0x21, 0x0A, 0x64, 0x03])
        #expect(three == .strideStatus(StrideStatusPage(page: 3, cadence: 90 + 2.0 / 16, speed: 1 + 10.0 / 256, status: 3,
                                                        calories: 100)))
        let fifteen = try ANTPlusPageDecoder.decode(deviceType: 124, data: [0x0F, 0x00, 0x00, 0x50, 0x34, 0x02, 0x99, 0x02])
        #expect(fifteen == .strideStatus(StrideStatusPage(page: 15, cadence: 80 + 3.0 / 16, speed: 4 + 2.0 / 256,
                                                          status: 2, calories: nil)))
    }

    @Test func strideSensorSummaryCommonAndUnknownPages() throws {
        #expect(try ANTPlusPageDecoder.decode(deviceType: 124, data: [0x10, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77])
                == .other(deviceType: 124, page: 16))
        #expect(try ANTPlusPageDecoder.decode(deviceType: 124, data: [0x50, 0xFF, 0xFF, 0x01, 0x0F, 0x00, 0x01, 0x00])
                == .other(deviceType: 124, page: 80))
        let unknown: [UInt8] = [0x30, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: ANTPlusPageError.unknownPage(deviceType: 124, page: 0x30, data: unknown)) {
            try ANTPlusPageDecoder.decode(deviceType: 124, data: unknown)
        }
    }

    @Test func heartRateFieldsFromAnyPage() throws {
        // Page 4 with the toggle bit: previous beat 0x1A00, last beat 0x1C05 (1/1024 s), beat count 0x21, 72 bpm.
        let page = try ANTPlusPageDecoder.decode(deviceType: 120, data: [0x84, 0xFF, 0x00, 0x1A, 0x05, 0x1C, 0x21, 0x48])
        #expect(page == .heartRate(HeartRatePage(page: 4, toggle: true, beatEventTime: 0x1C05, beatCount: 0x21,
                                                 computedHeartRate: 72, previousBeatEventTime: 0x1A00)))
        // Page 0 with a computed rate of 0: invalid.
        let invalid = try ANTPlusPageDecoder.decode(deviceType: 120, data: [0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x10, 0x05, 0x00])
        #expect(invalid == .heartRate(HeartRatePage(page: 0, toggle: false, beatEventTime: 0x1000, beatCount: 5,
                                                    computedHeartRate: nil, previousBeatEventTime: nil)))
        let unknown: [UInt8] = [0x20, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: ANTPlusPageError.unknownPage(deviceType: 120, page: 0x20, data: unknown)) {
            try ANTPlusPageDecoder.decode(deviceType: 120, data: unknown)
        }
    }

    @Test func weightScaleWeightComputingAndInvalid() throws {
        // 0x1C3E = 7230 → 72.30 kg, user profile 0x0001.
        #expect(try ANTPlusPageDecoder.decode(deviceType: 119, data: [0x01, 0x01, 0x00, 0x07, 0xFF, 0xFF, 0x3E, 0x1C])
                == .bodyWeight(BodyWeightPage(userProfileID: 1, capabilities: 7, reading: .kilograms(72.30))))
        #expect(try ANTPlusPageDecoder.decode(deviceType: 119, data: [0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFE, 0xFF])
                == .bodyWeight(BodyWeightPage(userProfileID: nil, capabilities: 0, reading: .computing)))
        #expect(try ANTPlusPageDecoder.decode(deviceType: 119, data: [0x01, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0xFF])
                == .bodyWeight(BodyWeightPage(userProfileID: nil, capabilities: 0, reading: .invalid)))
        #expect(try ANTPlusPageDecoder.decode(deviceType: 119, data: [0x02, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00])
                == .other(deviceType: 119, page: 2))
    }

    @Test func wrongLengthsAndOtherDeviceTypesAreNamed() throws {
        #expect(throws: ANTPlusPageError.wrongLength(found: 3, data: [1, 2, 3])) {
            try ANTPlusPageDecoder.decode(deviceType: 120, data: [1, 2, 3])
        }
        let bike: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: ANTPlusPageError.unsupportedDeviceType(121, data: bike)) {
            try ANTPlusPageDecoder.decode(deviceType: 121, data: bike)
        }
    }
}

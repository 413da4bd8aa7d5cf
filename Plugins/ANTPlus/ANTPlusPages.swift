import AdapterKit
import Foundation

/// ANT+ device types (the channel id's device type) this adapter reads.
public enum ANTPlusDeviceType {
    public static let weightScale: UInt8 = 119
    public static let heartRate: UInt8 = 120
    public static let strideSpeedDistance: UInt8 = 124

    /// The profiles' channel periods in 1/32768 s.
    public static func period(_ deviceType: UInt8) -> UInt16? {
        switch deviceType {
        case weightScale: 8192
        case heartRate: 8070
        case strideSpeedDistance: 8134
        default: nil
        }
    }
}

/// The heart-rate fields every heart-rate page carries (bytes 4-7), and page 4's previous beat time.
public struct HeartRatePage: Hashable, Sendable {
    /// Page number without the toggle bit.
    public var page: UInt8
    /// Bit 7 of byte 0; flips every fourth message.
    public var toggle: Bool
    /// Time of the last heartbeat, 1/1024 s, wraps at 64 s.
    public var beatEventTime: UInt16
    /// Heartbeats counted, wraps at 256.
    public var beatCount: UInt8
    /// Beats per minute as computed by the sensor; nil when the sensor sends 0 (invalid).
    public var computedHeartRate: UInt8?
    /// Page 4: time of the heartbeat before the last one, 1/1024 s.
    public var previousBeatEventTime: UInt16?

    public init(page: UInt8, toggle: Bool, beatEventTime: UInt16, beatCount: UInt8, computedHeartRate: UInt8?,
                previousBeatEventTime: UInt16?) {
        self.page = page
        self.toggle = toggle
        self.beatEventTime = beatEventTime
        self.beatCount = beatCount
        self.computedHeartRate = computedHeartRate
        self.previousBeatEventTime = previousBeatEventTime
    }
}

/// Stride-based speed and distance monitor, page 1: distance, time, speed and strides.
public struct StrideDistancePage: Hashable, Sendable {
    /// Seconds since the sensor started, modulo 256, in 1/200 s steps.
    public var elapsedTime: Double
    /// Metres, modulo 256, in 1/16 m steps.
    public var distance: Double
    /// The distance counter in 1/16 m (12 bits, wraps at 4096).
    public var distanceSixteenths: Int
    /// Metres per second, in 1/256 steps.
    public var speed: Double
    /// Strides counted (one stride = two steps), wraps at 256.
    public var strideCount: UInt8
    /// Seconds between the computation and the transmission, in 1/32 s steps.
    public var updateLatency: Double

    public init(elapsedTime: Double, distance: Double, distanceSixteenths: Int, speed: Double, strideCount: UInt8,
                updateLatency: Double) {
        self.elapsedTime = elapsedTime
        self.distance = distance
        self.distanceSixteenths = distanceSixteenths
        self.speed = speed
        self.strideCount = strideCount
        self.updateLatency = updateLatency
    }
}

/// Stride-based speed and distance monitor, pages 2-15: cadence, speed and status (page 3 adds calories).
public struct StrideStatusPage: Hashable, Sendable {
    public var page: UInt8
    /// Strides per minute, in 1/16 steps.
    public var cadence: Double
    /// Metres per second, in 1/256 steps.
    public var speed: Double
    /// Location, battery, health and use state bits.
    public var status: UInt8
    /// Page 3: kilocalories, wraps at 256.
    public var calories: UInt8?

    public init(page: UInt8, cadence: Double, speed: Double, status: UInt8, calories: UInt8?) {
        self.page = page
        self.cadence = cadence
        self.speed = speed
        self.status = status
        self.calories = calories
    }
}

/// A weight-scale body weight as the scale broadcasts it while and after measuring.
public enum WeightReading: Hashable, Sendable {
    case kilograms(Double)
    /// 0xFFFE: the scale is still measuring.
    case computing
    /// 0xFFFF: no valid weight.
    case invalid
}

/// Weight scale, page 1.
public struct BodyWeightPage: Hashable, Sendable {
    /// Nil when the scale sends 0xFFFF (no user profile).
    public var userProfileID: UInt16?
    public var capabilities: UInt8
    public var reading: WeightReading

    public init(userProfileID: UInt16?, capabilities: UInt8, reading: WeightReading) {
        self.userProfileID = userProfileID
        self.capabilities = capabilities
        self.reading = reading
    }
}

/// A decoded ANT+ data page.
public enum ANTPlusPage: Hashable, Sendable {
    case heartRate(HeartRatePage)
    case strideDistance(StrideDistancePage)
    case strideStatus(StrideStatusPage)
    case bodyWeight(BodyWeightPage)
    /// A page the profile defines that carries nothing this adapter stores (common pages, summaries, capabilities).
    case other(deviceType: UInt8, page: UInt8)
}

/// Why 8 bytes are not a page this adapter can read. Every case carries the bytes.
public enum ANTPlusPageError: Error, Hashable, Sendable, CustomStringConvertible {
    case wrongLength(found: Int, data: [UInt8])
    /// A page number the device type's profile does not define.
    case unknownPage(deviceType: UInt8, page: UInt8, data: [UInt8])
    /// A device type this adapter has no profile for.
    case unsupportedDeviceType(UInt8, data: [UInt8])

    public var description: String {
        switch self {
        case .wrongLength(let found, let data):
            "a data page has 8 bytes, found \(found): \(hexString(data))"
        case .unknownPage(let type, let page, let data):
            "device type \(type) has no page \(page): \(hexString(data))"
        case .unsupportedDeviceType(let type, let data):
            "device type \(type) is not read by this adapter: \(hexString(data))"
        }
    }

    public var reason: String {
        switch self {
        case .wrongLength: "short-message"
        case .unknownPage: "unknown-page"
        case .unsupportedDeviceType: "unsupported-device-type"
        }
    }
}

/// Pure decoders of the heart-rate, stride-based speed and distance, and weight-scale pages.
public enum ANTPlusPageDecoder {
    /// Pages every ANT+ device may send (manufacturer, product, battery).
    static let commonPages: ClosedRange<UInt8> = 80...82

    public static func decode(deviceType: UInt8, data: [UInt8]) throws(ANTPlusPageError) -> ANTPlusPage {
        guard data.count == 8 else { throw .wrongLength(found: data.count, data: data) }
        switch deviceType & 0x7F {
        case ANTPlusDeviceType.heartRate: return try heartRate(data)
        case ANTPlusDeviceType.strideSpeedDistance: return try strideSpeedDistance(data)
        case ANTPlusDeviceType.weightScale: return try weightScale(data)
        default: throw .unsupportedDeviceType(deviceType & 0x7F, data: data)
        }
    }

    /// Heart rate (device type 120): every page carries the beat time, beat count and computed rate in bytes 4-7;
    /// bit 7 of byte 0 is a toggle, the page number is bits 0-6.
    static func heartRate(_ data: [UInt8]) throws(ANTPlusPageError) -> ANTPlusPage {
        let page = data[0] & 0x7F
        guard (0...7).contains(page) || page == 9 || (112...127).contains(page) else {
            throw .unknownPage(deviceType: ANTPlusDeviceType.heartRate, page: page, data: data)
        }
        return .heartRate(HeartRatePage(
            page: page, toggle: data[0] & 0x80 != 0,
            beatEventTime: UInt16(data[4]) | UInt16(data[5]) << 8, beatCount: data[6],
            computedHeartRate: data[7] == 0 ? nil : data[7],
            previousBeatEventTime: page == 4 ? UInt16(data[2]) | UInt16(data[3]) << 8 : nil))
    }

    /// Stride-based speed and distance (device type 124).
    static func strideSpeedDistance(_ data: [UInt8]) throws(ANTPlusPageError) -> ANTPlusPage {
        let page = data[0]
        let speed = Double(data[4] & 0x0F) + Double(data[5]) / 256
        switch page {
        case 1:
            let sixteenths = Int(data[3]) << 4 | Int(data[4] >> 4)
            return .strideDistance(StrideDistancePage(
                elapsedTime: Double(data[2]) + Double(data[1]) / 200, distance: Double(sixteenths) / 16,
                distanceSixteenths: sixteenths, speed: speed, strideCount: data[6],
                updateLatency: Double(data[7]) / 32))
        case 2...15:
            return .strideStatus(StrideStatusPage(
                page: page, cadence: Double(data[3]) + Double(data[4] >> 4) / 16, speed: speed, status: data[7],
                calories: page == 3 ? data[6] : nil))
        case 16, 22, 70, commonPages:
            return .other(deviceType: ANTPlusDeviceType.strideSpeedDistance, page: page)
        default:
            throw .unknownPage(deviceType: ANTPlusDeviceType.strideSpeedDistance, page: page, data: data)
        }
    }

    /// Weight scale (device type 119): page 1 carries the body weight in 0.01 kg (0xFFFE computing, 0xFFFF invalid).
    static func weightScale(_ data: [UInt8]) throws(ANTPlusPageError) -> ANTPlusPage {
        let page = data[0]
        switch page {
        case 1:
            let profile = UInt16(data[1]) | UInt16(data[2]) << 8
            let raw = UInt16(data[6]) | UInt16(data[7]) << 8
            let reading: WeightReading = switch raw {
            case 0xFFFE: .computing
            case 0xFFFF: .invalid
            default: .kilograms(Double(raw) / 100)
            }
            return .bodyWeight(BodyWeightPage(userProfileID: profile == 0xFFFF ? nil : profile, capabilities: data[3],
                                              reading: reading))
        case 2, 3, 4, 58, 70, commonPages:
            return .other(deviceType: ANTPlusDeviceType.weightScale, page: page)
        default:
            throw .unknownPage(deviceType: ANTPlusDeviceType.weightScale, page: page, data: data)
        }
    }
}

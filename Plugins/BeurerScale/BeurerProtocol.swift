import Foundation

/// Why a notification of a Beurer/Sanitas scale cannot be used. Each case carries the bytes.
public enum BeurerFrameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Shorter than the layout of its command.
    case tooShort(expected: Int, bytes: [UInt8])
    /// A saved-measurement part whose counters are impossible (part 0, past the count, out of order).
    case badPartNumber(count: Int, part: Int, bytes: [UInt8])
    /// A user list or measurement count past the bound the adapter accepts.
    case countTooLarge(count: Int, limit: Int, bytes: [UInt8])
    /// The two parts of a saved measurement joined to fewer than its 22 bytes.
    case shortMeasurement(bytes: [UInt8])

    /// A short kebab-case reason for rejection counts.
    public var reason: String {
        switch self {
        case .tooShort: "short-frame"
        case .badPartNumber: "bad-part-number"
        case .countTooLarge: "count-too-large"
        case .shortMeasurement: "short-measurement"
        }
    }

    public var description: String {
        switch self {
        case .tooShort(let expected, let bytes): "\(bytes.count) bytes, the layout has \(expected): \(beurerHex(bytes))"
        case .badPartNumber(let count, let part, let bytes): "part \(part) of \(count) is out of order: \(beurerHex(bytes))"
        case .countTooLarge(let count, let limit, let bytes): "count \(count) is past the limit \(limit): \(beurerHex(bytes))"
        case .shortMeasurement(let bytes): "saved measurement of \(bytes.count) bytes, the layout has 22: \(beurerHex(bytes))"
        }
    }
}

func beurerHex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }

/// The vendor protocol of Beurer BF700/BF710/BF800, Runtastic Libra and Sanitas SBF70 scales on
/// characteristic 0xFFE1 (service 0xFFE0), written and notified. See README.md.
///
/// A message starts with a byte whose high nibble is the family's (0xF for BF700/BF800/Libra,
/// 0xE for BF710 and Sanitas) and whose low nibble says what it is: 7 a command, 6 the greeting,
/// 9 the clock, A the farewell. Commands are `<start> <command> <parameters>`; numbers are
/// big-endian.
public struct BeurerProtocol: Hashable, Sendable {
    /// The family's high nibble (0xF0 or 0xE0).
    public var family: UInt8

    public init(family: UInt8) { self.family = family & 0xF0 }

    /// The start byte of commands.
    public var commandStart: UInt8 { family | 0x7 }
    /// The start byte of the greeting and of the scale's answer to it.
    public var greetingStart: UInt8 { family | 0x6 }

    /// Command bytes (second byte of a command message).
    public enum Command {
        public static let userList: UInt8 = 0x33
        public static let userInfo: UInt8 = 0x34
        public static let getSavedMeasurements: UInt8 = 0x41
        public static let savedMeasurement: UInt8 = 0x42
        public static let deleteSavedMeasurements: UInt8 = 0x43
        public static let scaleAck: UInt8 = 0xF0
        public static let appAck: UInt8 = 0xF1
    }

    /// "Hello": `<family|6> 01`; the scale answers with a message starting `<family|6>`.
    public var greeting: [UInt8] { [greetingStart, 0x01] }

    /// Sets the scale's clock: `<family|9> <Unix seconds u32>`; not acknowledged.
    public func setTime(_ date: Date) -> [UInt8] {
        let seconds = UInt32(clamping: Int64(date.timeIntervalSince1970.rounded(.down)))
        return [family | 0x9] + Self.bigEndian(seconds)
    }

    /// Ends the session: `<family|A> 02`.
    public var farewell: [UInt8] { [family | 0xA, 0x02] }

    /// Asks for the users stored on the scale.
    public var userList: [UInt8] { [commandStart, Command.userList] }

    /// Asks for the saved measurements of `user`.
    public func getSavedMeasurements(user: UInt64) -> [UInt8] {
        [commandStart, Command.getSavedMeasurements] + Self.bigEndian(user)
    }

    /// Erases the saved measurements of `user` on the scale.
    public func deleteSavedMeasurements(user: UInt64) -> [UInt8] {
        [commandStart, Command.deleteSavedMeasurements] + Self.bigEndian(user)
    }

    /// The app's acknowledgement of a numbered notification: `<start> F1 <command> <count> <part>`.
    public func acknowledge(_ notification: [UInt8]) -> [UInt8] {
        [commandStart, Command.appAck] + Array(notification.dropFirst().prefix(3))
    }

    /// Whether `bytes` is the scale's acknowledgement of `command`: `<start> F0 <command> …`.
    public func isScaleAck(_ bytes: [UInt8], of command: UInt8) -> Bool {
        bytes.count >= 4 && bytes[0] == commandStart && bytes[1] == Command.scaleAck && bytes[2] == command
    }

    /// Whether `bytes` is a numbered notification of `command`: `<start> <command> <count> <part> …`.
    public func isNumbered(_ bytes: [UInt8], _ command: UInt8) -> Bool {
        bytes.count >= 4 && bytes[0] == commandStart && bytes[1] == command
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (24 - 8 * $0)) & 0xFF) } }
    static func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8((value >> (56 - 8 * $0)) & 0xFF) } }
}

/// A user stored on the scale, from one user-info notification
/// (`<start> 34 <count> <n> <user id u64> <initials, 3 bytes> <birth year − 1900>`).
public struct BeurerUser: Hashable, Sendable {
    public var id: UInt64
    /// Up to three initials, as the scale shows them.
    public var initials: String
    public var birthYear: Int
    /// The user's place (1…count) in the scale's list.
    public var slot: Int

    public init(id: UInt64, initials: String, birthYear: Int, slot: Int) {
        self.id = id
        self.initials = initials
        self.birthYear = birthYear
        self.slot = slot
    }

    public init(notification bytes: [UInt8]) throws(BeurerFrameError) {
        guard bytes.count >= 16 else { throw .tooShort(expected: 16, bytes: bytes) }
        id = bytes[4..<12].reduce(0) { $0 << 8 | UInt64($1) }
        initials = String(decoding: bytes[12..<15].prefix { $0 != 0 }, as: UTF8.self)
        birthYear = 1900 + Int(bytes[15])
        slot = Int(bytes[3])
    }
}

/// One saved measurement (both parts joined): time (Unix seconds u32) · weight (u16, 50 g) ·
/// impedance (u16, ohms) · body fat (u16, 0.1 %) · water (u16, 0.1 %) · muscle (u16, 0.1 %) ·
/// bone (u16, 50 g) · BMR (u16, kcal) · AMR (u16, kcal) · BMI (u16, 0.1).
public struct BeurerMeasurement: Hashable, Sendable {
    public var time: UInt32
    public var weightFiftyGrams: Int
    public var impedanceOhms: Int
    public var bodyFatPermille: Int
    public var waterPermille: Int
    public var musclePermille: Int
    public var boneFiftyGrams: Int
    public var bodyMassIndexTenths: Int

    public init(_ bytes: [UInt8]) throws(BeurerFrameError) {
        guard bytes.count >= 22 else { throw .shortMeasurement(bytes: bytes) }
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
        time = UInt32(u16(0)) << 16 | UInt32(u16(2))
        weightFiftyGrams = u16(4)
        impedanceOhms = u16(6)
        bodyFatPermille = u16(8)
        waterPermille = u16(10)
        musclePermille = u16(12)
        boneFiftyGrams = u16(14)
        bodyMassIndexTenths = u16(20)
    }

    public var weightKilograms: Double { Double(weightFiftyGrams) / 20 }
}

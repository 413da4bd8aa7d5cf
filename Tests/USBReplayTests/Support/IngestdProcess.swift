import Foundation
import Testing

/// Capture files of the tests.
enum Fixtures {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `Tests/<folder>/...`.
    static func path(_ relative: String) -> String { tests.appendingPathComponent(relative).path }
}

/// One sample line of `ingestd decode --json` (or an `.expected.jsonl` line).
struct DecodedSample: Equatable, CustomStringConvertible {
    var type: String
    var value: Double
    var unit: String
    var start: Date
    var end: Date
    var source: String
    var deviceName: String?
    var deviceIdentifier: String?
    var metadata: [String: Double]

    init(json line: String) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        type = try #require(object["type"] as? String)
        value = try #require((object["value"] as? NSNumber)?.doubleValue)
        unit = try #require(object["unit"] as? String)
        start = try #require(Self.date(object["start"] as? String), "start of \(line)")
        end = try #require(Self.date(object["end"] as? String), "end of \(line)")
        source = try #require(object["source"] as? String)
        let device = object["device"] as? [String: Any]
        deviceName = device?["name"] as? String
        deviceIdentifier = device?["localIdentifier"] as? String
        var numbers: [String: Double] = [:]
        for (key, value) in object["metadata"] as? [String: Any] ?? [:] {
            if let number = value as? NSNumber { numbers[key] = number.doubleValue }
        }
        metadata = numbers
    }

    static func date(_ text: String?) -> Date? {
        guard let text else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        if let date = formatter.date(from: text) {
            // The formatter keeps milliseconds only: add the rest of the microseconds back.
            guard let dot = text.firstIndex(of: "."), let zone = text.lastIndex(of: "Z") else { return date }
            let digits = String(text[text.index(after: dot)..<zone]).padding(toLength: 6, withPad: "0", startingAt: 0)
            let micros = Double(Int(digits.prefix(6)) ?? 0)
            return Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down) + micros / 1_000_000)
        }
        return nil
    }

    /// The same sample: equal fields, times within a microsecond, values within 1e-9.
    func matches(_ other: DecodedSample) -> Bool {
        type == other.type && abs(value - other.value) < 1e-9 && unit == other.unit
            && abs(start.timeIntervalSince(other.start)) < 2e-6 && abs(end.timeIntervalSince(other.end)) < 2e-6
            && source == other.source && deviceName == other.deviceName && deviceIdentifier == other.deviceIdentifier
            && metadata == other.metadata
    }

    var description: String {
        "\(type) \(value) \(unit) \(start.timeIntervalSince1970)–\(end.timeIntervalSince1970) \(deviceIdentifier ?? "-") \(metadata)"
    }
}

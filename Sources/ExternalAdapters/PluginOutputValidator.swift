import ExternalAdapterProtocol
import Foundation
import HealthModel
import Logging

/// Why a line a plugin printed was not used. The raw values are the stable keys counted in
/// reports and statistics.
public enum PluginRejectionReason: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Longer than the protocol's maximum (64 KiB).
    case lineTooLong = "line-too-long"
    /// The plugin's output ended in the middle of a line (it crashed or was killed while writing).
    case unterminatedLine = "unterminated-line"
    /// Not a JSON object.
    case invalidJSON = "invalid-json"
    /// A JSON object that is none of the protocol's messages.
    case unknownMessage = "unknown-message"
    /// A `log` or `done` message of the wrong shape.
    case invalidMessage = "invalid-message"
    /// A sample or correlation that does not follow ingestd's record format.
    case invalidRecord = "invalid-record"
    /// A type identifier ingestd does not know.
    case unknownType = "unknown-type"
    /// A known type the plugin did not declare in `produces`.
    case undeclaredType = "undeclared-type"
    /// A value that is not a finite number.
    case nonFinite = "non-finite"
    /// A unit that cannot express the type.
    case incompatibleUnit = "incompatible-unit"
    /// A value outside the type's plausible range.
    case outOfRange = "out-of-range"
    /// A protocol-2 request of the wrong shape (missing id, unknown field, bad UUID or hex, a
    /// value over 512 bytes).
    case invalidRequest = "invalid-request"
    /// A request beyond the request rate limit.
    case rateLimited = "rate-limited"
    /// A request while too many of the plugin's requests are still unanswered.
    case tooManyRequests = "too-many-requests"
    /// A request naming a device other than the one the process serves.
    case notYourDevice = "not-your-device"
    /// A request while the plugin holds no connection (an advertisement or USB plugin, or after
    /// `disconnected`).
    case notConnected = "not-connected"

    public var description: String { rawValue }

    public static func < (a: PluginRejectionReason, b: PluginRejectionReason) -> Bool { a.rawValue < b.rawValue }
}

/// A rejected line: its reason and a detail for logs (with a short excerpt of the line).
public struct PluginLineRejection: Sendable, Hashable, CustomStringConvertible {
    public var reason: PluginRejectionReason
    public var detail: String
    /// For a refused request whose id could be read: the plugin is answered `failed` under it.
    public var requestID: PluginRequestID?

    public init(_ reason: PluginRejectionReason, _ detail: String, requestID: PluginRequestID? = nil) {
        self.reason = reason
        self.detail = detail
        self.requestID = requestID
    }

    public var description: String { "\(reason): \(detail)" }
}

/// What one line of a plugin's stdout turned out to be.
public enum PluginLine: Sendable, Hashable {
    /// A sample or correlation, validated, with `source` set to the plugin's id.
    case record(HealthRecord)
    /// `{"log":{"level":…,"message":…}}`.
    case log(Logger.Level, String)
    /// `{"done":true}`.
    case done
    /// A protocol-2 request (`read`, `write`, `subscribe`, `unsubscribe`, `disconnect`), well formed.
    case request(PluginRequest)
    case rejected(PluginLineRejection)
}

/// Checks one line of a plugin's stdout, treating it as untrusted input.
///
/// A record must decode as ingestd's JSON-lines format; every quantity type in it must be known
/// and declared in the plugin's `produces`; values must be finite, in a unit that fits the type
/// and, converted to the canonical unit, in the type's plausible range. The `source` is forced
/// to the plugin's id (a plugin cannot write under another source's grants). A record without a
/// `device` gets the device the process serves. Dates, correlation rules, authorization and
/// deduplication stay with the pipeline.
public struct PluginOutputValidator: Sendable {
    public let adapterID: String
    public let produces: Set<QuantityType>
    /// Filled in as the `device` of records that carry none.
    public let device: Device?
    /// The protocol version the plugin speaks: requests are messages from version 2 on.
    public let protocolVersion: Int
    private let decoder: HealthRecordDecoder

    public init(adapterID: String, produces: some Sequence<QuantityType>, device: Device?, protocolVersion: Int = 1) {
        self.adapterID = adapterID
        self.produces = Set(produces)
        self.device = device
        self.protocolVersion = protocolVersion
        self.decoder = HealthRecordDecoder(defaultSource: adapterID)
    }

    /// Classifies and checks one line (without its newline).
    public func validate(_ line: [UInt8]) -> PluginLine {
        // Nearly every line a plugin prints is a plain sample: the one-pass decoder takes it, no probe.
        if var sample = decoder.decodePlainSample(line) {
            if let problem = check(&sample) { return .rejected(problem) }
            return .record(.sample(sample))
        }
        let message: MessageProbe
        do {
            message = try JSONDecoder().decode(MessageProbe.self, from: Data(line))
        } catch let error as PluginLineRejection {
            if error.reason == .invalidRequest && protocolVersion < 2 {
                return .rejected(PluginLineRejection(.unknownMessage, "a protocol-2 request; this plugin speaks protocol \(protocolVersion)"))
            }
            return .rejected(error)
        } catch {
            return .rejected(PluginLineRejection(.invalidJSON, "not a JSON object: " + Self.excerpt(line)))
        }
        switch message {
        case .log(let level, let text): return .log(level, text)
        case .done: return .done
        case .record: return validateRecord(line)
        case .request(let operation, let fields):
            guard protocolVersion >= 2 else {
                return .rejected(PluginLineRejection(.unknownMessage, "\(operation) is a protocol-2 request; this plugin speaks protocol \(protocolVersion)"))
            }
            do {
                return .request(try PluginRequestCodec.request(operation: operation, fields: fields))
            } catch {
                return .rejected(PluginLineRejection(.invalidRequest, error.detail, requestID: error.id))
            }
        }
    }

    private func validateRecord(_ line: [UInt8]) -> PluginLine {
        var record: HealthRecord
        do {
            record = try decoder.decodeLine(Data(line))
        } catch {
            return .rejected(Self.rejection(for: error))
        }
        switch record {
        case .sample(var sample):
            if let problem = check(&sample) { return .rejected(problem) }
            record = .sample(sample)
        case .correlation(var correlation):
            correlation.source = adapterID
            if correlation.device == nil { correlation.device = device }
            for index in correlation.objects.indices {
                if let problem = check(&correlation.objects[index]) {
                    return .rejected(PluginLineRejection(problem.reason, "objects[\(index)]: \(problem.detail)"))
                }
            }
            record = .correlation(correlation)
        }
        return .record(record)
    }

    /// Forces the source, fills in the device, and checks type, finiteness, unit and range.
    private func check(_ sample: inout QuantitySample) -> PluginLineRejection? {
        sample.source = adapterID
        if sample.device == nil { sample.device = device }
        let type = sample.type
        guard produces.contains(type) else {
            return PluginLineRejection(.undeclaredType, "\(type.identifier) is not in the plugin's \"produces\"")
        }
        let canonical: Double
        do {
            canonical = try sample.quantity.doubleValue(for: type.canonicalUnit)
        } catch {
            return PluginLineRejection(.incompatibleUnit,
                                       "unit \"\(sample.quantity.unit.unitString)\" cannot express \(type.shortName) (\(type.canonicalUnit.unitString))")
        }
        guard canonical.isFinite else {
            return PluginLineRejection(.nonFinite, "\(type.shortName) value \(sample.quantity.value) \(sample.quantity.unit.unitString) is not finite in \(type.canonicalUnit.unitString)")
        }
        guard type.plausibleRange.contains(canonical) else {
            return PluginLineRejection(.outOfRange,
                                       "\(type.shortName) \(canonical) \(type.canonicalUnit.unitString) is outside \(type.plausibleRange.lowerBound)...\(type.plausibleRange.upperBound)")
        }
        return nil
    }

    static func rejection(for error: RecordDecodingError) -> PluginLineRejection {
        switch error {
        case .emptyLine, .invalidJSON, .notAnObject:
            PluginLineRejection(.invalidJSON, error.description)
        case .unknownType:
            PluginLineRejection(.unknownType, error.description)
        case .notAFiniteNumber(let field, _) where field.hasSuffix("value"):
            PluginLineRejection(.nonFinite, error.description)
        default:
            PluginLineRejection(.invalidRecord, error.description)
        }
    }

    /// The first 80 bytes of a line, for log details.
    static func excerpt(_ line: [UInt8]) -> String {
        let head = String(decoding: line.prefix(80), as: UTF8.self)
        let printable = String(head.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "." : Character($0) })
        return line.count > 80 ? printable + "… (\(line.count) bytes)" : printable
    }
}

/// The kind of a plugin output line, read without building the record.
private enum MessageProbe: Decodable {
    case log(Logger.Level, String)
    case done
    case record
    case request(String, PluginRequestFields)

    init(from decoder: any Decoder) throws {
        let object: KeyedDecodingContainer<ProbeKey>
        do {
            object = try decoder.container(keyedBy: ProbeKey.self)
        } catch {
            throw PluginLineRejection(.invalidJSON, "expected a JSON object")
        }
        let keys = Set(object.allKeys.map(\.stringValue))
        if keys.contains("type") || keys.contains("correlation") {
            self = .record
        } else if keys == ["log"] {
            guard let body = try? object.decode(LogBody.self, forKey: ProbeKey("log")) else {
                throw PluginLineRejection(.invalidMessage, "log must be {\"level\":…,\"message\":\"…\"}")
            }
            guard let level = Logger.Level(rawValue: body.level) else {
                throw PluginLineRejection(.invalidMessage, "unknown log level \"\(body.level.prefix(40))\"")
            }
            self = .log(level, body.message)
        } else if keys == ["done"] {
            guard (try? object.decode(Bool.self, forKey: ProbeKey("done"))) == true else {
                throw PluginLineRejection(.invalidMessage, "done must be true")
            }
            self = .done
        } else if keys.count == 1, let operation = keys.first, PluginRequestCodec.operations.contains(operation) {
            do {
                self = .request(operation, try object.decode(PluginRequestFields.self, forKey: ProbeKey(operation)))
            } catch let error as PluginRequestError {
                throw PluginLineRejection(.invalidRequest, "\(operation): \(error.detail)", requestID: error.id)
            } catch {
                throw PluginLineRejection(.invalidRequest, "\(operation) must be an object")
            }
        } else {
            let names = keys.sorted().prefix(5).map { String($0.prefix(40)) }.joined(separator: ", ")
            throw PluginLineRejection(.unknownMessage, "an object with keys [\(names)] is no protocol message")
        }
    }

    private struct LogBody: Decodable {
        var level: String
        var message: String
    }

    private struct ProbeKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension PluginLineRejection: Error {}

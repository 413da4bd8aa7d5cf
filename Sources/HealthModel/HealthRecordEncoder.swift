import Foundation

/// Writes samples and correlations as ingestd's JSON lines (DESIGN.md "Command line").
///
/// Keys come in a fixed order: `uuid, type, value, unit, start, end, source, device, metadata`
/// for a sample; `correlation, uuid, start, end, source, device, metadata, objects` for a
/// correlation. `device` is left out when nil (and lists only its non-nil fields), `metadata`
/// when empty. Dates are ISO 8601 (see `ISO8601DateTime`), in UTC unless the encoder was given a
/// zone (`samples --json --tz`); values are the shortest text that reads back exactly. The
/// returned line has no trailing newline.
public struct HealthRecordEncoder: Sendable {
    /// The longest JSON line ingestd reads back (`replay`), newline excluded: whatever is stored
    /// must encode within it, so that `export --format jsonl` → `replay` carries every record.
    public static let maximumLineBytes = 1 << 20

    /// The zone dates are written in, with its offset; nil: UTC (`Z`).
    public let timeZone: TimeZone?

    public init(timeZone: TimeZone? = nil) {
        self.timeZone = timeZone
    }

    public func encode(_ record: HealthRecord) -> String {
        Self.text { append(record, to: &$0) }
    }

    public func encode(_ sample: QuantitySample) -> String {
        Self.text { append(sample, to: &$0) }
    }

    public func encode(_ correlation: Correlation) -> String {
        Self.text { append(correlation, to: &$0) }
    }

    /// `{"name":…,…}` with only the non-nil fields.
    public func encode(_ device: Device) -> String {
        Self.text { appendDevice(device, to: &$0) }
    }

    /// `{"HKMetadataKeySyncIdentifier":…,…}` in `Metadata.orderedEntries` order.
    public func encode(_ metadata: Metadata) -> String {
        Self.text { appendMetadata(metadata, to: &$0) }
    }

    public func append(_ record: HealthRecord, to text: inout String) {
        text += Self.text { append(record, to: &$0) }
    }

    public func append(_ sample: QuantitySample, to text: inout String) {
        text += Self.text { append(sample, to: &$0) }
    }

    public func append(_ correlation: Correlation, to text: inout String) {
        text += Self.text { append(correlation, to: &$0) }
    }

    /// The text of what `body` writes as bytes.
    private static func text(_ body: (inout [UInt8]) -> Void) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        body(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Bytes (the one implementation; the text above is made from it)

    /// Appends the record's JSON line (no newline) as UTF-8 to `bytes`: what `decode --json`
    /// prints, many lines to one buffer.
    public func append(_ record: HealthRecord, to bytes: inout [UInt8]) {
        switch record {
        case .sample(let sample): append(sample, to: &bytes)
        case .correlation(let correlation): append(correlation, to: &bytes)
        }
    }

    public func append(_ sample: QuantitySample, to bytes: inout [UInt8]) {
        Self.put("{\"uuid\":\"", to: &bytes)
        UUIDText.append(sample.uuid, to: &bytes)
        Self.put("\",\"type\":", to: &bytes)
        JSONText.appendQuoted(sample.type.identifier, to: &bytes)
        Self.put(",\"value\":", to: &bytes)
        bytes.append(contentsOf: JSONNumber.format(sample.quantity.value).utf8)
        Self.put(",\"unit\":", to: &bytes)
        JSONText.appendQuoted(sample.quantity.unit.unitString, to: &bytes)
        appendCommonFields(start: sample.start, end: sample.end, source: sample.source,
                           device: sample.device, metadata: sample.metadata, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    public func append(_ correlation: Correlation, to bytes: inout [UInt8]) {
        Self.put("{\"correlation\":", to: &bytes)
        JSONText.appendQuoted(correlation.type.identifier, to: &bytes)
        Self.put(",\"uuid\":\"", to: &bytes)
        UUIDText.append(correlation.uuid, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        appendCommonFields(start: correlation.start, end: correlation.end, source: correlation.source,
                           device: correlation.device, metadata: correlation.metadata, to: &bytes)
        Self.put(",\"objects\":[", to: &bytes)
        for (position, sample) in correlation.objects.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            append(sample, to: &bytes)
        }
        Self.put("]}", to: &bytes)
    }

    /// Appends ASCII literal text.
    private static func put(_ literal: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private func appendDate(_ date: Date, to bytes: inout [UInt8]) {
        if let timeZone {
            ISO8601DateTime.append(date, in: timeZone, to: &bytes)
        } else {
            ISO8601DateTime.append(date, to: &bytes)
        }
    }

    /// `,"start":…,"end":…,"source":…[,"device":…][,"metadata":…]`
    private func appendCommonFields(
        start: Date, end: Date, source: String, device: Device?, metadata: Metadata, to bytes: inout [UInt8]
    ) {
        Self.put(",\"start\":\"", to: &bytes)
        appendDate(start, to: &bytes)
        Self.put("\",\"end\":\"", to: &bytes)
        appendDate(end, to: &bytes)
        Self.put("\",\"source\":", to: &bytes)
        JSONText.appendQuoted(source, to: &bytes)
        if let device {
            Self.put(",\"device\":", to: &bytes)
            appendDevice(device, to: &bytes)
        }
        if !metadata.isEmpty {
            Self.put(",\"metadata\":", to: &bytes)
            appendMetadata(metadata, to: &bytes)
        }
    }

    /// `{"name":…,…}` with the non-nil fields in `Device.Field` order.
    private func appendDevice(_ device: Device, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for field in Device.Field.allCases {
            guard let value = device[field] else { continue }
            Self.put(first ? "\"" : ",\"", to: &bytes)
            first = false
            bytes.append(contentsOf: field.rawValue.utf8)
            Self.put("\":", to: &bytes)
            JSONText.appendQuoted(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// `{…}` in `Metadata.orderedEntries` order, the sync version an exact integer (2^63 - 1).
    private func appendMetadata(_ metadata: Metadata, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        func key(_ key: String) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONText.appendQuoted(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }
        func value(_ value: MetadataValue) {
            switch value {
            case .string(let string): JSONText.appendQuoted(string, to: &bytes)
            case .number(let number): bytes.append(contentsOf: JSONNumber.format(number).utf8)
            case .bool(let bool): Self.put(bool ? "true" : "false", to: &bytes)
            }
        }
        metadata.forEachTypedField { typedKey, typedValue in
            key(typedKey)
            switch typedValue {
            case .string(let string): JSONText.appendQuoted(string, to: &bytes)
            case .integer(let integer): bytes.append(contentsOf: String(integer).utf8)
            case .bool(let bool): Self.put(bool ? "true" : "false", to: &bytes)
            }
        }
        if !metadata.entries.isEmpty {
            for (entryKey, entry) in metadata.untypedEntries {
                key(entryKey)
                value(entry)
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }
}

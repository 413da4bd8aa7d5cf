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
        var text = ""
        append(record, to: &text)
        return text
    }

    public func encode(_ sample: QuantitySample) -> String {
        var text = ""
        text.reserveCapacity(256)
        append(sample, to: &text)
        return text
    }

    public func encode(_ correlation: Correlation) -> String {
        var text = ""
        append(correlation, to: &text)
        return text
    }

    /// `{"name":…,…}` with only the non-nil fields.
    public func encode(_ device: Device) -> String {
        var text = ""
        appendDevice(device, to: &text)
        return text
    }

    /// `{"HKMetadataKeySyncIdentifier":…,…}` in `Metadata.orderedEntries` order.
    public func encode(_ metadata: Metadata) -> String {
        var text = ""
        appendMetadata(metadata, to: &text)
        return text
    }

    public func append(_ record: HealthRecord, to text: inout String) {
        switch record {
        case .sample(let sample): append(sample, to: &text)
        case .correlation(let correlation): append(correlation, to: &text)
        }
    }

    public func append(_ sample: QuantitySample, to text: inout String) {
        text += "{\"uuid\":\""
        UUIDText.append(sample.uuid, to: &text)
        text += "\",\"type\":"
        JSONText.appendQuoted(sample.type.identifier, to: &text)
        text += ",\"value\":"
        text += JSONNumber.format(sample.quantity.value)
        text += ",\"unit\":"
        JSONText.appendQuoted(sample.quantity.unit.unitString, to: &text)
        appendCommonFields(start: sample.start, end: sample.end, source: sample.source,
                           device: sample.device, metadata: sample.metadata, to: &text)
        text += "}"
    }

    public func append(_ correlation: Correlation, to text: inout String) {
        text += "{\"correlation\":"
        JSONText.appendQuoted(correlation.type.identifier, to: &text)
        text += ",\"uuid\":\""
        UUIDText.append(correlation.uuid, to: &text)
        text += "\""
        appendCommonFields(start: correlation.start, end: correlation.end, source: correlation.source,
                           device: correlation.device, metadata: correlation.metadata, to: &text)
        text += ",\"objects\":["
        for (position, sample) in correlation.objects.enumerated() {
            if position > 0 { text += "," }
            append(sample, to: &text)
        }
        text += "]}"
    }

    private func appendDate(_ date: Date, to text: inout String) {
        if let timeZone {
            ISO8601DateTime.append(date, in: timeZone, to: &text)
        } else {
            ISO8601DateTime.append(date, to: &text)
        }
    }

    /// `,"start":…,"end":…,"source":…[,"device":…][,"metadata":…]`
    private func appendCommonFields(
        start: Date, end: Date, source: String, device: Device?, metadata: Metadata, to text: inout String
    ) {
        text += ",\"start\":\""
        appendDate(start, to: &text)
        text += "\",\"end\":\""
        appendDate(end, to: &text)
        text += "\",\"source\":"
        JSONText.appendQuoted(source, to: &text)
        if let device {
            text += ",\"device\":"
            appendDevice(device, to: &text)
        }
        if !metadata.isEmpty {
            text += ",\"metadata\":"
            appendMetadata(metadata, to: &text)
        }
    }

    private func appendDevice(_ device: Device, to text: inout String) {
        text += "{"
        var first = true
        for (key, value) in device.fields {
            guard let value else { continue }
            if !first { text += "," }
            first = false
            JSONText.appendQuoted(key, to: &text)
            text += ":"
            JSONText.appendQuoted(value, to: &text)
        }
        text += "}"
    }

    private func appendMetadata(_ metadata: Metadata, to text: inout String) {
        text += "{"
        for (position, entry) in metadata.orderedEntries.enumerated() {
            if position > 0 { text += "," }
            JSONText.appendQuoted(entry.key, to: &text)
            text += ":"
            switch entry.value {
            case .string(let string): JSONText.appendQuoted(string, to: &text)
            // The sync version is an integer: written exactly, not through a Double (2^63 - 1).
            case .number where entry.key == MetadataKey.syncVersion && metadata.syncVersion != nil:
                text += String(metadata.syncVersion ?? 0)
            case .number(let number): text += JSONNumber.format(number)
            case .bool(let bool): text += bool ? "true" : "false"
            }
        }
        text += "}"
    }
}

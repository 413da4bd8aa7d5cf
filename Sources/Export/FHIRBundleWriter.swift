import Foundation
import HealthModel

/// Writes a FHIR R4 transaction Bundle of Observations, one entry per sample, streaming.
///
/// Each entry is a conditional create (`POST Observation` with `ifNoneExist` on the identifier),
/// so sending the same Bundle twice creates nothing new. The identifier is the sample's uuid as a
/// URN (`system` `urn:ietf:rfc:3986`, `value` `urn:uuid:…`). An instantaneous sample has
/// `effectiveDateTime`, an interval `effectivePeriod`. A blood-pressure correlation is one
/// Observation (panel 85354-9) with a systolic and a diastolic component. A type without a LOINC
/// code in `FHIRObservationCodes` is skipped and counted; food correlations are written as their
/// members.
public struct FHIRBundleWriter: ExportWriter {
    public private(set) var summary = ExportSummary()
    private var entries = 0

    static let identifierSystem = "urn:ietf:rfc:3986"
    static let loincSystem = "http://loinc.org"
    static let ucumSystem = "http://unitsofmeasure.org"
    static let categorySystem = "http://terminology.hl7.org/CodeSystem/observation-category"

    public init() {}

    public mutating func writeHeader(to output: inout String) {
        output += "{\"resourceType\":\"Bundle\",\"type\":\"transaction\""
    }

    public mutating func writeFooter(to output: inout String) {
        // JSON FHIR has no empty arrays: a Bundle without entries has no `entry` at all.
        output += entries == 0 ? "}\n" : "\n]}\n"
    }

    public mutating func write(_ record: HealthRecord, to output: inout String) {
        switch record {
        case .sample(let sample):
            write(sample, to: &output)
        case .correlation(let correlation) where correlation.type == .bloodPressure:
            writeBloodPressure(correlation, to: &output)
        case .correlation(let correlation):
            for member in correlation.objects { write(member, to: &output) }
        }
    }

    private mutating func write(_ sample: QuantitySample, to output: inout String) {
        guard let code = FHIRObservationCodes.code(for: sample.type) else {
            summary.skip(sample.type.identifier, because: .noLOINCCode)
            return
        }
        guard let value = code.value(fromCanonical: sample.quantity.value, of: sample.type) else {
            summary.skip(sample.type.identifier, because: .notANumber)
            return
        }
        var resource = ""
        appendObservationStart(uuid: sample.uuid, category: code.category, to: &resource)
        resource += ","
        appendCode(loinc: code.loinc, display: code.display, to: &resource)
        appendEffective(start: sample.start, end: sample.end, to: &resource)
        resource += ",\"valueQuantity\":"
        appendQuantity(value, code: code, to: &resource)
        appendDevice(sample.device, source: sample.source, to: &resource)
        resource += "}"
        appendEntry(uuid: sample.uuid, resource: resource, to: &output)
    }

    private mutating func writeBloodPressure(_ correlation: Correlation, to output: inout String) {
        var components: [(QuantitySample, FHIRObservationCode, Double)] = []
        for member in correlation.objects {
            guard let code = FHIRObservationCodes.code(for: member.type) else {
                summary.skip(member.type.identifier, because: .noLOINCCode)
                continue
            }
            guard let value = code.value(fromCanonical: member.quantity.value, of: member.type) else {
                summary.skip(member.type.identifier, because: .notANumber)
                continue
            }
            components.append((member, code, value))
        }
        guard !components.isEmpty else { return }
        var resource = ""
        appendObservationStart(uuid: correlation.uuid, category: .vitalSigns, to: &resource)
        resource += ","
        appendCode(loinc: FHIRObservationCodes.bloodPressurePanel.loinc,
                   display: FHIRObservationCodes.bloodPressurePanel.display, to: &resource)
        appendEffective(start: correlation.start, end: correlation.end, to: &resource)
        appendDevice(correlation.device ?? correlation.objects.first?.device, source: correlation.source, to: &resource)
        resource += ",\"component\":["
        for (position, (_, code, value)) in components.enumerated() {
            if position > 0 { resource += "," }
            resource += "{"
            appendCode(loinc: code.loinc, display: code.display, to: &resource)
            resource += ",\"valueQuantity\":"
            appendQuantity(value, code: code, to: &resource)
            resource += "}"
        }
        resource += "]}"
        appendEntry(uuid: correlation.uuid, resource: resource, to: &output)
    }

    private mutating func appendEntry(uuid: UUID, resource: String, to output: inout String) {
        let urn = Self.urn(uuid)
        output += entries == 0 ? ",\"entry\":[\n" : ",\n"
        output += "{\"fullUrl\":\"" + urn + "\",\"resource\":" + resource
        output += ",\"request\":{\"method\":\"POST\",\"url\":\"Observation\",\"ifNoneExist\":\"identifier="
        output += Self.identifierSystem + "|" + urn + "\"}}"
        entries += 1
        summary.written += 1
    }

    private func appendObservationStart(uuid: UUID, category: FHIRObservationCategory?, to text: inout String) {
        text += "{\"resourceType\":\"Observation\",\"identifier\":[{\"system\":\"" + Self.identifierSystem
        text += "\",\"value\":\"" + Self.urn(uuid) + "\"}],\"status\":\"final\""
        if let category {
            text += ",\"category\":[{\"coding\":[{\"system\":\"" + Self.categorySystem + "\",\"code\":\""
            text += category.rawValue + "\",\"display\":\"" + category.display + "\"}]}]"
        }
    }

    private func appendCode(loinc: String, display: String, to text: inout String) {
        text += "\"code\":{\"coding\":[{\"system\":\"" + Self.loincSystem + "\",\"code\":\"" + loinc + "\",\"display\":"
        JSONText.appendQuoted(display, to: &text)
        text += "}],\"text\":"
        JSONText.appendQuoted(display, to: &text)
        text += "}"
    }

    private func appendEffective(start: Date, end: Date, to text: inout String) {
        if start == end {
            text += ",\"effectiveDateTime\":\""
            ISO8601DateTime.append(start, to: &text)
            text += "\""
        } else {
            text += ",\"effectivePeriod\":{\"start\":\""
            ISO8601DateTime.append(start, to: &text)
            text += "\",\"end\":\""
            ISO8601DateTime.append(end, to: &text)
            text += "\"}"
        }
    }

    private func appendQuantity(_ value: Double, code: FHIRObservationCode, to text: inout String) {
        text += "{\"value\":" + JSONNumber.format(value) + ",\"unit\":"
        JSONText.appendQuoted(code.ucum, to: &text)
        text += ",\"system\":\"" + Self.ucumSystem + "\",\"code\":"
        JSONText.appendQuoted(code.ucum, to: &text)
        text += "}"
    }

    /// `device` as a display-only reference: "name (manufacturer model, localIdentifier)", with the
    /// source id when the device has no name; left out when there is no device at all.
    private func appendDevice(_ device: Device?, source: String, to text: inout String) {
        guard let display = Self.deviceDisplay(device, source: source) else { return }
        text += ",\"device\":{\"display\":"
        JSONText.appendQuoted(display, to: &text)
        text += "}"
    }

    static func deviceDisplay(_ device: Device?, source: String) -> String? {
        guard let device, !device.isEmpty else { return nil }
        let details = [device.manufacturer, device.model, device.localIdentifier].compactMap { $0.flatMap(fhirString) }
        let name = device.name.flatMap(fhirString) ?? fhirString(source) ?? "unnamed device"
        return details.isEmpty ? name : name + " (" + details.joined(separator: ", ") + ")"
    }

    /// A device's text as a FHIR string: control characters (which R4 strings cannot hold; a
    /// device's name is untrusted) become U+FFFD, surrounding whitespace goes; nil when nothing is left.
    static func fhirString(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let cleaned = String(String.UnicodeScalarView(trimmed.unicodeScalars.map {
            $0.properties.generalCategory == .control ? "\u{FFFD}" : $0
        }))
        return cleaned.isEmpty ? nil : cleaned
    }

    static func urn(_ uuid: UUID) -> String { "urn:uuid:" + uuid.uuidString.lowercased() }
}

import Delivery
import ArgumentParsing
import Foundation
import HealthModel
import Pipeline
import Redaction

/// `ingestd sinks list [--json]`: each sink's kind, target (without secrets), types, cursor,
/// backlog, last success, last error and dead letters.
struct SinksListCommand: Command {
    static let configuration = CommandConfiguration(name: "list", abstract: "List the sinks with their cursor, backlog and last error.",
        examples: [
            "ingestd sinks list",
            "ingestd sinks list --json",
        ]
    )
    static let signature = Signature {
        JSONOption.self
        StoreOption.self
    }
    let json: Bool
    let storeFile: StoreOption

    init(_ arguments: ParsedValues) throws {
        json = try JSONOption(arguments).isOn
        storeFile = try StoreOption(arguments)
    }

    func run(_ context: CommandContext) async throws {
        let store = try storeFile.openSinks(context)
        defer { store.close() }
        let sinks = try store.sinks()
        if sinks.isEmpty, !json {
            context.stdout.writeLine("no sinks: add one with 'ingestd sinks add NAME URL --types T,…'")
            return
        }
        var rows: [[String]] = []
        for sink in sinks {
            let definition = sink.definition
            let target = (try? SinkTarget(url: definition.url)).map { Self.describe($0, definition: definition) }
                ?? SinkTarget.redacted(definition.url)
            let kind = (try? SinkTarget(url: definition.url).kind.rawValue) ?? "?"
            let backlog = try store.backlogCount(after: sink.cursor, types: definition.readTypes,
                                                 sinkPerson: definition.person)
            let lastSuccess = sink.lastSuccess.map(ISO8601DateTime.string(from:))
            // Stored redacted; URL credentials of errors stored by older versions are hidden too.
            let lastError = sink.lastError.map(SecretRedactor.redactingCredentials)
            if json {
                var fields = [
                    "\"name\":\(JSONText.quoted(definition.name))", "\"kind\":\(JSONText.quoted(kind))",
                    "\"target\":\(JSONText.quoted(target))",
                    "\"types\":[" + definition.readTypes.map(JSONText.quoted).joined(separator: ",") + "]",
                    "\"person\":" + (definition.person.map(JSONText.quoted) ?? "null"),
                    "\"cursor\":\(sink.cursor)", "\"backlog\":\(backlog)",
                    "\"lastSuccess\":" + (lastSuccess.map(JSONText.quoted) ?? "null"),
                    "\"lastError\":" + (lastError.map(JSONText.quoted) ?? "null"),
                    "\"lastErrorAt\":" + (sink.lastErrorAt.map { JSONText.quoted(ISO8601DateTime.string(from: $0)) } ?? "null"),
                    "\"deadLetters\":\(sink.deadLetters)",
                ]
                fields.insert("\"every\":" + (definition.every.map { JSONNumber.format($0) } ?? "null"), at: 4)
                context.stdout.writeLine("{" + fields.joined(separator: ",") + "}")
            } else {
                let types = definition.readsAllTypes ? "(all types)"
                    : definition.readTypes.map { QuantityType.named($0)?.shortName ?? $0 }.joined(separator: ",")
                rows.append([definition.name, kind, target, types, definition.person ?? "(everybody)", String(sink.cursor), String(backlog),
                             lastSuccess ?? "never", lastError ?? "", String(sink.deadLetters)])
            }
        }
        if !json {
            context.stdout.write(Table(header: ["NAME", "KIND", "TARGET", "TYPES", "PERSON", "CURSOR", "BACKLOG", "LAST SUCCESS",
                                                "LAST ERROR", "DEAD LETTERS"], rows: rows).rendered)
        }
    }

    /// The target without secrets, with what its kind shows (the user name, Home Assistant, …).
    static func describe(_ target: SinkTarget, definition: SinkDefinition) -> String {
        guard let options = try? SinkConfiguration(definition).options else { return target.displayURL }
        return target.displayURL + options.describe(target: target)
    }
}

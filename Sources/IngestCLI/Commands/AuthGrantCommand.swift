import ArgumentParsing
import Foundation
import HealthModel
import IngestRuntime

/// `ingestd auth grant`.
struct AuthGrantCommand: Command {
    static let configuration = CommandConfiguration(
        name: "grant", abstract: "Allow SOURCE to write TYPEs (short or full names) or --all types.",
        usage: "SOURCE TYPE...|--all",
        examples: [
            "ingestd auth grant my-scale --all",
            "ingestd auth grant phone stepCount distanceWalkingRunning",
        ]
    )
    static let signature = AuthGrantChange.signature(
        sourceHelp: "The source id (an adapter id, or the source of replayed records).",
        allHelp: "Every type, now and in the future.")
    let change: AuthGrantChange

    init(_ arguments: ParsedValues) throws { change = try AuthGrantChange(arguments) }

    /// Grants, then brings the held samples of the granted types in through the pipeline.
    func run(_ context: CommandContext) async throws {
        let ingestion = try change.storeFile.openIngestion(context)
        defer { ingestion.close() }
        try change.checkSource(in: ingestion.authorization, context: context)
        let release = try ingestion.grant(source: change.source, types: change.types, all: change.all)
        context.stderr.writeLine("granted \(PrintableText.escaped(change.source)): \(change.what(allWord: "every type"))")
        if release.derivedFromStoredWeighings > 0 {
            let derived = release.derivedFromStoredWeighings
            context.stderr.writeLine("derived \(derived) body-composition value\(derived == 1 ? "" : "s") of stored weighings")
        }
        let totals = release.report.totals
        if release.released > 0 {
            context.stderr.writeLine("brought in \(release.released) held record\(release.released == 1 ? "" : "s"): "
                + "\(totals.written) written, \(totals.duplicate) duplicate, \(totals.replaced) replaced, "
                + "\(totals.held) still held, \(totals.denied) denied, \(totals.invalid) invalid")
        }
        for (key, count) in release.report.rejections.sorted(by: { $0.key < $1.key }) where key.reason != "denied" {
            let example = release.report.examples[key].map { ": \($0)" } ?? ""
            context.stderr.writeLine("warning: \(count) held \(key.type) sample\(count == 1 ? "" : "s") rejected (\(key.reason))\(example)")
        }
        if let error = release.firstUnreadableError {
            context.stderr.writeLine("warning: \(release.unreadable) held record\(release.unreadable == 1 ? "" : "s") could not be read and stay pending; first: \(error)")
        }
    }
}

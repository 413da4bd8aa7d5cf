import AppleHealthImport
import ArgumentParsing
import Foundation
import Handover
import HealthModel
import IngestRuntime
import Pipeline

/// `ingestd import FILE`: an Apple Health export (export.zip or export.xml), streamed through the
/// pipeline into the store.
struct ImportCommand: Command {
    static let configuration = CommandConfiguration(
        name: "import",
        abstract: "Import an Apple Health export (export.zip or export.xml).",
        discussion: """
            FILE is the export.zip the Health app writes (Export All Health Data), or the export.xml \
            inside it. The document is streamed, never loaded whole. Quantity records keep their \
            HealthKit type, their source (the app or device name the export gives) and device; values \
            are converted to each type's canonical unit by the pipeline; blood pressure and food \
            correlations are stored once (the export repeats their members as separate records); a \
            sample re-written with a higher HKMetadataKeySyncVersion replaces the older version. \
            Importing the same export again adds nothing. Sources are authorized like any other: \
            without --grant their samples are held (see 'ingestd auth pending') and the grant \
            commands are printed; --grant allows every (source, type) the export holds, except pairs \
            you denied. Held records of an import are never dropped: when a source would hold more \
            than --pending-max-records (or --pending-max-bytes), or more than 1000 sources would \
            hold records, the import stops before that batch (exit status 1) with what to do \
            (--grant, or a higher bound); what was stored and held before stays, and importing \
            again adds only the rest. Types ingestd does not know (categories, workouts…) are \
            counted and listed. An archive's export.xml is checked whole (CRC-32) before anything \
            is stored: a damaged archive stores nothing. A damaged document stops the import at \
            the byte offset named; what was committed before stays (exit status 65).
            """,
        examples: [
            "ingestd import export.zip",
            "ingestd import export.zip --grant",
        ]
    )
    static let fileArgument = TypedPositional<String>(Positional("FILE", key: "file", help: "export.zip or export.xml."))
    static let grantFlag = TypedFlag(Flag("grant", help: "Grant every source the types it has in the export (denied pairs stay denied)."))
    /// The largest archive entry (inflated) verified while its first batches are stored: about
    /// a quarter of a second of checking, for which other writers of the store wait.
    static let maximumOverlappedVerification = 256 << 20

    static let batchSizeOption = TypedOption<Int>(Option("batch-size", valueName: "N", help: "Records per transaction.", default: "2000"))
    static let signature = Signature {
        Self.fileArgument
        StoreOption.self
        Self.grantFlag
        Self.batchSizeOption
        PendingLimitOptions.self
        JSONOption.self
    }

    let file: String
    let storeFile: StoreOption
    let grant: Bool
    let batchSize: Int
    let pendingLimits: PendingLimits
    let json: Bool

    /// Granted pairs remembered by the import (a grant past it is asked of the store again, which is harmless).
    static let maximumRememberedGrants = 10_000

    init(_ arguments: ParsedValues) throws {
        file = try arguments.value(Self.fileArgument) ?? ""
        storeFile = try StoreOption(arguments)
        grant = arguments.flag(Self.grantFlag)
        batchSize = try arguments.count(Self.batchSizeOption, in: CommonArguments.batchSizes) ?? 2000
        var limits = try PendingLimitOptions(arguments).limits
        limits.overflow = .refuse
        pendingLimits = limits
        json = try JSONOption(arguments).isOn
    }

    func run(_ context: CommandContext) async throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else { throw CommandError.unreadable(path: file, reason: "no such file or directory") }
        guard !isDirectory.boolValue else { throw CommandError.unreadable(path: file, reason: "is a directory") }
        let opened: (source: ByteChunkSource, entry: String?, fileSize: Int, verification: ExportVerification?)
        do {
            opened = try AppleHealthExportFile.openDeferringVerification(path: file)
        } catch {
            throw CommandError.unreadableImport(path: file, reason: "\(error)")
        }
        // The export is read on a thread of its own while this one stores the batches before it;
        // once the store is open, that thread also takes each batch through the pipeline's first
        // stages, under the grants this thread publishes after each batch (a batch taken under
        // grants that changed since is taken again here).
        let preparations = LatestValue<BatchPreparation?>(nil)
        let reading = BackgroundExportReader(source: opened.source, batchSize: batchSize) { records in
            preparations.value.map { $0.prepare(records) } ?? PreparedBatch(untaken: records)
        }
        defer { reading.close() }
        // An archive entry is verified whole before anything of it is kept: a small one on a
        // thread of its own while the first batches are stored in a held transaction (so the
        // check costs no time of its own), a large one first (the held transaction would keep
        // other writers of the store waiting for as long as the check takes).
        var checking: BackgroundBatches<Int>?
        if let verification = opened.verification {
            if verification.uncompressedSize <= Self.maximumOverlappedVerification {
                checking = BackgroundBatches(name: "ingestd-import-check") { _ in try verification.run() }
            } else {
                do {
                    try verification.run()
                } catch {
                    throw CommandError.unreadableImport(path: file, reason: "\(error)")
                }
            }
        }
        let ingestion = try storeFile.openIngestion(context, pendingLimits: pendingLimits)
        defer { ingestion.close() }
        preparations.publish(ingestion.preparation)
        var holding = false
        if checking != nil {
            try ingestion.holdCommits()
            holding = true
        }
        // Whatever ends the import early discards what the held transaction holds.
        defer { if holding { try? ingestion.endHeldCommits(keep: false) } }
        let store = ingestion.authorization
        let denied = Set(try store.denials().map { "\($0.source)\u{1F}\($0.type)" })
        var grantedPairs = Set(try store.grants().map { "\($0.source)\u{1F}\($0.type)" })
        var report = IngestReport()
        var records = 0
        let progress = ProgressLine(label: "import", totalBytes: opened.fileSize, context: context)
        /// Waits for the archive's check (when `waiting`, else only when it has ended) and keeps
        /// the held batches when it passed; throws what is wrong with the archive otherwise.
        func settleCheck(waiting: Bool) throws {
            guard let check = checking, waiting || check.hasEnded else { return }
            checking = nil
            let damage = check.waitForEnd()
            holding = false
            do {
                try ingestion.endHeldCommits(keep: damage == nil)
            } catch IngestionError.diskFull {
                throw CommandError.diskFull(work: "import")
            }
            if let damage {
                progress.finish()
                throw CommandError.unreadableImport(path: file, reason: "\(damage)")
            }
        }
        var overBound: PendingBoundExceeded?
        while let batch = reading.next() {
            if grant {
                var granting: [(source: String, type: QuantityType)] = []
                for (source, type) in batch.newSourceTypes {
                    let pair = "\(source)\u{1F}\(type.identifier)"
                    guard !grantedPairs.contains(pair), !denied.contains(pair), !denied.contains("\(source)\u{1F}*") else { continue }
                    granting.append((source, type))
                    if grantedPairs.count < Self.maximumRememberedGrants { grantedPairs.insert(pair) }
                }
                try ingestion.grantWithoutReleasing(granting)
            }
            do {
                report.merge(try ingestion.ingest(batch.prepared))
                // The grants the next batches are taken under (changed by --grant, or by a
                // decision in another process that this batch's write read).
                preparations.publish(ingestion.preparation)
            } catch let bound as PendingBoundExceeded {
                // The batch was rolled back: nothing of it is stored or held, nothing dropped.
                overBound = bound
                break
            } catch IngestionError.diskFull {
                throw CommandError.diskFull(work: "import")
            }
            records += batch.prepared.records.count
            progress.update(bytes: batch.fileOffset, records: records)
            try settleCheck(waiting: false)
        }
        try settleCheck(waiting: true)
        if overBound != nil { reading.close() }
        let outcome = reading.waitForOutcome()
        let damage = outcome.damage
        progress.finish()
        IngestSummaryPrinter(report: report).print(to: context, json: json)
        if let overBound {
            let t = report.totals
            let raise = switch overBound.bound {
            case .records: "raise the bound with --pending-max-records N"
            case .bytes: "raise the bound with --pending-max-bytes N"
            case .sources: "decide the sources already held first (ingestd auth pending)"
            }
            context.stderr.writeLine(
                "error: \(file): stopped before \(overBound), which an import never drops: import with --grant "
                    + "(every source is granted its types in the export), grant the source first, or \(raise); "
                    + "\(t.written + t.replaced) samples stored and \(t.held) held before it are kept, "
                    + "and importing again adds only the rest")
            throw ExitCode.failure
        }
        printFindings(outcome.tally, context: context)
        if let damage {
            context.stderr.writeLine("error: \(file): \(damage); the \(report.totals.written + report.totals.replaced) samples stored before it are kept")
            throw ExitCode.dataError
        }
    }

    private func printFindings(_ tally: AppleHealthImportTally, context: CommandContext) {
        context.stderr.writeLine(
            "note: \(tally.recordElements) records read: \(tally.samples) samples, \(tally.correlations) correlations "
                + "(\(tally.correlationCopiesSkipped) repeated correlation members left out)")
        for source in tally.sourceTypes.keys.sorted() {
            let types = (tally.sourceTypes[source] ?? []).compactMap { QuantityType.named($0)?.shortName }.sorted()
            context.stderr.writeLine("note: source \(PrintableText.quoted(source)): \(types.joined(separator: ", "))")
        }
        if tally.samplesOfSourcesNotListed > 0 {
            context.stderr.writeLine("note: \(tally.samplesOfSourcesNotListed) samples of further sources "
                + "(more than \(AppleHealthExportReader.maximumListedSources) sources, not listed)")
        }
        if !tally.unknownTypes.isEmpty {
            let total = tally.unknownTypes.values.reduce(0, +) + tally.unknownTypesNotListed
            let list = tally.unknownTypes.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map { "\(PrintableText.escaped($0.key)) (\($0.value))" }.joined(separator: ", ")
            let rest = tally.unknownTypesNotListed > 0 ? ", and \(tally.unknownTypesNotListed) records of further types" : ""
            context.stderr.writeLine("note: \(total) records of types ingestd does not know were skipped: \(list)\(rest)")
        }
        for (element, count) in tally.otherElements.sorted(by: { $0.key < $1.key }) {
            context.stderr.writeLine("note: \(count) <\(PrintableText.escaped(element))> element\(count == 1 ? "" : "s") not imported")
        }
        if tally.otherElementsNotListed > 0 {
            context.stderr.writeLine("note: \(tally.otherElementsNotListed) further elements of other names not imported")
        }
        for (reason, count) in tally.unreadable.sorted(by: { $0.key < $1.key }) {
            let example = tally.unreadableExamples[reason].map { ", e.g. \(PrintableText.quoted($0))" } ?? ""
            context.stderr.writeLine("warning: \(count) record\(count == 1 ? "" : "s") skipped: \(reason)\(example)")
        }
        if tally.metadataRefused > 0 {
            context.stderr.writeLine("warning: \(tally.metadataRefused) metadata entries refused (not of their key's type, or an unknown time zone)")
        }
    }
}

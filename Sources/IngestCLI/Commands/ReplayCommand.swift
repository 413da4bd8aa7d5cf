import AdapterKit
import ArgumentParsing
import Foundation
import Handover
import IngestRuntime
import HealthModel
import Pipeline

/// `ingestd replay FILE...`: JSON-lines records (and, through the adapters, captures) into the store.
struct ReplayCommand: Command {
    static let configuration = CommandConfiguration(
        name: "replay",
        abstract: "Ingest files through the pipeline into the store.",
        discussion: """
            FILE is a JSON-lines file of samples and correlations in ingestd's format (one per line; \
            '-' reads stdin), or a captured device log (btsnoop, pcap, pcapng) that the adapters decode \
            as 'ingestd decode' does. Every record passes the pipeline: units are normalized, values validated, \
            the (source, type) authorized ('ingestd auth grant'; undecided pairs are held for 'ingestd auth \
            pending', denied ones refused) and duplicates dropped by the store. \
            A malformed line (or one whose uuid is already stored for a different sample) is reported \
            with its line number and skipped; a sample the pipeline rejects as invalid is counted and \
            described. Either way the rest is ingested and the exit status is 65. Replaying a file \
            twice changes nothing the second time.
            """,
        examples: [
            "ingestd replay btmon.log",
            "ingestd replay walk.jsonl",
        ]
    )
    static let filesArgument = TypedPositionals<String>(Positional(
        "FILE", key: "files", arity: .oneOrMore, help: "Files to ingest ('-' for stdin)."))
    static let sourceOption = TypedOption<String>(Option("source", valueName: "ID", help: "Source for records that name none.", default: "replay"))
    static let batchSizeOption = TypedOption<Int>(Option("batch-size", valueName: "N", help: "Records per transaction.", default: "1000"))
    static let signature = Signature {
        Self.filesArgument
        StoreOption.self
        Self.sourceOption
        Self.batchSizeOption
        CaptureDecodingOptions.declared(adapterHelp: "For captures: use this adapter for every device.")
        JSONOption.self
        PendingLimitOptions.self
        AssignToleranceOption.self
    }

    let files: [String]
    let storeFile: StoreOption
    let source: String
    let batchSize: Int
    let json: Bool
    let decoding: CaptureDecodingOptions
    let pendingLimits: PendingLimits
    let assignTolerance: Double

    init(_ arguments: ParsedValues) throws {
        files = try arguments.values(Self.filesArgument)
        decoding = try CaptureDecodingOptions(arguments)
        pendingLimits = try PendingLimitOptions(arguments).limits
        assignTolerance = try AssignToleranceOption(arguments).fraction
        storeFile = try StoreOption(arguments)
        source = try arguments.value(Self.sourceOption) ?? "replay"
        batchSize = try arguments.count(Self.batchSizeOption, in: CommonArguments.batchSizes) ?? 1000
        json = try JSONOption(arguments).isOn
    }

    func run(_ context: CommandContext) async throws {
        // Missing files and directories end with 66 before anything is stored; FIFOs are copied
        // so the format can be sniffed and the stream still read whole.
        let inputs: [InputStreamSpool?] = try files.map { file in
            file == "-" ? nil : try InputStreamSpool(path: file)
        }
        defer { inputs.forEach { $0?.release() } }
        let ingestion = try storeFile.openIngestion(context, pendingLimits: pendingLimits, assignTolerance: assignTolerance)
        defer { ingestion.close() }
        let decoder = HealthRecordDecoder(defaultSource: source)
        var report = IngestReport()
        var malformed = 0
        var records = 0
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: decoding.pluginDirectories, context: context)
        let usbAdapters = ExternalAdapterSupport.usbAdapters(catalogue)
        var captures = CaptureReplay(adapters: ExternalAdapterSupport.bluetoothAdapters(catalogue), forcedAdapterID: decoding.adapter, timeZone: decoding.zone,
                                     batchSize: batchSize)
        captures.options = decoding.adapterSettings
        captures.keys = try AdvertisementKeyArguments.stored(in: ingestion.advertisementKeys, context: context).merging(decoding.keys)
        for (file, input) in zip(files, inputs) {
            let readPath = input?.path ?? file
            if file != "-", CaptureReplay.isCapture(path: readPath) {
                let deliver: ([HealthRecord], [String]) throws -> DeliveryReceipt = { records, deviceKeys in
                    let batchReport = try ingest(records, through: ingestion, lines: nil, file: file, context: context,
                                                 deviceKeys: deviceKeys)
                    report.merge(batchReport)
                    return DeliveryReceipt(batchReport)
                }
                let summary = CaptureReplay.isUSBCapture(path: readPath)
                    ? try captures.runUSB(path: readPath, adapters: usbAdapters, forcedDevice: decoding.usbDevice,
                                          options: decoding.adapterSettings, deliver: deliver)
                    : try await captures.run(path: readPath) { _ = try deliver($0, []) }
                for line in summary.lines(path: file) { context.stderr.writeLine(line) }
                try ingestion.recordBatteries(summary.batteries)
                continue
            }
            let reader = try LineReader(path: readPath)
            let fileSize = (try? FileManager.default.attributesOfItem(atPath: readPath)[.size] as? Int) ?? 0
            let progress = ProgressLine(label: "replay \(file)", totalBytes: fileSize, context: context)
            defer { progress.finish() }
            // Lines are read and decoded on a thread of their own while the batches before them are stored.
            let lineBatches = JSONLinesDecoding.start(reader: reader, file: file, decoder: decoder, batchSize: batchSize)
            defer { lineBatches.close() }
            while let batch = lineBatches.next() {
                for problem in batch.problems { context.stderr.writeLine(problem) }
                malformed += batch.problems.count
                guard !batch.records.isEmpty else { continue }
                report.merge(try ingest(batch.records, through: ingestion, lines: batch.lines, file: file, context: context))
                let before = records
                records += batch.records.count
                progress.update(bytes: batch.bytesRead, records: records)
                if records / 100_000 > before / 100_000 {
                    context.logger.info("\(file): \(records) records ingested")
                }
            }
            if let failure = lineBatches.waitForEnd() { throw failure }
        }
        IngestSummaryPrinter(report: report, malformedLines: malformed).print(to: context, json: json)
        // Every problem was reported above, one line each: end with 65 without another message.
        if malformed > 0 || report.totals.invalid > 0 { throw ExitCode.dataError }
    }

    /// Ingests one batch; `lines` (the line number of every record, for JSON lines) lets a uuid
    /// conflict be reported against its line.
    private func ingest(
        _ batch: [HealthRecord], through ingestion: Ingestion, lines: [Int]?, file: String, context: CommandContext,
        deviceKeys: [String] = []
    ) throws -> IngestReport {
        do {
            let report = try ingestion.ingest(batch, deviceKeys: deviceKeys)
            if let lines {
                for conflict in report.conflicts where conflict.record < lines.count {
                    context.stderr.writeLine(
                        "error: \(file):\(lines[conflict.record]): \(conflict.reason) (not stored)")
                }
            }
            return report
        } catch IngestionError.diskFull {
            throw CommandError.diskFull(work: "replay")
        }
    }
}

/// Prints an ingest report: per type written/duplicate/replaced/held/denied/invalid, rejection
/// reasons, and the grant and deny commands for held (undecided) types.
struct IngestSummaryPrinter {
    var report: IngestReport
    var malformedLines = 0

    func print(to context: CommandContext, json: Bool) {
        let types = report.perType.keys.sorted()
        if json {
            for type in types {
                let c = report.perType[type] ?? TypeCounts()
                context.stdout.writeLine(
                    "{\"type\":\(JSONText.quoted(type)),\"written\":\(c.written),\"duplicate\":\(c.duplicate),"
                        + "\"replaced\":\(c.replaced),\"denied\":\(c.denied),\"invalid\":\(c.invalid),\"held\":\(c.held)}")
            }
        } else {
            let rows = types.map { type -> [String] in
                let c = report.perType[type] ?? TypeCounts()
                let name = QuantityType.named(type)?.shortName ?? type
                return [name, "\(c.written)", "\(c.duplicate)", "\(c.replaced)", "\(c.held)", "\(c.denied)", "\(c.invalid)"]
            }
            let t = report.totals
            let total = ["total", "\(t.written)", "\(t.duplicate)", "\(t.replaced)", "\(t.held)", "\(t.denied)", "\(t.invalid)"]
            context.stdout.write(Table(header: ["TYPE", "WRITTEN", "DUPLICATE", "REPLACED", "HELD", "DENIED", "INVALID"],
                                       rows: rows + [total]).rendered)
        }
        for (key, count) in report.rejections.sorted(by: { $0.key < $1.key }) where key.reason != "denied" {
            let example = report.examples[key].map { ": \($0)" } ?? ""
            context.stderr.writeLine("warning: \(count) \(key.type) sample\(count == 1 ? "" : "s") from \(PrintableText.escaped(key.source)) rejected (\(key.reason))\(example)")
        }
        for source in report.held.keys.sorted() {
            let types = (report.held[source] ?? []).compactMap { QuantityType.named($0) }
            let typeList = types.map(\.shortName).sorted().joined(separator: ", ")
            context.stderr.writeLine("note: samples from \(PrintableText.escaped(source)) (\(typeList)) are held until you decide (ingestd auth pending); "
                + "allow with: \(AuthorizationPolicy.grantCommand(source: source, types: types)); "
                + "refuse with: \(AuthorizationPolicy.denyCommand(source: source, types: []))")
        }
        for (source, count) in report.pending.dropped.sorted(by: { $0.key < $1.key }) {
            context.stderr.writeLine("warning: dropped \(count) held records of \(PrintableText.escaped(source)): over the pending area's bounds (see --pending-max-records)")
        }
        for (source, count) in report.pending.expired.sorted(by: { $0.key < $1.key }) {
            context.stderr.writeLine("note: removed \(count) records of \(PrintableText.escaped(source)) held longer than the retention period")
        }
        for source in report.denied.keys.sorted() {
            let types = (report.denied[source] ?? []).sorted()
            let count = report.rejections.filter { $0.key.source == source && $0.key.reason == "denied" }.values.reduce(0, +)
            let typeList = types.map { QuantityType.named($0)?.shortName ?? $0 }.joined(separator: ", ")
            let command = AuthorizationPolicy.grantCommand(source: source, types: types.compactMap { QuantityType.named($0) })
            context.stderr.writeLine("note: \(count) sample\(count == 1 ? "" : "s") from \(PrintableText.escaped(source)) refused: denied (\(typeList)) with 'ingestd auth deny'; allow with: \(command)")
        }
        if report.unassigned > 0 {
            let n = report.unassigned
            context.stderr.writeLine("note: \(n) stored sample\(n == 1 ? "" : "s") could not be told to belong to one person: "
                + "see 'ingestd unassigned', move with 'ingestd assign'")
        }
        if malformedLines > 0 {
            context.stderr.writeLine("note: \(malformedLines) malformed line\(malformedLines == 1 ? "" : "s") skipped")
        }
    }
}

/// The JSON-lines side of `ingestd replay`: lines read and decoded into batches of records (each
/// with its line number) on a thread of their own, with a message for every line that could
/// not be used, in the order of the file.
enum JSONLinesDecoding {
    struct Batch: Sendable {
        var records: [HealthRecord] = []
        var lines: [Int] = []
        /// One error message per malformed line (or the line that ended the reading).
        var problems: [String] = []
        /// Bytes of the file read up to the end of this batch.
        var bytesRead = 0
    }

    /// Messages of bad lines handed over at the latest with this many.
    static let maximumProblemsPerBatch = 1_000

    static func start(reader: LineReader, file: String, decoder: HealthRecordDecoder, batchSize: Int) -> BackgroundBatches<Batch> {
        // Opened by the caller, used by the decoding thread alone.
        let handed = HandedOff(reader)
        return BackgroundBatches(name: "ingestd-replay-reader") { put in
            let reader = handed.value
            var batch = Batch()
            batch.records.reserveCapacity(batchSize)
            batch.lines.reserveCapacity(batchSize)
            var lineNumber = 0
            reading: while let line = try reader.nextLine() {
                lineNumber += 1
                let bytes: ArraySlice<UInt8>
                switch line {
                case .text(let text):
                    bytes = text
                    batch.bytesRead += text.count + 1
                case .overlong(let length):
                    batch.problems.append("error: \(file):\(lineNumber): line of \(length) bytes is longer than the limit of \(reader.maximumLineLength) bytes; skipped")
                    continue reading
                case .abandoned(let skipped):
                    batch.problems.append("error: \(file):\(lineNumber): no newline in \(skipped) bytes (the line limit is \(reader.maximumLineLength) bytes); the rest of the file is not read")
                    break reading
                }
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                do {
                    batch.records.append(try bytes.withUnsafeBufferPointer { try decoder.decodeLine($0) })
                    batch.lines.append(lineNumber)
                } catch {
                    batch.problems.append("error: \(file):\(lineNumber): \(String(describing: error))")
                    continue
                }
                // A file of nothing but bad lines is handed over in parts too: its messages are not held.
                if batch.records.count >= batchSize || batch.problems.count >= maximumProblemsPerBatch {
                    let bytesRead = batch.bytesRead
                    try put(batch)
                    batch = Batch()
                    batch.records.reserveCapacity(batchSize)
                    batch.lines.reserveCapacity(batchSize)
                    batch.bytesRead = bytesRead
                }
            }
            if !batch.records.isEmpty || !batch.problems.isEmpty { try put(batch) }
        }
    }
}

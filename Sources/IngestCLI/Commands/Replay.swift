import AdapterKit
import ArgumentParsing
import BuiltinAdapters
import Foundation
import HealthModel
import Pipeline
import SQLiteStore

/// `ingestd replay FILE...`: JSON-lines records (and, through the adapters, captures) into the store.
struct Replay: Command {
    static let configuration = CommandConfiguration(
        name: "replay",
        abstract: "Ingest files through the pipeline into the store.",
        discussion: """
            FILE is a JSON-lines file of samples and correlations in ingestd's format (one per line; \
            '-' reads stdin), or a captured device log (btsnoop, pcap, pcapng) that the adapters decode \
            as 'ingestd decode' does. Every record passes the pipeline: units are normalized, values validated, \
            the (source, type) authorized ('ingestd auth grant'; undecided pairs are held for 'ingestd auth \
            pending', denied ones refused) and duplicates dropped by the store. \
            A malformed line is reported with its line number and skipped; the rest is ingested and \
            the exit status is 65. Replaying a file twice changes nothing the second time.
            """
    )
    static let signature = Signature {
        Positional("FILE", key: "files", arity: .oneOrMore, help: "Files to ingest ('-' for stdin).")
        CommonArguments.store
        Option("source", valueName: "ID", help: "Source for records that name none.", default: "replay")
        Option("batch-size", valueName: "N", help: "Records per transaction.", default: "1000")
        Option("adapter", valueName: "ID", help: "For captures: use this adapter for every device.")
        CommonArguments.tz
        CommonArguments.usb
        CommonArguments.adapterOption
        ExternalAdapterSupport.pluginsOption
        CommonArguments.json
        CommonArguments.pendingDays
        CommonArguments.pendingMaxRecords
        CommonArguments.pendingMaxBytes
    }

    let files: [String]
    let storePath: String?
    let source: String
    let batchSize: Int
    let json: Bool
    let adapter: String?
    let zone: TimeZone
    let usbDevice: (UInt16, UInt16)?
    let adapterOptions: [String: String]
    let plugins: [String]
    let pendingLimits: PendingLimits

    init(_ arguments: ParsedValues) throws {
        files = try arguments.values("files")
        adapter = try arguments.value("adapter")
        zone = try CommonArguments.timeZone(try arguments.value("tz"))
        usbDevice = try CommonArguments.usbIDs(try arguments.value("usb"))
        adapterOptions = try CommonArguments.adapterOptions(try arguments.values("adapter-option"))
        plugins = try arguments.values("plugins")
        pendingLimits = try CommonArguments.pendingLimits(arguments)
        storePath = try arguments.value("store")
        source = try arguments.value("source") ?? "replay"
        batchSize = try arguments.value("batch-size") ?? 1000
        json = arguments.flag("json")
        guard batchSize > 0 else { throw UsageError.invalidValue(String(batchSize), argument: "--batch-size", reason: "must be at least 1") }
    }

    func run(_ context: CommandContext) async throws {
        for file in files where file != "-" && !FileManager.default.fileExists(atPath: file) {
            throw CommandFailure.noInput(path: file)
        }
        let store = try CommonArguments.openStore(storePath, context: context)
        defer { store.close() }
        store.pendingLimits = pendingLimits
        let pipeline = try Pipeline(store: store)
        let decoder = HealthRecordDecoder(defaultSource: source)
        var report = IngestReport()
        var malformed = 0
        var records = 0
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: plugins, context: context)
        let usbAdapters = ExternalAdapterSupport.usbAdapters(catalogue)
        var captures = CaptureReplay(adapters: ExternalAdapterSupport.bluetoothAdapters(catalogue), forcedAdapterID: adapter, timeZone: zone,
                                     batchSize: batchSize)
        captures.options = adapterOptions
        for file in files {
            if file != "-", CaptureReplay.isCapture(path: file) {
                let deliver: ([HealthRecord]) throws -> DeliveryReceipt = { records in
                    let batchReport = try ingest(records, pipeline: pipeline)
                    report.merge(batchReport)
                    return DeliveryReceipt(batchReport)
                }
                let summary = CaptureReplay.isUSBCapture(path: file)
                    ? try captures.runUSB(path: file, adapters: usbAdapters, forcedDevice: usbDevice,
                                          options: adapterOptions, deliver: deliver)
                    : try await captures.run(path: file) { _ = try deliver($0) }
                for line in summary.lines(path: file) { context.stderr.writeLine(line) }
                continue
            }
            let reader = try LineReader(path: file)
            var batch: [HealthRecord] = []
            batch.reserveCapacity(batchSize)
            var lineNumber = 0
            while let (bytes, truncated) = try reader.nextLine() {
                lineNumber += 1
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                if truncated {
                    malformed += 1
                    context.stderr.writeLine("error: \(file):\(lineNumber): line longer than \(reader.maximumLineLength) bytes")
                    continue
                }
                do {
                    batch.append(try decoder.decodeLine(Data(bytes)))
                } catch {
                    malformed += 1
                    context.stderr.writeLine("error: \(file):\(lineNumber): \(error.description)")
                    continue
                }
                if batch.count >= batchSize {
                    report.merge(try ingest(batch, pipeline: pipeline))
                    records += batch.count
                    batch.removeAll(keepingCapacity: true)
                    if records % 100_000 < batchSize {
                        context.logger.info("\(file): \(records) records ingested")
                    }
                }
            }
            if !batch.isEmpty {
                report.merge(try ingest(batch, pipeline: pipeline))
                records += batch.count
            }
        }
        IngestSummaryPrinter(report: report, malformedLines: malformed).print(to: context, json: json)
        if malformed > 0 {
            throw CommandFailure.dataError("\(malformed) malformed line\(malformed == 1 ? "" : "s") skipped")
        }
    }

    private func ingest(_ batch: [HealthRecord], pipeline: Pipeline) throws -> IngestReport {
        do {
            return try pipeline.ingest(batch)
        } catch let error as SQLiteError where error.isDiskFull {
            throw CommandFailure.failure("the disk is full: the last batch was not stored (nothing half-written); free space and replay again")
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
            context.stderr.writeLine("warning: \(count) \(key.type) sample\(count == 1 ? "" : "s") from \(key.source) rejected (\(key.reason))\(example)")
        }
        for source in report.held.keys.sorted() {
            let types = (report.held[source] ?? []).compactMap { QuantityType.named($0) }
            let typeList = types.map(\.shortName).sorted().joined(separator: ", ")
            context.stderr.writeLine("note: samples from \(source) (\(typeList)) are held until you decide (ingestd auth pending); "
                + "allow with: \(AuthorizationPolicy.grantCommand(source: source, types: types)); "
                + "refuse with: \(AuthorizationPolicy.denyCommand(source: source, types: []))")
        }
        for (source, count) in report.pending.dropped.sorted(by: { $0.key < $1.key }) {
            context.stderr.writeLine("warning: dropped the \(count) oldest held records of \(source): over its pending bound")
        }
        for (source, count) in report.pending.expired.sorted(by: { $0.key < $1.key }) {
            context.stderr.writeLine("note: removed \(count) records of \(source) held longer than the retention period")
        }
        for source in report.denied.keys.sorted() {
            let types = (report.denied[source] ?? []).sorted()
            let count = report.rejections.filter { $0.key.source == source && $0.key.reason == "denied" }.values.reduce(0, +)
            let typeList = types.map { QuantityType.named($0)?.shortName ?? $0 }.joined(separator: ", ")
            let command = AuthorizationPolicy.grantCommand(source: source, types: types.compactMap { QuantityType.named($0) })
            context.stderr.writeLine("note: \(count) sample\(count == 1 ? "" : "s") from \(source) refused: denied (\(typeList)) with 'ingestd auth deny'; allow with: \(command)")
        }
        if malformedLines > 0 {
            context.stderr.writeLine("note: \(malformedLines) malformed line\(malformedLines == 1 ? "" : "s") skipped")
        }
    }
}

import Foundation
import HealthModel
import IngestRuntime
import Pipeline
import SQLiteStore
import Testing

/// The store boundary of DESIGN.md: one ingestion front door that alone builds the pipeline, and
/// commands that read through the read port without looking at which store they opened.
@Suite struct StoreBoundaryTests {
    /// The repository's `Sources`, found from this file's path.
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// Every Swift file under `Sources/<folder>`, by its path relative to `Sources`, with its text.
    static func swiftFiles(under folder: String = "") throws -> [(path: String, text: String)] {
        let root = sources.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var files: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(sources.path.count + 1))
            files.append((relative, try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    @Test func thePipelineIsBuiltOnlyByTheIngestionFrontDoor() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 100)
        let builders = files.filter { $0.text.contains("Pipeline(store:") }.map(\.path)
        #expect(builders == ["IngestRuntime/Ingestion/Ingestion.swift"])
        // The daemon, the command line (replay, import, grant: through StoreOption.openIngestion)
        // and the dashboard's grants all enter through it.
        let entering = Set(files.filter { $0.text.contains("Ingestion(store:") }.map(\.path))
        for path in ["IngestRuntime/Daemon/IngestService.swift", "IngestCLI/Options/StoreOptions.swift",
                     "IngestRuntime/StoreDashboardAdministration.swift"] {
            #expect(entering.contains(path), "\(path) does not ingest through the front door")
        }
        let commands = Set(files.filter { $0.text.contains("openIngestion(") }.map(\.path))
        for command in ["Replay", "Import", "AuthGrant"] {
            let path = "IngestCLI/Commands/\(command)Command.swift"
            #expect(commands.contains(path), "\(path) does not ingest through the front door")
        }
    }

    /// The front door is given the SQLite store by the composition root and hands out ports only
    /// (authorization, advertisement keys, device memory), never the store itself.
    @Test func theFrontDoorHandsOutPortsOnly() throws {
        let path = "IngestRuntime/Ingestion/Ingestion.swift"
        let text = try #require(try Self.swiftFiles(under: "IngestRuntime/Ingestion").first { $0.path == path }?.text)
        let exposing = text.split(separator: "\n").filter { $0.contains("public ") && $0.contains("HealthStore") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("public init(store: HealthStore") }
        #expect(exposing.isEmpty, "\(path) exposes the concrete store:\n\(exposing.joined(separator: "\n"))")
        #expect(text.contains("public var deviceMemory: any DeviceMemoryStore"))
    }

    /// The names by which a command would see the concrete store file rather than a port.
    static let concreteStoreNames = ["HealthStore", "CommonArguments.openStore", "import SQLiteStore"]

    /// The lines of `files` that name the concrete store, as `path:line: text`.
    static func concreteStoreUses(in files: [(path: String, text: String)]) -> [String] {
        var found: [String] = []
        for (path, text) in files {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where concreteStoreNames.contains(where: { line.contains($0) }) {
                found.append("\(path):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    /// Issue 26: every command opens its store through `StoreOption`'s or `QueryStoreOptions`'
    /// port openers and never names the SQLite store (`StoreOption`'s concrete opener is private).
    @Test func commandsNeverNameTheConcreteStore() throws {
        let files = try Self.swiftFiles(under: "IngestCLI/Commands")
        #expect(files.count > 40)
        let uses = Self.concreteStoreUses(in: files)
        #expect(uses.isEmpty, "open the store through a port (Sources/IngestCLI/Options/StoreOptions.swift):\n\(uses.joined(separator: "\n"))")
    }

    @Test func theConcreteStoreScanNamesTheLine() {
        let text = """
            let store = try storeFile.openPriorities(context)
            let other: HealthStore = try CommonArguments.openStore(nil, context: context)
            """
        #expect(Self.concreteStoreUses(in: [("IngestCLI/Commands/Example.swift", text)])
            == ["IngestCLI/Commands/Example.swift:2: let other: HealthStore = try CommonArguments.openStore(nil, context: context)"])
    }

    @Test func commandsNeverDowncastTheStoreTheyOpened() throws {
        for (path, text) in try Self.swiftFiles(under: "IngestCLI") {
            for cast in ["as? PostgresQueryStore", "as! PostgresQueryStore", "as? HealthStore", "as! HealthStore",
                         "is PostgresQueryStore", "is HealthStore"] {
                #expect(!text.contains(cast), "\(path) downcasts the store: \(cast)")
            }
        }
        // The read commands see the port only.
        for command in ["Status", "Changes", "Today", "Export", "Watch", "Samples", "Stats", "Sources", "Body"] {
            let path = "IngestCLI/Commands/\(command)Command.swift"
            let text = try #require(try Self.swiftFiles(under: "IngestCLI/Commands").first { $0.path == path }?.text, "\(path)")
            #expect(!text.contains("import SQLiteStore") && !text.contains("import PostgresStore"), "\(path) imports a store")
        }
    }

    @Test func aGrantThroughTheFrontDoorBringsTheHeldRecordsIn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingestd-front-door-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("health.sqlite").path
        let ingestion = try Ingestion(store: try HealthStore(path: path))
        defer { ingestion.close() }
        // What is held, read as another process would (Ingestion hands out no store).
        func pendingCounts() throws -> [String: Int] {
            let store = try HealthStore(path: path)
            defer { store.close() }
            return try store.pendingCounts()
        }
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        func steps(_ source: String, _ count: Int) -> [HealthRecord] {
            (0..<count).map { index in
                .sample(QuantitySample(type: .stepCount, quantity: Quantity(value: 10, unit: QuantityType.stepCount.canonicalUnit),
                                       start: start.addingTimeInterval(Double(index) * 60),
                                       end: start.addingTimeInterval(Double(index) * 60 + 30), source: source))
            }
        }
        // An undecided source is held, never written.
        let held = try ingestion.ingest(steps("band", 4))
        #expect(held.totals.held == 4 && held.totals.written == 0)
        #expect(try pendingCounts() == ["band": 4])
        // The grant brings them in through the same pipeline (deduplicated, in the store).
        let release = try ingestion.grant(source: "band", types: [.stepCount])
        #expect(release.released == 4)
        #expect(release.report.totals.written == 4)
        #expect(try pendingCounts().isEmpty)
        // Later batches of the granted source are written at once; a repeat is a duplicate.
        #expect(try ingestion.ingest(steps("band", 5)).totals.written == 1)
        // An import's grant lets the next batch through without touching what another source holds.
        #expect(try ingestion.ingest(steps("scale", 2)).totals.held == 2)
        try ingestion.grantWithoutReleasing([(source: "phone", type: .stepCount)])
        #expect(try ingestion.ingest(steps("phone", 2)).totals.written == 2)
        #expect(try pendingCounts() == ["scale": 2])
    }
}

import Foundation
@testable import SinkLibraries
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The sink libraries and libmicrohttpd are opened on first use: loading resolves every function
/// ingestd calls, and an idle `ingestd run` (with or without sinks configured) maps none of them nor
/// OpenSSL's libssl nor gnutls; `run --http` maps libmicrohttpd once it listens.
@Suite(.offCooperativePool) struct DynamicLibraryTests {
    @Test func eachSinkLibraryLoadsWithEveryFunctionIngestdCalls() throws {
        for library in DynamicLibrary.all {
            try library.load()
            #expect(library.isLoaded, "\(library)")
            try library.load()  // a second load is a no-op
        }
    }

    @Test func theErrorNamesTheLibraryAndTheDebianPackage() {
        let error = DynamicLibraryError(library: .libpq, reason: "libpq.so.5: cannot open shared object file: No such file or directory")
        #expect(error.description == "libpq.so.5 (the PostgreSQL sink and store) cannot be loaded: libpq.so.5: cannot open shared object file: No such file or directory; install the Debian package libpq5 (apt-get install libpq5)")
        #expect(error.fix == "install the Debian package libpq5 (apt-get install libpq5)")
        #expect(DynamicLibrary.all.map(\.debianPackage) == ["libcurl4", "libpq5", "libmosquitto1", "libmicrohttpd12", "libwebsockets17"])
    }

    /// The shared objects mapped into a process, from /proc/PID/maps.
    static func mappedLibraries(pid: Int32) throws -> Set<String> {
        // (read to its end: procfs files have no size, a single read returns only the first page)
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init)
        }.filter { $0.contains(".so") }.map { URL(fileURLWithPath: $0).lastPathComponent })
    }

    /// Starts an idle daemon on `store`, waits for its READY=1, returns its mapped libraries.
    static func idleDaemonLibraries(store: String, directory: URL, extra: [String] = []) throws -> Set<String> {
        let receiver = try NotifySocket(name: directory.appendingPathComponent("notify").path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try IngestdProcess.path())
        process.arguments = ["run", "--no-usb", "--no-ble", "--store", store] + extra
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = receiver.name
        environment["XDG_RUNTIME_DIR"] = directory.path
        process.environment = environment
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        let ready = receiver.receive(until: "READY=1", seconds: 30)
        try #require(ready.last?.hasPrefix("READY=1") == true, "the daemon did not start: \(ready)")
        // A sink's first delivery attempt comes right after start: give it a moment to happen.
        _ = receiver.receive(until: "never", seconds: 2)
        return try mappedLibraries(pid: process.processIdentifier)
    }

    @Test func anIdleDaemonMapsNoSinkLibrary() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dl-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.sqlite").path
        // libmicrohttpd (and its gnutls) is opened only when `serve` or `run --http` first listens.
        let sinkLibraries = ["libcurl", "libpq", "libmosquitto", "libssl", "libmicrohttpd", "libgnutls", "libwebsockets"]
        let bare = try Self.idleDaemonLibraries(store: store, directory: directory)
        #expect(bare.contains { $0.hasPrefix("libsqlite3") }, "\(bare)")  // the reading of maps works
        for name in sinkLibraries { #expect(!bare.contains { $0.hasPrefix(name) }, "\(name) mapped: \(bare.sorted())") }

        // Sinks of each kind configured, nothing to deliver (and nothing listening on port 9).
        for (name, url) in [("web", "http://127.0.0.1:9/ingest"), ("broker", "mqtt://127.0.0.1:9"),
                            ("fleet", "postgresql://ingestd@127.0.0.1:9/health"), ("history", "ws://127.0.0.1:9")] {
            let extra = url.hasPrefix("ws:") ? ["--token", "env:INGESTD_TEST_NO_TOKEN"] : []
            let added = try IngestdProcess.runBlocking(["sinks", "add", name, url, "--all-types", "--store", store] + extra)
            try #require(added.status == 0, "\(added.stderr)")
        }
        let withSinks = try Self.idleDaemonLibraries(store: store, directory: directory)
        for name in sinkLibraries { #expect(!withSinks.contains { $0.hasPrefix(name) }, "\(name) mapped: \(withSinks.sorted())") }
    }

    @Test func runWithHTTPMapsLibmicrohttpdOnlyThen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dl-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.sqlite").path
        let mapped = try Self.idleDaemonLibraries(store: store, directory: directory, extra: ["--http", "127.0.0.1:0"])
        #expect(mapped.contains { $0.hasPrefix("libmicrohttpd") }, "\(mapped.sorted())")
    }
}

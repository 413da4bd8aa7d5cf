import CSinkLibraries

/// A sink's C library (libcurl, libpq, libmosquitto, libwebsockets) or the dashboard's (libmicrohttpd), opened with `dlopen` when a sink of that
/// kind first needs it, so an idle daemon without such a sink maps none of them nor their TLS
/// stacks. The C bindings (`import CCurl`, `CLibPQ`, `CMosquitto`) call the library's functions as
/// if linked; `load()` must succeed first, and says which Debian package to install when the
/// library is missing.
///
/// ```swift
/// try DynamicLibrary.curl.load()   // then curl_easy_init() and the rest
/// ```
public struct DynamicLibrary: Sendable, Equatable, CustomStringConvertible {
    /// The library's file name the dynamic loader looks for (`libcurl.so.4`).
    public let soname: String
    /// The Debian package that installs it (`libcurl4`).
    public let debianPackage: String
    /// What ingestd needs it for, for the error message.
    public let purpose: String
    private let library: csink_library

    /// libcurl (OpenSSL flavour): the HTTP sink.
    public static let curl = DynamicLibrary(soname: "libcurl.so.4", debianPackage: "libcurl4", purpose: "the HTTP sink",
                                            library: CSINK_CURL)
    /// libpq: the PostgreSQL sink and `--store postgresql://…`.
    public static let libpq = DynamicLibrary(soname: "libpq.so.5", debianPackage: "libpq5",
                                             purpose: "the PostgreSQL sink and store", library: CSINK_PQ)
    /// libmosquitto: the MQTT sink (and Home Assistant).
    public static let mosquitto = DynamicLibrary(soname: "libmosquitto.so.1", debianPackage: "libmosquitto1",
                                                 purpose: "the MQTT sink", library: CSINK_MOSQUITTO)

    /// libmicrohttpd (and through it gnutls): the HTTP server of `serve` and `run --http`.
    public static let microhttpd = DynamicLibrary(soname: "libmicrohttpd.so.12", debianPackage: "libmicrohttpd12",
                                                  purpose: "the web dashboard", library: CSINK_MICROHTTPD)

    /// libwebsockets: the Home Assistant statistics sink (its WebSocket API).
    public static let websockets = DynamicLibrary(soname: "libwebsockets.so.17", debianPackage: "libwebsockets17",
                                                  purpose: "the Home Assistant statistics sink", library: CSINK_WEBSOCKETS)

    /// The five, in the order above.
    public static let all: [DynamicLibrary] = [.curl, .libpq, .mosquitto, .microhttpd, .websockets]

    /// Opens the library and resolves the functions ingestd calls; does nothing when already
    /// loaded. Thread-safe; after a failure the next call tries again (the package may have been
    /// installed meanwhile).
    public func load() throws(DynamicLibraryError) {
        if csink_is_loaded(library) != 0 { return }
        var message = [CChar](repeating: 0, count: 512)
        let loaded = message.withUnsafeMutableBufferPointer { buffer in
            csink_load(library, soname, buffer.baseAddress, buffer.count)
        }
        guard loaded == 0 else { return }
        let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw DynamicLibraryError(library: self, reason: reason)
    }

    /// Whether the library is loaded in this process.
    public var isLoaded: Bool { csink_is_loaded(library) != 0 }

    public var description: String { soname }

    public static func == (lhs: DynamicLibrary, rhs: DynamicLibrary) -> Bool { lhs.soname == rhs.soname }
}

/// A sink library could not be opened: names it, the loader's reason and the package to install.
public struct DynamicLibraryError: Error, Equatable, CustomStringConvertible {
    /// The library that failed.
    public let library: DynamicLibrary
    /// The dynamic loader's words (`libcurl.so.4: cannot open shared object file: …`), or the missing function.
    public let reason: String

    public var description: String {
        "\(library.soname) (\(library.purpose)) cannot be loaded: \(reason); install the Debian package \(library.debianPackage) (apt-get install \(library.debianPackage))"
    }

    /// What to do, alone (for errors that carry a separate fix).
    public var fix: String { "install the Debian package \(library.debianPackage) (apt-get install \(library.debianPackage))" }
}

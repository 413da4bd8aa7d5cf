import Delivery
import Foundation
import IngestRuntime
import Pipeline
import Redaction

/// Each sink of the store: its configuration parses, its secrets (password files, `env:` names,
/// secret headers) can be read, and its receiver accepts a TCP connection within
/// ``DoctorSetting/connectTimeout``. Nothing is sent (the transports have no side-effect-free
/// probe), so the receiver itself does not judge the credentials here; the sink's last delivery
/// error, if newer than its last success, is shown instead. No secret appears in a finding: targets
/// are shown without credentials and every text passes the sink's redactor.
struct SinksCheck: DoctorCheck {
    let group = DoctorGroup.sinks
    let id = "sink"
    var timeLimit: Duration { .seconds(20) }

    func run(_ setting: DoctorSetting) -> [DoctorFinding] {
        let path = setting.storePath
        guard let status = DoctorFiles.status(path) else {
            return [DoctorFinding(id, group, .skip, "no store yet, so no sinks")]
        }
        guard status.st_mode & 0o077 == 0 else {
            return [DoctorFinding(id, group, .skip, "not read: opening the store would change its mode (see storePermissions)")]
        }
        let sinks: [SinkState]
        do {
            let store = try StoreFile.openFeed(path: path, readOnly: true)
            defer { store.close() }
            sinks = try store.sinks()
        } catch {
            return [DoctorFinding(id, group, .skip, "the store's sinks cannot be read: \(error)")]
        }
        guard !sinks.isEmpty else { return [DoctorFinding(id, group, .ok, "no sinks configured")] }
        return sinks.map { check($0, setting: setting) }
    }

    func check(_ sink: SinkState, setting: DoctorSetting) -> DoctorFinding {
        let name = sink.definition.name
        let resolver = SecretResolver(environment: ProcessInfo.processInfo.environment.merging(setting.environment) { $1 })
        let redact = resolver.redactor.redact
        let configuration: SinkConfiguration
        do throws(SinkConfigurationError) {
            configuration = try SinkConfiguration(sink.definition)
        } catch {
            return DoctorFinding(id, group, subject: name, .fail, "its configuration cannot be used: \(redact(error.redacted(by: resolver.redactor).description))",
                                 fix: "ingestd sinks remove \(name), then add it again (ingestd sinks add --help)")
        }
        resolver.learnSecrets(of: configuration)
        let target = redact(configuration.target.displayURL)
        do throws(SinkConfigurationError) {
            for reference in configuration.options.secretReferences + [configuration.target.password].compactMap({ $0 }) {
                _ = try resolver.resolve(reference)
            }
            for header in configuration.options.secretHeaders { _ = try resolver.resolveHeader(header) }
        } catch {
            return DoctorFinding(id, group, subject: name, .fail,
                                 "\(target): a credential cannot be read: \(redact(error.redacted(by: resolver.redactor).description))",
                                 fix: "make the secret file readable by the user ingestd runs as (chmod 600, owned by it), or set the variable")
        }
        let host = configuration.target.host
        let port = configuration.target.port
        if !host.isEmpty {
            if let problem = TCPProbe.connect(host: host, port: port, timeout: setting.connectTimeout) {
                return DoctorFinding(id, group, subject: name, .fail, "\(target) unreachable: \(redact(problem))",
                                     fix: "start the receiver at \(redact(host)):\(port), or correct the sink's URL "
                                       + "(ingestd sinks remove \(name), then ingestd sinks add \(name) URL …)")
            }
        }
        if let lastError = sink.lastError, let errorAt = sink.lastErrorAt, errorAt > (sink.lastSuccess ?? .distantPast) {
            return DoctorFinding(id, group, subject: name, .warn,
                                 "\(target) accepts connections, but the last delivery failed: "
                                   + redact(SecretRedactor.redactingCredentials(lastError)),
                                 fix: "check the sink's credentials and options, then: ingestd sinks deliver \(name)")
        }
        return DoctorFinding(id, group, subject: name, .ok,
                             "\(target) accepts connections; credentials readable (the receiver checks them at delivery)")
    }
}

/// A TCP connection attempt with a deadline (non-blocking `connect(2)` and `poll(2)`), closed
/// right away: nothing is sent.
enum TCPProbe {
    /// nil when `host:port` accepted a connection within `timeout`, else why not.
    static func connect(host: String, port: Int, timeout: Duration) -> String? {
        guard (1...65_535).contains(port) else { return "port \(port) is out of range" }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            return "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))"
        }
        defer { freeaddrinfo(list) }
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        var reason = "no address for \(host)"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let descriptor = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                                    current.pointee.ai_protocol)
            guard descriptor >= 0 else {
                reason = DoctorFiles.reason(errno)
                continue
            }
            defer { close(descriptor) }
            if Glibc.connect(descriptor, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return nil }
            guard errno == EINPROGRESS else {
                reason = DoctorFiles.reason(errno) + " (\(host):\(port))"
                continue
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready == 0 {
                reason = "no answer from \(host):\(port) within \(milliseconds / 1000) s"
                continue
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
            if ready > 0, code == 0 { return nil }
            reason = DoctorFiles.reason(code == 0 ? errno : code) + " (\(host):\(port))"
        }
        return reason
    }
}

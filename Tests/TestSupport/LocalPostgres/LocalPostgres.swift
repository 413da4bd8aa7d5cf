import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a throwaway PostgreSQL server could not be run.
public enum LocalPostgresError: Error, CustomStringConvertible {
    /// `initdb`/`pg_ctl` are not installed (Debian `postgresql`; `scripts/bootstrap-tests` installs it).
    case binariesMissing(searched: String)
    /// Running as root without the `postgres` system user to run the server as.
    case noUnprivilegedUser
    /// A step failed; `output` is what it printed (and the server log's tail).
    case stepFailed(step: String, status: Int32, output: String)

    public var description: String {
        switch self {
        case .binariesMissing(let searched):
            "PostgreSQL server binaries not found under \(searched) (install the Debian 'postgresql' package: scripts/bootstrap-tests)"
        case .noUnprivilegedUser: "running as root and there is no 'postgres' user to run PostgreSQL as"
        case .stepFailed(let step, let status, let output): "\(step) exited \(status): \(output)"
        }
    }
}

/// A real PostgreSQL server for tests and IngestBench: `initdb` into a temporary directory,
/// `pg_ctl start` listening on a Unix socket in that directory and on 127.0.0.1 with a free port,
/// run as the `postgres` system user when the caller is root (PostgreSQL refuses root). Stopped
/// and removed by `shutDown()` or when released.
public final class LocalPostgres: @unchecked Sendable {
    /// The directory holding the data directory, the socket and the log.
    public let directory: String
    /// The TCP port on 127.0.0.1; chosen again at creation when another process took it first.
    public private(set) var port: Int
    private let binaries: String
    private let runAs: String?
    private var running = false

    /// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` and `pg_ctl`.
    public static func binaryDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        return versions.map { "\(root)/\($0)/bin" }.first {
            FileManager.default.isExecutableFile(atPath: $0 + "/initdb") && FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl")
        }
    }

    /// Creates and starts a server; `settings` are extra `-c name=value` server settings.
    public init(settings: [String: String] = [:]) throws {
        guard let binaries = Self.binaryDirectory() else { throw LocalPostgresError.binariesMissing(searched: "/usr/lib/postgresql/*/bin") }
        self.binaries = binaries
        if geteuid() == 0 {
            guard getpwnam("postgres") != nil else { throw LocalPostgresError.noUnprivilegedUser }
            runAs = "postgres"
        } else {
            runAs = nil
        }
        var template = Array("/tmp/ingestd-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw LocalPostgresError.stepFailed(step: "mkdtemp", status: errno, output: String(cString: strerror(errno)))
        }
        directory = String(cString: made)
        if let runAs, let user = getpwnam(runAs) {
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        chmod(directory, 0o700)
        port = Self.freePort()
        try run("initdb", ["-D", directory + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        // A port free when asked can be taken by a parallel suite before the server binds it:
        // then the server exits at once, and a new free port is tried (a few times).
        for attempt in 1...Self.portAttempts {
            var options = "-k \(directory) -c listen_addresses=127.0.0.1 -p \(port) -c fsync=off -c synchronous_commit=off"
            options += " -c full_page_writes=off -c max_connections=50 -c shared_buffers=128MB"
            for (name, value) in settings.sorted(by: { $0.key < $1.key }) { options += " -c \(name)=\(value)" }
            try "\(options)\n".write(toFile: directory + "/options", atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: directory + "/server.log")
            do {
                try start()
                return
            } catch LocalPostgresError.stepFailed(_, _, let output)
                where attempt < Self.portAttempts && output.contains("Address already in use")
            {
                port = Self.freePort()
            }
        }
    }

    /// How many ports `init` tries before it reports the bind failure.
    static let portAttempts = 5

    /// The URL of database `database` over the Unix socket.
    public func url(database: String = "postgres") -> String {
        "postgresql:///\(database)?host=\(directory)&port=\(port)&user=postgres"
    }

    /// The URL over TCP on 127.0.0.1.
    public func tcpURL(database: String = "postgres") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    /// Starts the (stopped) server and waits until it accepts connections.
    public func start() throws {
        let options = (try? String(contentsOfFile: directory + "/options", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        try run("pg_ctl start", ["-D", directory + "/data", "-l", directory + "/server.log", "-o", options, "-w", "-t", "60", "start"],
                tool: "pg_ctl")
        running = true
    }

    /// Stops the server (fast shutdown: sessions are ended).
    public func stop() {
        guard running else { return }
        _ = try? run("pg_ctl stop", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "60", "stop"], tool: "pg_ctl")
        running = false
    }

    /// Runs `sql` with psql over the socket and returns its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try Self.execute("/usr/bin/psql", ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", String(port),
                                           "-U", "postgres", "-d", database, "-c", sql], runAs: nil, step: "psql")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the server and removes its directory.
    public func shutDown() {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { shutDown() }

    @discardableResult
    private func run(_ step: String, _ arguments: [String], tool: String? = nil) throws -> String {
        do {
            return try Self.execute(binaries + "/" + (tool ?? step), arguments, runAs: runAs, step: step)
        } catch LocalPostgresError.stepFailed(let step, let status, let output) {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw LocalPostgresError.stepFailed(step: step, status: status, output: output + "\n" + String(log.suffix(2000)))
        }
    }

    /// Runs a program (through `runuser` when `runAs` is set) with an empty signal mask and default
    /// handlers (a test process's children inherit blocked signals, and a server must be
    /// stoppable), waits for it with `waitpid`, and returns its output; throws on a non-zero exit.
    /// posix_spawn rather than Foundation's Process: the server `pg_ctl` leaves running must not
    /// keep the waiter from seeing `pg_ctl` end.
    static func execute(_ path: String, _ arguments: [String], runAs: String?, step: String) throws -> String {
        var command = [path] + arguments
        if let runAs { command = ["/usr/sbin/runuser", "-u", runAs, "--"] + command }
        // In /tmp: the caller's working directory may be closed to the server's user.
        command = ["/usr/bin/env", "-C", "/tmp"] + command
        let output = "/tmp/ingestd-pg-out-\(UUID().uuidString)"
        defer { unlink(output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test process is inherited: the server counts inherited descriptors
        // against max_files_per_process and refuses to start when a busy test process left too
        // few ("insufficient file descriptors available", seen in CI).
        // (Glibc's closefrom action is not visible to Swift: each open descriptor is closed instead.)
        let inherited = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap(Int32.init)
        for descriptor in inherited where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw LocalPostgresError.stepFailed(step: step, status: spawned, output: String(cString: strerror(spawned)))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let exited = (status & 0x7f) == 0
        let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard code == 0 else {
            throw LocalPostgresError.stepFailed(step: step, status: code, output: String(text.suffix(2000)))
        }
        return text
    }

    /// A TCP port on 127.0.0.1 nobody listens on right now.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        return port == 0 ? 55_432 : port
    }
}

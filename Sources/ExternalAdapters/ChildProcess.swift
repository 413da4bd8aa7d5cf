import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a plugin process could not be started.
public enum ProcessSpawnError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A pipe or socket pair could not be made (`errno`).
    case cannotCreatePipe(errno: Int32)
    /// posix_spawn failed for the executable (`errno`, e.g. ENOENT, EACCES, ENOEXEC).
    case cannotSpawn(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .cannotCreatePipe(let code): "cannot create a pipe: \(String(cString: strerror(code)))"
        case .cannotSpawn(let path, let code): "cannot start \(path): \(String(cString: strerror(code)))"
        }
    }
}

/// How a process ended.
public enum ProcessExit: Hashable, Sendable, CustomStringConvertible {
    /// It called exit with this status.
    case exited(Int32)
    /// A signal ended it.
    case signalled(Int32)

    public var isSuccess: Bool { self == .exited(0) }

    public var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal):
            switch signal {
            case SIGKILL: "killed by signal 9 (SIGKILL)"
            case SIGSEGV: "crashed with signal 11 (SIGSEGV)"
            case SIGABRT: "crashed with signal 6 (SIGABRT)"
            case SIGILL: "crashed with signal 4 (SIGILL)"
            case SIGTRAP: "crashed with signal 5 (SIGTRAP)"
            case SIGTERM: "terminated by signal 15 (SIGTERM)"
            default: "ended by signal \(signal)"
            }
        }
    }
}

/// A plugin process: started through posix_spawn in a process group of its own, with stdin,
/// stdout and stderr on sockets (stdin written with MSG_NOSIGNAL, so a plugin that goes away
/// cannot raise SIGPIPE in the daemon), every other descriptor of the daemon closed, and the
/// common signals back at their defaults.
///
/// `kill()` sends SIGKILL to the whole group, so helpers the plugin started go too. When the
/// plugin exits, whatever is left of its group is killed before the process is reaped; after
/// that the group is never signalled again (its id may be reused). A descendant that left the
/// group (`setsid()`, `setpgid()`) is found through /proc when the input is closed and when the
/// plugin is killed (`ProcessTree`), and killed with its own group when the plugin is reaped;
/// so is every process whose environment still holds this plugin's `INGESTD_PLUGIN_INSTANCE`
/// (a helper orphaned by a double fork).
final class ChildProcess: Sendable {
    let pid: pid_t
    /// The daemon's end of the stdin socket.
    let inputDescriptor: Int32
    /// The read end of the stdout pipe.
    let outputDescriptor: Int32
    /// The read end of the stderr pipe.
    let errorDescriptor: Int32

    private struct State {
        var exit: ProcessExit?
        var reaped = false
        var inputClosed = false
        var killed = false
        /// Descendants seen outside the plugin's process group (their own group or session).
        var strays: [ProcessTree.Member] = []
    }
    private let state = Mutex(State())

    /// The value of `INGESTD_PLUGIN_INSTANCE` in this plugin's environment: inherited by every
    /// process it starts, so those that were orphaned (a double fork with `setsid()`) can still
    /// be found in /proc and killed with it.
    let instanceMarker: String

    /// The environment variable that carries `instanceMarker`.
    static let instanceVariable = "INGESTD_PLUGIN_INSTANCE"

    private init(pid: pid_t, input: Int32, output: Int32, error: Int32, instanceMarker: String) {
        self.pid = pid
        self.instanceMarker = instanceMarker
        self.inputDescriptor = input
        self.outputDescriptor = output
        self.errorDescriptor = error
    }

    deinit {
        // Never leave a process behind: kill it if nobody waited for it, then reap it.
        let reaped = state.withLock { $0.reaped }
        if !reaped {
            signal(-pid, SIGKILL)
            signal(pid, SIGKILL)
            ProcessTree.kill(ProcessTree.carrying(Self.instanceVariable, instanceMarker, except: pid))
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        closeInput()
        close(outputDescriptor)
        close(errorDescriptor)
    }

    /// Starts `executable` with `arguments` and exactly `environment`.
    static func spawn(executable: String, arguments: [String],
                      environment: [String: String]) throws(ProcessSpawnError) -> ChildProcess {
        var inputPair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &inputPair) == 0 else {
            throw .cannotCreatePipe(errno: errno)
        }
        // Socket pairs rather than pipes: they are created close-on-exec atomically, so a process
        // another thread starts at the same moment cannot inherit them.
        var outputPipe: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &outputPipe) == 0 else {
            let code = errno
            inputPair.forEach { close($0) }
            throw .cannotCreatePipe(errno: code)
        }
        var errorPipe: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &errorPipe) == 0 else {
            let code = errno
            (inputPair + outputPipe).forEach { close($0) }
            throw .cannotCreatePipe(errno: code)
        }
        // The child reads from inputPair[1] and writes to outputPipe[1] and errorPipe[1].
        let childEnds = [inputPair[1], outputPipe[1], errorPipe[1]]
        defer { childEnds.forEach { close($0) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in zip(childEnds, [Int32(0), 1, 2]) {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let instanceMarker = UUID().uuidString
        var environment = environment
        environment[instanceVariable] = instanceMarker
        let envp: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        var result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        // ETXTBSY: the file was just written and a process started at that moment by another
        // thread still holds the writing descriptor until its exec; that passes in milliseconds.
        var retries = 0
        while result == ETXTBSY && retries < 8 {
            retries += 1
            Thread.sleep(forTimeInterval: 0.005 * Double(retries))
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        }
        guard result == 0 else {
            [inputPair[0], outputPipe[0], errorPipe[0]].forEach { close($0) }
            throw .cannotSpawn(path: executable, errno: result)
        }
        return ChildProcess(pid: pid, input: inputPair[0], output: outputPipe[0], error: errorPipe[0],
                            instanceMarker: instanceMarker)
    }

    /// Writes all of `bytes` to the plugin's stdin; false when the plugin is gone (or stdin was
    /// closed). Blocks while the plugin is not reading: call it only from a thread of its own.
    func writeInput(_ bytes: [UInt8]) -> Bool {
        if state.withLock({ $0.inputClosed }) { return false }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return send(inputDescriptor, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    /// Ends the plugin's stdin (it reads end of file). The plugin's descendants are noted first:
    /// once the plugin exits, those that left its group are no longer reachable through it.
    func closeInput() {
        noteStrays()
        let first = state.withLock { state -> Bool in
            defer { state.inputClosed = true }
            return !state.inputClosed
        }
        if first { close(inputDescriptor) }
    }

    /// Sends SIGKILL to the plugin's process group, unless it has already been reaped.
    func kill() {
        noteStrays()
        state.withLock { state in
            guard !state.reaped else { return }
            state.killed = true
            signal(-pid, SIGKILL)
            signal(pid, SIGKILL)
            ProcessTree.kill(state.strays + ProcessTree.carrying(Self.instanceVariable, instanceMarker, except: pid))
        }
    }

    /// Adds the plugin's current descendants outside its process group to `strays`.
    private func noteStrays() {
        guard !state.withLock({ $0.reaped }) else { return }
        let found = ProcessTree.descendants(of: pid).filter { $0.processGroup != pid }
        guard !found.isEmpty else { return }
        state.withLock { state in
            for member in found where !state.strays.contains(member) { state.strays.append(member) }
        }
    }

    /// Whether ``kill()`` was called before the process ended.
    var wasKilled: Bool { state.withLock { $0.killed } }

    /// Blocks until the plugin exits; reaps it and returns how it ended.
    func waitForExit() -> ProcessExit {
        if let known = state.withLock({ $0.exit }) { return known }
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
            if errno != EINTR { break }
        }
        return reap()
    }

    /// Waits until the plugin exits or `deadline` passes; nil when it is still running then.
    func waitForExit(deadline: ContinuousClock.Instant) -> ProcessExit? {
        if let known = state.withLock({ $0.exit }) { return known }
        var pause: Duration = .milliseconds(1)
        while true {
            var info = siginfo_t()
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT | WNOHANG)
            if result < 0 && errno == EINTR { continue }
            if result < 0 || Self.childPID(of: info) != 0 { return reap() }
            let now = ContinuousClock.now
            if now >= deadline { return nil }
            Thread.sleep(forTimeInterval: Self.seconds(min(pause, deadline - now)))
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// The exit status, if the plugin has been reaped.
    var exitStatus: ProcessExit? { state.withLock { $0.exit } }

    /// Kills what is left of the group (the exited leader keeps the group id reserved until it
    /// is reaped), then reaps the leader.
    private func reap() -> ProcessExit {
        state.withLock { state -> ProcessExit in
            if let exit = state.exit { return exit }
            signal(-pid, SIGKILL)
            ProcessTree.kill(state.strays + ProcessTree.carrying(Self.instanceVariable, instanceMarker, except: pid))
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
            let exit: ProcessExit
            if result < 0 {
                // Reaped elsewhere (a SIGCHLD handler of another library): the status is lost.
                exit = .exited(-1)
            } else if status & 0x7F == 0 {
                exit = .exited((status >> 8) & 0xFF)
            } else {
                exit = .signalled(status & 0x7F)
            }
            state.exit = exit
            state.reaped = true
            return exit
        }
    }

    private static func childPID(of info: siginfo_t) -> pid_t {
        info._sifields._sigchld.si_pid
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+), looked up at run time because the
/// header declares it only under _GNU_SOURCE.
private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
private let addCloseFrom: AddCloseFrom? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
        return nil
    }
    return unsafeBitCast(symbol, to: AddCloseFrom.self)
}()

/// Makes the child close every descriptor above 2, so a plugin cannot reach the daemon's open
/// files (the store among them). Without closefrom (older C libraries), each descriptor listed
/// in /proc/self/fd that is not close-on-exec is closed explicitly.
private func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    if let addCloseFrom {
        _ = addCloseFrom(&actions, 3)
        return
    }
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
    for name in names {
        guard let descriptor = Int32(name), descriptor > 2 else { continue }
        let flags = fcntl(descriptor, F_GETFD)
        if flags >= 0 && flags & FD_CLOEXEC == 0 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }
}

/// kill(2), reachable from a type that has its own `kill()`.
private func signal(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}

/// Reads a descriptor with poll(2) so that a reader can give up on a stop request even when a
/// stray grandchild keeps the pipe open.
enum DescriptorReader {
    enum Outcome {
        case data(Int)
        case endOfFile
        case timedOut
        case failed(Int32)
    }

    /// Waits up to `timeout` for data and reads at most `buffer.count` bytes into it.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, timeout: Duration) -> Outcome {
        var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        while true {
            let ready = poll(&pollDescriptor, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if ready == 0 { return .timedOut }
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failed(errno)
            }
            return count == 0 ? .endOfFile : .data(count)
        }
    }
}

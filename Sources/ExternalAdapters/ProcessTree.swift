import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The descendants of a process, read from /proc (Linux), for killing what a plugin left behind
/// in groups or sessions of its own.
///
/// A process is identified by its pid and its start time, so a pid reused by an unrelated
/// process after the original ended is never signalled.
enum ProcessTree {
    /// One process as /proc showed it.
    struct Member: Equatable, Sendable {
        var pid: pid_t
        var parent: pid_t
        var processGroup: pid_t
        /// Clock ticks since boot at which the process started (field 22 of /proc/PID/stat).
        var startTime: UInt64
        /// Already exited, waiting to be reaped.
        var isZombie: Bool

        static func == (a: Member, b: Member) -> Bool { a.pid == b.pid && a.startTime == b.startTime }
    }

    /// At most this many /proc entries are read per scan (bounds the work on a busy machine).
    static let scanLimit = 65_536

    /// Every live descendant of `root` (children, their children, …), found through the parent
    /// links in /proc; empty where /proc is not available.
    static func descendants(of root: pid_t) -> [Member] {
        let all = snapshot()
        var children: [pid_t: [Member]] = [:]
        for member in all where !member.isZombie { children[member.parent, default: []].append(member) }
        var result: [Member] = []
        var frontier = [root]
        var seen: Set<pid_t> = [root]
        while let next = frontier.popLast() {
            for child in children[next] ?? [] where seen.insert(child.pid).inserted {
                result.append(child)
                frontier.append(child.pid)
            }
        }
        return result
    }

    /// SIGKILLs each member still alive with the same start time, and its process group when it
    /// leads one (a `setsid()` helper takes its own helpers along).
    static func kill(_ members: [Member]) {
        for member in members {
            guard let current = read(member.pid), current.startTime == member.startTime, !current.isZombie else { continue }
            if current.processGroup == member.pid { _ = Glibc.kill(-member.pid, SIGKILL) }
            _ = Glibc.kill(member.pid, SIGKILL)
        }
    }

    /// The processes (other than `except`) whose environment holds `name=value`; at most the
    /// first 256 KiB of each environment is read. Processes of other users cannot be read and
    /// are never listed.
    static func carrying(_ name: String, _ value: String, except: pid_t) -> [Member] {
        let wanted = Array((name + "=" + value).utf8)
        return snapshot().filter { member in
            guard member.pid != except, !member.isZombie,
                  let handle = FileHandle(forReadingAtPath: "/proc/\(member.pid)/environ") else { return false }
            defer { try? handle.close() }
            guard let data = try? handle.read(upToCount: 256 * 1024) else { return false }
            return data.split(separator: 0).contains { $0.elementsEqual(wanted) }
        }
    }

    /// The processes in /proc (up to `scanLimit`).
    static func snapshot() -> [Member] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var members: [Member] = []
        var scanned = 0
        while scanned < scanLimit, let entry = readdir(directory) {
            scanned += 1
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = pid_t(name), let member = read(pid) else { continue }
            members.append(member)
        }
        return members
    }

    /// Parses /proc/PID/stat; nil when the process is gone or the line is not understood.
    static func read(_ pid: pid_t) -> Member? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"), data.count < 4096 else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // The command name is in parentheses and may itself contain spaces and ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // fields[0] is the state (field 3), so field N is fields[N - 3].
        guard fields.count > 19, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
              let start = UInt64(fields[19]) else { return nil }
        return Member(pid: pid, parent: parent, processGroup: group, startTime: start, isZombie: fields[0] == "Z")
    }
}

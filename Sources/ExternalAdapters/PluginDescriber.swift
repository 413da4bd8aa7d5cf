import AdapterKit
import ExternalAdapterProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why `ingestd-adapter-<id> --describe` gave no usable descriptor; `description` is the
/// "broken: …" reason `ingestd adapters` shows.
public enum PluginDescribeError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotStart(ProcessSpawnError)
    /// No exit within the time limit; the process was killed.
    case timedOut(Duration)
    /// It exited unsuccessfully; `stderr` holds the start of what it wrote there.
    case failed(ProcessExit, stderr: String)
    /// It printed more than one line's worth (64 KiB).
    case outputTooLong(limit: Int)
    /// It printed something that is not a valid descriptor.
    case invalidDescriptor(ExternalDescriptorError)

    public var description: String {
        switch self {
        case .cannotStart(let error): error.description
        case .timedOut(let limit): "--describe did not finish within \(Self.format(limit)) (killed)"
        case .failed(let exit, let stderr):
            stderr.isEmpty ? "--describe \(exit)" : "--describe \(exit): \(stderr)"
        case .outputTooLong(let limit): "--describe printed more than \(limit) bytes"
        case .invalidDescriptor(let error): error.description
        }
    }

    private static func format(_ duration: Duration) -> String {
        let seconds = ChildProcess.seconds(duration)
        return seconds.truncatingRemainder(dividingBy: 1) == 0 ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

/// Runs `--describe` with a time limit and reads the descriptor.
public struct PluginDescriber: Sendable {
    public var timeout: Duration
    public var environment: [String: String]
    public var maximumOutput: Int

    public init(timeout: Duration = ExternalAdapterConfiguration.defaultDescribeTimeout, environment: [String: String] = ProcessInfo.processInfo.environment,
                maximumOutput: Int = ExternalAdapterProtocol.maximumLineLength) {
        self.timeout = timeout
        self.environment = environment
        self.maximumOutput = maximumOutput
    }

    /// Describes the plugin at `executable`, whose file name says its id is `expectedID`.
    public func describe(executable: String, expectedID: String) -> Result<AdapterDescriptor, PluginDescribeError> {
        describePlugin(executable: executable, expectedID: expectedID).map(\.descriptor)
    }

    /// `describe`, with the protocol version the plugin speaks and whether it connects.
    public func describePlugin(executable: String, expectedID: String) -> Result<ExternalPluginDescription, PluginDescribeError> {
        var environment = environment
        environment["INGESTD_ADAPTER_PROTOCOL"] = String(ExternalAdapterProtocol.version)
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(executable: executable, arguments: ["--describe"], environment: environment)
        } catch {
            return .failure(.cannotStart(error))
        }
        child.closeInput()
        let deadline = ContinuousClock.now + timeout
        let collected = collect(child, until: deadline)
        switch collected {
        case .timedOut:
            child.kill()
            _ = child.waitForExit()
            return .failure(.timedOut(timeout))
        case .tooLong:
            child.kill()
            _ = child.waitForExit()
            return .failure(.outputTooLong(limit: maximumOutput))
        case .complete(let output, let errors):
            guard let exit = child.waitForExit(deadline: deadline) else {
                child.kill()
                _ = child.waitForExit()
                return .failure(.timedOut(timeout))
            }
            guard exit.isSuccess else {
                let firstLine = String(decoding: errors.prefix(400), as: UTF8.self)
                    .split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
                return .failure(.failed(exit, stderr: firstLine))
            }
            do {
                return .success(try ExternalDescriptorCodec.decodeDescription(Data(output), expectedID: expectedID))
            } catch {
                return .failure(.invalidDescriptor(error))
            }
        }
    }

    private enum Collected {
        case complete(output: [UInt8], errors: [UInt8])
        case timedOut
        case tooLong
    }

    /// Reads stdout and stderr to their ends (or the deadline), keeping at most `maximumOutput`
    /// bytes of stdout and 4 KiB of stderr.
    private func collect(_ child: ChildProcess, until deadline: ContinuousClock.Instant) -> Collected {
        var output: [UInt8] = []
        var errors: [UInt8] = []
        var open: [Int32] = [child.outputDescriptor, child.errorDescriptor]
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !open.isEmpty {
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return .timedOut }
            var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(clamping: max(1, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return .complete(output: output, errors: errors)
            }
            if ready == 0 { continue }
            for entry in descriptors where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { raw in read(entry.fd, raw.baseAddress, raw.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if count <= 0 {
                    open.removeAll { $0 == entry.fd }
                    continue
                }
                if entry.fd == child.outputDescriptor {
                    output += buffer[0..<count]
                    if output.count > maximumOutput { return .tooLong }
                } else if errors.count < 4096 {
                    errors += buffer[0..<min(count, 4096 - errors.count)]
                }
            }
        }
        return .complete(output: output, errors: errors)
    }
}

import AdapterKit
import Foundation
import Synchronization
import Transport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a Swift adapter into an external adapter executable (`ingestd-adapter-<id>`) that speaks
/// the plugin protocol of `Plugins/README.md`. The whole `main.swift` of such an executable is
///
/// ```swift
/// ExternalAdapterMain.run(XiaomiScaleAdapter())
/// ```
///
/// `--describe` prints the descriptor; `--run` reads the device line and advertisements from
/// stdin, feeds them to one session and prints its records, a log line per rejection, and
/// `{"done":true}` after stdin ends and the session is finished.
public enum ExternalAdapterMain {
    /// Exit status for a usage error (as `sysexits.h` EX_USAGE).
    public static let usageExitStatus: Int32 = 64

    /// Runs the protocol over the process's stdin, stdout and stderr, then exits.
    public static func run(_ adapter: some BLEAdapter) -> Never {
        let status = serve(adapter, arguments: Array(CommandLine.arguments.dropFirst()),
                           readLine: { Swift.readLine(strippingNewline: true) },
                           writeLine: StandardStream.output.writeLine,
                           writeError: StandardStream.error.writeLine)
        exit(status)
    }

    /// Runs the protocol for a USB adapter. `open` opens the matched device (through libusb in a
    /// real executable); the session runs until it is done or stdin ends.
    public static func run(_ adapter: some USBAdapter,
                           open: @escaping (USBDeviceDescription) throws -> any USBDeviceHandle) -> Never {
        let status = serveUSB(adapter, arguments: Array(CommandLine.arguments.dropFirst()), open: open,
                              readLine: { Swift.readLine(strippingNewline: true) },
                              writeLine: StandardStream.output.writeLine,
                              writeError: StandardStream.error.writeLine)
        exit(status)
    }

    /// The protocol with its I/O passed in: `readLine` returns stdin lines (nil at the end),
    /// `writeLine` prints one stdout line, `writeError` one stderr line. Returns the exit status.
    public static func serve(_ adapter: some BLEAdapter, arguments: [String], readLine: () -> String?,
                             writeLine: (String) -> Void, writeError: (String) -> Void) -> Int32 {
        switch arguments {
        case ["--describe"]:
            writeLine(ExternalDescriptorCodec.encode(adapter.descriptor))
            return 0
        case ["--run"]:
            break
        default:
            writeError(usage(adapter.descriptor.id))
            return usageExitStatus
        }
        let id = adapter.descriptor.id
        var session: (any BLEAdapterSession)?
        var zone = TimeZone.current
        while let line = readLine() {
            if line.allSatisfy(\.isWhitespace) { continue }
            let message: ExternalInputMessage
            do {
                message = try ExternalInputCodec.decode(line)
            } catch {
                writeLine(ExternalOutputLine.log(.error, "ignored input line: \(error.description)"))
                continue
            }
            switch message {
            case .device(let device, let timeZone):
                guard case .ble(let traits) = device else {
                    writeLine(ExternalOutputLine.log(.error, "\(id) is a Bluetooth LE adapter, not a USB one"))
                    continue
                }
                if let timeZone { zone = timeZone }
                if session == nil {
                    session = adapter.makeSession(for: traits, context: AdapterContext(timeZone: zone, source: id))
                }
            case .advertisement(let advertisement):
                if session == nil {
                    // No device line: the advertisement tells enough to start.
                    var traits = BLEDeviceTraits(address: advertisement.address)
                    traits.absorb(advertisement)
                    session = adapter.makeSession(for: traits, context: AdapterContext(timeZone: zone, source: id))
                }
                var output = AdapterOutput()
                session?.receive(.advertisement(advertisement), into: &output)
                emit(output, writeLine: writeLine)
            }
        }
        if let session {
            var output = AdapterOutput()
            session.finish(into: &output)
            emit(output, writeLine: writeLine)
        }
        writeLine(ExternalOutputLine.done)
        return 0
    }

    /// ``serve(_:arguments:readLine:writeLine:writeError:)`` for a USB adapter.
    public static func serveUSB(_ adapter: some USBAdapter, arguments: [String],
                                open: (USBDeviceDescription) throws -> any USBDeviceHandle,
                                readLine: @escaping @Sendable () -> String?,
                                writeLine: @escaping (String) -> Void, writeError: (String) -> Void) -> Int32 {
        switch arguments {
        case ["--describe"]:
            writeLine(ExternalDescriptorCodec.encode(adapter.descriptor))
            return 0
        case ["--run"]:
            break
        default:
            writeError(usage(adapter.descriptor.id))
            return usageExitStatus
        }
        let id = adapter.descriptor.id
        var device: USBDeviceDescription?
        var zone = TimeZone.current
        while device == nil, let line = readLine() {
            if line.allSatisfy(\.isWhitespace) { continue }
            switch Result(catching: { () throws(ExternalInputError) in try ExternalInputCodec.decode(line) }) {
            case .success(.device(.usb(let description), let timeZone)):
                device = description
                if let timeZone { zone = timeZone }
            case .success:
                writeLine(ExternalOutputLine.log(.error, "\(id) is a USB adapter; expected a USB device line"))
            case .failure(let error):
                writeLine(ExternalOutputLine.log(.error, "ignored input line: \(error.description)"))
            }
        }
        guard let device else {
            writeLine(ExternalOutputLine.done)
            return 0
        }
        // stdin ending asks the session to stop (the daemon is done with this device).
        let inputEnded = Atomic<Bool>(false)
        let watcher = Thread { [readLine] in
            while readLine() != nil {}
            inputEnded.store(true, ordering: .releasing)
        }
        watcher.start()
        let session = adapter.makeSession(for: device, context: AdapterContext(timeZone: zone, source: id), options: [:])
        do {
            let handle = try open(device)
            defer { handle.close() }
            try session.run(handle, deliver: { output in
                emit(output, writeLine: writeLine)
                // The daemon's commit is not known here: the device must keep its history.
                return DeliveryReceipt(stored: 0, held: output.records.count)
            },
                            shouldStop: { inputEnded.load(ordering: .acquiring) })
        } catch {
            writeLine(ExternalOutputLine.log(.error, "\(device): \(error)"))
        }
        writeLine(ExternalOutputLine.done)
        return 0
    }

    private static func emit(_ output: AdapterOutput, writeLine: (String) -> Void) {
        for record in output.records { writeLine(ExternalOutputLine.record(record)) }
        for rejection in output.rejections {
            writeLine(ExternalOutputLine.log(.warning, "\(rejection.reason): \(rejection.detail)"))
        }
    }

    private static func usage(_ id: String) -> String {
        "usage: \(ExternalAdapterProtocol.executableName(for: id)) --describe | --run  (ingestd external adapter protocol 1)"
    }
}

/// Unbuffered line output on file descriptor 1 or 2, safe to share between threads.
struct StandardStream: Sendable {
    let descriptor: Int32

    static let output = StandardStream(descriptor: 1)
    static let error = StandardStream(descriptor: 2)

    /// Writes `line` and a newline with as many write(2) calls as it takes.
    func writeLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return write(descriptor, base + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

import ArgumentParsing
import BlueZTransport
@testable import IngestCLI
import IngestRuntime
import Testing
import WebDashboard

/// The runtime's errors carry what failed, read as the messages users see, and end a command with
/// the status of their case (mapped in one place).
@Suite struct RuntimeErrorTests {
    @Test(arguments: [
        (RuntimeError.bluetoothUnavailable(.noController(index: 0)), ExitCode.failure,
         "Bluetooth unavailable: no controller hci0; BLE devices are not read"),
        (.bluetoothFailed(controller: "hci1", reason: "timed out"), .failure, "Bluetooth unavailable: hci1: timed out"),
        (.usbDeviceNotConnected(vendorID: 0x0590, productID: 0x0028), .noInput,
         "no USB device 0590:0028 is connected ('ingestd devices' lists those present)"),
        (.noInput(path: "/x.jsonl"), .noInput, "cannot open '/x.jsonl': no such file or directory"),
        (.noInput(path: "/tmp", reason: "is a directory"), .noInput, "cannot open '/tmp': is a directory"),
        (.unreadableInput(path: "walk.jsonl", reason: "Input/output error"), .noInput, "cannot read 'walk.jsonl': Input/output error"),
        (.unreadableCapture(path: "a.btsnoop", reason: "magic is not \"btsnoop\\0\""), .dataError,
         "a.btsnoop: magic is not \"btsnoop\\0\""),
        (.streamTooLong(source: "stdin", limit: 100), .dataError, "stdin: stream longer than 100 bytes; write it to a file first"),
        (.unknownUSBAdapter(id: "nope", known: ["temper", "ant-plus"]), .usage, "no USB adapter \"nope\" (known: temper, ant-plus)"),
        (.adapterChoice(.unknownAdapter("nope", known: ["bthome"])), .usage, "no adapter \"nope\" (known: bthome)"),
        (.storeClosed, .failure, "the store is closed (shutting down)"),
    ])
    func eachCaseReadsAndExitsAsItShould(_ error: RuntimeError, _ status: ExitCode, _ message: String) {
        #expect(error.description == message)
        #expect(error.exitCode == status)
    }
}

/// The commands' errors read as before the enum and end with the status of their case.
@Suite struct CommandErrorTests {
    @Test(arguments: [
        (CommandError.storeIsDirectory(path: "/tmp"), ExitCode.noInput, "cannot open '/tmp': is a directory, not a store file"),
        (.noSuchStore(path: "x.sqlite"), .noInput, "cannot open 'x.sqlite': no such store (nothing has been ingested there)"),
        (.unknownQuantityType(name: "stpes", suggestion: "steps"), .usage,
         "unknown quantity type \"stpes\" (did you mean steps?); 'ingestd types' lists them"),
        (.unknownQuantityType(name: "zzz", suggestion: nil), .usage, "unknown quantity type \"zzz\"; 'ingestd types' lists them"),
        (.unknownAdapter(id: "nope"), .usage, "--adapter: no adapter \"nope\" (ingestd adapters lists them)"),
        (.oversizedKeyFile(source: "standard input", limit: 4096), .dataError,
         "standard input: more than 4096 bytes; a key file holds 32 hex digits"),
        (.unwritable(path: "r.html", reason: nil), .failure, "cannot write 'r.html'"),
        (.unwritable(path: "e.csv.partial", reason: "Permission denied"), .failure, "cannot write 'e.csv.partial': Permission denied"),
        (.noWeighing(person: "alice"), .failure, "no weighing stored for alice"),
        (.noWeighing(person: nil), .failure, "no weighing stored"),
        (.notAFiniteNumber("inf"), .dataError, "\"inf\" is not a finite number"),
        (.unreadable(path: "k.hex", reason: "cannot read the token file"), .noInput, "cannot open 'k.hex': cannot read the token file"),
        (.adapterChoice(.unknownAdapter("nope", known: ["bthome", "xiaomi"])), .usage,
         "--adapter: no adapter \"nope\" (known: bthome, xiaomi)"),
        (.dashboardNotServed(.cannotListen("127.0.0.1:80")), .failure,
         "cannot listen on 127.0.0.1:80 (is the port in use, or the address not on this machine?)"),
    ])
    func eachCaseReadsAndExitsAsItShould(_ error: CommandError, _ status: ExitCode, _ message: String) {
        #expect(error.description == message)
        #expect(error.exitCode == status)
    }
}

/// The configuration's errors and a second daemon's lock end with the status of their case.
@Suite struct ConfigurationExitCodeTests {
    @Test(arguments: [
        (ConfigurationError.missing(path: "/etc/x.conf", namedBy: "--config"), ExitCode.noInput),
        (.malformedLine(path: "c", line: 1, text: "x"), .configuration),
        (.unknownKey(path: "c", line: 2, key: "stroe", suggestion: "store"), .configuration),
        (.badEnvironment(variable: "INGESTD_STORE", value: "", reason: "empty"), .configuration),
        (.unreadable(path: "c", reason: "is a directory"), .configuration),
    ])
    func eachCaseExitsAsItShould(_ error: ConfigurationError, _ status: ExitCode) {
        #expect(error.exitCode == status)
    }

    @Test func aSecondDaemonEndsWithStatusOne() {
        #expect(StoreLock.LockError.heldByAnotherProcess(lockPath: "/x.lock", pid: 7).exitCode == .failure)
    }
}

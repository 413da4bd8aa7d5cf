import ArgumentParsing
import BlueZTransport
@testable import IngestCLI
import IngestRuntime
import Testing

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

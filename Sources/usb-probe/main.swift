// usb-probe: a small driver of LibUSBTransport for tests that run it under umockdev
// (`umockdev-run --device X.umockdev --pcap SYSFS=X.pcapng -- usb-probe ...` or
// `umockdev-wrapper usb-probe hotplug ...`). It prints one line per step so tests can check
// what the real libusb did. See `usb-probe help`.
import Foundation
import LibUSBTransport
import Transport

let usage = """
    usage: usb-probe list
           usb-probe session VID:PID STEP...
           usb-probe hotplug --device FILE.umockdev --pcap FILE.pcapng --syspath /sys/devices/... VID:PID
    STEP (endpoints are chosen from the descriptors: the first interface with an IN and an OUT
    bulk or interrupt endpoint):
      claim            claim that interface, detaching a kernel driver if it is a HID interface
      write:HEX        write HEX to the OUT endpoint
      read:N           read up to N bytes from the IN endpoint
      drain:N          read N-byte chunks until an error (prints the error and goes on)
      control:SETUP[:HEX]  control transfer; SETUP is the 8 setup bytes in hex
    """

var output = ProbeOutput()
let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    output.line(usage)
    exit(2)
}
do {
    switch command {
    case "list":
        let context = try LibUSBContext()
        for device in try context.enumerate() { output.describe(device) }
    case "session":
        guard arguments.count >= 2, let ids = DeviceIDs(arguments[1]) else { throw ProbeFailure.usage("session VID:PID STEP...") }
        let context = try LibUSBContext()
        guard let device = try context.enumerate(readStrings: false).first(where: ids.matches) else {
            throw ProbeFailure.notFound(ids.description)
        }
        let handle = try context.open(device)
        output.line("OPENED \(handle.device)")
        let steps = try arguments.dropFirst(2).map(SessionStep.init)
        let session = try ProbeSession(handle: handle, output: output)
        session.run(steps)
        handle.close()
        output.line("CLOSED")
    case "hotplug":
        try await HotplugProbe(arguments: Array(arguments.dropFirst()), output: output).run()
    default:
        output.line(usage)
        exit(2)
    }
} catch let error as USBError {
    output.line("FAILED \(ProbeOutput.caseName(error)): \(error)")
    exit(1)
} catch {
    output.line("FAILED \(error)")
    exit(1)
}
exit(0)

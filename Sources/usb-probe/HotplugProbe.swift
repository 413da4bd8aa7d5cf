import Foundation
import LibUSBTransport
import Synchronization
import Transport

/// `usb-probe hotplug`: plugs a umockdev device in and out at runtime and follows it through
/// LibUSBContext's hotplug stream. Between arrival and departure it runs the ANT start-up on
/// the device, then keeps a receive loop reading on its own thread while the device is pulled
/// out; that session must end by itself (`noDevice`) or be stopped by the departure event, and
/// the probe must then see the device arrive again, open and claim it, and lose it again.
struct HotplugProbe {
    let deviceFile: String
    let pcapFile: String
    let syspath: String
    let ids: DeviceIDs
    let output: ProbeOutput
    /// The ANT reset message and the length the fixture's reads were recorded with.
    let reset: [UInt8] = [0xA4, 0x01, 0x4A, 0x00, 0xEF]
    let readLength = 64

    init(arguments: [String], output: ProbeOutput) throws {
        var options: [String: String] = [:]
        var positional: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--"), index + 1 < arguments.count {
                options[String(argument.dropFirst(2))] = arguments[index + 1]
                index += 2
            } else {
                positional.append(argument)
                index += 1
            }
        }
        guard let deviceFile = options["device"], let pcapFile = options["pcap"], let syspath = options["syspath"],
              positional.count == 1, let ids = DeviceIDs(positional[0]) else {
            throw ProbeFailure.usage("hotplug --device FILE.umockdev --pcap FILE.pcapng --syspath SYSPATH VID:PID")
        }
        self.deviceFile = deviceFile
        self.pcapFile = pcapFile
        self.syspath = syspath
        self.ids = ids
        self.output = output
    }

    func run() async throws {
        let testbed = try UMockdevTestbed()   // before libusb_init
        let context = try LibUSBContext()
        output.line("HOTPLUG \(context.supportsHotplug ? "supported" : "unsupported")")
        let inbox = EventInbox()
        let events = try context.hotplugEvents(vendorID: ids.vendorID, productID: ids.productID)
        let consumer = Task {
            for await event in events { await inbox.put(event) }
        }
        defer { consumer.cancel() }
        let present = try context.enumerate(readStrings: false).filter(ids.matches)
        output.line("PRESENT \(present.count)")

        for round in 1...2 {
            try plugIn(testbed, firstTime: round == 1)
            guard let event = await inbox.next(waiting: .seconds(10)), case .arrived(let device) = event else {
                output.line("NO ARRIVAL in round \(round)")
                throw ProbeFailure.umockdev("no arrival event")
            }
            output.line("EVENT \(event)")
            let handle = try context.open(device)
            let session = try ProbeSession(handle: handle, output: output)
            // umockdev cannot load a capture again for a device node it has served before, so the
            // second time round the device is only claimed (no transfers).
            session.run(round == 1 ? [.claim, .write(reset), .read(readLength)] : [.claim])

            let receiver = ReceiveLoop(handle: handle, endpoint: session.inEndpoint.address, length: readLength, output: output)
            receiver.start()
            output.line("UNPLUG")
            testbed.uevent(syspath, action: "remove")
            testbed.remove(syspath)
            guard let left = await inbox.next(waiting: .seconds(10)), case .left = left else {
                output.line("NO DEPARTURE in round \(round)")
                throw ProbeFailure.umockdev("no departure event")
            }
            output.line("EVENT \(left)")
            receiver.requestStop()   // what a supervisor does on departure (shouldStop)
            guard receiver.waitUntilEnded(.seconds(10)) else {
                output.line("SESSION HUNG")
                throw ProbeFailure.umockdev("the receive loop did not end")
            }
            handle.close()
            output.line("CLOSED round \(round)")
        }
        output.line("DONE")
    }

    /// Adds the device (the first time with its hub and controller), loads its capture and sends
    /// the "add" uevents, parent first.
    private func plugIn(_ testbed: UMockdevTestbed, firstTime: Bool) throws {
        if firstTime {
            try testbed.add(from: deviceFile)
        } else {
            try testbed.add(from: deviceFile, only: syspath)
        }
        try testbed.loadPcap(syspath: syspath, path: pcapFile)
        if firstTime { testbed.uevent((syspath as NSString).deletingLastPathComponent, action: "add") }
        testbed.uevent(syspath, action: "add")
        output.line("PLUGGED \(syspath)")
    }
}

/// Hotplug events as they arrive, for waiting on them one at a time with a bound.
actor EventInbox {
    private var events: [USBHotplugEvent] = []
    private var waiter: CheckedContinuation<USBHotplugEvent?, Never>?
    private var waiterID = 0

    func put(_ event: USBHotplugEvent) {
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: event)
        } else {
            events.append(event)
        }
    }

    /// The next event, or nil when none comes within `limit`.
    func next(waiting limit: Duration) async -> USBHotplugEvent? {
        if !events.isEmpty { return events.removeFirst() }
        waiterID += 1
        let id = waiterID
        return await withCheckedContinuation { continuation in
            waiter = continuation
            Task {
                try? await Task.sleep(for: limit)
                self.expire(id)
            }
        }
    }

    private func expire(_ id: Int) {
        guard id == waiterID, let waiter else { return }
        self.waiter = nil
        waiter.resume(returning: nil)
    }
}

/// A receive loop on its own thread, like an ANT session's: reads until the device is gone
/// (`noDevice`) or a stop is requested; timeouts just mean "nothing received yet".
final class ReceiveLoop: Sendable {
    private let handle: LibUSBDeviceHandle
    private let endpoint: UInt8
    private let length: Int
    private let output: ProbeOutput
    private let stopRequested = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init(handle: LibUSBDeviceHandle, endpoint: UInt8, length: Int, output: ProbeOutput) {
        self.handle = handle
        self.endpoint = endpoint
        self.length = length
        self.output = output
    }

    func start() {
        let thread = Thread { [self] in
            var timeouts = 0
            defer { ended.signal() }
            while !stopRequested.load(ordering: .acquiring) {
                do throws(USBError) {
                    let data = try handle.read(endpoint: endpoint, length: length, timeout: .milliseconds(200))
                    output.line("RECEIVED \(ProbeOutput.hex(data))")
                } catch .timeout(_) {
                    timeouts += 1
                } catch {
                    output.line("SESSION ENDED \(ProbeOutput.caseName(error)) after \(timeouts > 0 ? "timeouts" : "no timeouts")")
                    return
                }
            }
            output.line("SESSION ENDED stopped after \(timeouts > 0 ? "timeouts" : "no timeouts")")
        }
        thread.start()
    }

    func requestStop() { stopRequested.store(true, ordering: .releasing) }

    /// Waits for the loop to end; false if it did not within `limit`.
    func waitUntilEnded(_ limit: Duration) -> Bool {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        return ended.wait(timeout: .now() + seconds) == .success
    }
}

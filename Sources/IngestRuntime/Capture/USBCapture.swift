import AdapterKit
import CaptureFormats
import Foundation
import LibUSBTransport
import Synchronization
import Transport

// MARK: - USB

/// `capture --usb VID:PID`: opens the device with libusb and records a session as usbmon.
public struct USBCapture: Sendable {
    var vendorID: UInt16
    var productID: UInt16
    var adapters: [any USBAdapter]
    var options: [String: String] = [:]
    var timeZone: TimeZone
    var duration: Duration
    var progressInterval: Duration = .seconds(5)

    public init(vendorID: UInt16, productID: UInt16, adapters: [any USBAdapter], timeZone: TimeZone, duration: Duration) {
        self.vendorID = vendorID
        self.productID = productID
        self.adapters = adapters
        self.timeZone = timeZone
        self.duration = duration
    }

    var idString: String { String(format: "%04x:%04x", vendorID, productID) }

    public func run(out path: String, stop: CaptureStop, progress: @escaping @Sendable (String) -> Void) async throws -> String {
        let context: LibUSBContext
        do {
            context = try LibUSBContext()
        } catch {
            throw RuntimeError.usbUnavailable(reason: "\(error)")
        }
        let devices: [USBDeviceDescription]
        do {
            devices = try context.enumerate()
        } catch {
            throw RuntimeError.usbUnavailable(reason: "cannot list USB devices: \(error)")
        }
        guard let device = devices.first(where: { $0.vendorID == vendorID && $0.productID == productID }) else {
            throw RuntimeError.usbDeviceNotConnected(vendorID: vendorID, productID: productID)
        }
        let handle: LibUSBDeviceHandle
        do {
            handle = try context.open(device)
        } catch {
            throw RuntimeError.usbDeviceUnopenable(device: "\(device)", reason: "\(error)")
        }
        defer { handle.close() }
        let writer: PcapNGWriter
        do {
            writer = try PcapNGWriter(path: path, linkType: LinkType.usbLinuxMMapped)
        } catch {
            throw RuntimeError.captureNotWritten(error)
        }
        let recorder = USBMonRecorder(writer: writer, bus: UInt16(handle.device.bus ?? 1),
                                      address: max(1, handle.device.address ?? 1))
        let adapter = adapters.first { $0.descriptor.matches(handle.device) }
        progress("recording \(handle.device) for \(duration)"
            + (adapter.map { " through the \($0.descriptor.id) session" } ?? " (no adapter: reading its IN endpoints)")
            + "; Ctrl-C ends early")
        let deadline = ContinuousClock.now + duration
        let shouldStop: @Sendable () -> Bool = { stop.isStopped || ContinuousClock.now >= deadline }
        let started = ContinuousClock.now
        let reporter = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: progressInterval)
                if Task.isCancelled { return }
                progress("\((ContinuousClock.now - started).components.seconds) s: \(recorder.transfers) transfers")
            }
        }
        let session = USBCaptureSession(adapter: adapter, options: options, timeZone: timeZone)
        let outcome = await session.runOffThePool(handle, recorder: recorder, shouldStop: shouldStop, progress: progress)
        reporter.cancel()
        do {
            try recorder.close()
        } catch {
            throw RuntimeError.captureNotWritten(error)
        }
        return "\(recorder.transfers) transfers" + (outcome.map { "; the session ended: \($0)" } ?? "")
    }
}

/// What `capture --usb` does with an opened device, recorded through a ``RecordingUSBDeviceHandle``:
/// the adapter's session, or (no adapter) reads of every interrupt and bulk IN endpoint.
struct USBCaptureSession: Sendable {
    var adapter: (any USBAdapter)?
    var options: [String: String]
    var timeZone: TimeZone
    /// The clock adapter sessions read "now" from: the wall clock, or a replayed device's clock in tests.
    var clock: @Sendable () -> Date = { Date() }
    /// Timeout of each endpoint read without an adapter.
    var readTimeout: Duration = .milliseconds(500)

    /// Records the enumeration, then runs the session on `device` until it ends or `shouldStop`.
    /// Returns why the session ended, when it ended with an error. Blocks: call on a thread of
    /// its own.
    func run(_ device: any USBDeviceHandle, recorder: USBMonRecorder, shouldStop: @escaping @Sendable () -> Bool,
             progress: @Sendable (String) -> Void) -> String? {
        recorder.recordEnumeration(of: device.device)
        let recording = RecordingUSBDeviceHandle(wrapping: device, recorder: recorder)
        guard let adapter else { return readInputs(recording, shouldStop: shouldStop) }
        let runner = USBSessionRunner(adapters: [adapter], options: options, timeZone: timeZone)
        var records = 0
        do {
            try runner.run(adapter, device: device.device, clock: clock, open: { recording }, deliver: { output in
                records += output.records.count
                if !output.records.isEmpty { progress("the session produced \(records) records so far (not stored)") }
                // Nothing is stored, but the capture file keeps every byte (replayable into a store), and the
                // session runs as asked (with `clear-after-sync=true` the clear is part of the recording).
                return DeliveryReceipt(stored: output.records.count, held: 0)
            }, shouldStop: shouldStop)
            return nil
        } catch USBError.replayExhausted {
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// ``run(_:recorder:shouldStop:progress:)`` on a thread of its own, awaited.
    func runOffThePool(_ device: LibUSBDeviceHandle, recorder: USBMonRecorder,
                       shouldStop: @escaping @Sendable () -> Bool,
                       progress: @escaping @Sendable (String) -> Void) async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: run(device, recorder: recorder, shouldStop: shouldStop, progress: progress))
            }
        }
    }

    /// Claims the interfaces with interrupt or bulk IN endpoints (detaching kernel drivers) and
    /// reads each such endpoint on a thread of its own until `shouldStop`.
    private func readInputs(_ device: RecordingUSBDeviceHandle, shouldStop: @escaping @Sendable () -> Bool) -> String? {
        var endpoints: [USBEndpointDescription] = []
        var claimed: [UInt8] = []
        for interface in device.device.interfaces where interface.alternateSetting == 0 {
            let inputs = interface.endpoints.filter { $0.isInput && ($0.transferType == .interrupt || $0.transferType == .bulk) }
            guard !inputs.isEmpty else { continue }
            do {
                try device.claimInterface(interface.number, detachKernelDriver: true)
            } catch {
                return "claiming interface \(interface.number) failed: \(error)"
            }
            claimed.append(interface.number)
            endpoints += inputs
        }
        defer { for number in claimed { try? device.releaseInterface(number) } }
        guard !endpoints.isEmpty else { return "the device has no interrupt or bulk IN endpoints to read" }
        let group = DispatchGroup()
        let failure = Mutex<String?>(nil)
        let timeout = readTimeout
        for endpoint in endpoints {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let length = max(64, Int(endpoint.maxPacketSize))
                while !shouldStop() {
                    do {
                        _ = try device.read(endpoint: endpoint.address, length: length, timeout: timeout)
                    } catch USBError.timeout {
                        continue
                    } catch {
                        failure.withLock { $0 = $0 ?? "reading endpoint \(String(format: "0x%02x", endpoint.address)): \(error)" }
                        return
                    }
                }
            }
        }
        group.wait()
        return failure.withLock { $0 }
    }
}

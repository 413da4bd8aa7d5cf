import CLibUSB
import Synchronization
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One libusb session (`libusb_context`): enumeration, opening devices and hotplug events.
///
/// libusb contexts are thread-safe, so one context serves every session thread. While at least
/// one hotplug stream is open, a dedicated thread runs libusb's event loop
/// (`libusb_handle_events_timeout_completed`); the hotplug callback runs on that thread and hands
/// events to Swift concurrency through an `AsyncStream` continuation. Synchronous transfers do
/// not need that thread: libusb handles their events on the calling thread.
public final class LibUSBContext: @unchecked Sendable {
    // @unchecked: `context` is an immutable pointer to a libusb_context, which libusb documents as
    // safe to use from any thread; all mutable state is behind `hotplug` (a Mutex).

    let context: OpaquePointer
    private let hotplug = Mutex(HotplugState())
    /// How long string descriptor requests may take during `enumerate()`.
    public var stringTimeout: Duration { .milliseconds(Int(stringTimeoutMilliseconds)) }
    private let stringTimeoutMilliseconds: UInt32

    private struct HotplugState {
        var registrations: [Int32: Unmanaged<HotplugRegistration>] = [:]
        var eventLoop: EventLoopThread?
    }

    /// Initialises libusb. `logLevel` 0 (none) to 4 (debug) sets libusb's own log output.
    public init(logLevel: Int32 = 0, stringTimeout: Duration = .milliseconds(500)) throws(USBError) {
        var context: OpaquePointer?
        let code = libusb_init(&context)
        guard code == 0, let context else {
            throw USBError(libusbCode: code, what: "libusb_init")
        }
        self.context = context
        self.stringTimeoutMilliseconds = LibUSBDeviceHandle.milliseconds(stringTimeout)
        if logLevel > 0 { _ = clibusb_set_log_level(context, logLevel) }
    }

    deinit {
        let (registrations, loop) = hotplug.withLock { state in
            let taken = (Array(state.registrations), state.eventLoop)
            state.registrations.removeAll()
            state.eventLoop = nil
            return taken
        }
        for (handle, registration) in registrations {
            libusb_hotplug_deregister_callback(context, handle)
            registration.takeUnretainedValue().continuation.finish()
            registration.release()
        }
        loop?.stop()
        libusb_exit(context)
    }

    /// Whether this libusb build can report hotplug events on this system.
    public var supportsHotplug: Bool {
        libusb_has_capability(UInt32(LIBUSB_CAP_HAS_HOTPLUG.rawValue)) != 0
    }

    /// Every USB device present (root hubs included), described from its descriptors.
    ///
    /// Strings come from sysfs where Linux provides them (no access to the device node needed);
    /// otherwise, with `readStrings`, from the device itself when it can be opened, else nil.
    public func enumerate(readStrings: Bool = true) throws(USBError) -> [USBDeviceDescription] {
        let strings: LibUSBDeviceDescriber.StringSource =
            readStrings ? .sysfsThenDevice(timeoutMilliseconds: stringTimeoutMilliseconds) : .sysfsOnly
        return try withDeviceList { devices in
            devices.compactMap { LibUSBDeviceDescriber.describe($0, strings: strings) }
        }
    }

    /// Opens the device `description` names: by bus and address when it has them (and the ids
    /// must agree), else the first device with its vendor and product id.
    public func open(_ description: USBDeviceDescription) throws(USBError) -> LibUSBDeviceHandle {
        let opened: (OpaquePointer, USBDeviceDescription) = try withDeviceList { devices throws(USBError) in
            for device in devices {
                var descriptor = libusb_device_descriptor()
                guard libusb_get_device_descriptor(device, &descriptor) == 0,
                      descriptor.idVendor == description.vendorID, descriptor.idProduct == description.productID
                else { continue }
                if let bus = description.bus, bus != libusb_get_bus_number(device) { continue }
                if let address = description.address, address != libusb_get_device_address(device) { continue }
                var handle: OpaquePointer?
                let code = libusb_open(device, &handle)
                guard code == 0, let handle else {
                    throw USBError(libusbCode: code, what: "opening \(description)")
                }
                var current = LibUSBDeviceDescriber.describe(device, strings: .sysfsOnly) ?? description
                if current.manufacturer == nil { current.manufacturer = description.manufacturer }
                if current.product == nil { current.product = description.product }
                if current.serialNumber == nil { current.serialNumber = description.serialNumber }
                return (handle, current)
            }
            throw USBError.notFound("no USB device \(description)")
        }
        return LibUSBDeviceHandle(context: self, handle: opened.0, device: opened.1)
    }

    /// Hotplug events for devices matching the ids (nil = any), as an `AsyncStream`.
    ///
    /// With `includeExisting`, devices already present arrive first. The stream ends when the
    /// consumer stops iterating (its task is cancelled) or when the context goes away; ending it
    /// deregisters the callback, and the event thread stops with the last stream.
    public func hotplugEvents(vendorID: UInt16? = nil, productID: UInt16? = nil,
                              includeExisting: Bool = true) throws(USBError) -> AsyncStream<USBHotplugEvent> {
        guard supportsHotplug else {
            throw USBError.other(code: LIBUSB_ERROR_NOT_SUPPORTED.rawValue, name: "hotplug not supported here")
        }
        let (stream, continuation) = AsyncStream.makeStream(of: USBHotplugEvent.self, bufferingPolicy: .unbounded)
        let registration = Unmanaged.passRetained(HotplugRegistration(continuation: continuation))
        var handle: libusb_hotplug_callback_handle = 0
        let events = Int32(LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED.rawValue | LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT.rawValue)
        let flags = includeExisting ? Int32(LIBUSB_HOTPLUG_ENUMERATE.rawValue) : 0
        let code = libusb_hotplug_register_callback(
            context, events, flags,
            vendorID.map(Int32.init) ?? LIBUSB_HOTPLUG_MATCH_ANY,
            productID.map(Int32.init) ?? LIBUSB_HOTPLUG_MATCH_ANY,
            LIBUSB_HOTPLUG_MATCH_ANY,
            { _, device, event, userData in
                // Runs on the event thread (or in register_callback itself for existing devices).
                guard let device, let userData else { return 0 }
                Unmanaged<HotplugRegistration>.fromOpaque(userData).takeUnretainedValue().deliver(device: device, event: event)
                return 0
            },
            registration.toOpaque(), &handle)
        guard code == 0 else {
            registration.release()
            throw USBError(libusbCode: code, what: "libusb_hotplug_register_callback")
        }
        hotplug.withLock { state in
            state.registrations[handle] = registration
            if state.eventLoop == nil { state.eventLoop = EventLoopThread(context: context) }
        }
        let registeredHandle = handle
        continuation.onTermination = { [weak self] _ in
            self?.endHotplug(registeredHandle)
        }
        return stream
    }

    /// Deregisters one hotplug callback; stops the event thread after the last one.
    private func endHotplug(_ handle: libusb_hotplug_callback_handle) {
        let (registration, loop) = hotplug.withLock { state -> (Unmanaged<HotplugRegistration>?, EventLoopThread?) in
            guard let registration = state.registrations.removeValue(forKey: handle) else { return (nil, nil) }
            var loop: EventLoopThread?
            if state.registrations.isEmpty {
                loop = state.eventLoop
                state.eventLoop = nil
            }
            return (registration, loop)
        }
        guard let registration else { return }
        // After deregistration returns, libusb no longer calls the callback with this user data.
        libusb_hotplug_deregister_callback(context, handle)
        registration.release()
        loop?.stop()
    }

    /// Runs `body` over libusb's current device list and frees the list afterwards.
    private func withDeviceList<Result>(
        _ body: ([OpaquePointer]) throws(USBError) -> Result
    ) throws(USBError) -> Result {
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        guard count >= 0, let list else {
            throw USBError(libusbCode: Int32(truncatingIfNeeded: count), what: "listing USB devices")
        }
        defer { libusb_free_device_list(list, 1) }
        let devices = (0..<count).compactMap { list[$0] }
        return try body(devices)
    }
}

/// The Swift side of one hotplug callback registration; passed to libusb as user data.
final class HotplugRegistration: Sendable {
    let continuation: AsyncStream<USBHotplugEvent>.Continuation

    init(continuation: AsyncStream<USBHotplugEvent>.Continuation) {
        self.continuation = continuation
    }

    /// Called from the libusb callback. No blocking libusb calls here: descriptors are cached
    /// and strings are read from sysfs only.
    func deliver(device: OpaquePointer, event: libusb_hotplug_event) {
        if event == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED {
            guard let description = LibUSBDeviceDescriber.describe(device, strings: .sysfsOnly) else { return }
            continuation.yield(.arrived(description))
        } else if event == LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT {
            continuation.yield(.left(bus: libusb_get_bus_number(device), address: libusb_get_device_address(device)))
        }
    }
}

/// A thread running libusb's event loop until stopped.
final class EventLoopThread: @unchecked Sendable {
    // @unchecked: `thread` is written once before the loop can be stopped and read only by
    // `stop()`, which the owner calls exactly once; `running` is atomic.
    private let context: OpaquePointer
    private let running = Atomic<Bool>(true)
    private var thread = pthread_t()

    init(context: OpaquePointer) {
        self.context = context
        let retained = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let loop = Unmanaged<EventLoopThread>.fromOpaque(argument).takeRetainedValue()
            loop.run()
            return nil
        }, retained)
        if result != 0 {
            Unmanaged<EventLoopThread>.fromOpaque(retained).release()
            running.store(false, ordering: .relaxed)
        }
    }

    private func run() {
        while running.load(ordering: .acquiring) {
            // A long wait: `stop()` interrupts it (libusb_interrupt_event_handler), so an idle
            // daemon does not wake up several times a second.
            var timeout = timeval(tv_sec: 60, tv_usec: 0)
            _ = libusb_handle_events_timeout_completed(context, &timeout, nil)
        }
    }

    /// Ends the loop and waits for the thread (never call from the event thread itself).
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        libusb_interrupt_event_handler(context)
        if pthread_equal(pthread_self(), thread) == 0 {
            pthread_join(thread, nil)
        } else {
            pthread_detach(thread)
        }
    }
}

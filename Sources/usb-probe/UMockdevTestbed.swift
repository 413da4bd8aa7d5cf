import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// umockdev's in-process testbed (libumockdev.so.0), loaded with dlopen so that nothing in the
/// package links against umockdev: only this test helper uses it, and only under
/// `umockdev-wrapper` (which preloads libumockdev-preload). The testbed must exist before
/// libusb is initialised.
final class UMockdevTestbed {
    private typealias NewFunction = @convention(c) () -> OpaquePointer?
    private typealias AddFromFileFunction = @convention(c) (OpaquePointer, UnsafePointer<CChar>, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32
    private typealias AddFromStringFunction = @convention(c) (OpaquePointer, UnsafePointer<CChar>, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32
    private typealias LoadPcapFunction = @convention(c) (OpaquePointer, UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32
    private typealias UeventFunction = @convention(c) (OpaquePointer, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Void
    private typealias RemoveFunction = @convention(c) (OpaquePointer, UnsafePointer<CChar>) -> Void
    private typealias UnrefFunction = @convention(c) (OpaquePointer) -> Void

    private let library: UnsafeMutableRawPointer
    private let testbed: OpaquePointer
    private let addFromFile: AddFromFileFunction
    private let addFromString: AddFromStringFunction
    private let loadPcapFunction: LoadPcapFunction
    private let ueventFunction: UeventFunction
    private let removeFunction: RemoveFunction
    private let unref: UnrefFunction

    init() throws {
        guard let library = dlopen("libumockdev.so.0", RTLD_NOW | RTLD_GLOBAL) else {
            throw ProbeFailure.umockdev("cannot load libumockdev.so.0: \(String(cString: dlerror()))")
        }
        self.library = library
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            guard let pointer = dlsym(library, name) else { throw ProbeFailure.umockdev("no symbol \(name)") }
            return unsafeBitCast(pointer, to: type)
        }
        let make = try symbol("umockdev_testbed_new", as: NewFunction.self)
        addFromFile = try symbol("umockdev_testbed_add_from_file", as: AddFromFileFunction.self)
        addFromString = try symbol("umockdev_testbed_add_from_string", as: AddFromStringFunction.self)
        loadPcapFunction = try symbol("umockdev_testbed_load_pcap", as: LoadPcapFunction.self)
        ueventFunction = try symbol("umockdev_testbed_uevent", as: UeventFunction.self)
        removeFunction = try symbol("umockdev_testbed_remove_device", as: RemoveFunction.self)
        unref = try symbol("g_object_unref", as: UnrefFunction.self)
        guard let testbed = make() else { throw ProbeFailure.umockdev("umockdev_testbed_new failed") }
        self.testbed = testbed
    }

    deinit {
        unref(testbed)
    }

    /// Adds the devices described in a `.umockdev` file (sysfs and udev properties).
    func add(from path: String) throws {
        var error: UnsafeMutableRawPointer?
        guard addFromFile(testbed, path, &error) != 0 else { throw ProbeFailure.umockdev("add \(path): \(Self.message(error))") }
    }

    /// Adds only the record of `syspath` from a `.umockdev` file (plugging a device in again
    /// under a hub that is still there).
    func add(from path: String, only syspath: String) throws {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ProbeFailure.umockdev("cannot read \(path)")
        }
        let devicePath = syspath.hasPrefix("/sys") ? String(syspath.dropFirst(4)) : syspath
        guard let record = text.components(separatedBy: "\n\n").first(where: { $0.hasPrefix("P: \(devicePath)\n") }) else {
            throw ProbeFailure.umockdev("no record P: \(devicePath) in \(path)")
        }
        var error: UnsafeMutableRawPointer?
        guard addFromString(testbed, record + "\n", &error) != 0 else {
            throw ProbeFailure.umockdev("add \(devicePath): \(Self.message(error))")
        }
    }

    /// Makes the device at `syspath` answer usbdevfs ioctls from a usbmon capture.
    func loadPcap(syspath: String, path: String) throws {
        var error: UnsafeMutableRawPointer?
        guard loadPcapFunction(testbed, syspath, path, &error) != 0 else {
            throw ProbeFailure.umockdev("load \(path) for \(syspath): \(Self.message(error))")
        }
    }

    /// Sends a uevent ("add", "remove" ...) for the device.
    func uevent(_ syspath: String, action: String) { ueventFunction(testbed, syspath, action) }

    /// Removes the device's sysfs directory (and its /dev node).
    func remove(_ syspath: String) { removeFunction(testbed, syspath) }

    /// GError: { GQuark domain; gint code; gchar *message }.
    private static func message(_ error: UnsafeMutableRawPointer?) -> String {
        guard let error else { return "unknown error" }
        let message = error.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self)
        return message.map { String(cString: $0) } ?? "unknown error"
    }
}

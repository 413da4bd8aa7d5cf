import CaptureFormats
import Foundation
import Transport

/// A usbmon capture (read with CaptureFormats' `USBMonReader`) as the transfers a program saw, for the
/// exchange fake: each Submit paired with its Complete, in completion order.
struct UsbmonCapture {
    /// A transfer as the program saw it.
    enum Transfer {
        case controlIn(setup: [UInt8], data: [UInt8])
        case controlOut(setup: [UInt8], data: [UInt8])
        case input(endpoint: UInt8, data: [UInt8])
        case output(endpoint: UInt8, data: [UInt8])
    }

    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    let events: [USBMonEvent]

    init(url: URL) throws {
        events = try USBMonReader(path: url.path).readAll()
    }

    /// Transfers in completion order.
    var transfers: [Transfer] {
        var submits: [UInt64: USBMonEvent] = [:]
        var result: [Transfer] = []
        for event in events {
            if event.type == .submit {
                submits[event.urbID] = event
                continue
            }
            guard event.type == .complete, let submit = submits.removeValue(forKey: event.urbID) else { continue }
            switch submit.transferType {
            case .control:
                let setup = submit.setup?.bytes ?? []
                if submit.setup?.isDeviceToHost ?? false {
                    result.append(.controlIn(setup: setup, data: event.data))
                } else {
                    result.append(.controlOut(setup: setup, data: submit.data))
                }
            default:
                if submit.endpoint & 0x80 != 0 {
                    result.append(.input(endpoint: submit.endpoint, data: event.data))
                } else {
                    result.append(.output(endpoint: submit.endpoint, data: submit.data))
                }
            }
        }
        return result
    }

    /// The device as its captured descriptors describe it.
    func deviceDescription() -> USBDeviceDescription? {
        USBCaptureDevices(events: events).devices.lazy.compactMap { $0.description() }.first
    }
}

/// Where the test fixtures are: every adapter's captures, in `Tests/AdapterTests/Captures/<adapter-id>/`.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AdapterTests/Captures")

    static func url(_ relativePath: String) -> URL {
        directory.appendingPathComponent(relativePath)
    }
}

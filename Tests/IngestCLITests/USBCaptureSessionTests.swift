import BuiltinAdapters
import CaptureFormats
import Foundation
import Synchronization
import Testing
import Transport
@testable import IngestCLI
@testable import IngestRuntime

/// `ingestd capture --usb` without hardware: the capture's session code runs on a replayed or
/// scripted device through the recorder, and what it writes must replay to the same result.
@Suite struct USBCaptureSessionTests {
    static let omronSession = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("AdapterTests/Captures/omron-hj720it/pedometerLog1-session.pcapng").path

    @Test func anOmronSessionRecordedWhileReplayingDecodesToTheSameSamples() async throws {
        let scenario = try Scenario()
        let path = scenario.directory.appendingPathComponent("omron.pcapng").path
        let replay = try ReplayUSBDevice.open(path: Self.omronSession)
        let start = try #require(try USBMonReader(path: Self.omronSession).next()?.timestamp)
        let clock: @Sendable () -> Int64 = { replay.timestamp ?? start }
        let recorder = USBMonRecorder(writer: try PcapNGWriter(path: path, linkType: LinkType.usbLinuxMMapped),
                                      bus: 1, address: 5, clock: clock)
        let adapter = try #require(BuiltinAdapters.usb.first { $0.descriptor.matches(replay.device) })
        // The fixture ends with the memory clear (CTD) the session sends when asked to.
        let session = USBCaptureSession(adapter: adapter, options: ["clear-after-sync": "true"],
                                        timeZone: TimeZone(identifier: "UTC")!, clock: { Date(microsecondsSince1970: clock()) })
        let ended = session.run(replay, recorder: recorder, shouldStop: { false }, progress: { _ in })
        try recorder.close()
        #expect(ended == nil)
        #expect(replay.isFinished)

        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let events = try USBMonReader(path: path).readAll()
        // The synthetic enumeration first: GET_DESCRIPTOR(DEVICE), then (CONFIGURATION).
        #expect(events.first?.setup == USBSetupPacket(requestType: 0x80, request: 0x06, value: 0x0100, index: 0, length: 18))
        #expect(events.dropFirst(2).first?.setup?.requestedDescriptor?.type == 0x02)
        #expect(USBCaptureDevices(events: events).devices.map(\.description) == ["bus 1 device 5 0590:0028 (\(events.count) events)"])

        let original = await scenario.run(["decode", Self.omronSession, "--tz", "UTC"], withStore: false)
        let recorded = await scenario.run(["decode", path, "--tz", "UTC"], withStore: false)
        #expect(original.status == 0 && recorded.status == 0, "\(recorded.stderr)")
        #expect(original.stdout.count == 68)
        #expect(recorded.stdout == original.stdout)
        #expect(recorded.stderr.contains("  USB device 0590:0028 bus 001 address 005 → adapter omron-hj720it"), "\(recorded.stderr)")
    }

    @Test func withoutAnAdapterEveryInputEndpointIsReadUntilTheDeviceGoes() async throws {
        let device = USBDeviceDescription(
            vendorID: 0x1234, productID: 0x5678, bus: 2, address: 9, product: "Mystery Band", interfaces: [
                USBInterfaceDescription(number: 0, interfaceClass: 0xFF, endpoints: [
                    USBEndpointDescription(address: 0x81, transferType: .interrupt, maxPacketSize: 16),
                    USBEndpointDescription(address: 0x01, transferType: .interrupt, maxPacketSize: 16),
                ]),
            ])
        let reports: [Result<[UInt8], USBError>] = [
            .success([0x01, 0x02, 0x03]), .failure(.timeout(endpoint: 0x81)), .success([0x04, 0x05]), .failure(.noDevice),
        ]
        let fake = ScriptedInputDevice(device: device, reads: reports)
        let recorder = USBMonRecorder(writer: PcapNGWriter(linkType: LinkType.usbLinuxMMapped), bus: 2, address: 9)
        let session = USBCaptureSession(adapter: nil, options: [:], timeZone: TimeZone(identifier: "UTC")!)
        let ended = session.run(fake, recorder: recorder, shouldStop: { false }, progress: { _ in })
        #expect(ended == "reading endpoint 0x81: the device is gone")
        #expect(fake.claims == ["claim 0 detach", "release 0"])

        let replay = try ReplayUSBDevice.replaying(try USBMonReader(bytes: recorder.bytes).readAll())
        #expect(replay.device.product == "Mystery Band")
        #expect(try replay.read(endpoint: 0x81, length: 64, timeout: .seconds(1)) == [0x01, 0x02, 0x03])
        #expect(throws: USBError.timeout(endpoint: 0x81)) { try replay.read(endpoint: 0x81, length: 64, timeout: .seconds(1)) }
        #expect(try replay.read(endpoint: 0x81, length: 64, timeout: .seconds(1)) == [0x04, 0x05])
        #expect(throws: USBError.noDevice) { try replay.read(endpoint: 0x81, length: 64, timeout: .seconds(1)) }
    }
}

/// A device whose IN endpoint answers from a script; it notes claims and releases.
final class ScriptedInputDevice: USBDeviceHandle, @unchecked Sendable {
    let device: USBDeviceDescription
    private let state: Mutex<(reads: [Result<[UInt8], USBError>], claims: [String])>

    init(device: USBDeviceDescription, reads: [Result<[UInt8], USBError>]) {
        self.device = device
        state = Mutex((reads, []))
    }

    var claims: [String] { state.withLock { $0.claims } }

    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        state.withLock { $0.claims.append("claim \(number)" + (detachKernelDriver ? " detach" : "")) }
    }

    func releaseInterface(_ number: UInt8) throws(USBError) {
        state.withLock { $0.claims.append("release \(number)") }
    }

    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        throw .stall(endpoint: 0)
    }

    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int { data.count }

    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        let next = state.withLock { state -> Result<[UInt8], USBError> in
            state.reads.isEmpty ? .failure(.noDevice) : state.reads.removeFirst()
        }
        return try next.get()
    }

    func close() {}
}

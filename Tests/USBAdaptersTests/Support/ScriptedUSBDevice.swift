import Foundation
import Synchronization
import TestSupport
import Transport

/// A clock the tests move: the scripted device advances it on every read.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date) { current = Mutex(start) }

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

/// A fake USB device that plays a script in order: each step is an expected write (compared byte for byte), a
/// control transfer, or what the next read returns. Anything else is recorded in `problems` and fails the call.
final class ScriptedUSBDevice: USBDeviceHandle {
    enum Step: CustomStringConvertible {
        case write([UInt8])
        case control(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8], reply: [UInt8])
        case read([UInt8])
        case timeout
        case gone

        var description: String {
            switch self {
            case .write(let bytes): "write " + OmronExchangeDevice.hex(bytes)
            case .control(let type, let request, let value, let index, let data, _):
                String(format: "control %02x %02x %04x %04x ", type, request, value, index) + OmronExchangeDevice.hex(data)
            case .read(let bytes): "read " + OmronExchangeDevice.hex(bytes)
            case .timeout: "timeout"
            case .gone: "device gone"
            }
        }
    }

    let device: USBDeviceDescription
    private var steps: [Step]
    private let clock: TestClock?
    private let secondsPerRead: TimeInterval
    /// What a read gets once the script is played.
    private let afterScript: USBError
    /// False to stand for a capture's playback (`USBDeviceHandle.answersWrites`); a live device by default.
    var answersWrites = true
    private(set) var problems: [String] = []
    private(set) var written: [[UInt8]] = []
    private(set) var claimed: [(interface: UInt8, detach: Bool)] = []
    private(set) var released: [UInt8] = []
    private(set) var reads: [(endpoint: UInt8, length: Int)] = []

    init(device: USBDeviceDescription, steps: [Step], clock: TestClock? = nil, secondsPerRead: TimeInterval = 0.25,
         afterScript: USBError = .timeout(endpoint: 0x81)) {
        self.device = device
        self.steps = steps
        self.clock = clock
        self.secondsPerRead = secondsPerRead
        self.afterScript = afterScript
    }

    var isPlayed: Bool { steps.isEmpty }
    var remaining: [String] { steps.map(\.description) }

    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) {
        claimed.append((number, detachKernelDriver))
    }

    func releaseInterface(_ number: UInt8) throws(USBError) { released.append(number) }

    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        let call = Step.control(requestType: requestType, request: request, value: value, index: index, data: data, reply: [])
        guard case .control(let type, let expectedRequest, let expectedValue, let expectedIndex, let expectedData, let reply)? = steps.first,
              type == requestType, expectedRequest == request, expectedValue == value, expectedIndex == index,
              expectedData == data else {
            problems.append("unexpected \(call); next step: \(steps.first?.description ?? "none")")
            throw .io("unexpected control transfer")
        }
        steps.removeFirst()
        return reply
    }

    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        written.append(data)
        guard case .write(let expected)? = steps.first else {
            if steps.isEmpty { return data.count }
            problems.append("unexpected write \(OmronExchangeDevice.hex(data)); next step: \(steps[0])")
            throw .io("unexpected write")
        }
        guard expected == data else {
            problems.append("wrote \(OmronExchangeDevice.hex(data)) where the script has \(OmronExchangeDevice.hex(expected))")
            throw .io("unexpected write")
        }
        steps.removeFirst()
        return data.count
    }

    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        reads.append((endpoint, length))
        clock?.advance(by: secondsPerRead)
        guard let step = steps.first else { throw afterScript }
        switch step {
        case .read(let bytes):
            steps.removeFirst()
            return bytes
        case .timeout:
            steps.removeFirst()
            throw .timeout(endpoint: endpoint)
        case .gone:
            steps.removeFirst()
            throw .noDevice
        case .write, .control:
            problems.append("read while the script expects \(step)")
            throw .timeout(endpoint: endpoint)
        }
    }

    func close() {}
}

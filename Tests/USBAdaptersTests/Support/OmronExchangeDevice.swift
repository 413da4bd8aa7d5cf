import Foundation
import TestSupport
import Transport

/// A fake HJ-720IT that answers each request with the input reports a capture shows for the same request.
///
/// Requests are mode changes (HID SET_REPORT data) and complete commands (the valid bytes of the OUT reports up
/// to the first short report; a command of zero bytes is the clearing block). Each request keeps its recorded
/// answers in capture order; a repeated request gets the next one, the last one again when they run out.
/// An answer is queued for the following reads; a read with nothing queued times out. A request the capture
/// never made fails with `replayExhausted`.
final class OmronExchangeDevice: USBDeviceHandle {
    let device: USBDeviceDescription
    /// Recorded answers (lists of input reports) per request key.
    var answers: [String: [[[UInt8]]]]
    /// Every request and every `deliver` marker, in order: `mode 01 02`, `VER00`, `GTD 00 00 00 01 01`, ….
    private(set) var log: [String] = []
    private(set) var claimed: [UInt8] = []
    private(set) var unanswered: [String] = []
    private var used: [String: Int] = [:]
    private var queued: [[UInt8]] = []
    private var outgoing: [UInt8] = []

    init(device: USBDeviceDescription, answers: [String: [[[UInt8]]]]) {
        self.device = device
        self.answers = answers
    }

    /// Reads a converted fixture.
    convenience init(capture url: URL) throws {
        let capture = try UsbmonCapture(url: url)
        guard let description = capture.deviceDescription() else {
            throw UsbmonCapture.FormatError(description: "no descriptors in \(url.lastPathComponent)")
        }
        self.init(device: description, answers: Self.answers(from: capture.transfers))
    }

    static func key(mode data: [UInt8]) -> String { "mode " + hex(data) }
    static func key(command: [UInt8]) -> String {
        command.allSatisfy { $0 == 0 } ? "clear" : printable(command)
    }

    /// `VER00`, `GTD 00 00 01 02 03`: the verb as text, the rest as hex (text when it is all digits).
    static func printable(_ command: [UInt8]) -> String {
        let verb = String(decoding: command.prefix(3), as: UTF8.self)
        let rest = Array(command.dropFirst(3))
        if rest.allSatisfy({ (0x30...0x39).contains($0) }) { return verb + String(decoding: rest, as: UTF8.self) }
        return verb + " " + hex(rest)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }

    /// Groups the input reports of a capture by the request they answer. Replies end at a short report (fewer than
    /// 7 valid bytes) or, for PRF, at 14 bytes; they are matched to commands first-in first-out, so a reply that
    /// arrives after the next command was already sent still goes to its own command. Reports with no valid bytes
    /// (or an impossible count) go with the latest request.
    static func answers(from transfers: [UsbmonCapture.Transfer]) -> [String: [[[UInt8]]]] {
        var answers: [String: [[[UInt8]]]] = [:]
        var latest: String?
        var waiting: [String] = []
        var command: [UInt8] = []
        var reply: [[UInt8]] = []
        var replyBytes: [UInt8] = []
        func start(_ key: String) {
            answers[key, default: []].append([])
            latest = key
        }
        func attach(_ reports: [[UInt8]], to key: String?) {
            guard let key, let last = answers[key]?.indices.last else { return }
            answers[key]?[last] += reports
        }
        for transfer in transfers {
            switch transfer {
            case .controlOut(let setup, let data) where setup.first == 0x21:
                start(key(mode: data))
                waiting = []
            case .output(_, let report):
                guard let count = report.first.map(Int.init), count <= 7, report.count > count else { continue }
                command += report[1..<(1 + count)]
                if count < 7 {
                    let requestKey = key(command: command)
                    start(requestKey)
                    if requestKey == "clear" { waiting = [] } else { waiting.append(requestKey) }
                    command = []
                }
            case .input(_, let report):
                guard let count = report.first.map(Int.init), count >= 1, count <= 7 else {
                    attach([report], to: latest)
                    continue
                }
                reply.append(report)
                replyBytes += report[1..<(1 + count)]
                let expected = waiting.first?.hasPrefix("PRF") == true ? 14 : nil
                if count < 7 || replyBytes.count == expected {
                    attach(reply, to: waiting.isEmpty ? latest : waiting.removeFirst())
                    reply = []
                    replyBytes = []
                }
            default:
                continue
            }
        }
        return answers
    }

    /// Marks the point where the session handed its batch over (called from the test's `deliver`).
    func markDelivery() { log.append("deliver") }

    private func answer(_ key: String) throws(USBError) {
        log.append(key)
        guard let recorded = answers[key], !recorded.isEmpty else {
            unanswered.append(key)
            throw .replayExhausted(key)
        }
        let index = min(used[key, default: 0], recorded.count - 1)
        used[key] = index + 1
        queued += recorded[index]
    }

    func claimInterface(_ number: UInt8, detachKernelDriver: Bool) throws(USBError) { claimed.append(number) }
    func releaseInterface(_ number: UInt8) throws(USBError) {}

    func controlTransfer(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, data: [UInt8],
                         length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        guard requestType == 0x21, request == 0x09, value == 0x0300 else {
            throw .io(String(format: "unexpected control request %02x %02x %04x", requestType, request, value))
        }
        try answer(Self.key(mode: data))
        return []
    }

    func write(endpoint: UInt8, data: [UInt8], timeout: Duration) throws(USBError) -> Int {
        guard endpoint & 0x80 == 0, let count = data.first.map(Int.init), count <= 7, data.count == 8 else {
            throw .io("unexpected write \(Self.hex(data)) to \(endpoint)")
        }
        outgoing += data[1..<(1 + count)]
        if count < 7 {
            let command = outgoing
            outgoing = []
            try answer(Self.key(command: command))
        }
        return data.count
    }

    func read(endpoint: UInt8, length: Int, timeout: Duration) throws(USBError) -> [UInt8] {
        guard !queued.isEmpty else { throw .timeout(endpoint: endpoint) }
        return queued.removeFirst()
    }

    func close() {}
}

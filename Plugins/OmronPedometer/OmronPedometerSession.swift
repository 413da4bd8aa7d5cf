import AdapterKit
import Foundation
import HealthModel
import Transport

/// Why a session with the pedometer ended without its data.
public enum OmronSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device has no interface with an interrupt IN and an interrupt OUT endpoint.
    case noReportInterface(device: String)
    /// The device never answered the clearing block with "OK" after a mode change.
    case noAnswerToClear(attempts: Int)
    /// No (complete) reply within the timeout, `attempts` times.
    case noReply(command: String, attempts: Int)
    /// The device answered "NO" every time.
    case refused(command: String, attempts: Int)
    /// The last of `attempts` replies was unusable.
    case badReply(command: String, attempts: Int, error: OmronProtocolError)
    /// A checked reply whose content cannot be read.
    case undecodable(command: String, error: OmronDecodingError)
    /// The adapter options are wrong.
    case options(AdapterOptionError)

    public var description: String {
        switch self {
        case .noReportInterface(let device):
            "omron-hj720it: \(device) has no HID interface with interrupt IN and OUT endpoints"
        case .noAnswerToClear(let attempts):
            "omron-hj720it: no OK after \(attempts) clearing blocks"
        case .noReply(let command, let attempts):
            "omron-hj720it: no reply to \(command) after \(attempts) attempts"
        case .refused(let command, let attempts):
            "omron-hj720it: the device answered NO to \(command) \(attempts) times"
        case .badReply(let command, let attempts, let error):
            "omron-hj720it: no usable reply to \(command) after \(attempts) attempts; last: \(error)"
        case .undecodable(let command, let error):
            "omron-hj720it: reply to \(command): \(error)"
        case .options(let error):
            "omron-hj720it: \(error)"
        }
    }
}

/// One download from one HJ-720IT: mode selection, version, serial number, day count, the day blocks; one
/// committed batch; then, only with `clear-after-sync=true`, only after the commit and only when the receipt
/// says no sample is merely held pending a grant, the clear command.
/// When the history read fails part-way, the days read completely are still delivered (never cleared) before
/// the failure is thrown.
///
/// Day 0 is the day of the download in the context's time zone; each hour with steps becomes a `StepCount`
/// sample with sync identifier `omron-hj720it:<serial>:<date>T<hour>:steps` and the step count as sync version
/// (counts of a day only grow, so a later read of the same hour replaces an earlier partial one and a re-read
/// of unchanged history changes nothing). Each day with a distance becomes a `DistanceWalkingRunning`
/// sample in metres over the whole day.
public final class OmronPedometerSession: USBAdapterSession {
    /// Times a command is sent before the session gives up.
    public static let attempts = 3

    private let context: AdapterContext
    private let configuration: Result<OmronPedometerConfiguration, AdapterOptionError>
    private let now: @Sendable () -> Date

    public init(context: AdapterContext, configuration: Result<OmronPedometerConfiguration, AdapterOptionError>,
                now: @escaping @Sendable () -> Date) {
        self.context = context
        self.configuration = configuration
        self.now = now
    }

    public func run(_ device: any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
                    shouldStop: () -> Bool) throws {
        let configuration: OmronPedometerConfiguration
        switch self.configuration {
        case .success(let value): configuration = value
        case .failure(let error): throw OmronSessionError.options(error)
        }
        let link = try OmronLink(device: device)
        try link.open()
        defer { link.close() }

        try link.selectPedometerMode()
        try link.clear()
        let version = try decode(.version, link.exchange(.version), OmronPedometerDecoder.version)
        let serial = try decode(.serialNumber, link.exchange(.serialNumber), OmronPedometerDecoder.serialNumber)
        let count = try decode(.dataCount, link.exchange(.dataCount), OmronPedometerDecoder.dataCount)
        let wanted = configuration.days == .all ? count.storedDays : count.untransferredDays
        let dayCount = min(wanted, count.storedDays, 255)

        let builder = OmronRecordBuilder(context: context, serial: serial, version: version,
                                         distanceUnit: configuration.distanceUnit, today: now(), dayZero: configuration.today)
        var output = AdapterOutput()
        var complete = true
        // A failure part-way through the history (the device pulled out, a reply that never comes) keeps the days
        // read completely before it: they are delivered, nothing is cleared, and the failure is reported.
        var failure: (any Error)?
        for day in 0..<dayCount {
            if shouldStop() {
                complete = false
                break
            }
            do {
                var hours: [OmronHour] = []
                for block in 1...3 {
                    let command = OmronCommand.dayBlock(day: UInt8(day), block: UInt8(block))
                    hours += try decode(command, link.exchange(command)) { (body) throws(OmronDecodingError) in
                        try OmronPedometerDecoder.hours(body, block: block)
                    }
                }
                let body = try link.exchange(OmronCommand.dayBlock(day: UInt8(day), block: 4))
                builder.addHours(hours, day: day, into: &output)
                do {
                    builder.addSummary(try OmronPedometerDecoder.summary(body), day: day, into: &output)
                } catch {
                    output.reject(context.source, reason: "bad-summary", detail: "day \(day): \(error)", time: now())
                }
            } catch {
                failure = error
                complete = false
                break
            }
        }

        if let failure {
            defer { if failure as? USBError != .noDevice { link.endQuietly() } }
            if !output.records.isEmpty { _ = try deliver(output) }
            throw failure
        }
        let receipt: DeliveryReceipt
        do {
            receipt = try deliver(output)
        } catch {
            link.endQuietly()
            throw error
        }
        // The commit is done: only now may the device forget what it gave, and only when none of
        // it is merely held waiting for the user's grant.
        if configuration.clearAfterSync && complete && receipt.deviceMayForget {
            _ = try link.exchange(.clearData)
        }
        link.endQuietly()
    }

    private func decode<Value>(_ command: OmronCommand, _ body: [UInt8],
                               _ decoder: ([UInt8]) throws(OmronDecodingError) -> Value) throws(OmronSessionError) -> Value {
        do {
            return try decoder(body)
        } catch {
            throw .undecodable(command: command.description, error: error)
        }
    }
}

/// Turns the device's days into samples.
struct OmronRecordBuilder {
    let context: AdapterContext
    let serial: String
    let device: Device
    let distanceUnit: OmronDistanceUnit
    let calendar: Calendar
    let today: Date

    init(context: AdapterContext, serial: String, version: String, distanceUnit: OmronDistanceUnit, today now: Date,
         dayZero: CalendarDate? = nil) {
        self.context = context
        self.serial = serial
        self.device = Device(name: "Omron HJ-720IT", manufacturer: "Omron", model: version, localIdentifier: serial)
        self.distanceUnit = distanceUnit
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = context.timeZone
        self.calendar = calendar
        self.today = dayZero.flatMap { calendar.date(from: $0.dateComponents) } ?? calendar.startOfDay(for: now)
    }

    func dayStart(_ day: Int) -> Date {
        calendar.date(byAdding: .day, value: -day, to: today) ?? today.addingTimeInterval(Double(-day) * 86_400)
    }

    func dateText(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    func metadata(syncIdentifier: String, version: Int) -> Metadata {
        Metadata(syncIdentifier: syncIdentifier, syncVersion: version, timeZone: context.timeZone.identifier,
                 deviceSerialNumber: serial)
    }

    func addHours(_ hours: [OmronHour], day: Int, into output: inout AdapterOutput) {
        let start = dayStart(day)
        let date = dateText(start)
        for hour in hours where hour.steps > 0 {
            let hourStart = calendar.date(bySettingHour: hour.hour, minute: 0, second: 0, of: start)
                ?? start.addingTimeInterval(Double(hour.hour) * 3600)
            var metadata = metadata(syncIdentifier: "\(OmronPedometerAdapter.identifier):\(serial):\(date)T"
                                        + String(format: "%02d", hour.hour) + ":steps",
                                    version: hour.steps)
            if hour.aerobicSteps > 0 {
                metadata.entries["IngestOmronAerobicSteps"] = .number(Double(hour.aerobicSteps))
            }
            output.records.append(.sample(QuantitySample(
                type: .stepCount, quantity: Quantity(value: Double(hour.steps), unit: .count),
                start: hourStart, end: hourStart.addingTimeInterval(3600), source: context.source,
                device: device, metadata: metadata)))
        }
    }

    func addSummary(_ summary: OmronDailySummary, day: Int, into output: inout AdapterOutput) {
        guard summary.distanceHundredths > 0 else {
            output.skip("day without distance")
            return
        }
        let start = dayStart(day)
        let end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
        var metadata = metadata(syncIdentifier: "\(OmronPedometerAdapter.identifier):\(serial):\(dateText(start)):distance",
                                version: summary.distanceHundredths)
        metadata.entries["IngestOmronTotalSteps"] = .number(Double(summary.totalSteps))
        metadata.entries["IngestOmronAerobicSteps"] = .number(Double(summary.aerobicSteps))
        metadata.entries["IngestOmronAerobicWalkingMinutes"] = .number(Double(summary.aerobicWalkingMinutes))
        metadata.entries["IngestOmronKilocalories"] = .number(Double(summary.kilocalories))
        metadata.entries["IngestOmronFatBurnedGrams"] = .number(Double(summary.fatBurnedDecigrams) / 10)
        let metres = Double(summary.distanceHundredths) / 100 * distanceUnit.metres
        output.records.append(.sample(QuantitySample(
            type: .distanceWalkingRunning, quantity: Quantity(value: metres, unit: .meter),
            start: start, end: end, source: context.source, device: device, metadata: metadata)))
    }
}

/// The HID conversation: the interface and its two interrupt endpoints, mode selection, the clearing block
/// and command/reply exchanges with retries.
final class OmronLink {
    static let pedometerMode: [UInt8] = [0x01, 0x02]
    static let readTimeout: Duration = .seconds(2)
    static let writeTimeout: Duration = .seconds(1)

    let device: any USBDeviceHandle
    let interface: UInt8
    let inEndpoint: UInt8
    let outEndpoint: UInt8
    let readLength: Int

    init(device: any USBDeviceHandle) throws(OmronSessionError) {
        let candidates = device.device.interfaces.sorted { ($0.isHID ? 0 : 1) < ($1.isHID ? 0 : 1) }
        for candidate in candidates {
            let reports = candidate.endpoints.filter { $0.transferType == .interrupt }
            if let input = reports.first(where: \.isInput), let output = reports.first(where: { !$0.isInput }) {
                self.device = device
                self.interface = candidate.number
                self.inEndpoint = input.address
                self.outEndpoint = output.address
                self.readLength = max(Int(input.maxPacketSize), OmronReport.size)
                return
            }
        }
        throw .noReportInterface(device: device.device.description)
    }

    func open() throws(USBError) {
        try device.claimInterface(interface, detachKernelDriver: true)
    }

    func close() {
        try? device.releaseInterface(interface)
    }

    /// HID SET_REPORT of feature report 0 with the pedometer mode.
    func selectPedometerMode() throws(USBError) {
        _ = try device.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0300, index: UInt16(interface),
                                       data: Self.pedometerMode, length: Self.pedometerMode.count,
                                       timeout: Self.writeTimeout)
    }

    /// Sends the block of zero bytes that follows a mode change until the device answers "OK".
    func clear(attempts: Int = 5) throws {
        for _ in 0..<attempts {
            try send([UInt8](repeating: 0, count: 12))
            for _ in 0..<4 {
                guard let report = try readReport() else { break }
                if let payload = try? OmronReport.payload(of: report), payload.starts(with: [0x4F, 0x4B]) {
                    return
                }
            }
        }
        throw OmronSessionError.noAnswerToClear(attempts: attempts)
    }

    /// Sends `command` and returns the checked body of its "OK" reply, resending on silence, "NO" and
    /// unusable replies.
    func exchange(_ command: OmronCommand) throws -> [UInt8] {
        var lastError: OmronProtocolError?
        var refusals = 0
        for _ in 0..<OmronPedometerSession.attempts {
            try send(command.bytes)
            var assembler = OmronReplyAssembler(command: command)
            var reply: [UInt8]?
            do {
                while reply == nil {
                    guard let report = try readReport() else { break }
                    reply = try assembler.add(report: report)
                }
                guard let reply else { continue }
                switch try OmronReply.parse(reply, for: command) {
                case .ok(let body): return body
                case .status: return []
                case .refused: refusals += 1
                }
            } catch let error as OmronProtocolError {
                lastError = error
            }
        }
        if let lastError {
            throw OmronSessionError.badReply(command: command.description, attempts: OmronPedometerSession.attempts,
                                             error: lastError)
        }
        if refusals > 0 {
            throw OmronSessionError.refused(command: command.description, attempts: refusals)
        }
        throw OmronSessionError.noReply(command: command.description, attempts: OmronPedometerSession.attempts)
    }

    /// Ends the session (the device switches off); a missing answer does not matter any more.
    func endQuietly() {
        _ = try? exchange(.end)
    }

    func send(_ message: [UInt8]) throws(USBError) {
        for report in OmronReport.reports(for: message) {
            _ = try device.write(endpoint: outEndpoint, data: report, timeout: Self.writeTimeout)
        }
    }

    /// One input report, or nil when none came in time.
    func readReport() throws(USBError) -> [UInt8]? {
        do {
            return try device.read(endpoint: inEndpoint, length: readLength, timeout: Self.readTimeout)
        } catch .timeout {
            return nil
        }
    }
}

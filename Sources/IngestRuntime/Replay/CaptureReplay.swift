import AdapterKit
import BLEWire
import CaptureFormats
import Foundation
import HealthModel
import Transport

/// Runs a captured device log through the same adapter code a live device uses:
/// capture reader → HCI/L2CAP/ATT reconstruction → adapter router → records.
public struct CaptureReplay {
    var adapters: [any BLEAdapter]
    var forcedAdapterID: String?
    var timeZone: TimeZone
    /// Records are handed out in batches of about this many.
    var batchSize = 1000
    /// What conversations remember between the captured connections of one replay.
    public var memory: any DeviceMemory = EphemeralDeviceMemory()
    /// Adapter configuration (`--adapter-option`), given to conversations.
    public var options: [String: String] = [:]
    /// The keys of devices that encrypt their advertisements (the store's and `--key`).
    public var keys = AdvertisementKeys()
    /// Called every 4,096 capture records with the bytes read and the records read so far
    /// (`decode`'s progress line); not called for usbmon captures, which are read before replay.
    public var progress: ((_ bytesRead: Int, _ recordsRead: Int) -> Void)?

    public init(adapters: [any BLEAdapter], forcedAdapterID: String?, timeZone: TimeZone, batchSize: Int = 1000) {
        self.adapters = adapters
        self.forcedAdapterID = forcedAdapterID
        self.timeZone = timeZone
        self.batchSize = batchSize
    }

    /// What a replay saw, for the summary on stderr.
    public struct Summary {
        var records = 0
        var statistics = TraceStatistics()
        var warnings: [CaptureWarning] = []
        var samplesPerType: [String: Int] = [:]
        var correlations = 0
        var rejected: [String: Int] = [:]
        var rejectionExamples: [String: String] = [:]
        /// The rejections in order, the first ``maximumRejectionLog`` of them.
        var rejectionLog: [AdapterRejection] = []
        static let maximumRejectionLog = 10_000
        var skipped: [String: Int] = [:]
        /// What the sessions explained (a missing or wrong key), the first ``maximumExplanations``.
        var explanations: [String] = []
        static let maximumExplanations = 1_000
        /// Matched devices beyond the router's bound, their sessions ended and forgotten.
        var matchedForgotten = 0
        var unmatched: [BLEAddress: BLEDeviceTraits] = [:]
        /// Unmatched devices beyond the router's bound, not listed.
        var unmatchedForgotten = 0
        var matched: [BLEAddress: String] = [:]
        var matchedUSB: [USBSessionReport] = []
        var unmatchedUSB: [USBDeviceDescription] = []
        var isUSB = false
        /// Conversations run against captured connections (``ConversingAdapter``s).
        var conversations: [ConversationReport] = []
        /// The newest battery charge each device said, by source and device key (one per
        /// device the router holds, so bounded as the devices are).
        var batteryByDevice: [String: DeviceBattery] = [:]

        /// The newest battery charge of each device that said one, by source and device.
        public var batteries: [DeviceBattery] {
            batteryByDevice.values.sorted { ($0.source, $0.deviceKey) < ($1.source, $1.deviceKey) }
        }
    }

    /// Whether `path` is a usbmon capture (pcap/pcapng with link type 189 or 220).
    public static func isUSBCapture(path: String) -> Bool {
        guard let reader = try? CaptureFile.open(path: path), let first = try? reader.next(),
              case .linkLayerFrame(let linkType) = first.content else { return false }
        return USBMonHeaderLayout(linkType: linkType) != nil
    }

    /// Whether `path` starts like a capture file (btsnoop, pcap, pcapng) rather than JSON lines.
    public static func isCapture(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let prefix = (try? handle.read(upToCount: 16)) ?? Data()
        return CaptureFormat.sniff(Array(prefix)) != nil
    }

    /// How one replayed USB device went.
    struct USBSessionReport {
        var device: USBDeviceDescription
        var adapter: String
        /// The session's writes that the capture does not have (tolerant replay).
        var writesNotInCapture = 0
        /// Why the session ended early, when it did (the capture's end is the normal end).
        var failure: String?
    }

    /// Replays a usbmon capture: each captured device that a USB adapter matches (or the one
    /// `forcedDevice` names) gets that adapter's session, driven by the capture instead of libusb.
    /// The replay is tolerant (`USBReplayMode.tolerant`): captures made by other software, with
    /// their own start-up and extra requests, replay as long as they hold the answers the session
    /// asks for. A session that fails ends alone; the summary says why.
    public func runUSB(path: String, adapters usbAdapters: [any USBAdapter], forcedDevice: (UInt16, UInt16)?,
                options: [String: String], deliver: ([HealthRecord], _ deviceKeys: [String]) throws -> DeliveryReceipt) throws -> Summary {
        let reader: USBMonReader
        do {
            reader = try USBMonReader(path: path)
        } catch {
            throw RuntimeError.unreadableCapture(path: path, reason: error.description)
        }
        // A damaged block ends the capture there: the sessions still replay what came before it
        // (as for btsnoop), and the damage is reported after their records were delivered.
        var events: [USBMonEvent] = []
        var damage: USBMonError?
        do {
            while let event = try reader.next() { events.append(event) }
        } catch {
            damage = error
        }
        var summary = Summary()
        summary.isUSB = true
        summary.records = events.count
        summary.warnings = reader.warnings
        let captured = USBCaptureDevices(events: events)
        var targets: [(USBCaptureDevice, USBDeviceDescription)] = []
        if let (vendor, product) = forcedDevice {
            do {
                let device = try captured.select(vendorID: vendor, productID: product)
                if let description = device.description(vendorID: vendor, productID: product) {
                    targets.append((device, description))
                }
            } catch {
                throw RuntimeError.unreadableCapture(path: path, reason: error.description)
            }
        } else {
            for device in captured.devices {
                guard let description = device.description() else { continue }
                targets.append((device, description))
            }
        }
        let runner = USBSessionRunner(adapters: usbAdapters, options: options, timeZone: timeZone)
        for (device, description) in targets {
            guard let adapter = try runner.adapter(for: description, forcedID: forcedAdapterID) else {
                summary.unmatchedUSB.append(description)
                continue
            }
            var report = USBSessionReport(device: description, adapter: adapter.descriptor.id)
            let handle = ReplayUSBDevice(events: events, bus: device.bus, address: device.address, device: description,
                                         mode: .tolerant)
            let clock: @Sendable () -> Date = {
                handle.timestamp.map { Date(microsecondsSince1970: $0) } ?? Date()
            }
            // A batch the store could not take stops the replay; a session's own failure ends only it.
            var deliveryFailure: (any Error)?
            do {
                try runner.run(adapter, device: description, clock: clock, open: { handle }, deliver: { output in
                    var collected = output
                    do {
                        return try absorb(&collected, into: &summary) { try deliver($0, description.ownerKeys) }
                    } catch {
                        deliveryFailure = error
                        throw error
                    }
                }, shouldStop: { false })
            } catch USBError.replayExhausted {
                // The capture ended: a receiver's session ends here.
            } catch {
                if let deliveryFailure { throw deliveryFailure }
                report.failure = "\(error)"
            }
            report.writesNotInCapture = handle.writesNotInCapture
            summary.matchedUSB.append(report)
        }
        if let damage {
            throw RuntimeError.damagedUSBCapture(path: path, damage: damage, eventsReplayed: events.count)
        }
        return summary
    }

    /// Counts what an adapter output holds and hands its records on; returns what became of them.
    private func absorb(_ output: inout AdapterOutput, into summary: inout Summary,
                        deliver: ([HealthRecord]) throws -> DeliveryReceipt) throws -> DeliveryReceipt {
        // Counted per run of one type (a batch is mostly one): the table is keyed by long identifiers.
        var runType: String?
        var runLength = 0
        func count(_ type: String) {
            if type == runType {
                runLength += 1
                return
            }
            if let runType { summary.samplesPerType[runType, default: 0] += runLength }
            (runType, runLength) = (type, 1)
        }
        for record in output.records {
            switch record {
            case .sample(let sample): count(sample.type.identifier)
            case .correlation(let correlation):
                summary.correlations += 1
                for member in correlation.objects { count(member.type.identifier) }
            }
        }
        if let runType { summary.samplesPerType[runType, default: 0] += runLength }
        for rejection in output.rejections {
            if summary.rejectionLog.count < Summary.maximumRejectionLog { summary.rejectionLog.append(rejection) }
            let key = "\(rejection.adapter): \(rejection.reason)"
            summary.rejected[key, default: 0] += 1
            if summary.rejectionExamples[key] == nil { summary.rejectionExamples[key] = rejection.detail }
        }
        for (reason, count) in output.skipped { summary.skipped[reason, default: 0] += count }
        for explanation in output.explanations where summary.explanations.count < Summary.maximumExplanations {
            summary.explanations.append(explanation)
        }
        for battery in output.batteries {
            let key = battery.source + "\u{0}" + battery.deviceKey
            if summary.batteryByDevice[key].map({ $0.at <= battery.at }) ?? true { summary.batteryByDevice[key] = battery }
        }
        let records = output.records
        output = AdapterOutput()
        return records.isEmpty ? DeliveryReceipt(stored: 0, held: 0) : try deliver(records)
    }

    /// Replays one capture, giving records to `deliver` in batches. Devices served by a
    /// ``ConversingAdapter`` get their conversation run against each captured connection
    /// after the capture was read (see ``CaptureConversationLink``).
    public func run(path: String, deliver: ([HealthRecord]) throws -> Void) async throws -> Summary {
        let reader: any CaptureReader
        do {
            reader = try CaptureFile.open(path: path)
        } catch {
            throw RuntimeError.unreadableCapture(path: path, reason: error.description)
        }
        let router: AdapterRouter
        do {
            router = try AdapterRouter(adapters: adapters, forcedAdapterID: forcedAdapterID, timeZone: timeZone, keys: keys)
        } catch {
            throw RuntimeError.adapterChoice(error)
        }
        var decoder = HCITraceDecoder()
        var summary = Summary()
        var events: [TransportEvent] = []
        var output = AdapterOutput()
        // Advertisements are never acknowledged: the receipt does not matter here.
        func deliverIgnoringReceipt(_ records: [HealthRecord]) throws -> DeliveryReceipt {
            try deliver(records)
            return DeliveryReceipt(stored: records.count, held: 0)
        }
        var connections = CapturedConnections()
        func drain(force: Bool) throws {
            guard force || output.records.count >= batchSize else { return }
            _ = try absorb(&output, into: &summary, deliver: deliverIgnoringReceipt)
        }
        do {
            while let record = try reader.next() {
                summary.records += 1
                if summary.records & 4095 == 0 { progress?(reader.bytesRead, summary.records) }
                events.removeAll(keepingCapacity: true)
                decoder.process(record, into: &events)
                for event in events {
                    router.route(event, into: &output)
                    connections.absorb(event, decoder: decoder)
                }
                try drain(force: false)
            }
        } catch let error as CaptureError {
            // Everything before the bad record was used; report where it broke.
            try drain(force: true)
            throw RuntimeError.unreadableCapture(path: path, reason: error.description)
        }
        events.removeAll(keepingCapacity: true)
        decoder.finish(into: &events)
        for event in events {
            router.route(event, into: &output)
            connections.absorb(event, decoder: decoder)
        }
        // External adapters' processes may still print a lot once their input ended: commit it
        // in batches as it comes rather than hold it.
        try router.finish(into: &output, flushingAt: batchSize) { batch in
            var flushed = batch
            _ = try absorb(&flushed, into: &summary, deliver: deliverIgnoringReceipt)
        }
        try drain(force: true)
        connections.finish()
        for connection in connections.finished {
            guard let adapter = router.adapter(for: connection.peer), adapter.holdsConversations else { continue }
            summary.conversations.append(try await converse(
                over: connection, adapter: adapter, traits: router.traits(for: connection.peer), run: router.runState,
                summary: &summary, deliver: deliver))
        }
        summary.statistics = decoder.statistics
        summary.warnings = reader.warnings
        summary.unmatched = router.unmatched
        summary.unmatchedForgotten = router.forgottenUnmatched
        summary.matchedForgotten = router.forgottenMatched
        summary.matched = router.matchedDevices
        return summary
    }
}

extension CaptureReplay {
    /// Runs the adapter's conversation against one captured connection; its batches are
    /// counted and delivered (their receipts say stored, as decoding and replay of a capture
    /// never erase anything).
    private func converse(over connection: CapturedConnections.Connection, adapter: any BLEAdapter,
                          traits: BLEDeviceTraits?, run: AdapterRunState, summary: inout Summary,
                          deliver: ([HealthRecord]) throws -> Void) async throws -> ConversationReport {
        let link = CaptureConversationLink(connection)
        let id = adapter.descriptor.id
        var report = ConversationReport(device: connection.peer, adapter: id, writesNotInCapture: 0,
                                        truncated: connection.truncated)
        var deliveryFailure: (any Error)?
        guard let conversation = adapter.conversation(
            for: traits ?? BLEDeviceTraits(address: connection.peer),
            context: AdapterContext(timeZone: timeZone, source: id, now: link.clock, memory: memory,
                                    options: options, keys: keys, run: run))
        else { return report }
        do {
            try await conversation.run(over: link) { output in
                var collected = output
                do {
                    return try absorb(&collected, into: &summary) { records in
                        try deliver(records)
                        return DeliveryReceipt(stored: records.count, held: 0)
                    }
                } catch {
                    deliveryFailure = error
                    throw error
                }
            }
        } catch {
            if let deliveryFailure { throw deliveryFailure }
            report.failure = "\(error)"
        }
        report.writesNotInCapture = link.writesNotInCapture
        return report
    }
}

extension CaptureReplay.Summary {
    /// The summary as stderr lines.
    public func lines(path: String) -> [String] {
        let s = statistics
        var lines = isUSB
            ? ["\(path): \(records) usbmon events, \(matchedUSB.count + unmatchedUSB.count) devices"]
            : ["\(path): \(records) records, \(s.advertisements) advertisements, \(s.connections) connections, "
                + "\(s.notifications) notifications, \(s.indications) indications, \(s.reads) reads"]
        for warning in warnings { lines.append("warning: \(path): \(warning.description)") }
        for (reason, count) in s.malformed.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  malformed packets (\(reason.rawValue)): \(count)")
        }
        for address in matched.keys.sorted() {
            lines.append("  device \(address) → adapter \(matched[address] ?? "?")")
        }
        for type in samplesPerType.keys.sorted() {
            lines.append("  samples \(QuantityType.named(type)?.shortName ?? type): \(samplesPerType[type] ?? 0)")
        }
        if correlations > 0 { lines.append("  correlations: \(correlations)") }
        for key in rejected.keys.sorted() {
            let example = rejectionExamples[key].map { " (e.g. \($0))" } ?? ""
            lines.append("  frames rejected, \(key): \(rejected[key] ?? 0)\(example)")
        }
        for key in skipped.keys.sorted() {
            lines.append("  frames skipped, \(key): \(skipped[key] ?? 0)")
        }
        for explanation in explanations { lines.append("  note: \(explanation)") }
        if matchedForgotten > 0 {
            lines.append("  \(matchedForgotten) devices' sessions were ended and forgotten (only \(AdapterRouter.defaultMaximumDevices) are kept at once)")
        }
        for report in matchedUSB {
            lines.append("  USB device \(report.device) → adapter \(report.adapter)")
            lines.append("    writes not in the capture: \(report.writesNotInCapture)")
            if let failure = report.failure { lines.append("    session ended: \(failure)") }
        }
        for conversation in conversations {
            lines.append("  conversation with \(conversation.device) → adapter \(conversation.adapter)")
            lines.append("    writes not in the capture: \(conversation.writesNotInCapture)")
            if let failure = conversation.failure { lines.append("    conversation ended: \(failure)") }
            if conversation.truncated {
                lines.append("    the connection's events past \(CapturedConnections.maximumEventsPerConnection) were not replayed")
            }
        }
        for device in unmatchedUSB {
            lines.append("  unmatched USB device \(device) (give --usb VID:PID and --adapter ID to force one)")
        }
        for address in unmatched.keys.sorted() {
            let traits = unmatched[address]
            var parts: [String] = []
            if let name = traits?.name { parts.append("name \"\(name)\"") }
            if let uuids = traits?.serviceUUIDs, !uuids.isEmpty {
                parts.append("services " + uuids.sorted().map(\.description).joined(separator: ","))
            }
            if let companies = traits?.companyIDs, !companies.isEmpty {
                parts.append("companies " + companies.sorted().map { String(format: "0x%04X", $0) }.joined(separator: ","))
            }
            lines.append("  unmatched device \(address)" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", ")))
        }
        if unmatchedForgotten > 0 {
            lines.append("  … and \(unmatchedForgotten) earlier unmatched devices, not listed (only the last \(unmatched.count) are kept)")
        }
        return lines
    }
}

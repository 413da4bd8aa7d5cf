import AdapterKit
import Foundation
import Transport

extension GATTHealthAdapter: ConversingAdapter {
    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        GATTHealthConversation(device: device, context: context,
                               steps: SubscribingConversation(session: makeSession(for: device, context: context),
                                                              source: context.source),
                               reads: gattReads, subscriptions: gattSubscriptions)
    }
}

/// The conversation of the standard health profiles: the declared reads, the Current Time
/// written where the device lets it be set, the declared subscriptions, the stored glucose
/// records fetched through the Record Access Control Point, then whatever the device
/// indicates or notifies until it disconnects. See README.md ("Conversations").
final class GATTHealthConversation: GATTConversation {
    /// How long the meter may stay silent during a record transfer.
    static let recordTimeout: Duration = .seconds(30)
    /// The memory key of the user index a scale gave at registration.
    static let userIndexKey = "uds-user-index"
    /// The memory key of the last glucose record sequence number received and committed.
    static let lastSequenceKey = "glucose-last-sequence"
    /// At most this many values are read during one record transfer (a meter holds a few
    /// hundred to a few thousand records).
    static let maximumTransferValues = 100_000
    var maximumValuesPerContact: Int { Self.maximumTransferValues }

    private let device: BLEDeviceTraits
    private let context: AdapterContext
    private let steps: SubscribingConversation
    private let reads: Set<BLEUUID>
    private let subscriptions: Set<BLEUUID>
    /// A consent scale's own steps (nil: the generic conversation).
    private let scale: ConsentScaleSteps?
    /// The bounds of a device family's contact (nil: until the device disconnects or stays
    /// silent for ``SubscribingConversation/idleTimeout``); a consent scale brings its own.
    private let bounds: ContactBounds?

    init(device: BLEDeviceTraits, context: AdapterContext, steps: SubscribingConversation, reads: Set<BLEUUID>,
         subscriptions: Set<BLEUUID>, scale: ConsentScaleSteps? = nil, bounds: ContactBounds? = nil) {
        self.device = device
        self.context = context
        self.steps = steps
        self.reads = reads
        self.subscriptions = subscriptions
        self.scale = scale
        self.bounds = scale?.bounds ?? bounds
    }

    func run(over link: any GATTConversationLink, deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        var output = AdapterOutput()
        let database = try await link.discover()
        try await steps.readAll(reads, over: link, into: &output)
        if database.characteristic(GATTHealthUUID.glucoseMeasurement) != nil {
            try await readMeterClock(database, over: link, into: &output)
        }
        if let currentTime = database.characteristic(GATTHealthUUID.currentTime), currentTime.properties & 0x08 != 0,
           context.options[GATTHealthOption.setTime] != "false" {
            try await setCurrentTime(over: link, into: &output)
        }
        try await steps.subscribeAll(subscriptions, over: link, into: &output)
        var identified = false
        if database.characteristic(GATTHealthUUID.userControlPoint) != nil {
            identified = try await identifyUser(over: link, into: &output)
        }
        if let scale, identified {
            try await commitUserData(scale, database: database, over: link, into: &output)
            try await requestMeasurement(scale, database: database, over: link, into: &output)
        }
        if !output.records.isEmpty || !output.rejections.isEmpty || !output.skipped.isEmpty {
            _ = try await deliver(output)
            output = AdapterOutput()
        }
        if database.characteristic(GATTHealthUUID.recordAccessControlPoint) != nil,
           database.characteristic(GATTHealthUUID.glucoseMeasurement) != nil {
            try await fetchStoredGlucoseRecords(over: link, deliver: deliver)
        }
        if let bounds {
            try await receiveBounded(bounds, over: link, deliver: deliver)
        } else {
            try await steps.receiveUntilDisconnected(over: link, deliver: deliver)
        }
    }

    // MARK: - Current Time

    /// The glucose meter's clock, where its family keeps it (Current Time; Date Time on the
    /// Roche meters), compared with the conversation's: when it is a minute or more off, the
    /// records of this contact are corrected by the difference, as xDrip+ does (a meter's
    /// records carry its own clock, and the clock set afterwards does not fix the records made
    /// before). Read before the Current Time is written. Nothing is corrected when the clock
    /// cannot be read or is more than a day off (an unset clock: the session then keeps the
    /// records' own times, or their arrival for a time in the future).
    private func readMeterClock(_ database: GATTDatabase, over link: any GATTConversationLink,
                                into output: inout AdapterOutput) async throws(GATTConversationError) {
        guard let session = steps.session as? GATTHealthSession else { return }
        let family = GlucoseMeterFamily(manufacturer: session.manufacturerName)
        guard let clock = family.clockCharacteristics.first(where: {
            (database.characteristic($0)?.properties ?? 0) & 0x02 != 0
        }) else { return }
        let bytes: [UInt8]
        do {
            bytes = try await link.read(clock)
        } catch {
            if case .disconnected = error { throw error }
            output.skip("meter-clock-unreadable")
            return
        }
        let now = await link.now()
        guard let meterTime = meterClock(bytes) else {
            output.skip("meter-clock-invalid")
            return
        }
        // Whole seconds: the meter's clock has no finer resolution.
        let offset = meterTime.date(in: context.timeZone).timeIntervalSince(now).rounded()
        if abs(offset) >= Self.clockTolerance && abs(offset) <= 86_400 {
            session.glucoseClockOffset = offset
        }
    }

    /// A meter clock off by less than this is taken as right.
    static let clockTolerance: TimeInterval = 60

    /// Writes the conversation's clock, in the context's zone, to Current Time (0x2A2B); a
    /// refusal is noted (the readings then carry the device's own clock).
    private func setCurrentTime(over link: any GATTConversationLink, into output: inout AdapterOutput)
        async throws(GATTConversationError)
    {
        let written = try await link.writeCurrentTime(to: GATTHealthUUID.currentTime, in: context.timeZone)
        if let refusal = written.refusal {
            output.reject(context.source, reason: "current-time-refused", detail: "\(link.peerAddress): \(refusal)",
                          time: written.time)
        }
    }

    // MARK: - User Data Service

    /// Gives the configured user's consent code (`uds-user-index`, `uds-consent-code`), or with
    /// a consent code alone registers a new user and remembers its index for the next contact.
    /// The scale then sends that user's measurements; each carries its user index
    /// (`IngestDeviceUserID`). Without a consent code nothing is written (the scale sends only
    /// what it sends unasked; a consent scale's conversation says what is missing). True when
    /// the scale accepted the user.
    private func identifyUser(over link: any GATTConversationLink, into output: inout AdapterOutput)
        async throws(GATTConversationError) -> Bool
    {
        let reader = AdapterOptionReader(context.options)
        let configuredCode: UInt16?
        var index: UInt8?
        do {
            configuredCode = try reader.integer(GATTHealthOption.consentCode, in: 0...9999, expected: "a consent code 0…9999",
                                                isSecret: true)
            index = try reader.integer(GATTHealthOption.userIndex, in: 0...0xFE, expected: "a user index 0…254")
        } catch {
            output.reject(context.source, option: error, time: await link.now())
            return false
        }
        guard let code = configuredCode else {
            if scale != nil {
                output.reject(context.source, reason: "consent-code-needed",
                              detail: "\(link.peerAddress) sends its measurements only to a user it knows: "
                                  + "--adapter-option \(GATTHealthOption.consentCode)=NNNN (the code of the user set up in the "
                                  + "vendor app, with \(GATTHealthOption.userIndex)=N; or a new code alone to register a new user)",
                              time: await link.now())
            }
            return false
        }
        let now = await link.now()
        let deviceKey = device.address.description
        if index == nil, let remembered = await context.memory?.recall(Self.userIndexKey, device: deviceKey).flatMap({ UInt8($0) }) {
            index = remembered
        }
        let request: [UInt8] = if let index {
            [0x02, index, UInt8(code & 0xFF), UInt8(code >> 8)]  // Consent
        } else {
            [0x01, UInt8(code & 0xFF), UInt8(code >> 8)]  // Register New User
        }
        do {
            try await link.subscribe(to: GATTHealthUUID.userControlPoint, mode: .indications)
            try await link.write(request, to: GATTHealthUUID.userControlPoint, withResponse: true)
            let response = try await link.nextValue(timeout: Self.recordTimeout) { value in
                value.characteristicUUID == GATTHealthUUID.userControlPoint && value.value.first == 0x20
            }
            let bytes = response.value
            guard bytes.count >= 3, bytes[1] == request[0] else {
                output.reject(context.source, reason: "uds-bad-response",
                              detail: "\(link.peerAddress): \(hexString(bytes))", time: response.time)
                return false
            }
            guard bytes[2] == 0x01 else {
                output.reject(context.source, reason: "uds-refused",
                              detail: "\(link.peerAddress) refused user \(index.map(String.init) ?? "registration"): "
                                  + "result 0x\(String(bytes[2], radix: 16)) (0x05: wrong consent code)",
                              time: response.time)
                return false
            }
            if index == nil, bytes.count >= 4 {
                try? await context.memory?.remember(String(bytes[3]), for: Self.userIndexKey, device: deviceKey)
            }
            return true
        } catch {
            if case .disconnected = error { throw error }
            output.reject(context.source, reason: "uds-refused", detail: "\(link.peerAddress): \(error)", time: now)
            return false
        }
    }

    // MARK: - Consent scales

    /// Once the user is accepted, confirms the user data the scale holds: each of
    /// ``ConsentScaleSteps/userDataCommit`` the scale has is read and written back unchanged, in
    /// order, then the Database Change Increment is written (``ConsentScaleSteps/changeIncrement``).
    /// Nothing of the user's data is changed: what is written is what was read. A characteristic
    /// that cannot be read is noted (`user-data-read-refused`) and not written; a refused write is
    /// noted (`user-data-commit-refused`)
    /// and the rest goes on, the increment included.
    private func commitUserData(_ scale: ConsentScaleSteps, database: GATTDatabase, over link: any GATTConversationLink,
                                into output: inout AdapterOutput) async throws(GATTConversationError) {
        guard let increment = scale.changeIncrement, !scale.userDataCommit.isEmpty else { return }
        var values: [(BLEUUID, [UInt8])] = []
        for characteristic in scale.userDataCommit where database.characteristic(characteristic) != nil {
            do {
                values.append((characteristic, try await link.read(characteristic)))
            } catch {
                if case .disconnected = error { throw error }
                output.reject(context.source, reason: "user-data-read-refused",
                              detail: "\(link.peerAddress): reading \(characteristic): \(error)", time: await link.now())
            }
        }
        var writes = values
        if database.characteristic(GATTHealthUUID.databaseChangeIncrement) != nil {
            writes.append((GATTHealthUUID.databaseChangeIncrement, increment))
        }
        for (characteristic, value) in writes {
            do {
                try await link.write(value, to: characteristic, withResponse: true)
            } catch {
                if case .disconnected = error { throw error }
                output.reject(context.source, reason: "user-data-commit-refused",
                              detail: "\(link.peerAddress): writing \(hexString(value)) to \(characteristic): \(error)",
                              time: await link.now())
            }
        }
    }

    /// Asks the scale to send its measurement (`00` written to the vendor's take-measurement
    /// characteristic, where the scale has one); a refusal is noted and the conversation goes on.
    private func requestMeasurement(_ scale: ConsentScaleSteps, database: GATTDatabase, over link: any GATTConversationLink,
                                    into output: inout AdapterOutput) async throws(GATTConversationError) {
        guard let characteristic = scale.takeMeasurement.first(where: { database.characteristic($0) != nil }) else { return }
        do {
            try await link.write([0x00], to: characteristic, withResponse: true)
        } catch {
            if case .disconnected = error { throw error }
            output.reject(context.source, reason: "take-measurement-refused", detail: "\(link.peerAddress): \(error)",
                          time: await link.now())
        }
    }

    /// The device's values (a scale's stored measurements sent once the user is accepted and a
    /// live weighing; a cuff's or thermometer's stored readings), each delivered as it decodes,
    /// until the device disconnects, stays silent for ``ContactBounds/silence`` or has sent
    /// ``ContactBounds/maximumValues`` values (then the link is closed and the rest comes at the
    /// next contact).
    private func receiveBounded(_ bounds: ContactBounds, over link: any GATTConversationLink,
                                deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        var output = AdapterOutput()
        var count = 0
        while true {
            let value: GATTValue
            do {
                value = try await link.nextValue(timeout: bounds.silence) { _ in true }
            } catch {
                if case .timedOut = error { await link.disconnect() }
                break
            }
            steps.session.receive(.gattValue(value), into: &output)
            count += 1
            if count >= bounds.maximumValues {
                output.reject(context.source, reason: "value-cap",
                              detail: "\(link.peerAddress): \(count) values in one contact; the link is closed, "
                                  + "the rest comes at the next contact", time: value.time)
                await link.disconnect()
                break
            }
            if !output.records.isEmpty || !output.rejections.isEmpty {
                _ = try await deliver(output)
                output = AdapterOutput()
            }
        }
        steps.session.receive(.disconnected(BLEDisconnection(time: await link.now(), handle: 0, peerAddress: link.peerAddress,
                                                             reason: 0x13)), into: &output)
        steps.session.finish(into: &output)
        if !output.records.isEmpty || !output.rejections.isEmpty || !output.skipped.isEmpty {
            _ = try await deliver(output)
        }
    }

    // MARK: - Record Access Control Point

    /// Asks the meter for its stored records (all of them at first contact, afterwards those
    /// after the last sequence number committed), delivers each record as it arrives and
    /// remembers its sequence number once committed, until the meter's RACP response.
    private func fetchStoredGlucoseRecords(over link: any GATTConversationLink,
                                           deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        let deviceKey = device.address.description
        let remembered = await context.memory?.recall(Self.lastSequenceKey, device: deviceKey).flatMap { UInt16($0) }
        var request = RecordAccessRequest.reportRecords(after: remembered)
        var retriedAfterBusy = false
        var fellBackToAll = false
        while true {
            do {
                try await link.subscribe(to: GATTHealthUUID.recordAccessControlPoint, mode: .indications)
                try await link.write(request.bytes, to: GATTHealthUUID.recordAccessControlPoint, withResponse: true)
            } catch {
                // 0xFE: a procedure is already in progress: abort it and ask once more.
                if case .attError(_, _, 0xFE) = error, !retriedAfterBusy {
                    retriedAfterBusy = true
                    try? await link.write(RecordAccessRequest.abort.bytes, to: GATTHealthUUID.recordAccessControlPoint,
                                          withResponse: true)
                    _ = try? await link.nextValue(timeout: Self.recordTimeout) { value in
                        value.characteristicUUID == GATTHealthUUID.recordAccessControlPoint
                    }
                    continue
                }
                var output = AdapterOutput()
                output.reject(context.source, reason: "racp-refused", detail: "\(link.peerAddress): \(error)",
                              time: await link.now())
                _ = try await deliver(output)
                return
            }
            let outcome = try await receiveRecords(over: link, deviceKey: deviceKey, deliver: deliver)
            switch outcome {
            case .finished:
                return
            case .unsupportedFilter where !fellBackToAll:
                // A meter without "greater than or equal": everything again (duplicates are dropped by their identity).
                fellBackToAll = true
                request = .reportRecords(after: nil)
            case .unsupportedFilter:
                return
            }
        }
    }

    private enum TransferOutcome { case finished, unsupportedFilter }

    private func receiveRecords(over link: any GATTConversationLink, deviceKey: String,
                                deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws -> TransferOutcome {
        for _ in 0..<Self.maximumTransferValues {
            let value: GATTValue
            do {
                value = try await link.nextValue(timeout: Self.recordTimeout) { value in
                    value.characteristicUUID == GATTHealthUUID.glucoseMeasurement
                        || value.characteristicUUID == GATTHealthUUID.glucoseMeasurementContext
                        || value.characteristicUUID == GATTHealthUUID.recordAccessControlPoint
                }
            } catch {
                if case .timedOut = error {
                    var output = AdapterOutput()
                    (steps.session as? GATTHealthSession)?.flushGlucose(into: &output)
                    output.reject(context.source, reason: "racp-no-response",
                                  detail: "\(link.peerAddress): \(error) during the record transfer",
                                  time: await link.now())
                    try await deliverRecords(output, deviceKey: deviceKey, deliver: deliver)
                    return .finished
                }
                throw error  // disconnected: the records delivered so far are kept, the rest comes next time
            }
            if value.characteristicUUID == GATTHealthUUID.recordAccessControlPoint {
                guard let response = RecordAccessResponse(value.value) else {
                    continue  // not a response to our request (a numeric count, an abort answer)
                }
                // The transfer is over: a record still waiting for its context goes without it.
                var output = AdapterOutput()
                (steps.session as? GATTHealthSession)?.flushGlucose(into: &output)
                if case .failed(let code) = response {
                    output.reject(context.source, reason: "racp-failed",
                                  detail: "\(link.peerAddress): response code 0x\(String(code, radix: 16)); value \(hexString(value.value))",
                                  time: value.time)
                }
                try await deliverRecords(output, deviceKey: deviceKey, deliver: deliver)
                return response == .filterNotSupported ? .unsupportedFilter : .finished
            }
            var output = AdapterOutput()
            steps.session.receive(.gattValue(value), into: &output)
            try await deliverRecords(output, deviceKey: deviceKey, deliver: deliver)
        }
        return .finished
    }

    /// Delivers `output` and, once it is committed, remembers the highest glucose sequence
    /// number among its records: only records actually delivered count, so one held for its
    /// context when the link drops is asked for again next time.
    private func deliverRecords(_ output: AdapterOutput, deviceKey: String,
                                deliver: (AdapterOutput) async throws -> DeliveryReceipt) async throws {
        guard !output.records.isEmpty || !output.rejections.isEmpty || !output.skipped.isEmpty else { return }
        _ = try await deliver(output)
        let sequences = output.records.compactMap { record -> UInt16? in
            guard case .sample(let sample) = record, sample.type == .bloodGlucose,
                  case .number(let number) = sample.metadata.entries[GATTMetadataKey.glucoseSequenceNumber] else { return nil }
            return UInt16(exactly: number)
        }
        if let highest = sequences.max() {
            try? await context.memory?.remember(String(highest), for: Self.lastSequenceKey, device: deviceKey)
        }
    }
}

/// What a standard-profile scale that serves only users it knows (User Data Service with a
/// consent code, e.g. Beurer/Sanitas BF720) adds to the conversation: a consent code is
/// required, the vendor's take-measurement command is written once the user is accepted, and
/// the values it then sends are bounded per contact.
public struct ConsentScaleSteps: Sendable {
    /// Characteristics whose write of `00` asks the scale for its measurement, the first one
    /// the scale has is written.
    public var takeMeasurement: [BLEUUID]
    /// Values received in one contact before the link is closed, and the silence after which
    /// the scale has sent everything.
    public var bounds: ContactBounds
    /// User data characteristics read and written back unchanged, in this order, once the user is
    /// accepted (the scale's confirmation of its user's profile); none: nothing is committed.
    public var userDataCommit: [BLEUUID]
    /// The value written to the Database Change Increment after the user data (when the scale
    /// has it); nil: nothing is committed.
    public var changeIncrement: [UInt8]?

    public init(takeMeasurement: [BLEUUID], maximumValues: Int, silence: Duration, userDataCommit: [BLEUUID] = [],
                changeIncrement: [UInt8]? = nil) {
        self.takeMeasurement = takeMeasurement
        self.bounds = ContactBounds(maximumValues: maximumValues, silence: silence)
        self.userDataCommit = userDataCommit
        self.changeIncrement = changeIncrement
    }
}

/// How long one contact with a standard-profile device lasts: a device family that sends its
/// stored readings on its own once subscribed (a blood-pressure cuff, a thermometer) is done
/// after a silence, and one contact takes at most so many values (the rest comes at the next).
public struct ContactBounds: Sendable {
    /// Values received in one contact before the link is closed.
    public var maximumValues: Int
    /// Silence after which the device has sent everything.
    public var silence: Duration

    public init(maximumValues: Int, silence: Duration) {
        self.maximumValues = maximumValues
        self.silence = silence
    }
}

extension GATTHealthAdapter {
    /// The standard-profile conversation for a consent scale, its samples under `context.source`.
    public func makeConsentScaleConversation(for device: BLEDeviceTraits, context: AdapterContext,
                                             steps scale: ConsentScaleSteps) -> any GATTConversation {
        GATTHealthConversation(device: device, context: context,
                               steps: SubscribingConversation(session: makeSession(for: device, context: context),
                                                              source: context.source),
                               reads: gattReads, subscriptions: gattSubscriptions, scale: scale)
    }
}

extension GATTHealthAdapter {
    /// The standard-profile conversation for a device family that sends its readings on its own
    /// once subscribed, bounded per contact, its samples under `context.source`.
    public func makeBoundedConversation(for device: BLEDeviceTraits, context: AdapterContext,
                                        bounds: ContactBounds) -> any GATTConversation {
        GATTHealthConversation(device: device, context: context,
                               steps: SubscribingConversation(session: makeSession(for: device, context: context),
                                                              source: context.source),
                               reads: gattReads, subscriptions: gattSubscriptions, bounds: bounds)
    }
}

/// A device family that speaks the standard profiles and sends its stored readings on its own
/// once subscribed (a blood-pressure cuff, a thermometer), found by how it advertises: its
/// session is the standard one and its conversation the standard one bounded by
/// ``contactBounds``. The adapter gives its descriptor and its bounds.
public protocol StandardProfileFamily: ConversingAdapter {
    /// How long one contact lasts and how many values it takes.
    static var contactBounds: ContactBounds { get }
}

extension StandardProfileFamily {
    /// Advertisements and values decode as the standard profiles do.
    public func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
        GATTHealthAdapter().makeSession(for: device, context: context)
    }

    public func makeConversation(for device: BLEDeviceTraits, context: AdapterContext) -> any GATTConversation {
        GATTHealthAdapter().makeBoundedConversation(for: device, context: context, bounds: Self.contactBounds)
    }
}

/// The adapter's options (`--adapter-option KEY=VALUE`).
public enum GATTHealthOption {
    /// `false`: never write the device's Current Time.
    public static let setTime = "set-time"
    /// The user index on a multi-user scale (User Data Service), 0…254.
    public static let userIndex = "uds-user-index"
    /// That user's consent code, 0…9999 (alone: register a new user with it).
    public static let consentCode = "uds-consent-code"
}

/// A request written to the Record Access Control Point (0x2A52): op code, operator, operand.
enum RecordAccessRequest {
    /// Report Stored Records (op 0x01): all (operator 0x01), or those with a sequence number
    /// greater than or equal to the one after `after` (operator 0x03, filter type 0x01).
    case reportRecords(after: UInt16?)
    /// Abort Operation (op 0x03, operator 0x00).
    case abort

    var bytes: [UInt8] {
        switch self {
        case .reportRecords(let after):
            guard let after, after < UInt16.max else { return [0x01, 0x01] }
            let first = after + 1
            return [0x01, 0x03, 0x01, UInt8(first & 0xFF), UInt8(first >> 8)]
        case .abort:
            return [0x03, 0x00]
        }
    }
}

/// The meter's answer on the Record Access Control Point to a Report Stored Records request:
/// Response Code (op 0x06, operator 0x00, request op code, response code).
enum RecordAccessResponse: Equatable {
    /// 0x01 success: every requested record was sent.
    case finished
    /// 0x06 no records found.
    case noRecords
    /// 0x04 operator not supported, 0x09 operand not supported.
    case filterNotSupported
    /// Any other code (0x02 op code not supported, 0x03 invalid operator, 0x05 invalid operand,
    /// 0x07 abort unsuccessful, 0x08 procedure not completed).
    case failed(UInt8)

    /// nil for anything but a response to Report Stored Records.
    init?(_ bytes: [UInt8]) {
        guard bytes.count == 4, bytes[0] == 0x06, bytes[1] == 0x00, bytes[2] == 0x01 else { return nil }
        switch bytes[3] {
        case 0x01: self = .finished
        case 0x06: self = .noRecords
        case 0x04, 0x09: self = .filterNotSupported
        default: self = .failed(bytes[3])
        }
    }
}

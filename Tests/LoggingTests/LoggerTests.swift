import Foundation
import Logging
import Testing

@Suite struct LoggerTests {
    /// 2026-11-29T13:00:00Z.
    static let fixedDate = Date(timeIntervalSince1970: 1_795_957_200)

    @Test func levelsAreOrderedFromTraceToCritical() {
        #expect(Logger.Level.allCases == [.trace, .debug, .info, .notice, .warning, .error, .critical])
        #expect(Logger.Level.trace < .debug)
        #expect(Logger.Level.error < .critical)
        #expect(!(Logger.Level.warning < .notice))
    }

    @Test func onlyMessagesAtOrAboveTheLevelReachTheHandler() {
        let handler = RecordingLogHandler()
        let logger = Logger(label: "ingestd", handler: handler, logLevel: .warning)
        logger.trace("t")
        logger.debug("d")
        logger.info("i")
        logger.notice("n")
        logger.warning("w")
        logger.error("e")
        logger.critical("c")
        #expect(handler.records.map(\.message) == ["w", "e", "c"])
        #expect(handler.records.map(\.level) == [.warning, .error, .critical])
        #expect(handler.records.allSatisfy { $0.label == "ingestd" })
    }

    @Test func messagesBelowTheLevelAreNeverBuilt() {
        var built = 0
        func expensive() -> Logger.Message {
            built += 1
            return "expensive"
        }
        let logger = Logger(label: "ingestd", handler: RecordingLogHandler(), logLevel: .info)
        logger.debug(expensive())
        logger.trace(expensive(), metadata: ["k": "\(expensive())"])
        #expect(built == 0)
        logger.info(expensive())
        #expect(built == 1)
    }

    @Test func metadataOfTheLoggerAndOfTheCallAreMerged() {
        let handler = RecordingLogHandler()
        var logger = Logger(label: "ingestd", handler: handler)
        logger[metadataKey: "device"] = "AA:BB:CC:DD:EE:FF"
        logger[metadataKey: "adapter"] = "gatt-weight-scale"
        logger.info("weight", metadata: ["adapter": "xiaomi-scale", "kg": "72.35"])
        #expect(handler.records.first?.metadata == [
            "device": "AA:BB:CC:DD:EE:FF", "adapter": "xiaomi-scale", "kg": "72.35",
        ])
        logger[metadataKey: "adapter"] = nil
        #expect(logger[metadataKey: "adapter"] == nil)
        #expect(logger[metadataKey: "device"] == "AA:BB:CC:DD:EE:FF")
    }

    @Test func copiesAreIndependent() {
        let handler = RecordingLogHandler()
        let original = Logger(label: "ingestd", handler: handler, logLevel: .error)
        var copy = original
        copy.logLevel = .debug
        copy[metadataKey: "session"] = "1"
        original.info("dropped")
        copy.info("kept")
        #expect(handler.records.map(\.message) == ["kept"])
        #expect(original.metadata.isEmpty)
    }

    @Test func timestampedLineFormat() {
        let writer = CapturingWriter()
        var logger = Logger(
            label: "ingestd",
            handler: StreamLogHandler(writer: writer, style: .timestamped, now: { Self.fixedDate }))
        logger[metadataKey: "device"] = "AA:BB:CC:DD:EE:FF"
        logger.warning("history read failed")
        #expect(writer.text == "2026-11-29T13:00:00Z warning ingestd: device=AA:BB:CC:DD:EE:FF history read failed\n")
    }

    @Test func journaldLineFormatUsesSyslogPriorities() {
        let writer = CapturingWriter()
        let logger = Logger(
            label: "ingestd", handler: StreamLogHandler(writer: writer, style: .journald), logLevel: .trace)
        for level in Logger.Level.allCases {
            logger.log(level: level, "m")
        }
        #expect(writer.lines == [
            "<7>trace ingestd: m", "<7>debug ingestd: m", "<6>info ingestd: m", "<5>notice ingestd: m",
            "<4>warning ingestd: m", "<3>error ingestd: m", "<2>critical ingestd: m",
        ])
    }

    @Test func metadataSortedAndQuotedAndNewlinesEscaped() {
        let handler = StreamLogHandler(writer: CapturingWriter(), style: .journald)
        let record = LogRecord(
            level: .info, label: "ingestd", message: "two\nlines",
            metadata: [
                "name": "Mi Scale \"2\"", "count": .stringConvertible(3), "empty": "",
                "types": ["BodyMass", "BodyFat"], "path": "C:\\x",
            ])
        #expect(handler.format(record)
            == #"<6>info ingestd: count=3 empty="" name="Mi Scale \"2\"" path="C:\\x" types="[BodyMass, BodyFat]" two\nlines"#)
    }

    @Test func styleFollowsJournalStream() {
        #expect(StreamLogHandler.style(environment: [:]) == .timestamped)
        #expect(StreamLogHandler.style(environment: ["JOURNAL_STREAM": ""]) == .timestamped)
        #expect(StreamLogHandler.style(environment: ["JOURNAL_STREAM": "8:999"]) == .journald)
        #expect(StreamLogHandler.style(environment: ["JOURNAL_STREAM": "8:999"], standardErrorIdentity: "8:999") == .journald)
        #expect(StreamLogHandler.style(environment: ["JOURNAL_STREAM": "8:999"], standardErrorIdentity: "0:42") == .timestamped)
    }

    @Test func timestampIsUTCWithSeconds() {
        #expect(StreamLogHandler.timestamp(Self.fixedDate) == "2026-11-29T13:00:00Z")
        #expect(StreamLogHandler.timestamp(Date(timeIntervalSince1970: 0.999)) == "1970-01-01T00:00:00Z")
    }

    /// Lines logged from many tasks at once arrive whole, one per message.
    @Test func concurrentLoggingKeepsLinesWhole() async {
        let writer = CapturingWriter()
        let logger = Logger(
            label: "ingestd", handler: StreamLogHandler(writer: writer, style: .timestamped, now: { Self.fixedDate }))
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for message in 0..<200 {
                        logger.info("message \(message)", metadata: ["task": "\(task)"])
                    }
                }
            }
        }
        let lines = writer.lines
        #expect(lines.count == 1600)
        #expect(lines.allSatisfy { $0.wholeMatch(of: /2026-11-29T13:00:00Z info ingestd: task=\d message \d+/) != nil })
        #expect(Set(lines).count == 1600)
    }
}

import AdapterKit
import ArgumentParsing
import Foundation
import IngestRuntime
import HealthModel

/// `ingestd decode FILE...`: what the adapters make of a capture, without a store.
struct DecodeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "decode",
        abstract: "Decode captured device logs with the adapters and print the samples; nothing is stored.",
        discussion: """
            FILE is a btsnoop log (btmon -w, Android's HCI snoop log), a pcap/pcapng file with a \
            Bluetooth link type, or a usbmon pcap/pcapng (Wireshark or tcpdump on usbmonN); a USB \
            capture drives the USB adapter's session as the device would (a capture made by other software \
            need not follow ingestd's start-up: requests it lacks are accepted and counted as "writes not in the \
            capture" in the summary). Each device goes to the first adapter that matches it (--adapter forces \
            one). Samples and correlations go to stdout; a summary (records, advertisements, connections, \
            samples per type, rejected frames, devices no adapter took) goes to stderr.
            """,
        examples: [
            "ingestd decode btmon.log",
            "ingestd decode btmon.log --json --tz Europe/Berlin",
        ]
    )
    static let filesArgument = TypedPositionals<String>(Positional("FILE", key: "files", arity: .oneOrMore, help: "Capture files."))
    static let signature = Signature {
        Self.filesArgument
        CaptureDecodingOptions.self
        JSONOption.self
    }

    let files: [String]
    let decoding: CaptureDecodingOptions
    let json: Bool

    init(_ arguments: ParsedValues) throws {
        files = try arguments.values(Self.filesArgument)
        decoding = try CaptureDecodingOptions(arguments)
        json = try JSONOption(arguments).isOn
    }

    func run(_ context: CommandContext) async throws {
        // Directories and missing files end with 66 before anything is decoded; FIFOs are copied
        // so the format can be sniffed and the stream still read whole.
        let inputs = try files.map { try InputStreamSpool(path: $0) }
        defer { inputs.forEach { $0.release() } }
        let encoder = HealthRecordEncoder()
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: decoding.pluginDirectories, context: context)
        let usbAdapters = ExternalAdapterSupport.usbAdapters(catalogue)
        var replay = CaptureReplay(adapters: ExternalAdapterSupport.bluetoothAdapters(catalogue), forcedAdapterID: decoding.adapter, timeZone: decoding.zone)
        replay.options = decoding.adapterSettings
        // The default store's keys (decode opens no store otherwise), then --key.
        replay.keys = AdvertisementKeyArguments.storedInDefaultStore(context: context).merging(decoding.keys)
        // A batch's JSON lines are made in one reused buffer and written at once.
        var lines: [UInt8] = []
        for (file, input) in zip(files, inputs) {
            var emitted = 0
            let emit: ([HealthRecord]) throws -> Void = { records in
                emitted += records.count
                if json {
                    lines.removeAll(keepingCapacity: true)
                    for record in records {
                        encoder.append(record, to: &lines)
                        lines.append(UInt8(ascii: "\n"))
                    }
                    context.stdout.write(utf8: lines)
                    return
                }
                for record in records {
                    for sample in record.samples {
                        context.stdout.writeLine(
                            "\(ISO8601DateTime.string(from: sample.start))  \(sample.type.shortName)  \(sample.quantity)  \(PrintableText.escaped(sample.source))  \(PrintableText.escaped(sample.device?.localIdentifier ?? ""))")
                    }
                }
            }
            let fileSize = (try? FileManager.default.attributesOfItem(atPath: input.path)[.size] as? Int) ?? 0
            let progress = ProgressLine(label: "decode \(file)", totalBytes: fileSize, context: context)
            replay.progress = progress.isShown ? { bytes, _ in progress.update(bytes: bytes, records: emitted) } : nil
            defer { progress.finish() }
            let summary = CaptureReplay.isUSBCapture(path: input.path)
                ? try replay.runUSB(path: input.path, adapters: usbAdapters, forcedDevice: decoding.usbDevice,
                                    options: decoding.adapterSettings, deliver: { records, _ in
                                        try emit(records)
                                        // Nothing is stored, nothing held: the session behaves as in the capture.
                                        return DeliveryReceipt(stored: records.count, held: 0)
                                    })
                : try await replay.run(path: input.path, deliver: emit)
            // A full disk under stdout fails the decode before its summary claims any records.
            try context.checkStandardOutput()
            for line in summary.lines(path: file) { context.stderr.writeLine(line) }
        }
    }
}

import AdapterKit
import ArgumentParsing
import BuiltinAdapters
import Foundation
import HealthModel

/// `ingestd decode FILE...`: what the adapters make of a capture, without a store.
struct Decode: Command {
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
            """)
    static let signature = Signature {
        Positional("FILE", key: "files", arity: .oneOrMore, help: "Capture files.")
        Option("adapter", valueName: "ID", help: "Use this adapter for every device ('ingestd adapters' lists them).")
        CommonArguments.tz
        CommonArguments.usb
        CommonArguments.adapterOption
        ExternalAdapterSupport.pluginsOption
        CommonArguments.json
    }

    let files: [String]
    let adapter: String?
    let zone: TimeZone
    let usbDevice: (UInt16, UInt16)?
    let adapterOptions: [String: String]
    let plugins: [String]
    let json: Bool

    init(_ arguments: ParsedValues) throws {
        files = try arguments.values("files")
        adapter = try arguments.value("adapter")
        zone = try CommonArguments.timeZone(try arguments.value("tz"))
        usbDevice = try CommonArguments.usbIDs(try arguments.value("usb"))
        adapterOptions = try CommonArguments.adapterOptions(try arguments.values("adapter-option"))
        plugins = try arguments.values("plugins")
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        for file in files where !FileManager.default.fileExists(atPath: file) {
            throw CommandFailure.noInput(path: file)
        }
        let encoder = HealthRecordEncoder()
        let catalogue = ExternalAdapterSupport.loadCatalogue(directories: plugins, context: context)
        let usbAdapters = ExternalAdapterSupport.usbAdapters(catalogue)
        var replay = CaptureReplay(adapters: ExternalAdapterSupport.bluetoothAdapters(catalogue), forcedAdapterID: adapter, timeZone: zone)
        replay.options = adapterOptions
        for file in files {
            let emit: ([HealthRecord]) throws -> Void = { records in
                for record in records {
                    if json {
                        context.stdout.writeLine(encoder.encode(record))
                    } else {
                        for sample in record.samples {
                            context.stdout.writeLine(
                                "\(ISO8601DateTime.string(from: sample.start))  \(sample.type.shortName)  \(sample.quantity)  \(sample.source)  \(sample.device?.localIdentifier ?? "")")
                        }
                    }
                }
            }
            let summary = CaptureReplay.isUSBCapture(path: file)
                ? try replay.runUSB(path: file, adapters: usbAdapters, forcedDevice: usbDevice,
                                    options: adapterOptions, deliver: { records in
                                        try emit(records)
                                        // Nothing is stored, nothing held: the session behaves as in the capture.
                                        return DeliveryReceipt(stored: records.count, held: 0)
                                    })
                : try await replay.run(path: file, deliver: emit)
            for line in summary.lines(path: file) { context.stderr.writeLine(line) }
        }
    }
}

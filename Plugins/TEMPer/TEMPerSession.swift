import AdapterKit
import Foundation
import HealthModel
import Transport

/// Why a TEMPer session could not run.
public enum TEMPerSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    case options(AdapterOptionError)
    /// No HID interface with an interrupt IN endpoint.
    case noReportInterface(device: String)

    public var description: String {
        switch self {
        case .options(let error): "temper: \(error)"
        case .noReportInterface(let device): "temper: \(device) has no HID interface with an interrupt IN endpoint"
        }
    }
}

/// Reads a TEMPer every `interval` seconds until `shouldStop`, committing each reading.
///
/// A reading is the read command sent twice as a HID SET_REPORT to the data interface, each followed by an
/// interrupt read; the second answer is decoded (some V1.4 units stall when asked only once). The product string
/// picks the model (chip and offsets); every temperature sensor of the model gives one
/// `IngestQuantityTypeIdentifierAmbientTemperature` sample. Humidity is decoded but has no type to be stored as.
public final class TEMPerSession: USBAdapterSession {
    static let timeout: Duration = .seconds(5)

    private let context: AdapterContext
    private let configuration: Result<TEMPerConfiguration, AdapterOptionError>
    private let now: @Sendable () -> Date
    private let sleep: @Sendable (Duration) -> Void

    public init(context: AdapterContext, configuration: Result<TEMPerConfiguration, AdapterOptionError>,
                now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Duration) -> Void) {
        self.context = context
        self.configuration = configuration
        self.now = now
        self.sleep = sleep
    }

    public func run(_ device: any USBDeviceHandle, deliver: (AdapterOutput) throws -> DeliveryReceipt,
                    shouldStop: () -> Bool) throws {
        let configuration: TEMPerConfiguration
        switch self.configuration {
        case .success(let value): configuration = value
        case .failure(let error): throw TEMPerSessionError.options(error)
        }
        let description = device.device
        let reports = description.interfaces.filter { $0.isHID && $0.endpoints.contains { $0.isInput && $0.transferType == .interrupt } }
        guard let data = reports.first(where: { $0.number == 1 }) ?? reports.last,
              let input = data.endpoints.first(where: { $0.isInput && $0.transferType == .interrupt }) else {
            throw TEMPerSessionError.noReportInterface(device: description.description)
        }
        // Interface 0 is a keyboard-like interface on most units: claim it too so no kernel driver interferes.
        let claimed = Array(Set(description.interfaces.filter(\.isHID).map(\.number).filter { $0 == 0 } + [data.number])).sorted()
        for number in claimed { try device.claimInterface(number, detachKernelDriver: true) }
        defer { for number in claimed { try? device.releaseInterface(number) } }

        let model = TEMPerModel.forProduct(description.product)
        let sensorDevice = Device(name: description.product ?? "TEMPer", manufacturer: description.manufacturer,
                                  model: model.name,
                                  localIdentifier: description.serialNumber.map { "temper:\($0)" }
                                      ?? "usb:\(description.bus.map(String.init) ?? "?")-\(description.address.map(String.init) ?? "?")")
        while !shouldStop() {
            var output = AdapterOutput()
            switch try read(device, interface: data.number, endpoint: input.address, length: max(Int(input.maxPacketSize), 8)) {
            case .answer(let answer):
                record(answer, model: model, device: sensorDevice, configuration: configuration, at: now(), into: &output)
            case .silent(let endpoint):
                output.reject(context.source, reason: "no-answer",
                              detail: String(format: "no answer on endpoint 0x%02x within 5 s", endpoint), time: now())
            case .gone:
                return
            }
            // A thermometer keeps no history: nothing to acknowledge.
            _ = try deliver(output)
            var waited = 0
            while waited < configuration.interval && !shouldStop() {
                sleep(.seconds(1))
                waited += 1
            }
        }
    }

    private func record(_ answer: [UInt8], model: TEMPerModel, device: Device, configuration: TEMPerConfiguration,
                        at time: Date, into output: inout AdapterOutput) {
        let reading: TEMPerReading
        do {
            reading = try TEMPerDecoder.decode(answer, model: model)
        } catch {
            output.reject(context.source, reason: "short-message", detail: error.description, time: time)
            return
        }
        for (index, celsius) in reading.temperatures.enumerated() {
            var metadata = Metadata()
            if reading.temperatures.count > 1 { metadata.entries["IngestSensorIndex"] = .number(Double(index)) }
            output.records.append(.sample(QuantitySample(
                type: .ambientTemperature,
                quantity: Quantity(value: celsius * configuration.scale + configuration.offset, unit: .degreeCelsius),
                start: time, end: time, source: context.source, device: device, metadata: metadata)))
        }
        if !reading.humidities.isEmpty { output.skip("temper humidity (no quantity type)") }
    }

    /// What one reading attempt gave.
    enum ReadOutcome {
        case answer([UInt8])
        /// The device did not answer on this endpoint in time.
        case silent(UInt8)
        /// The device is gone (unplugged, or the replayed capture ended).
        case gone
    }

    /// Sends the read command twice and returns the second answer.
    private func read(_ device: any USBDeviceHandle, interface: UInt8, endpoint: UInt8, length: Int) throws(USBError) -> ReadOutcome {
        var answer: [UInt8] = []
        for _ in 0..<2 {
            do {
                _ = try device.controlTransfer(requestType: 0x21, request: 0x09, value: 0x0200, index: UInt16(interface),
                                               data: TEMPerDecoder.readCommand, length: TEMPerDecoder.readCommand.count,
                                               timeout: Self.timeout)
                answer = try device.read(endpoint: endpoint, length: length, timeout: Self.timeout)
            } catch {
                switch error {
                case .timeout: return .silent(endpoint)
                case .noDevice, .replayExhausted: return .gone
                default: throw error
                }
            }
        }
        return .answer(answer)
    }
}

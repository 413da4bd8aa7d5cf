import AdapterKit
import Foundation
import HealthModel
import Testing
import Transport

/// Several adapters claiming one device: advertisements go to each (each its own source);
/// connections and USB sessions go to the first available by precedence, or to a pinned one.
struct OverlappingClaimsTests {
    /// A test adapter matching the name "Thing" (BLE) and 1234:5678 (USB); each advertisement
    /// gives one step sample under its own source.
    struct ThingAdapter: BLEAdapter, USBAdapter {
        let descriptor: AdapterDescriptor
        let isAvailable: Bool

        init(id: String, available: Bool = true) {
            descriptor = AdapterDescriptor(id: id, name: id, version: "1", summary: "test",
                                           matches: [.ble(BLEMatch(namePattern: "^Thing$")),
                                                     .usb(USBMatch(vendorID: 0x1234, productID: 0x5678))],
                                           produces: [.stepCount])
            isAvailable = available
        }

        func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession {
            Counter(source: context.source)
        }

        func makeSession(for device: USBDeviceDescription, context: AdapterContext,
                         options: [String: String]) -> any USBAdapterSession {
            fatalError("not run in these tests")
        }
    }

    final class Counter: BLEAdapterSession {
        let source: String
        init(source: String) { self.source = source }
        func receive(_ event: TransportEvent, into output: inout AdapterOutput) {
            guard case .advertisement(let advertisement) = event else { return }
            output.records.append(.sample(QuantitySample(
                type: .stepCount, quantity: Quantity(value: 1, unit: .count), start: advertisement.time,
                end: advertisement.time, source: source)))
        }
    }

    static let address = BLEAddress("AA:BB:CC:00:00:01")!
    static let zone = TimeZone(identifier: "UTC")!

    private func advertise(_ router: AdapterRouter) -> [String] {
        var output = AdapterOutput()
        // AD: flags 0x06; complete local name "Thing".
        router.route(.advertisement(BLEAdvertisement(
            time: Date(timeIntervalSince1970: 1_764_000_000), address: Self.address, addressType: .public,
            eventType: .advInd, rssi: -50, data: [0x02, 0x01, 0x06, 0x06, 0x09] + Array("Thing".utf8))), into: &output)
        return output.records.flatMap(\.samples).map(\.source).sorted()
    }

    @Test func advertisementsGoToEveryMatchingAdapterAndConnectionsToTheFirstAvailable() throws {
        let broken = ThingAdapter(id: "crashing-plugin", available: false)
        let working = ThingAdapter(id: "working-plugin")
        let router = try AdapterRouter(adapters: [broken, working], timeZone: Self.zone)
        #expect(advertise(router) == ["crashing-plugin", "working-plugin"])
        #expect(router.matchingAdapters[Self.address] == ["crashing-plugin", "working-plugin"])
        #expect(router.adapter(for: Self.address)?.descriptor.id == "working-plugin",
                "a broken adapter that sorts first no longer starves the working one")
        #expect(router.matchedDevices[Self.address] == "working-plugin")

        let healthy = try AdapterRouter(adapters: [ThingAdapter(id: "first"), ThingAdapter(id: "second")], timeZone: Self.zone)
        _ = advertise(healthy)
        #expect(healthy.adapter(for: Self.address)?.descriptor.id == "first", "precedence when both are available")
    }

    @Test func aPinnedDeviceGoesToItsAdapterOnly() throws {
        let pins = try AdapterPins(parsing: ["aa:bb:cc:00:00:01=second"])
        let router = try AdapterRouter(adapters: [ThingAdapter(id: "first"), ThingAdapter(id: "second")],
                                       pins: pins.bluetooth, timeZone: Self.zone)
        #expect(advertise(router) == ["second"])
        #expect(router.adapter(for: Self.address)?.descriptor.id == "second")
        #expect(throws: AdapterRouterError.unknownAdapter("nope", known: ["first"])) {
            try AdapterRouter(adapters: [ThingAdapter(id: "first")], pins: [Self.address: "nope"], timeZone: Self.zone)
        }
    }

    @Test func usbDevicesGoToThePinnedOrTheFirstAvailableAdapter() throws {
        let device = USBDeviceDescription(vendorID: 0x1234, productID: 0x5678)
        let adapters: [any USBAdapter] = [ThingAdapter(id: "crashing-plugin", available: false), ThingAdapter(id: "working-plugin")]
        #expect(adapters.adapter(for: device)?.descriptor.id == "working-plugin")
        let pins = try AdapterPins(parsing: ["1234:5678=crashing-plugin"])
        #expect(adapters.adapter(for: device, pins: pins)?.descriptor.id == "crashing-plugin")
        #expect(adapters.adapter(for: USBDeviceDescription(vendorID: 0x1234, productID: 0x9999)) == nil)
    }

    @Test func pinsAreParsedWithClearErrors() throws {
        let pins = try AdapterPins(parsing: ["AA:BB:CC:DD:EE:FF=gatt-health", "0590:0028=omron-hj720it"])
        #expect(pins.bluetooth == [BLEAddress("AA:BB:CC:DD:EE:FF")!: "gatt-health"])
        #expect(pins.usb == [AdapterPins.USBProductKey(vendorID: 0x0590, productID: 0x0028): "omron-hj720it"])
        #expect(pins.unknownIDs(known: ["gatt-health"]) == ["omron-hj720it"])
        #expect(throws: AdapterPinError.malformed("gatt-health")) { try AdapterPins(parsing: ["gatt-health"]) }
        #expect(throws: AdapterPinError.badDevice("scale=gatt-health", device: "scale")) {
            try AdapterPins(parsing: ["scale=gatt-health"])
        }
        #expect(throws: AdapterPinError.badAdapterID("0590:0028=Omron", id: "Omron")) {
            try AdapterPins(parsing: ["0590:0028=Omron"])
        }
    }
}

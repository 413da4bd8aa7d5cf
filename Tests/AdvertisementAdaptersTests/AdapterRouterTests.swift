import AdapterKit
import BTHome
import Foundation
import TestSupport
import Testing
import Transport
import XiaomiScale

/// A stand-in for the generic GATT weight scale adapter: it takes any device advertising the
/// Weight Scale service 0x181D, and sits after the Xiaomi adapter as in the built-in registry.
private struct GenericWeightScaleStub: BLEAdapter {
    var descriptor: AdapterDescriptor {
        AdapterDescriptor(id: "gatt-weight-scale-stub", name: "stub", version: "0", summary: "stub",
                          matches: [.ble(BLEMatch(serviceUUIDs: [BLEUUID(0x181D)]))], produces: [.bodyMass])
    }

    func makeSession(for device: BLEDeviceTraits, context: AdapterContext) -> any BLEAdapterSession { Session() }

    final class Session: BLEAdapterSession {
        func receive(_ event: TransportEvent, into output: inout AdapterOutput) { output.skip("stub") }
    }
}

@Suite("AdapterRouter with the advertisement adapters")
struct AdapterRouterTests {
    @Test("A Mi scale, a BTHome device, a plain 0x181D scale and an unrelated device")
    func routing() throws {
        let router = try AdapterRouter(adapters: [XiaomiScaleAdapter(), BTHomeAdapter(), GenericWeightScaleStub()],
                                       timeZone: try #require(TimeZone(identifier: "Europe/Berlin")))
        let miScale = "50:FB:19:1B:B5:DC"
        let miBodyScale = "C8:47:8C:00:11:22"
        let bthome = "A4:C1:38:8D:18:B2"
        let otherScale = "00:11:22:33:44:55"
        let heartRateBand = "DE:AD:BE:EF:00:01"
        var events: [BLEAdvertisement] = []
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for second in 0..<3 {
            let time = start.addingTimeInterval(Double(second))
            events.append(try makeAdvertisement(address: miScale, name: "MI SCALE2",
                                                serviceData: [(0x181D, hex("22 9e 43 e5 07 04 0b 10 13 01"))], time: time))
            events.append(try makeAdvertisement(address: miBodyScale, name: "MIBFS",
                                                serviceData: [(0x181B, hex("02 26 e6 07 02 0e 10 29 3a f7 01 9a 38"))],
                                                time: time))
            events.append(try makeAdvertisement(address: bthome, name: "ATC_8D18B2",
                                                serviceData: [(0xFCD2, hex("40 00 09 02 5d 09 06 5e 1f"))], time: time))
            events.append(try makeAdvertisement(address: otherScale, name: "Generic Scale",
                                                serviceData: [(0x181D, hex("00 8c 3c"))], time: time))
            events.append(try makeAdvertisement(address: heartRateBand, name: "HRM", serviceUUIDs: [0x180D], time: time))
        }
        var output = AdapterOutput()
        for advertisement in events { router.route(.advertisement(advertisement), into: &output) }
        router.finish(into: &output)

        let scaleAddress = try #require(BLEAddress(miScale))
        let bodyScaleAddress = try #require(BLEAddress(miBodyScale))
        let bthomeAddress = try #require(BLEAddress(bthome))
        let otherAddress = try #require(BLEAddress(otherScale))
        let bandAddress = try #require(BLEAddress(heartRateBand))
        #expect(router.matchedDevices == [
            scaleAddress: "xiaomi-scale",
            bodyScaleAddress: "xiaomi-scale",
            bthomeAddress: "bthome",
            otherAddress: "gatt-weight-scale-stub",
        ])
        #expect(Array(router.unmatched.keys) == [bandAddress])
        #expect(router.unmatched[bandAddress]?.name == "HRM")
        #expect(router.unmatched[bandAddress]?.serviceUUIDs == [BLEUUID(0x180D)])

        let emitted = samples(output)
        let bySource = Dictionary(grouping: emitted, by: \.source)
        #expect(bySource["xiaomi-scale"]?.map(\.quantity.value).sorted() == [72.45, 86.55])
        #expect(bySource["bthome"]?.map(\.type) == [.ambientTemperature, .bodyMass])
        #expect(bySource["bthome"]?.map(\.quantity.value) == [23.97, 80.3])
        #expect(emitted.allSatisfy { $0.type != .bodyTemperature })
        #expect(emitted.count == 4)
        // Advertisements go to every matching adapter: the 0x181D stub hears the generic scale and
        // the Mi scale (also 0x181D) three times each; the Mi scale's connections stay Xiaomi's.
        #expect(output.skipped == ["repeated-broadcast": 4, "repeated-packet-id": 2, "stub": 6])
        #expect(router.matchingAdapters[scaleAddress] == ["xiaomi-scale", "gatt-weight-scale-stub"])
        #expect(output.rejections.isEmpty)
    }

    @Test("The Xiaomi descriptor needs the name: 0x181D alone is not enough")
    func xiaomiMatchIsSpecific() throws {
        let descriptor = XiaomiScaleAdapter().descriptor
        let address = try #require(BLEAddress("50:FB:19:1B:B5:DC"))
        for name in ["MI_SCALE", "MI SCALE2", "MISCA"] {
            #expect(descriptor.matches(BLEDeviceTraits(address: address, name: name, serviceUUIDs: [BLEUUID(0x181D)])), "\(name)")
        }
        for name in ["MIBCS", "MIBFS"] {
            #expect(descriptor.matches(BLEDeviceTraits(address: address, name: name, serviceUUIDs: [BLEUUID(0x181B)])), "\(name)")
        }
        #expect(!descriptor.matches(BLEDeviceTraits(address: address, name: nil, serviceUUIDs: [BLEUUID(0x181D)])))
        #expect(!descriptor.matches(BLEDeviceTraits(address: address, name: "Renpho", serviceUUIDs: [BLEUUID(0x181D)])))
        #expect(!descriptor.matches(BLEDeviceTraits(address: address, name: "MIBFS", serviceUUIDs: [BLEUUID(0x181D)])))
        #expect(!descriptor.matches(BLEDeviceTraits(address: address, name: "MI_SCALE", serviceUUIDs: [])))
        #expect(descriptor.id == "xiaomi-scale")
        #expect(descriptor.produces == [.bodyMass])
    }

    @Test("The BTHome descriptor matches service data 0xFCD2 and nothing else")
    func bthomeMatch() throws {
        let descriptor = BTHomeAdapter().descriptor
        let address = try #require(BLEAddress("A4:C1:38:8D:18:B2"))
        #expect(descriptor.matches(BLEDeviceTraits(address: address, serviceUUIDs: [BLEUUID(0xFCD2)])))
        #expect(!descriptor.matches(BLEDeviceTraits(address: address, name: "ATC_8D18B2", serviceUUIDs: [BLEUUID(0x181A)])))
        #expect(descriptor.id == "bthome")
        #expect(descriptor.produces == [.bodyMass, .ambientTemperature])
    }

    /// Ever new random addresses that no adapter takes (a crowded place, a hostile capture) are
    /// remembered up to the bound, the oldest forgotten first; a matched device is never forgotten,
    /// and its adapter still sees only the reports whose traits changed matching again.
    @Test("Unmatched devices are bounded; matched ones stay")
    func unmatchedDevicesAreBounded() throws {
        let router = try AdapterRouter(adapters: [BTHomeAdapter()], timeZone: try #require(TimeZone(identifier: "UTC")),
                                       maximumUnmatchedDevices: 10)
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        let bthome = "A4:C1:38:8D:18:B2"
        func stranger(_ index: Int) -> String { String(format: "DE:AD:BE:EF:%02X:%02X", index / 256, index % 256) }
        var output = AdapterOutput()
        for index in 0..<25 {
            if index == 3 {
                router.route(.advertisement(try makeAdvertisement(address: bthome, serviceData: [(0xFCD2, hex("40 00 09 02 5d 09"))],
                                                                  time: time)), into: &output)
            }
            router.route(.advertisement(try makeAdvertisement(address: stranger(index), name: "Phone \(index)", time: time)),
                         into: &output)
        }
        #expect(router.unmatched.count == 10)
        #expect(router.forgottenUnmatched == 15)
        #expect(Set(router.unmatched.keys) == Set(try (15..<25).map { try #require(BLEAddress(stranger($0))) }))
        #expect(router.matchedDevices == [try #require(BLEAddress(bthome)): "bthome"])
        // A forgotten device heard again is new: its traits start afresh, and the oldest goes.
        router.route(.advertisement(try makeAdvertisement(address: stranger(0), time: time)), into: &output)
        let first = try #require(BLEAddress(stranger(0)))
        #expect(router.unmatched[first]?.name == nil)
        #expect(router.unmatched.count == 10)
        #expect(router.forgottenUnmatched == 16)
        #expect(router.unmatched[try #require(BLEAddress(stranger(15)))] == nil)
    }

    @Test("A crowd of scales past the bound of devices: each matched alike, each report a sample, the oldest forgotten")
    func crowdOfAlikeDevices() throws {
        let router = try AdapterRouter(adapters: [XiaomiScaleAdapter(), GenericWeightScaleStub()],
                                       timeZone: try #require(TimeZone(identifier: "Europe/Berlin")), maximumMatchedDevices: 8)
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        func scale(_ index: Int) -> String { String(format: "50:FB:19:1B:%02X:%02X", index / 256, index % 256) }
        var output = AdapterOutput()
        for index in 0..<20 {
            // The same shape of advertisement from every scale but the last, a standard scale only the stub takes.
            let frame = index == 19 ? hex("00 8c 3c") : hex("22 9e 43 e5 07 04 0b 10 13 01")
            router.route(.advertisement(try makeAdvertisement(address: scale(index), name: index == 19 ? "Scale" : "MI SCALE2",
                                                              serviceData: [(0x181D, frame)], time: time)), into: &output)
        }
        #expect(router.forgottenMatched == 12)
        #expect(router.matchedDevices.count == 8)
        #expect(router.matchingAdapters[try #require(BLEAddress(scale(18)))] == ["xiaomi-scale", "gatt-weight-scale-stub"])
        #expect(router.matchingAdapters[try #require(BLEAddress(scale(19)))] == ["gatt-weight-scale-stub"])
        let weighings = samples(output)
        #expect(weighings.count == 19)
        #expect(Set(weighings.compactMap(\.device?.localIdentifier)) == Set((0..<19).map(scale)))
        // The scale's clock (2021-04-11 16:19:01) read in Berlin, as the calendar reads it.
        #expect(weighings.allSatisfy { $0.start == Date(timeIntervalSince1970: 1_618_150_741) })
    }
}

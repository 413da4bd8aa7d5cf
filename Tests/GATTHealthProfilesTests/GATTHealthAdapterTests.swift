import AdapterKit
import Foundation
import HealthModel
import TestSupport
import Testing
import Transport
@testable import GATTHealthProfiles

struct GATTHealthAdapterTests {
    @Test func descriptor() {
        let descriptor = GATTHealthAdapter().descriptor
        #expect(descriptor.id == "gatt-health")
        #expect(Set(descriptor.produces) == [
            .bodyMass, .bodyMassIndex, .height, .bodyFatPercentage, .leanBodyMass, .bodyTemperature,
            .heartRate, .runningSpeed, .walkingSpeed, .distanceWalkingRunning, .stepCount,
            .bloodPressureSystolic, .bloodPressureDiastolic, .bloodGlucose, .oxygenSaturation,
        ])
    }

    @Test(arguments: [UInt16(0x181D), 0x181B, 0x1809, 0x180D, 0x1814, 0x1810, 0x1808, 0x1822])
    func matchesEachHealthService(service: UInt16) {
        let traits = BLEDeviceTraits(address: testAddress, serviceUUIDs: [BLEUUID(0x180F), BLEUUID(service)])
        #expect(GATTHealthAdapter().descriptor.matches(traits))
    }

    @Test func ignoresOtherDevices() {
        let battery = BLEDeviceTraits(address: testAddress, name: "Scale", serviceUUIDs: [BLEUUID(0x180F)])
        #expect(!GATTHealthAdapter().descriptor.matches(battery))
        // A Xiaomi scale's service data under 0x181D also selects it; only its GATT values decide.
        let named = BLEDeviceTraits(address: testAddress, name: "MIBFS", companyIDs: [0x0157])
        #expect(!GATTHealthAdapter().descriptor.matches(named))
    }

    /// An advertised Weight Scale service selects the adapter before any connection; the
    /// connection's values are the conversation's (not routed to the session), and the
    /// advertised name becomes the device name of the samples the session makes of them.
    @Test func advertisementSelectsTheAdapterThroughTheRouter() throws {
        let zone = try #require(TimeZone(identifier: "UTC"))
        let router = try AdapterRouter(adapters: [GATTHealthAdapter()], timeZone: zone)
        var output = AdapterOutput()
        // AD: flags 0x06; complete 16-bit UUIDs 0x181D; complete local name "Scale".
        let advertisement = BLEAdvertisement(
            time: captureStart, address: testAddress, addressType: .public, eventType: .advInd, rssi: -60,
            data: hex("02 01 06 03 03 1D 18 06 09 53 63 61 6C 65"))
        router.route(.advertisement(advertisement), into: &output)
        #expect(router.matchedDevices == [testAddress: "gatt-health"])

        let other = try #require(BLEAddress("11:22:33:44:55:66"))
        router.route(.advertisement(BLEAdvertisement(
            time: captureStart, address: other, addressType: .random, eventType: .advNonconnInd, rssi: -80,
            data: hex("02 01 06 03 03 0F 18"))), into: &output)
        #expect(router.unmatched.keys.contains(other))

        router.route(.connected(BLEConnection(
            time: captureStart, handle: 1, peerAddress: testAddress, peerAddressType: .public, role: .central)),
            into: &output)
        let indication = GATTValue(
            time: captureStart, connection: 1, peerAddress: testAddress, serviceUUID: BLEUUID(0x181D),
            characteristicUUID: BLEUUID(0x2A9D), handle: 3, value: hex("00 8C 3C"), kind: .indication)
        router.route(.gattValue(indication), into: &output)
        #expect(output.records.isEmpty, "a connection's values belong to the conversation")

        let traits = try #require(router.traits(for: testAddress))
        let session = GATTHealthAdapter().makeSession(for: traits, context: AdapterContext(timeZone: zone, source: "gatt-health"))
        session.receive(.gattValue(indication), into: &output)
        let sample = try #require(output.records.first?.samples.first)
        #expect(sample.type == .bodyMass)
        #expect(sample.quantity == Quantity(value: 77.5, unit: .kilogram))
        #expect(sample.source == "gatt-health")
        #expect(sample.device == Device(name: "Scale", localIdentifier: "AA:BB:CC:DD:EE:FF"))
        #expect(sample.metadata.timeZone == zone.identifier)  // "GMT" on Linux
        #expect(sample.metadata.syncIdentifier == "AA:BB:CC:DD:EE:FF/scale/2026-03-01T08:00:00Z")
        #expect(sample.metadata.syncVersion == 1)
    }

    /// A device seen only through GATT (no advertisement in the capture) is matched by the
    /// service of its first attribute value (its values then go to the conversation).
    @Test func discoveredServiceSelectsTheAdapter() throws {
        let router = try AdapterRouter(adapters: [GATTHealthAdapter()], timeZone: try #require(TimeZone(identifier: "UTC")))
        var output = AdapterOutput()
        router.route(.connected(BLEConnection(
            time: captureStart, handle: 7, peerAddress: testAddress, peerAddressType: .random, role: .central)),
            into: &output)
        #expect(router.matchedDevices.isEmpty)
        router.route(.gattValue(GATTValue(
            time: captureStart, connection: 7, peerAddress: nil, serviceUUID: BLEUUID(0x180D),
            characteristicUUID: BLEUUID(0x2A37), handle: 0x10, value: [0x00, 72], kind: .notification)),
            into: &output)
        #expect(router.matchedDevices == [testAddress: "gatt-health"])
        #expect(output.records.isEmpty)
    }
}

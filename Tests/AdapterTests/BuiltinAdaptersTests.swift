import AdapterKit
import BuiltinAdapters
import CaptureFormats
import Foundation
import GATTHealthProfiles
@testable import IngestRuntime
import Testing
import Transport
import XiaomiScale

/// The registry against its fixtures, BLE and USB: every adapter has captures, ids are unique, every match
/// entry is met by a device in the adapter's own captures, and the order sends each device to
/// its own adapter.
@Suite struct BuiltinAdaptersTests {
    private var ids: [String] { Captures.adapterIDs }

    @Test func idsAreUniqueAndKebabCase() {
        #expect(Set(ids).count == ids.count, "\(ids)")
        for id in ids {
            #expect(id.range(of: "^[a-z0-9]+(-[a-z0-9]+)*$", options: .regularExpression) != nil, "\(id)")
        }
    }

    @Test func everyAdapterHasACaptureAndEveryFolderAnAdapter() {
        let fixtures = Captures.all
        for id in ids {
            let good = fixtures.filter { $0.folder == id && !$0.isBad
                && ($0.expectedRecordsPath != nil || Captures.comparedWithVendorExports[id] != nil) }
            #expect(!good.isEmpty, "adapter \(id) has no capture with expected records in Captures/\(id)/")
            let origin = Captures.directory.appendingPathComponent(id).appendingPathComponent("ORIGIN").path
            #expect(FileManager.default.fileExists(atPath: origin), "Captures/\(id)/ has no ORIGIN")
        }
        for folder in Captures.folders where folder != Captures.unsupportedFolder {
            #expect(ids.contains(folder), "Captures/\(folder)/ belongs to no registered adapter")
        }
        // Every capture has what it is compared with.
        for fixture in fixtures where fixture.folder != Captures.unsupportedFolder
            && Captures.comparedWithVendorExports[fixture.folder] == nil {
            if fixture.isBad {
                #expect(fixture.expectedErrorPath != nil, "\(fixture.testDescription) has no .expected-error")
            } else {
                #expect(fixture.expectedRecordsPath != nil, "\(fixture.testDescription) has no .expected.jsonl")
            }
        }
    }

    /// Each BLE match entry of each adapter is met by a device of that adapter's own captures,
    /// and the full registry routes every device of a folder to that folder's adapter.
    @Test(arguments: BuiltinAdapters.bluetooth.map(\.descriptor.id))
    func everyMatchEntryMatchesItsOwnCaptures(_ id: String) async throws {
        let adapter = try #require(BuiltinAdapters.bluetooth.first { $0.descriptor.id == id })
        var devices: [BLEDeviceTraits] = []
        for fixture in Captures.all where fixture.folder == id {
            let replayed = try await Replayed(path: fixture.path)
            devices += replayed.traits.values
            for (address, chosen) in replayed.summary.matched {
                // An advertisement-only adapter's device may be connected to by a conversing adapter of the same
                // devices (eufy-p2-scale for the P2 family); its advertisements still reach this folder's adapter,
                // whose records CaptureReplayTests compares.
                let conversing = BuiltinAdapters.bluetooth.first { $0.descriptor.id == chosen }?.holdsConversations ?? false
                #expect(chosen == id || (!adapter.holdsConversations && conversing),
                        "\(fixture.testDescription): device \(address) went to \(chosen)")
            }
            #expect(!replayed.summary.matched.isEmpty, "\(fixture.testDescription): no device matched")
        }
        let bleMatches = adapter.descriptor.matches.compactMap { match -> BLEMatch? in
            if case .ble(let ble) = match { ble } else { nil }
        }
        #expect(!bleMatches.isEmpty)
        for match in bleMatches {
            #expect(devices.contains { match.matches($0) }, "\(id): no captured device meets \(match)")
        }
    }

    /// Each USB match entry of each USB adapter is met by a device described in that adapter's own captures,
    /// and the registry's order gives every such device to that adapter.
    @Test(arguments: BuiltinAdapters.usb.map(\.descriptor.id))
    func everyUSBMatchEntryMatchesItsOwnCaptures(_ id: String) throws {
        let adapter = try #require(BuiltinAdapters.usb.first { $0.descriptor.id == id })
        var devices: [USBDeviceDescription] = []
        for fixture in Captures.all where fixture.folder == id {
            #expect(fixture.isUSB, "\(fixture.testDescription) is not a usbmon capture")
            let events = try USBMonReader(path: fixture.path).readAll()
            devices += USBCaptureDevices(events: events).devices.compactMap { $0.description() }
        }
        #expect(!devices.isEmpty, "Captures/\(id)/ describes no USB device")
        for device in devices {
            #expect(BuiltinAdapters.usb.first { $0.descriptor.matches(device) }?.descriptor.id == id, "\(device)")
        }
        let usbMatches = adapter.descriptor.matches.compactMap { match -> USBMatch? in
            if case .usb(let usb) = match { usb } else { nil }
        }
        #expect(!usbMatches.isEmpty)
        for match in usbMatches {
            let met = devices.contains { $0.vendorID == match.vendorID && (match.productID ?? $0.productID) == $0.productID }
            #expect(met, "\(id): no captured device meets \(match)")
        }
    }

    /// A Mi scale advertises the standard weight (0x181D) or body composition (0x181B) service
    /// data, which the generic GATT adapter also takes; the registry must offer it to the Xiaomi
    /// adapter first.
    @Test func xiaomiComesBeforeGenericGATTForAMiScale() async throws {
        let xiaomi = try #require(ids.firstIndex(of: XiaomiScaleAdapter.id))
        let gatt = try #require(ids.firstIndex(of: GATTHealthAdapter.id))
        #expect(xiaomi < gatt)
        for fixture in Captures.all where fixture.folder == XiaomiScaleAdapter.id {
            let replayed = try await Replayed(path: fixture.path)
            for (address, traits) in replayed.traits {
                #expect(GATTHealthAdapter().descriptor.matches(traits),
                        "\(fixture.testDescription): the generic adapter would take \(address) too")
                #expect(replayed.summary.matched[address] == XiaomiScaleAdapter.id)
            }
        }
    }

    /// A Mi scale whose name comes later (a scan response, or never under passive scanning):
    /// its first advertisement carries only the 0x181D service data, which the generic adapter
    /// matches, and the router binds the device to that adapter for good. The generic session
    /// ignores advertisements, so every weight frame is lost without a skip or rejection count.
    @Test func miScaleNamedOnlyInTheScanResponseStillReachesTheXiaomiAdapter() throws {
        let address = try #require(BLEAddress("50:FB:19:1B:B5:DC"))
        let frame: [UInt8] = [0x22, 0x9E, 0x43, 0xE5, 0x07, 0x04, 0x0B, 0x10, 0x13, 0x01]  // xiaomi-ble, 86.55 kg
        let serviceData: [UInt8] = [0x02, 0x01, 0x06, 0x0D, 0x16, 0x1D, 0x18] + frame
        let scanResponse: [UInt8] = [0x09, 0x09] + Array("MI_SCALE".utf8)
        let router = try AdapterRouter(adapters: BuiltinAdapters.bluetooth, timeZone: try Captures.timeZone())
        var output = AdapterOutput()
        let start = Date(timeIntervalSince1970: 1_736_931_600)
        for (offset, (type, data)) in [(BLEAdvertisingEventType.advInd, serviceData), (.scanResponse, scanResponse),
                                       (.advInd, serviceData)].enumerated() {
            router.route(.advertisement(BLEAdvertisement(
                time: start.addingTimeInterval(Double(offset)), address: address, addressType: .public,
                eventType: type, rssi: -60, data: data)), into: &output)
        }
        // The Xiaomi descriptor matches broadcast 0x181D service data without waiting for the name.
        #expect(router.matchedDevices[address] == XiaomiScaleAdapter.id)
        #expect(output.records.count == 1)
    }
}

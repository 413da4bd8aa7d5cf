import Foundation
import HealthModel
import Testing

@Suite struct DeviceTests {
    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        // Copies share one box until one of them changes a field (copy on write).
        let scale = Device(name: "MIBFS", manufacturer: "Huami", localIdentifier: "C8:47:8C:00:11:22")
        var renamed = scale
        renamed.name = "Bathroom scale"
        renamed.firmwareVersion = "1.2"
        #expect(scale.name == "MIBFS" && scale.firmwareVersion == nil)
        #expect(renamed.name == "Bathroom scale" && renamed.manufacturer == "Huami" && renamed.firmwareVersion == "1.2")
        #expect(scale != renamed)
        #expect(scale == Device(name: "MIBFS", manufacturer: "Huami", localIdentifier: "C8:47:8C:00:11:22"))
        #expect(Set([scale, renamed, Device(name: "MIBFS", manufacturer: "Huami", localIdentifier: "C8:47:8C:00:11:22")]).count == 2)
    }

    @Test func codableKeepsTheFieldNamesAndLeavesOutNil() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let device = Device(name: "Scale", hardwareVersion: "2", localIdentifier: "C8:47:8C:00:11:22")
        let json = String(decoding: try encoder.encode(device), as: UTF8.self)
        #expect(json == #"{"hardwareVersion":"2","localIdentifier":"C8:47:8C:00:11:22","name":"Scale"}"#)
        #expect(try JSONDecoder().decode(Device.self, from: Data(json.utf8)) == device)
        let all = #"{"firmwareVersion":"f","hardwareVersion":"h","localIdentifier":"l","manufacturer":"m","model":"o","name":"n","softwareVersion":"s","udiDeviceIdentifier":"u"}"#
        let decoded = try JSONDecoder().decode(Device.self, from: Data(all.utf8))
        #expect(decoded == Device(name: "n", manufacturer: "m", model: "o", hardwareVersion: "h", firmwareVersion: "f",
                                  softwareVersion: "s", localIdentifier: "l", udiDeviceIdentifier: "u"))
        #expect(String(decoding: try encoder.encode(decoded), as: UTF8.self) == all)
    }
}

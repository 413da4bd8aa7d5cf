import Foundation
import HealthModel
import SQLiteStore
import Testing

/// Battery charges kept per source and device (schema 17): only for a source with a grant, the
/// newest kept, a value outside 0–100 never, there after the store is reopened.
struct DeviceBatteryTests {
    private let thermometer = Device(name: "ATC_800021", model: "ATC1441 firmware", localIdentifier: "A4:C1:38:D5:D4:98")
    private let at = Date(timeIntervalSince1970: 1_736_931_600)

    @Test func theNewestChargeOfAGrantedSourcesDeviceIsKeptAndNothingElse() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("health.sqlite")
        do {
            let store = try HealthStore(path: path)
            defer { store.close() }
            // No grant yet: nothing kept (a source nobody allowed leaves no trace).
            #expect(try store.recordBatteries([DeviceBattery(source: "room-thermometer", device: thermometer, percent: 81, at: at)]) == 0)
            #expect(try store.deviceBatteries().isEmpty)
            _ = try store.grant(source: "room-thermometer", types: [.ambientTemperature])
            let kept = try store.recordBatteries([
                DeviceBattery(source: "room-thermometer", device: thermometer, percent: 81, at: at),
                DeviceBattery(source: "room-thermometer", device: thermometer, percent: 90, at: at.addingTimeInterval(-60)),
                DeviceBattery(source: "room-thermometer", device: thermometer, percent: 255, at: at.addingTimeInterval(60)),
                DeviceBattery(source: "other", device: thermometer, percent: 50, at: at),
            ])
            #expect(kept == 1, "an older charge, one beyond 100 and an ungranted source's are not kept")
        }
        let reopened = try HealthStore(path: path)
        defer { reopened.close() }
        #expect(try reopened.deviceBatteries() == [DeviceBattery(source: "room-thermometer", device: thermometer, percent: 81, at: at)])
        #expect(try reopened.recordBatteries([DeviceBattery(source: "room-thermometer", device: thermometer, percent: 79,
                                                            at: at.addingTimeInterval(3600))]) == 1)
        #expect(try reopened.deviceBatteries().map(\.percent) == [79])
    }
}

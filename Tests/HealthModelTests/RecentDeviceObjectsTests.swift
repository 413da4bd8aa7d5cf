import Foundation
import Testing
@testable import HealthModel

/// One decoder reading many lines reuses the devices of earlier lines only for the very same
/// object bytes: a device that differs in one byte, a longer value or a key order is its own.
struct RecentDeviceObjectsTests {
    private func line(device: String) -> String {
        #"{"type":"heartRate","value":61,"unit":"count/min","start":"2024-05-01T10:00:00Z","end":"2024-05-01T10:00:00Z","source":"s","device":"#
            + device + "}"
    }

    @Test func onlyTheSameObjectBytesGiveTheRememberedDevice() throws {
        let decoder = HealthRecordDecoder(defaultSource: "replay")
        let objects = [
            #"{"name":"Strap","localIdentifier":"AA:BB"}"#,
            #"{"name":"Strap","localIdentifier":"AA:BC"}"#,
            #"{"name":"Strap2","localIdentifier":"AA:BB"}"#,
            #"{"localIdentifier":"AA:BB","name":"Strap"}"#,
            #"{"name":"Strap"}"#,
            #"{}"#,
        ]
        // Every object more often than the memory holds them, in turns, and the lines decoded
        // through the JSON tree alone as the reference.
        for round in 0..<3 {
            for object in objects + objects.reversed() {
                let text = line(device: object)
                let bytes = Array(text.utf8)
                let fast = try decoder.decodeLine(text)
                let reference = try bytes.withUnsafeBufferPointer { try decoder.decodeLineThroughTree($0) }
                guard case .sample(let sample) = fast, case .sample(let expected) = reference else {
                    Issue.record("not a sample: \(text)")
                    return
                }
                #expect(sample.device == expected.device, "round \(round): \(object)")
            }
        }
    }

    @Test func theMemoryIsBoundedAndKeepsNoLongObject() {
        let ways = RecentSampleFields.Values.ways
        var memory = RecentByBytes<Device>(ways: ways, maximumBytes: RecentSampleFields.Values.maximumBytes)
        let long = Array(("{\"name\":\"" + String(repeating: "x", count: 600) + "\"}").utf8)
        long.withUnsafeBufferPointer { memory.remember(Device(name: "long"), bytes: $0) }
        #expect(long.withUnsafeBufferPointer { memory.prefixMatch(of: $0) } == nil)
        for index in 0..<(ways + 1) {
            Array("{\"name\":\"d\(index)\"}".utf8).withUnsafeBufferPointer { memory.remember(Device(name: "d\(index)"), bytes: $0) }
        }
        // The first was replaced by the last; the others are found, with their lengths.
        #expect(Array(#"{"name":"d0"}"#.utf8).withUnsafeBufferPointer { memory.prefixMatch(of: $0) } == nil)
        let found = Array(#"{"name":"d1"},"rest":1"#.utf8).withUnsafeBufferPointer { memory.prefixMatch(of: $0) }
        #expect(found?.value.name == "d1")
        #expect(found?.length == 13)
        // Exact lookups (types, units, sources) take the whole bytes only.
        #expect(Array(#"{"name":"d1"}"#.utf8).withUnsafeBufferPointer { memory.value(bytes: $0) }?.name == "d1")
        #expect(Array(#"{"name":"d1"},"#.utf8).withUnsafeBufferPointer { memory.value(bytes: $0) } == nil)
    }

    /// Places are kept apart (an export's first attribute is not looked up among its second's),
    /// each replacing its own oldest value; empty bytes are a value like any other.
    @Test func placesAreKeptApart() {
        var memory = RecentByBytes<String>(places: 2, ways: 2, maximumBytes: 16)
        let heartRate = Array("HKQuantityTypeIdentifierHeartRate".utf8), band = Array("Band".utf8), empty: [UInt8] = []
        heartRate.withUnsafeBufferPointer { memory.remember("too long", place: 0, bytes: $0) }
        band.withUnsafeBufferPointer { memory.remember("band", place: 1, bytes: $0) }
        empty.withUnsafeBufferPointer { memory.remember("empty", place: 0, bytes: $0) }
        #expect(heartRate.withUnsafeBufferPointer { memory.value(place: 0, bytes: $0) } == nil)
        #expect(band.withUnsafeBufferPointer { memory.value(place: 0, bytes: $0) } == nil)
        #expect(band.withUnsafeBufferPointer { memory.value(place: 1, bytes: $0) } == "band")
        #expect(empty.withUnsafeBufferPointer { memory.value(place: 0, bytes: $0) } == "empty")
        #expect(empty.withUnsafeBufferPointer { memory.value(place: 1, bytes: $0) } == nil)
        // Two more at place 1 replace "band" (its oldest), not the value at place 0.
        for name in ["a", "b"] { Array(name.utf8).withUnsafeBufferPointer { memory.remember(name, place: 1, bytes: $0) } }
        #expect(band.withUnsafeBufferPointer { memory.value(place: 1, bytes: $0) } == nil)
        #expect(empty.withUnsafeBufferPointer { memory.value(place: 0, bytes: $0) } == "empty")
    }
}

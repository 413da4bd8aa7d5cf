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
        var memory = RecentValues<Device>()
        let long = Array(("{\"name\":\"" + String(repeating: "x", count: 600) + "\"}").utf8)
        long.withUnsafeBufferPointer { memory.remember($0, Device(name: "long")) }
        #expect(long.withUnsafeBufferPointer { memory.prefixMatch(of: $0) } == nil)
        for index in 0..<(RecentValues<Device>.limit + 1) {
            Array("{\"name\":\"d\(index)\"}".utf8).withUnsafeBufferPointer { memory.remember($0, Device(name: "d\(index)")) }
        }
        // The first was replaced by the last; the others are found, with their lengths.
        #expect(Array(#"{"name":"d0"}"#.utf8).withUnsafeBufferPointer { memory.prefixMatch(of: $0) } == nil)
        let found = Array(#"{"name":"d1"},"rest":1"#.utf8).withUnsafeBufferPointer { memory.prefixMatch(of: $0) }
        #expect(found.map { memory[$0.position].name } == "d1")
        #expect(found?.length == 13)
        // Exact lookups (types, units, sources) take the whole bytes only.
        #expect(Array(#"{"name":"d1"}"#.utf8).withUnsafeBufferPointer { memory.value(for: $0) }?.name == "d1")
        #expect(Array(#"{"name":"d1"},"#.utf8).withUnsafeBufferPointer { memory.value(for: $0) } == nil)
    }
}

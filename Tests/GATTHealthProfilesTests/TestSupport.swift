import Foundation
import Transport

/// Bytes from a hex string with spaces, e.g. `"00 8C 3C"`. Test-only: a typo is a test bug.
func bytes(_ hex: String) -> [UInt8] {
    hex.split(separator: " ").map { byte in
        guard let value = UInt8(byte, radix: 16) else { fatalError("bad hex byte \(byte) in test vector") }
        return value
    }
}

/// The device every adapter test talks to.
let testAddress = BLEAddress("AA:BB:CC:DD:EE:FF")!

/// 2026-03-01T08:00:00Z, the capture clock's start in adapter tests.
let captureStart = Date(timeIntervalSince1970: 1_772_352_000)

import Foundation
import Transport

/// The device every adapter test talks to.
let testAddress = BLEAddress("AA:BB:CC:DD:EE:FF")!

/// 2026-03-01T08:00:00Z, the capture clock's start in adapter tests.
let captureStart = Date(timeIntervalSince1970: 1_772_352_000)

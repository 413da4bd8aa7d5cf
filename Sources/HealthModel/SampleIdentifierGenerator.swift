import Foundation
import Synchronization

/// Makes random (version 4, RFC 9562) uuids for samples without reading the kernel's random
/// source each time: one 64-bit seed (from the system generator, or given for reproducible
/// tests) drives a SplitMix64 sequence. Not for secrets — sample ids only need to be unique,
/// and 122 random bits from a seed drawn per process are.
public final class SampleIdentifierGenerator: Sendable {
    /// The process-wide generator, seeded from the system's random source once.
    public static let shared = SampleIdentifierGenerator()

    private let state: Mutex<UInt64>

    /// A generator seeded from the system's random source.
    public convenience init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: system.next())
    }

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = Mutex(seed) }

    /// The next uuid: version 4, variant 10.
    public func next() -> UUID {
        let (high, low) = state.withLock { state -> (UInt64, UInt64) in
            (Self.splitMix(&state), Self.splitMix(&state))
        }
        let versioned = (high & ~0xF000) | 0x4000  // version nibble: bits 12-15 of the third group
        let varianted = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { output in
            for shift in 0..<8 {
                output[shift] = UInt8(truncatingIfNeeded: versioned >> (56 - 8 * shift))
                output[8 + shift] = UInt8(truncatingIfNeeded: varianted >> (56 - 8 * shift))
            }
        }
        return UUID(uuid: bytes)
    }

    private static func splitMix(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

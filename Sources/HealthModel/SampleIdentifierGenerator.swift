import Foundation
import Synchronization

/// Makes time-ordered (version 7, RFC 9562) uuids for samples without reading the kernel's
/// random source each time.
///
/// Layout (RFC 9562 §5.7, with the counter of §6.2 method 1): 48 bits of Unix time in
/// milliseconds, the version, a 12-bit counter, the variant, and 62 random bits. Within one
/// millisecond the counter counts up (from a random start below 2048, so a burst has room);
/// when it runs out, or the clock steps back, the timestamp moves on by one millisecond, so the
/// uuids of one generator strictly increase. Ids made one after another therefore land next to
/// each other in a store's uuid index (a random uuid touches a random page of it: importing a
/// few hundred thousand samples spent a fifth of its time re-reading and re-writing those pages).
///
/// The random bits come from one 64-bit seed (from the system generator, or given for
/// reproducible tests) driving a SplitMix64 sequence: sample ids need to be unique, not secret.
/// A v7 uuid shows when the sample was stored (to the millisecond), which the sample's own
/// dates already come close to.
public final class SampleIdentifierGenerator: Sendable {
    /// The process-wide generator, seeded from the system's random source once.
    public static let shared = SampleIdentifierGenerator()

    private struct State {
        var random: UInt64
        var milliseconds: UInt64 = 0
        var counter: UInt64 = 0
    }

    private let state: Mutex<State>
    private let clock: @Sendable () -> UInt64

    /// A generator seeded from the system's random source, on the system clock.
    public convenience init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: system.next())
    }

    /// A generator whose random bits are fixed by `seed`; `milliseconds` is the clock (Unix time
    /// in milliseconds), the system's by default. With a fixed clock the sequence is reproducible.
    public init(seed: UInt64, milliseconds: @escaping @Sendable () -> UInt64 = SampleIdentifierGenerator.systemMilliseconds) {
        state = Mutex(State(random: seed))
        clock = milliseconds
    }

    /// Unix time in milliseconds from the real-time clock.
    @Sendable public static func systemMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) &* 1000 &+ UInt64(max(0, now.tv_nsec) / 1_000_000)
    }

    private static let counterLimit: UInt64 = 0xFFF

    /// The next uuid: version 7, variant 10, greater than every uuid this generator made before.
    public func next() -> UUID {
        let now = clock() & 0xFFFF_FFFF_FFFF
        let (high, low) = state.withLock { state -> (UInt64, UInt64) in
            let random = Self.splitMix(&state.random)
            if now > state.milliseconds {
                state.milliseconds = now
                state.counter = random >> 53  // 11 bits: the burst that follows has room to count
            } else if state.counter < Self.counterLimit {
                state.counter += 1
            } else {
                state.milliseconds += 1
                state.counter = 0
            }
            return (state.milliseconds << 16 | 0x7000 | state.counter, Self.splitMix(&state.random))
        }
        let varianted = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { output in
            for shift in 0..<8 {
                output[shift] = UInt8(truncatingIfNeeded: high >> (56 - 8 * shift))
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

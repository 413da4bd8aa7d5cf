/// The ways ``verifyFragmentation(of:randomSplits:seed:decode:)`` cuts a byte stream.
public enum Fragmentation: Equatable, Sendable, CustomStringConvertible {
    /// One chunk: the whole input.
    case whole
    /// One chunk per byte.
    case byteByByte
    /// Chunks of random lengths (1 to 2 × the average), from a seeded generator so a failure repeats.
    case randomChunks(seed: UInt64)

    public var description: String {
        switch self {
        case .whole: "whole"
        case .byteByByte: "byte by byte"
        case .randomChunks(let seed): "random chunks (seed \(seed))"
        }
    }

    /// `input` cut into consecutive chunks that together are `input`; empty input gives no chunks.
    public func chunks(of input: [UInt8]) -> [ArraySlice<UInt8>] {
        switch self {
        case .whole:
            return input.isEmpty ? [] : [input[...]]
        case .byteByByte:
            return input.indices.map { input[$0...$0] }
        case .randomChunks(let seed):
            var generator = SplitMix64(seed: seed)
            var chunks: [ArraySlice<UInt8>] = []
            var start = 0
            let longest = max(2, input.count / 4)
            while start < input.count {
                let length = min(input.count - start, 1 + Int(generator.next() % UInt64(longest)))
                chunks.append(input[start..<start + length])
                start += length
            }
            return chunks
        }
    }
}

/// A decoder whose output depended on how its input was cut.
public struct FragmentationMismatch<Output: Sendable>: Error, CustomStringConvertible {
    /// The cut that gave a different output.
    public var fragmentation: Fragmentation
    /// The output for the whole input.
    public var expected: Output
    /// The output for the cut input.
    public var actual: Output

    public var description: String {
        "fed \(fragmentation), the decoder gave \(actual) instead of \(expected) (the output for the whole input)"
    }
}

/// Feeds `input` to a fresh decoder whole, byte by byte and in `randomSplits` random cuts, and
/// checks every cut gives the output of the whole input (a stream decoder must not care where
/// reads end). `decode` builds a new decoder, feeds it the chunks in order and returns what it
/// made of them.
/// - Returns: the output for the whole input, for the caller to check against what it expects.
/// - Throws: ``FragmentationMismatch`` for the first cut that differs, or what `decode` throws.
@discardableResult
public func verifyFragmentation<Output: Equatable & Sendable>(
    of input: [UInt8], randomSplits: Int = 16, seed: UInt64 = 0x1D6E_57D0,
    decode: ([ArraySlice<UInt8>]) throws -> Output
) throws -> Output {
    let expected = try decode(Fragmentation.whole.chunks(of: input))
    let cuts = [Fragmentation.byteByByte] + (0..<randomSplits).map { Fragmentation.randomChunks(seed: seed &+ UInt64($0)) }
    for fragmentation in cuts {
        let actual = try decode(fragmentation.chunks(of: input))
        guard actual == expected else {
            throw FragmentationMismatch(fragmentation: fragmentation, expected: expected, actual: actual)
        }
    }
    return expected
}

/// SplitMix64 (Steele, Lea, Flood 2014): a small seeded generator, so a failing cut or mutation
/// can be repeated.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

import Foundation

/// Values remembered with the bytes they were made from: what a reader of repetitive input (an
/// export's tags, replayed sample lines) keeps so that the same bytes are not decoded or parsed
/// again, and so that the records made from them share one value (its storage, not a copy).
///
/// `ways` values are kept for each of `places` places (the first attribute of a tag, the
/// second…; one place for a single field), the oldest of a place replaced first. Bytes longer
/// than `maximumBytes` are never kept, so hostile input's megabyte values are not pinned. A
/// lookup compares lengths first, then bytes.
///
/// The methods are inlinable so that readers in other modules get them specialized for their
/// value type (they run once or more per record).
public struct RecentByBytes<Value> {
    @usableFromInline let places: Int
    @usableFromInline let ways: Int
    @usableFromInline let maximumBytes: Int
    /// Empty until the first value is remembered (a memory made for one line and dropped costs
    /// no allocation).
    @usableFromInline var keys: [[UInt8]] = []
    @usableFromInline var values: [Value?] = []
    @usableFromInline var nextWay: [Int] = []

    /// An empty memory of `ways` values for each of `places` places, each made from at most
    /// `maximumBytes` bytes.
    @inlinable public init(places: Int = 1, ways: Int, maximumBytes: Int) {
        self.places = max(1, places)
        self.ways = max(1, ways)
        self.maximumBytes = maximumBytes
    }

    /// The value remembered at `place` for exactly `bytes`, if any.
    @inlinable public func value(place: Int = 0, bytes: UnsafeBufferPointer<UInt8>) -> Value? {
        guard !keys.isEmpty else { return nil }
        let first = place * ways
        for slot in first..<first + ways where keys[slot].count == bytes.count {
            guard let value = values[slot] else { continue }
            if Self.bytes(keys[slot], startBytesOf: bytes) { return value }
        }
        return nil
    }

    /// The value remembered at `place` whose bytes `bytes` start with (`bytes` may go on past
    /// them), and how many bytes it was made from.
    @inlinable public func prefixMatch(place: Int = 0, of bytes: UnsafeBufferPointer<UInt8>) -> (value: Value, length: Int)? {
        guard !keys.isEmpty else { return nil }
        let first = place * ways
        for slot in first..<first + ways where !keys[slot].isEmpty && keys[slot].count <= bytes.count {
            guard let value = values[slot] else { continue }
            if Self.bytes(keys[slot], startBytesOf: bytes) { return (value, keys[slot].count) }
        }
        return nil
    }

    /// Keeps `value`, made from `bytes`, at `place` in place of the oldest there; nothing when
    /// `bytes` is longer than `maximumBytes`.
    @inlinable public mutating func remember(_ value: Value, place: Int = 0, bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count <= maximumBytes else { return }
        if keys.isEmpty {
            keys = Array(repeating: [], count: places * ways)
            values = Array(repeating: nil, count: places * ways)
            nextWay = Array(repeating: 0, count: places)
        }
        let slot = place * ways + nextWay[place]
        nextWay[place] = (nextWay[place] + 1) % ways
        keys[slot].removeAll(keepingCapacity: true)
        keys[slot].append(contentsOf: bytes)
        values[slot] = value
    }

    /// Whether `bytes` (at least as long as `key`) start with the bytes of `key`.
    @inlinable static func bytes(_ key: [UInt8], startBytesOf bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        key.withUnsafeBufferPointer { key in
            guard let keyBase = key.baseAddress, let base = bytes.baseAddress else { return key.isEmpty }
            return memcmp(keyBase, base, key.count) == 0
        }
    }
}

extension RecentByBytes: Sendable where Value: Sendable {}

import Foundation

/// COPY's binary format (`COPY … FROM STDIN (FORMAT binary)`, PostgreSQL's "binary copy file
/// format"): an 11-byte signature, flags and header-extension length, then each row as a 16-bit
/// field count and each field as a 32-bit length (-1 for NULL) and the type's binary (send/recv)
/// form, all in network byte order, and a trailer of -1. The server parses no numbers, uuids or
/// timestamps: they arrive in their stored form.
public struct PostgresCopyBinary {
    /// The data so far (header included).
    public private(set) var bytes: [UInt8]

    /// Seconds from the Unix epoch to PostgreSQL's (2000-01-01 00:00:00 UTC).
    static let postgresEpochSeconds = 946_684_800.0

    /// Starts the data with the header; `capacity` is a guess of the final size in bytes.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(max(capacity, 64))
        bytes += Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
        appendInteger(Int32(0))  // flags: no OIDs
        appendInteger(Int32(0))  // no header extension
    }

    private mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Starts a row of `fields` fields.
    public mutating func beginRow(fields: Int16) {
        appendInteger(fields)
    }

    /// A NULL field.
    public mutating func appendNull() {
        appendInteger(Int32(-1))
    }

    /// A `text` field (UTF-8; the server converts it to the database's encoding), or NULL.
    public mutating func append(text: String?) {
        guard let text else { return appendNull() }
        let utf8 = text.utf8
        appendInteger(Int32(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// A `uuid` field: its 16 bytes.
    public mutating func append(uuid: UUID) {
        appendInteger(Int32(16))
        withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
    }

    /// A `double precision` field: the IEEE 754 bits.
    public mutating func append(float8: Double) {
        appendInteger(Int32(8))
        appendInteger(float8.bitPattern)
    }

    /// A `bigint` field.
    public mutating func append(int8: Int64) {
        appendInteger(Int32(8))
        appendInteger(int8)
    }

    /// A `timestamptz` field: microseconds since 2000-01-01 UTC (`timestampMicroseconds`).
    public mutating func append(timestampMicroseconds: Int64) {
        appendInteger(Int32(8))
        appendInteger(timestampMicroseconds)
    }

    /// A `jsonb` field: format version 1 and the JSON text (the server parses it as `jsonb_in` does).
    public mutating func append(jsonb: String) {
        let utf8 = jsonb.utf8
        appendInteger(Int32(utf8.count + 1))
        bytes.append(1)
        bytes.append(contentsOf: utf8)
    }

    /// Ends the data with the trailer and returns it.
    public mutating func finish() -> [UInt8] {
        appendInteger(Int16(-1))
        return bytes
    }

    /// The `timestamptz` PostgreSQL's `to_timestamp(seconds)` makes of Unix epoch `seconds`, as
    /// microseconds since 2000-01-01, computed the way the server computes it (shift the epoch,
    /// scale, round half to even), so a row copied in binary equals one converted by the server;
    /// nil where `to_timestamp` would refuse the value (not finite, or outside 4713 BC–294276 AD).
    public static func timestampMicroseconds(fromUnixSeconds seconds: Double) -> Int64? {
        // SECS_PER_DAY × (DATETIME_MIN_JULIAN − UNIX_EPOCH_JDATE) and × (TIMESTAMP_END_JULIAN − UNIX_EPOCH_JDATE).
        guard seconds.isFinite, seconds >= -210_866_803_200, seconds < 9_224_318_016_000 else { return nil }
        let microseconds = ((seconds - postgresEpochSeconds) * 1_000_000).rounded(.toNearestOrEven)
        // The server's END_TIMESTAMP check after rounding; the lower bound is exact here.
        guard microseconds < 9_223_371_331_200_000_000 else { return nil }
        return Int64(microseconds)
    }
}

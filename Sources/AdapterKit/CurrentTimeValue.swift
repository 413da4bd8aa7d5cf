import Foundation
import Transport

/// The Current Time characteristic's value (0x2A2B, 10 bytes): Exact Time 256 (year uint16,
/// month, day, hours, minutes, seconds, day of week 1 = Monday … 7 = Sunday, fractions of
/// 1/256 s) and Adjust Reason (bit 0 manual time update). Written by the adapters that set a
/// device's clock through it (standard Current Time service, the Mi scales).
public enum CurrentTimeValue {
    /// The value for `date` read in `zone`, adjust reason "manual time update".
    public static func bytes(for date: Date, in zone: TimeZone) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday, .nanosecond], from: date)
        let year = UInt16(clamping: c.year ?? 0)
        let weekday = c.weekday.map { UInt8(($0 + 5) % 7 + 1) } ?? 0  // Foundation: 1 = Sunday
        let fractions = UInt8(clamping: (c.nanosecond ?? 0) / 3_906_250)
        return [UInt8(year & 0xFF), UInt8(year >> 8), UInt8(clamping: c.month ?? 0), UInt8(clamping: c.day ?? 0),
                UInt8(clamping: c.hour ?? 0), UInt8(clamping: c.minute ?? 0), UInt8(clamping: c.second ?? 0),
                weekday, fractions, 0x01]
    }
}

extension GATTConversationLink {
    /// Writes the link's clock, read in `zone`, to `characteristic` (a Current Time value, with
    /// response). A device refusing it is not an error of the conversation: the refusal is
    /// returned, with the time written, for the adapter to note; a lost link is thrown.
    public func writeCurrentTime(to characteristic: BLEUUID, in zone: TimeZone)
        async throws(GATTConversationError) -> (refusal: GATTConversationError?, time: Date)
    {
        let now = await now()
        do {
            try await write(CurrentTimeValue.bytes(for: now, in: zone), to: characteristic, withResponse: true)
            return (nil, now)
        } catch {
            if case .disconnected = error { throw error }
            return (error, now)
        }
    }
}

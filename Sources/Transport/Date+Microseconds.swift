import Foundation

extension Date {
    /// Creates a date from microseconds since the Unix epoch.
    public init(microsecondsSince1970 microseconds: Int64) {
        let seconds = microseconds / 1_000_000
        let remainder = microseconds % 1_000_000
        self.init(timeIntervalSince1970: Double(seconds) + Double(remainder) / 1_000_000)
    }
}

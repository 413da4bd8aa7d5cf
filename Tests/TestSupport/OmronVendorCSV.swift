import Foundation

/// The Omron software's CSV export of the HJ-720IT: one row per day with the day's totals, 24
/// hourly step counts and (in full exports) 24 hourly aerobic step counts.
public struct OmronVendorCSV: Sendable {
    /// One row of the export's table.
    public struct Day: Sendable {
        /// `2009-05-14`.
        public var date: String
        public var totalSteps: Int
        public var aerobicSteps: Int
        public var aerobicMinutes: Int
        public var kilocalories: Int
        /// In the export's unit (miles), as written (two decimals).
        public var distance: Double
        public var fatGrams: Double
        public var hourlySteps: [Int]
        /// Empty when the row stops after the hourly steps.
        public var hourlyAerobicSteps: [Int]
    }

    /// The rows of the table, in file order; a number that does not parse reads as -1.
    public var days: [Day] = []

    public init(path: String) throws {
        try self.init(url: URL(fileURLWithPath: path))
    }

    public init(url: URL) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        var inTable = false
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if fields.first == "Date" {
                inTable = true
                continue
            }
            guard inTable else { continue }
            let date = fields[0].split(separator: "/").compactMap { Int($0) }
            guard date.count == 3, fields.count >= 31 else {
                if fields[0].isEmpty { inTable = false }
                continue
            }
            func number(_ index: Int) -> Int { Int(fields[index]) ?? -1 }
            days.append(Day(
                date: String(format: "%04d-%02d-%02d", date[2], date[0], date[1]),
                totalSteps: number(1), aerobicSteps: number(2), aerobicMinutes: number(3), kilocalories: number(4),
                distance: Double(fields[5]) ?? -1, fatGrams: Double(fields[6]) ?? -1,
                hourlySteps: (7..<31).map(number), hourlyAerobicSteps: fields.count >= 55 ? (31..<55).map(number) : []))
        }
    }
}

import Foundation

/// The Omron software's CSV export of the HJ-720IT: one row per day with the day's totals and 24 hourly step counts.
struct OmronVendorExport {
    struct Day {
        /// `2009-05-14`.
        var date: String
        var totalSteps: Int
        var aerobicSteps: Int
        var kilocalories: Int
        /// Miles, as exported (two decimals).
        var distance: Double
        var hourlySteps: [Int]
    }

    var days: [Day] = []

    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var inTable = false
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if fields.first == "Date" {
                inTable = true
                continue
            }
            let date = fields[0].split(separator: "/").compactMap { Int($0) }
            guard inTable, date.count == 3, fields.count >= 31 else {
                if fields[0].isEmpty { inTable = false }
                continue
            }
            func number(_ index: Int) -> Int { Int(fields[index]) ?? -1 }
            days.append(Day(date: String(format: "%04d-%02d-%02d", date[2], date[0], date[1]),
                            totalSteps: number(1), aerobicSteps: number(2), kilocalories: number(4),
                            distance: Double(fields[5]) ?? -1, hourlySteps: (7..<31).map(number)))
        }
    }
}

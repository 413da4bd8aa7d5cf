import Foundation

/// The Omron software's CSV export: one row per day with the totals and 24 hourly step counts.
struct OmronVendorCSV {
    struct Day {
        /// `2009-05-14`.
        var date: String
        var totalSteps: Int
        var aerobicSteps: Int
        var aerobicMinutes: Int
        var kilocalories: Int
        /// In the export's unit (miles), as written (two decimals).
        var distance: Double
        var fatGrams: Double
        var hourlySteps: [Int]
        var hourlyAerobicSteps: [Int]
    }

    var days: [Day] = []

    init(url: URL) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        var inTable = false
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            if fields.first == "Date" {
                inTable = true
                continue
            }
            guard inTable else { continue }
            let parts = fields[0].split(separator: "/").compactMap { Int($0) }
            guard parts.count == 3, fields.count >= 55 else {
                if fields[0].isEmpty { inTable = false }
                continue
            }
            func int(_ index: Int) -> Int { Int(fields[index]) ?? -1 }
            days.append(Day(
                date: String(format: "%04d-%02d-%02d", parts[2], parts[0], parts[1]),
                totalSteps: int(1), aerobicSteps: int(2), aerobicMinutes: int(3), kilocalories: int(4),
                distance: Double(fields[5]) ?? -1, fatGrams: Double(fields[6]) ?? -1,
                hourlySteps: (7..<31).map(int), hourlyAerobicSteps: (31..<55).map(int)))
        }
    }
}

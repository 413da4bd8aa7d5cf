import Foundation
import HealthModel

/// A plain left-aligned text table. Every cell is printed through `PrintableText.escaped`: a
/// name with an ESC sequence or a newline cannot act on the terminal or break the rows.
struct Table {
    var header: [String]
    var rows: [[String]]

    var rendered: String {
        var layout = TableLayout(header: header)
        for row in rows { layout.measure(row) }
        return layout.line(header, escaping: false) + rows.map { layout.line($0) }.joined()
    }
}

/// The column widths of a `Table`, for printing one row at a time: measure every row in a
/// first pass, then print each as it comes in a second, holding none of them.
struct TableLayout {
    private(set) var widths: [Int]

    init(header: [String]) {
        widths = header.map(\.count)
    }

    /// Widens the columns to fit `row`.
    mutating func measure(_ row: [String]) {
        for (i, cell) in row.enumerated() where i < widths.count {
            widths[i] = max(widths[i], PrintableText.escaped(cell).count)
        }
    }

    /// One printed line: each cell but the last padded to its column's width and two spaces (a
    /// cell wider than its column, a row added between the passes, is printed whole).
    func line(_ cells: [String], escaping: Bool = true) -> String {
        cells.enumerated().map { i, cell in
            let text = escaping ? PrintableText.escaped(cell) : cell
            guard i < cells.count - 1, i < widths.count else { return text }
            return text + String(repeating: " ", count: max(0, widths[i] + 2 - text.utf16.count))
        }.joined() + "\n"
    }
}

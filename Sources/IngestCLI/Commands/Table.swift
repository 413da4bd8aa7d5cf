import Foundation
import HealthModel

/// A plain left-aligned text table. Every cell is printed through `PrintableText.escaped`: a
/// name with an ESC sequence or a newline cannot act on the terminal or break the rows.
struct Table {
    var header: [String]
    var rows: [[String]]

    var rendered: String {
        let rows = self.rows.map { $0.map(PrintableText.escaped) }
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == cells.count - 1 ? cell : cell.padding(toLength: widths[i] + 2, withPad: " ", startingAt: 0)
            }.joined() + "\n"
        }
        return ([header] + rows).map(line).joined()
    }
}

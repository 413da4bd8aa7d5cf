import Foundation
import HealthModel
import Logging

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

extension TableLayout {
    /// Prints the table of the rows `read` hands out, holding none of them: a first read
    /// measures the columns, a second prints each row as it comes (stopping with
    /// `SampleStreamEnded` once the reader of `output` is gone). Returns how many rows the first
    /// read found; with none, nothing is printed.
    static func stream(header: [String], to output: any TextWriter,
                       read: (_ row: ([String]) throws -> Void) throws -> Void) throws -> Int {
        var layout = TableLayout(header: header)
        var count = 0
        try read { row in
            layout.measure(row)
            count += 1
        }
        guard count > 0 else { return 0 }
        output.write(layout.line(header, escaping: false))
        try read { row in
            if output.isReaderGone { throw SampleStreamEnded() }
            output.write(layout.line(row))
        }
        return count
    }
}

import RosterCore

/// Columns of text aligned by terminal width, with an upper-case header line that `--no-legend` drops. Every cell
/// is shown escaped (`FreeText.escaped`, as the daemon's log lines are): a newline, an ANSI escape or a bidi
/// control in a stored value, however old the row, prints visibly and cannot forge a row or hide the rest.
struct Table {
    let columns: [String]
    var rows: [[String]] = []

    /// The lines, without trailing spaces; the last column is never padded.
    func render(legend: Bool, style: Style = .none) -> [String] {
        let all = ((legend ? [columns] : []) + rows).map { $0.map(FreeText.escaped) }
        var widths = [Int](repeating: 0, count: columns.count)
        for row in all {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], displayWidth(cell))
            }
        }
        return all.enumerated().map { number, row in
            let line = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(widths[index])
            }.joined(separator: " ")
            return legend && number == 0 ? style.paint(line, .bold) : line
        }
    }
}

/// Lays a `ContactsScreen` out for a terminal of a given size: the search line, the count, the results with
/// the matched parts highlighted, and the keys. Pure, like `FormRenderer`, whose frames the painter draws.
struct ContactsRenderer {
    typealias Run = FormRenderer.Run

    let text: ContactsText
    let rows: Int
    let columns: Int

    /// The look of a matched part: bold and yellow, readable on the reversed selected row too.
    static let match = Style.Attributes(colour: .yellow, bold: true)

    /// Lines above the results (search, blank, header) and below them (help).
    private static let chrome = 4

    func frame(_ screen: ContactsScreen) -> FormRenderer.Frame {
        let indent = 2 + displayWidth(text.label) + 2
        let count = screen.resultsQuery == nil ? "…" : (screen.isCurrent ? "" : "… ") + "\(screen.items.count)/\(screen.total)"
        let boxWidth = max(8, min(40, columns - indent - 2 - 2 - displayWidth(count)))
        let (visible, cursorColumn) = FormRenderer.window(screen.editor.characters, cursor: screen.editor.cursor, width: boxWidth - 1)
        let box = screen.editor.characters.isEmpty
            ? Run(text: fit(screen.placeholder, boxWidth - 1).padding(boxWidth), look: .dim)
            : Run(text: String(visible).padding(boxWidth))
        var lines: [[Run]] = [[Run(text: "› ", look: .colour(.cyan)), Run(text: text.label + "  ", look: .bold), Run(text: "[", look: .dim),
                               box, Run(text: "]", look: .dim), Run(text: "  " + count, look: screen.isCurrent ? .bold : .dim)], []]

        let shown = max(rows - ContactsRenderer.chrome, 1)
        let first = max(0, screen.selected - shown + 1)
        let page = Array(screen.items.enumerated().dropFirst(first).prefix(shown))
        let nameWidth = min(max(displayWidth(text.columns[0]), page.map { displayWidth(oneLine($0.element.name)) }.max() ?? 0),
                            max(10, columns * 2 / 5))
        let phoneWidth = min(max(displayWidth(text.columns[1]), page.map { displayWidth(oneLine($0.element.phone ?? "-")) }.max() ?? 0), 20)
        let emailWidth = max(columns - 2 - nameWidth - 2 - phoneWidth - 2, 0)
        lines.append([Run(text: "  " + text.columns[0].padding(nameWidth) + "  " + text.columns[1].padding(phoneWidth) + "  " + text.columns[2],
                          look: .dim)])

        if screen.resultsQuery == nil {
            lines.append([Run(text: "  " + text.searching, look: .dim)])
        } else if screen.items.isEmpty {
            lines.append([Run(text: "  " + text.noMatches, look: .dim)])
        }
        let query = screen.resultsQuery ?? ""
        for (index, contact) in page {
            let selected = index == screen.selected
            let base = Style.Attributes(reverse: selected)
            var mark = ContactsRenderer.match
            mark.reverse = selected
            var line = [Run(text: selected ? "› " : "  ", look: .colour(.cyan))]
            line += cell(oneLine(contact.name), ContactHighlight.name(contact.name, query: query), nameWidth, base, mark)
            line.append(Run(text: "  ", look: base))
            line += cell(oneLine(contact.phone ?? "-"), contact.phone.map { ContactHighlight.phone($0, query: query) } ?? [],
                         phoneWidth, base, mark)
            line.append(Run(text: "  ", look: base))
            line += cell(oneLine(contact.email ?? "-"), [], emailWidth, base, mark)
            lines.append(line)
        }
        while lines.count < rows - 1 { lines.append([]) }
        lines.append([Run(text: " " + text.help, look: .dim)])
        let column = indent + 1 + cursorColumn
        return FormRenderer.Frame(lines: Array(lines.prefix(rows)).map { FormRenderer.clip($0, to: columns) },
                                  cursor: column < columns ? (0, column) : nil)
    }

    /// One cell `width` columns wide: cut with `…` if longer, the highlighted characters in `mark`, padded.
    func cell(_ value: String, _ highlights: [Range<Int>], _ width: Int, _ base: Style.Attributes,
              _ mark: Style.Attributes) -> [Run] {
        let characters = Array(fit(value, width))
        var runs: [Run] = []
        for (offset, character) in characters.enumerated() {
            // The ellipsis stands for what was cut, so it is never part of a match.
            let matched = !(offset == characters.count - 1 && character == "…" && characters.count < value.count)
                && highlights.contains { $0.contains(offset) }
            let look = matched ? mark : base
            if let last = runs.last, last.look == look {
                runs[runs.count - 1].text.append(character)
            } else {
                runs.append(Run(text: String(character), look: look))
            }
        }
        let used = displayWidth(String(characters))
        if used < width { runs.append(Run(text: String(repeating: " ", count: width - used), look: base)) }
        return runs
    }

    /// `text` cut to `width` columns, ending in `…` when something was cut.
    func fit(_ text: String, _ width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        guard width > 0 else { return "" }
        var kept = ""
        var used = 0
        for character in text {
            let cell = displayWidth(character)
            guard used + cell <= width - 1 else { break }
            kept.append(character)
            used += cell
        }
        return kept + "…"
    }
}

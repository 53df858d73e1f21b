/// Lays a `FormScreen` out as lines of styled runs for a terminal of a given size. Pure: no escape codes
/// are decided here beyond the attributes, so tests read the text and the painter adds ANSI.
struct FormRenderer {
    /// A run of text with one look.
    struct Run: Equatable {
        var text: String
        var look: Style.Attributes = .plain
    }

    /// What to draw: lines of runs, and where the terminal cursor goes (nil: hidden).
    struct Frame: Equatable {
        var lines: [[Run]]
        var cursor: (row: Int, column: Int)?

        static func == (lhs: Frame, rhs: Frame) -> Bool {
            lhs.lines == rhs.lines && lhs.cursor?.row == rhs.cursor?.row && lhs.cursor?.column == rhs.cursor?.column
        }

        /// The lines as plain text (what a test or a screen reader sees).
        var text: [String] { lines.map { $0.map(\.text).joined() } }
    }

    static let mask: Character = "•"

    let text: FormText
    let rows: Int
    let columns: Int

    func frame(_ screen: FormScreen) -> Frame {
        var lines: [[Run]] = [[Run(text: " " + text.title, look: .bold)], []]
        let labelWidth = screen.fields.map { displayWidth(text.label($0.name)) }.max() ?? 0
        // "› " + label + "  " before the box; the box takes what is left, within reason.
        let indent = 2 + labelWidth + 2
        let boxWidth = max(8, min(40, columns - indent - 2))
        var cursor: (row: Int, column: Int)?
        for (index, field) in screen.fields.enumerated() {
            let focused = screen.focus == .field(index)
            let dim = !field.enabled
            let shown = field.masked ? Array(repeating: FormRenderer.mask, count: field.editor.characters.count) : field.editor.characters
            let (visible, cursorColumn) = window(shown, cursor: field.editor.cursor, width: boxWidth - 1)
            let boxLook = dim ? Style.Attributes.dim : Style.Attributes(reverse: false)
            lines.append([
                Run(text: focused ? "› " : "  ", look: .colour(.cyan)),
                Run(text: text.label(field.name).padding(labelWidth) + "  ", look: dim ? .dim : (focused ? .bold : .plain)),
                Run(text: "[", look: .dim),
                Run(text: String(visible).padding(boxWidth), look: boxLook),
                Run(text: "]", look: .dim),
            ])
            if focused && field.enabled { cursor = (lines.count - 1, indent + 1 + cursorColumn) }
            lines.append([Run(text: String(repeating: " ", count: indent + 1)), verdict(field)])
        }
        lines.append([])
        let buttonFocused = screen.focus == .submit
        var buttonLook = Style.Attributes(bold: screen.submittable, dim: !screen.submittable, reverse: buttonFocused)
        if screen.submittable { buttonLook.colour = .green }
        lines.append([Run(text: buttonFocused ? "› " : "  ", look: .colour(.cyan)),
                      Run(text: "[ \(text.button) ]", look: buttonLook),
                      Run(text: screen.submittable ? "" : "  " + text.notReady, look: .dim)])
        lines.append(status(screen.submit))
        lines.append([])
        lines.append([Run(text: " " + text.help, look: .dim)])
        return Frame(lines: Array(lines.prefix(rows)).map { FormRenderer.clip($0, to: columns) },
                     cursor: cursor.flatMap { $0.row < rows && $0.column < columns ? $0 : nil })
    }

    /// The field's latest verdict: a mark and the daemon's message, coloured by state.
    private func verdict(_ field: FormScreen.Field) -> Run {
        guard field.enabled else { return Run(text: "  " + field.message, look: .dim) }
        switch field.state {
        case "validating": return Run(text: "… " + field.message, look: .colour(.yellow))
        case "valid": return Run(text: "✓ " + field.message, look: .colour(.green))
        case "invalid": return Run(text: "✗ " + field.message, look: .colour(.red))
        default: return Run(text: "· " + field.message, look: .dim)
        }
    }

    private func status(_ submit: FormScreen.SubmitState) -> [Run] {
        switch submit {
        case .idle: return []
        case .running(let message): return [Run(text: "  … " + message, look: .colour(.yellow))]
        case .failed(let message): return [Run(text: "  ✗ " + message, look: .colour(.red))]
        case .succeeded(let message): return [Run(text: "  ✓ " + message, look: .colour(.green))]
        }
    }

    func window(_ characters: [Character], cursor: Int, width: Int) -> ([Character], Int) {
        FormRenderer.window(characters, cursor: cursor, width: width)
    }

    /// The part of `characters` that fits `width` columns with the cursor in view, and the cursor's column in it.
    static func window(_ characters: [Character], cursor: Int, width: Int) -> ([Character], Int) {
        var start = 0
        while start < cursor, characters[start..<cursor].reduce(0, { $0 + displayWidth($1) }) > width { start += 1 }
        var visible: [Character] = []
        var used = 0
        for character in characters[start...] {
            let cell = displayWidth(character)
            guard used + cell <= width else { break }
            visible.append(character)
            used += cell
        }
        let column = characters[start..<cursor].reduce(0) { $0 + displayWidth($1) }
        return (visible, column)
    }

    /// Cuts a line at `columns` terminal cells, so a narrow terminal never wraps and shifts the layout.
    static func clip(_ runs: [Run], to columns: Int) -> [Run] {
        var left = columns
        var result: [Run] = []
        for run in runs {
            guard left > 0 else { break }
            var kept = ""
            for character in run.text {
                let cell = displayWidth(character)
                guard cell <= left else {
                    left = 0
                    break
                }
                kept.append(character)
                left -= cell
            }
            result.append(Run(text: kept, look: run.look))
        }
        return result
    }
}

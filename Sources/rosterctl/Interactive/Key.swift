/// A key press as the forms understand it, decoded from the terminal's bytes.
enum Key: Equatable {
    case text(Character)
    case enter, tab, backTab
    case up, down, left, right, home, end
    case backspace, delete
    /// Ctrl-A, -E, -U, -W, -K: the readline edits.
    case lineStart, lineEnd, killToStart, killWord, killToEnd
    case interrupt  // Ctrl-C
    case escape
    case redraw  // Ctrl-L
    case endOfInput  // Ctrl-D
}

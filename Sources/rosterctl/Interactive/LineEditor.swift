/// One line of editable text with a cursor: readline's basic keys, nothing else. Pure: keys in, state out.
struct LineEditor: Equatable {
    private(set) var characters: [Character]
    /// Index into `characters`, 0...count.
    private(set) var cursor: Int

    /// What a key did, so the caller knows whether to tell the daemon (`edited`) or only redraw (`moved`).
    enum Outcome: Equatable {
        case edited
        case moved
        case ignored
    }

    init(text: String = "") {
        characters = Array(text)
        cursor = characters.count
    }

    var text: String { String(characters) }

    mutating func apply(_ key: Key) -> Outcome {
        switch key {
        case .text(let character):
            characters.insert(character, at: cursor)
            cursor += 1
            return .edited
        case .backspace:
            guard cursor > 0 else { return .ignored }
            cursor -= 1
            characters.remove(at: cursor)
            return .edited
        case .delete:
            guard cursor < characters.count else { return .ignored }
            characters.remove(at: cursor)
            return .edited
        case .left: return move(to: cursor - 1)
        case .right: return move(to: cursor + 1)
        case .lineStart, .home: return move(to: 0)
        case .lineEnd, .end: return move(to: characters.count)
        case .killToStart:
            guard cursor > 0 else { return .ignored }
            characters.removeSubrange(0..<cursor)
            cursor = 0
            return .edited
        case .killToEnd:
            guard cursor < characters.count else { return .ignored }
            characters.removeSubrange(cursor...)
            return .edited
        case .killWord:
            // As readline's unix-word-rubout: the blanks before the cursor, then the word before them.
            var start = cursor
            while start > 0, characters[start - 1].isWhitespace { start -= 1 }
            while start > 0, !characters[start - 1].isWhitespace { start -= 1 }
            guard start < cursor else { return .ignored }
            characters.removeSubrange(start..<cursor)
            cursor = start
            return .edited
        case .enter, .tab, .backTab, .up, .down, .interrupt, .escape, .redraw, .endOfInput:
            return .ignored
        }
    }

    private mutating func move(to position: Int) -> Outcome {
        let clamped = min(max(position, 0), characters.count)
        guard clamped != cursor else { return .ignored }
        cursor = clamped
        return .moved
    }
}

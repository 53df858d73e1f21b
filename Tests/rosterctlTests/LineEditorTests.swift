import Testing
@testable import rosterctl

@Suite("line editor")
struct LineEditorTests {
    private func typed(_ text: String) -> LineEditor {
        var editor = LineEditor()
        for character in text { _ = editor.apply(.text(character)) }
        return editor
    }

    @Test func typingInsertsAtTheCursor() {
        var editor = typed("held")
        #expect(editor.apply(.left) == .moved)
        #expect(editor.apply(.left) == .moved)
        #expect(editor.apply(.text("l")) == .edited)
        #expect(editor.text == "helld")
        #expect(editor.cursor == 3)
    }

    @Test func backspaceAndDeleteRemoveAroundTheCursor() {
        var editor = typed("abcd")
        _ = editor.apply(.left)
        #expect(editor.apply(.backspace) == .edited)
        #expect(editor.text == "abd")
        #expect(editor.apply(.delete) == .edited)
        #expect(editor.text == "ab")
        #expect(editor.apply(.delete) == .ignored)
        _ = editor.apply(.lineStart)
        #expect(editor.apply(.backspace) == .ignored)
    }

    @Test func ctrlAAndCtrlEJumpToTheEnds() {
        var editor = typed("alice")
        #expect(editor.apply(.lineStart) == .moved)
        #expect(editor.cursor == 0)
        #expect(editor.apply(.lineStart) == .ignored)
        #expect(editor.apply(.lineEnd) == .moved)
        #expect(editor.cursor == 5)
        #expect(editor.apply(.right) == .ignored)
    }

    @Test func ctrlUKillsBeforeAndCtrlKAfterTheCursor() {
        var editor = typed("alice smith")
        for _ in 0..<5 { _ = editor.apply(.left) }
        var before = editor
        #expect(before.apply(.killToStart) == .edited)
        #expect(before.text == "smith")
        #expect(before.cursor == 0)
        #expect(editor.apply(.killToEnd) == .edited)
        #expect(editor.text == "alice ")
        #expect(editor.apply(.killToEnd) == .ignored)
    }

    @Test func ctrlWKillsTheWordBeforeTheCursorAndTheBlanksAfterIt() {
        var editor = typed("one two  ")
        #expect(editor.apply(.killWord) == .edited)
        #expect(editor.text == "one ")
        #expect(editor.apply(.killWord) == .edited)
        #expect(editor.text == "")
        #expect(editor.apply(.killWord) == .ignored)
    }

    @Test func wideCharactersAreOneStepEach() {
        var editor = typed("张三")
        #expect(editor.apply(.backspace) == .edited)
        #expect(editor.text == "张")
    }

    @Test func navigationKeysAreNotEdits() {
        var editor = typed("x")
        for key: Key in [.tab, .backTab, .up, .down, .enter, .escape, .interrupt] {
            #expect(editor.apply(key) == .ignored)
        }
        #expect(editor.text == "x")
    }
}

import Testing
@testable import rosterctl

@Suite("form renderer")
struct FormRendererTests {
    private let renderer = FormRenderer(text: FormText.forForm("register", locale: "zh-Hans"), rows: 30, columns: 100)

    @Test func eachFieldHasItsLineAndItsVerdictUnderIt() throws {
        var screen = try #require(FormScreen(form: "register", snapshot: registerSnapshot))
        for character in "abc" { _ = screen.handle(.text(character)) }
        screen.apply(event: fieldEvent("username", "invalid", "too_short", "用户名长度至少为6位", rev: 3))
        let text = renderer.frame(screen).text
        #expect(text[0] == " 注册新账号")
        #expect(text[2].hasPrefix("› 用户名    [abc "))
        #expect(text[3].contains("✗ 用户名长度至少为6位"))
        #expect(text[4].hasPrefix("  密码"))
        #expect(text[11].contains("[ 注册 ]"))
        #expect(text[11].contains("尚未填写完整"))
    }

    @Test func passwordsAreMaskedWithBullets() throws {
        var screen = try #require(FormScreen(form: "register", snapshot: registerSnapshot))
        screen.apply(event: fieldEvent("password", "empty", "empty", "请输入密码", rev: 0))
        screen.focus = .field(1)
        for character in "secret1" { _ = screen.handle(.text(character)) }
        let frame = renderer.frame(screen)
        #expect(frame.text[4].contains("[•••••••"))
        #expect(!frame.text.joined().contains("secret"))
        // "› " + the widest label (确认密码, 8 columns) + two spaces, then "[", then seven bullets.
        #expect(frame.cursor?.row == 4)
        #expect(frame.cursor?.column == 2 + 8 + 2 + 1 + 7)
    }

    @Test func disabledFieldsAndTheUnreadyButtonAreDimmed() throws {
        let screen = try #require(FormScreen(form: "register", snapshot: registerSnapshot))
        let lines = renderer.frame(screen).lines
        #expect(lines[4][1].look == .dim)
        #expect(lines[11][1].look.dim)
    }

    @Test func aNarrowShortTerminalIsClippedNotWrapped() throws {
        let screen = try #require(FormScreen(form: "register", snapshot: registerSnapshot))
        let small = FormRenderer(text: FormText.forForm("register", locale: "en"), rows: 5, columns: 20).frame(screen)
        #expect(small.lines.count == 5)
        #expect(small.text.allSatisfy { displayWidth($0) <= 20 })
    }

    @Test func longTextScrollsSoTheCursorStaysInTheBox() {
        let (visible, column) = renderer.window(Array("abcdefghij"), cursor: 10, width: 4)
        #expect(String(visible) == "ghij")
        #expect(column == 4)
        let (wide, wideColumn) = renderer.window(Array("张三李四"), cursor: 1, width: 4)
        #expect(String(wide) == "张三")
        #expect(wideColumn == 2)
    }
}

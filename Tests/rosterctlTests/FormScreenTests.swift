import RosterProtocol
import Testing
@testable import rosterctl

/// The register form's snapshot as `form.open` answers it (from protocol.md).
let registerSnapshot: JSONValue = [
    "form": "register",
    "fields": [
        ["name": "username", "enabled": true, "state": "empty", "code": "empty", "message": "请输入用户名", "rev": 0],
        ["name": "password", "enabled": false, "state": "empty", "code": "empty", "message": "请输入密码", "rev": 0],
        ["name": "confirm", "enabled": false, "state": "empty", "code": "empty", "message": "请再次输入密码", "rev": 0],
        ["name": "email", "enabled": true, "state": "empty", "code": "empty", "message": "邮箱为选填项", "rev": 0],
    ],
    "submittable": false,
]

func fieldEvent(_ field: String, _ state: String, _ code: String, _ message: String, enabled: Bool = true, rev: Int) -> JSONValue {
    ["type": "field", "form": "register", "field": .string(field), "state": .string(state), "code": .string(code),
     "message": .string(message), "enabled": .bool(enabled), "rev": .int(rev)]
}

@Suite("form screen model")
struct FormScreenTests {
    private func screen() throws -> FormScreen {
        try #require(FormScreen(form: "register", snapshot: registerSnapshot))
    }

    private func type(_ text: String, into screen: inout FormScreen) -> [FormScreen.Action] {
        text.flatMap { screen.handle(.text($0)) }
    }

    @Test func theSnapshotSetsFieldsAndFocusesTheFirstEnabledOne() throws {
        let screen = try screen()
        #expect(screen.fields.map(\.name) == ["username", "password", "confirm", "email"])
        #expect(screen.fields.map(\.masked) == [false, true, true, false])
        #expect(screen.focus == .field(0))
        #expect(!screen.submittable)
    }

    @Test func everyEditIsSentAsFormInput() throws {
        var screen = try screen()
        #expect(type("ab", into: &screen) == [.input(field: "username", value: "a"), .input(field: "username", value: "ab")])
        #expect(screen.handle(.left) == [])
        #expect(screen.handle(.backspace) == [.input(field: "username", value: "b")])
    }

    @Test func disabledFieldsAreSkippedByTabAndArrows() throws {
        var screen = try screen()
        _ = screen.handle(.tab)
        #expect(screen.focus == .field(3))
        _ = screen.handle(.down)
        #expect(screen.focus == .submit)
        _ = screen.handle(.tab)
        #expect(screen.focus == .field(0))
        _ = screen.handle(.backTab)
        #expect(screen.focus == .submit)
        _ = screen.handle(.up)
        #expect(screen.focus == .field(3))
    }

    @Test func aFieldTheDaemonEnablesBecomesATabStop() throws {
        var screen = try screen()
        screen.apply(event: fieldEvent("username", "valid", "available", "用户名可用", rev: 1))
        screen.apply(event: fieldEvent("password", "empty", "empty", "请输入密码", rev: 0))
        _ = screen.handle(.tab)
        #expect(screen.focus == .field(1))
        #expect(type("x", into: &screen) == [.input(field: "password", value: "x")])
    }

    @Test func aFieldDisabledUnderTheCursorRefusesKeys() throws {
        var screen = try screen()
        screen.apply(event: fieldEvent("password", "empty", "empty", "请输入密码", rev: 0))
        screen.focus = .field(1)
        screen.apply(event: fieldEvent("password", "empty", "empty", "请输入密码", enabled: false, rev: 0))
        #expect(type("x", into: &screen) == [])
        #expect(screen.fields[1].editor.text == "")
    }

    @Test func verdictsFollowEventsAndStaleRevisionsAreIgnored() throws {
        var screen = try screen()
        screen.apply(event: fieldEvent("username", "invalid", "too_short", "用户名长度至少为6位", rev: 3))
        #expect(screen.fields[0].message == "用户名长度至少为6位")
        screen.apply(event: fieldEvent("username", "valid", "available", "用户名可用", rev: 2))
        #expect(screen.fields[0].code == "too_short")
        screen.apply(event: ["type": "field", "form": "login", "field": "username", "state": "valid", "rev": 9])
        #expect(screen.fields[0].rev == 3)
    }

    @Test func enterSubmitsOnlyWhenTheDaemonSaysSubmittable() throws {
        var screen = try screen()
        #expect(screen.handle(.enter) == [])
        #expect(screen.focus == .field(3))
        screen.apply(event: ["type": "form", "form": "register", "submittable": true])
        #expect(screen.handle(.enter) == [.submit])
        #expect(screen.isSubmitting)
        #expect(screen.handle(.enter) == [])
        #expect(type("x", into: &screen) == [])
    }

    @Test func submitEventsAndFailuresAreShown() throws {
        var screen = try screen()
        screen.apply(event: ["type": "submit", "form": "register", "state": "running", "code": "running", "message": "注册中…"])
        #expect(screen.submit == .running("注册中…"))
        screen.apply(event: ["type": "submit", "form": "register", "state": "failed", "code": "taken", "message": "注册失败"])
        #expect(screen.submit == .failed("注册失败"))
        _ = screen.handle(.text("z"))
        #expect(screen.submit == .idle)
    }

    @Test func escapeAndCtrlCCancel() throws {
        var screen = try screen()
        #expect(screen.handle(.escape) == [.cancel])
        #expect(screen.handle(.interrupt) == [.cancel])
    }
}

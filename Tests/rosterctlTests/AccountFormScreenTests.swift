import RosterProtocol
import Testing
@testable import rosterctl

/// The password form and the login form's `code` field on the form screen (protocol.md §Password form, §Log-in form).
@Suite("password and one-time code on the form screen")
struct AccountFormScreenTests {
    private let passwordSnapshot: JSONValue = [
        "form": "password",
        "fields": [
            ["name": "current", "enabled": true, "state": "empty", "rev": 0],
            ["name": "new", "enabled": true, "state": "empty", "rev": 0],
            ["name": "confirm", "enabled": false, "state": "empty", "rev": 0],
        ],
        "submittable": false,
    ]

    private let loginSnapshot: JSONValue = [
        "form": "login",
        "fields": [
            ["name": "username", "enabled": true, "state": "empty", "rev": 0],
            ["name": "password", "enabled": true, "state": "empty", "rev": 0],
            ["name": "code", "enabled": false, "state": "empty", "rev": 0],
        ],
        "submittable": false,
    ]

    @Test func everyPasswordFieldIsMaskedAndTheCodeIsNot() throws {
        let password = try #require(FormScreen(form: "password", snapshot: passwordSnapshot))
        #expect(password.fields.map(\.masked) == [true, true, true])
        let login = try #require(FormScreen(form: "login", snapshot: loginSnapshot))
        #expect(login.fields.map(\.masked) == [false, true, false])
        var screen = password
        _ = "pw".map { screen.handle(.text($0)) }
        let frame = FormRenderer(text: .forForm("password", locale: "en"), rows: 30, columns: 100).frame(screen)
        #expect(frame.text.contains { $0.contains("Current password") && $0.contains("[••") })
        #expect(!frame.text.joined().contains("pw"))
    }

    @Test func codeRequiredMovesTheFocusToTheCodeOnceItIsEnabled() throws {
        var screen = try #require(FormScreen(form: "login", snapshot: loginSnapshot))
        screen.focus = .submit
        screen.submitFailed("A one-time code is needed", reason: "code_required")
        #expect(screen.focus == .field(2))
        // Still disabled: keys to it are refused until the daemon's event enables it.
        #expect(screen.handle(.text("1")) == [])
        screen.apply(event: ["type": "field", "form": "login", "field": "code", "state": "empty", "code": "empty",
                             "message": "", "enabled": true, "rev": 0])
        #expect(screen.handle(.text("1")) == [.input(field: "code", value: "1")])
        #expect(screen.submit == .idle)
    }

    @Test func otherFailuresLeaveTheFocusAlone() throws {
        var screen = try #require(FormScreen(form: "login", snapshot: loginSnapshot))
        screen.focus = .submit
        screen.submitFailed("Wrong password", reason: "wrong_password")
        #expect(screen.focus == .submit)
        #expect(screen.submit == .failed("Wrong password"))
    }

    @Test func everyFormHasAWordForEveryFieldInEveryLocale() {
        let fields = ["register": ["username", "password", "confirm", "email"], "login": ["username", "password", "code"],
                      "password": ["current", "new", "confirm"]]
        for locale in ["zh-Hans", "en", "vi", "ko"] {
            var titles: Set<String> = []
            for (form, names) in fields {
                let text = FormText.forForm(form, locale: locale)
                titles.insert(text.title)
                for name in names { #expect(text.labels[name] != nil, "\(locale) \(form) \(name)") }
            }
            #expect(titles.count == 3, "\(locale): each form has its own title")
        }
        #expect(FormText.forForm("password", locale: "zh-Hans").label("current") == "当前密码")
        #expect(FormText.forForm("register", locale: "en").label("username") == "Username")
        #expect(FormText.forForm("login", locale: "en").label("username") == "Username or email")
    }
}

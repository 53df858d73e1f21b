import Testing
@testable import RosterCore

/// Each form has its own field enum; wire names cross into it only at the form's edge, and a name the form does
/// not have is answered exactly as before (`unknown_field`), whatever form it belongs to.
@Suite("Form fields")
struct FormFieldTests {
    @Test func eachFormHasExactlyItsOwnFieldsInOrder() {
        #expect(RegisterField.allCases.map(\.name) == [.username, .password, .confirm, .email])
        #expect(LoginField.allCases.map(\.name) == [.username, .password, .code])
        #expect(PasswordField.allCases.map(\.name) == [.current, .new, .confirm])
        #expect(RegisterForm(policy: .seed, debounce: .milliseconds(500)).snapshot.fields.map(\.name)
                == RegisterField.allCases.map(\.name))
        #expect(LoginForm(policy: .seed, debounce: .milliseconds(500)).snapshot.fields.map(\.name)
                == LoginField.allCases.map(\.name))
        #expect(PasswordForm(policy: .seed, username: "alice1", debounce: .milliseconds(500)).snapshot.fields.map(\.name)
                == PasswordField.allCases.map(\.name))
    }

    @Test(arguments: FieldName.allCases)
    func wireNamesCrossBothWaysOrNotAtAll(name: FieldName) {
        #expect(RegisterField(name).map(\.name) ?? name == name)
        #expect(LoginField(name).map(\.name) ?? name == name)
        #expect((RegisterField(name) != nil) == [.username, .password, .confirm, .email].contains(name))
        #expect(PasswordField(name).map(\.name) ?? name == name)
        #expect((LoginField(name) != nil) == [.username, .password, .code].contains(name))
        #expect((PasswordField(name) != nil) == [.current, .new, .confirm].contains(name))
    }

    @Test(arguments: FieldName.allCases)
    func aNameTheFormLacksIsAnUnknownField(name: FieldName) {
        var register = RegisterForm(policy: .seed, debounce: .milliseconds(500))
        var login = LoginForm(policy: .seed, debounce: .milliseconds(500))
        if RegisterField(name) == nil {
            #expect(throws: RosterError.unknownField(form: "register", field: name.rawValue)) {
                try register.inputReceived(field: name, value: "x", now: .zero)
            }
        }
        if LoginField(name) == nil {
            #expect(throws: RosterError.unknownField(form: "login", field: name.rawValue)) {
                try login.inputReceived(field: name, value: "x", now: .zero)
            }
        }
        var password = PasswordForm(policy: .seed, username: "alice1", debounce: .milliseconds(500))
        if PasswordField(name) == nil {
            #expect(throws: RosterError.unknownField(form: "password", field: name.rawValue)) {
                try password.inputReceived(field: name, value: "x", now: .zero)
            }
        }
    }

    @Test func aTimerForAFieldTheFormLacksDoesNothing() throws {
        var login = LoginForm(policy: .seed, debounce: .milliseconds(500))
        _ = try login.inputReceived(field: .username, value: "alice1", now: .zero)
        for name in FieldName.allCases where LoginField(name) == nil {
            #expect(login.timerFired(.debounce(name), now: .milliseconds(500)) == [])
        }
        // The username's own debounce is untouched and still judges its input.
        #expect(login.timerFired(.debounce(.username), now: .milliseconds(500)) == [
            fieldEvent(.username, .validating, .validating, rev: 1, form: .login),
            .startCheck(.accountExists(canonical: "alice1"), token: token(1)),
        ])
    }

    @Test func everyFieldsCodesAreDistinct() {
        for field in RegisterField.allCases { #expect(Set(field.possibleCodes).count == field.possibleCodes.count) }
        for field in LoginField.allCases { #expect(Set(field.possibleCodes).count == field.possibleCodes.count) }
        for field in PasswordField.allCases { #expect(Set(field.possibleCodes).count == field.possibleCodes.count) }
    }
}

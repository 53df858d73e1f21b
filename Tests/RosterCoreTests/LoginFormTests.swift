import Testing
@testable import RosterCore

@Suite("LoginForm")
struct LoginFormTests {
    private func makeDriver(_ policy: Policy) -> FormDriver<LoginForm> {
        FormDriver(LoginForm(policy: policy, debounce: .milliseconds(500)))
    }

    @Test func openSnapshot() {
        #expect(LoginForm(policy: .seed, debounce: .milliseconds(500)).snapshot == FormSnapshot(
            form: .login, fields: [
                FieldSnapshot(name: .username, enabled: true, state: .empty, code: .empty, rev: 0),
                FieldSnapshot(name: .password, enabled: true, state: .empty, code: .empty, rev: 0),
            ], submittable: false))
    }

    @Test func revealingPolicyChecksTheAccount() throws {
        var driver = makeDriver(.seed)
        try driver.type(.username, "Alice1")
        driver.advance(to: 100)
        try driver.type(.password, "pw")
        driver.advance(to: 500)
        #expect(driver.take() == [
            debounce(.username, at: 500), debounce(.password, at: 600),
            fieldEvent(.username, .validating, .validating, rev: 1, form: .login),
            .startCheck(.accountExists(canonical: "alice1"), token: token(1)),
        ])
        driver.advance(to: 600)
        #expect(driver.take() == [fieldEvent(.password, .valid, .entered, rev: 1, form: .login)])
        driver.answer(token(1), .missing)
        // Unknown but non-empty: the contract makes it submittable, and the submit says not_found.
        #expect(driver.take() == [fieldEvent(.username, .invalid, .notFound, rev: 1, form: .login),
                                  submittable(true, form: .login)])
        try driver.type(.username, "bob@Example.org")
        driver.advance(to: 1100)
        #expect(driver.take() == [
            submittable(false, form: .login), debounce(.username, at: 1100),
            fieldEvent(.username, .validating, .validating, rev: 2, form: .login),
            .startCheck(.accountExists(canonical: "bob@example.org"), token: token(2)),
        ])
        driver.answer(token(2), .exists)
        #expect(driver.take() == [fieldEvent(.username, .valid, .available, rev: 2, form: .login),
                                  submittable(true, form: .login)])
        driver.submit()
        #expect(driver.take() == [submitEvent(.running, .running, form: .login),
                                  .login(username: "bob@example.org", password: Secret("pw"))])
        driver.complete(.failure(.wrongPassword))
        #expect(driver.take() == [submitEvent(.failed, .wrongPassword, form: .login),
                                  .finishSubmit(.failure(.wrongPassword))])
        driver.submit()
        driver.complete(.success("bob"))
        #expect(driver.take() == [submitEvent(.running, .running, form: .login),
                                  .login(username: "bob@example.org", password: Secret("pw")),
                                  submitEvent(.succeeded, .succeeded, form: .login),
                                  .finishSubmit(.success(.loggedIn(username: "bob")))])
    }

    @Test func unknownUserFailsTheSubmitWithNotFound() throws {
        var driver = makeDriver(.seed)
        try driver.type(.username, "nobody1")
        try driver.type(.password, "pw")
        driver.advance(to: 500)
        driver.answer(token(1), .missing)
        _ = driver.take()
        driver.submit()
        driver.complete(.failure(.notFound))
        #expect(driver.take() == [submitEvent(.running, .running, form: .login),
                                  .login(username: "nobody1", password: Secret("pw")),
                                  submitEvent(.failed, .notFound, form: .login),
                                  .finishSubmit(.failure(.notFound))])
    }

    @Test func hiddenPolicyNeverAsksTheStore() throws {
        var driver = makeDriver(.hardened)
        try driver.type(.username, "nobody1")
        try driver.type(.password, "ｐａｓｓ\u{00A0}word")
        driver.advance(to: 500)
        #expect(driver.take() == [
            debounce(.username, at: 500), debounce(.password, at: 500),
            fieldEvent(.username, .valid, .entered, rev: 1, form: .login),
            fieldEvent(.password, .valid, .entered, rev: 1, form: .login),
            submittable(true, form: .login),
        ])
        driver.submit()
        driver.complete(.failure(.invalidCredentials))
        // NFKC and OpaqueString's space mapping, as at registration.
        #expect(driver.take() == [submitEvent(.running, .running, form: .login),
                                  .login(username: "nobody1", password: Secret("pass word")),
                                  submitEvent(.failed, .invalidCredentials, form: .login),
                                  .finishSubmit(.failure(.invalidCredentials))])
    }

    @Test func loginHasNoConfirmField() {
        var form = LoginForm(policy: .seed, debounce: .milliseconds(500))
        #expect(throws: RosterError.unknownField(form: "login", field: "confirm")) {
            try form.inputReceived(field: .confirm, value: "x", now: .zero)
        }
    }

    @Test func rateLimitedAndInternalFailures() throws {
        var driver = makeDriver(.hardened)
        try driver.type(.username, "alice1")
        try driver.type(.password, "pw")
        driver.advance(to: 500)
        driver.submit()
        driver.complete(.failure(.rateLimited(retryAfterMs: 1200)))
        driver.submit()
        driver.complete(.failure(.internal))
        let submits = driver.take().filter { if case .emit(.submit) = $0 { true } else { false } }
        #expect(submits == [submitEvent(.running, .running, form: .login),
                            submitEvent(.failed, .rateLimited, form: .login),
                            submitEvent(.running, .running, form: .login),
                            submitEvent(.failed, .failed, form: .login)])
    }
}

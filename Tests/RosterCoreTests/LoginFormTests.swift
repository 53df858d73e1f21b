import Testing
@testable import RosterCore

@Suite("LoginForm")
struct LoginFormTests {
    private func makeDriver(_ policy: Policy) -> FormDriver<LoginRulebook> {
        FormDriver(LoginForm(policy: policy, debounce: .milliseconds(500)))
    }

    @Test func openSnapshot() {
        #expect(LoginForm(policy: .seed, debounce: .milliseconds(500)).snapshot == FormSnapshot(
            form: .login, fields: [
                FieldSnapshot(name: .username, enabled: true, state: .empty, code: .empty, rev: 0),
                FieldSnapshot(name: .password, enabled: true, state: .empty, code: .empty, rev: 0),
                // Seed 000's chain: the code waits for a submit to answer code_required.
                FieldSnapshot(name: .code, enabled: false, state: .empty, code: .empty, rev: 0),
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
                                  .login(username: "bob@example.org", password: Secret("pw"), code: nil)])
        driver.complete(.failure(.wrongPassword))
        #expect(driver.take() == [submitEvent(.failed, .wrongPassword, form: .login),
                                  .finishSubmit(.failure(.wrongPassword))])
        driver.submit()
        driver.complete(.success("bob"))
        #expect(driver.take() == [submitEvent(.running, .running, form: .login),
                                  .login(username: "bob@example.org", password: Secret("pw"), code: nil),
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
                                  .login(username: "nobody1", password: Secret("pw"), code: nil),
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
                                  .login(username: "nobody1", password: Secret("pass word"), code: nil),
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

    // MARK: The one-time code (contract §8, log-in with TOTP)

    /// Username and password typed and judged (seed: the account exists); history cleared.
    private func filledDriver() throws -> FormDriver<LoginRulebook> {
        var driver = makeDriver(.seed)
        try driver.type(.username, "alice1")
        try driver.type(.password, "pw")
        driver.advance(to: 500)
        driver.answer(token(1), .exists)
        #expect(driver.form.snapshot.submittable)
        _ = driver.take()
        return driver
    }

    /// Seed 000's chain for the code: disabled until a submit answered code_required, then enabled and required,
    /// and the next submit sends the kept password with it; a wrong code leaves it open for the next.
    @Test func codeRequiredOpensTheCodeAndTheNextSubmitSendsItWithTheKeptPassword() throws {
        var driver = try filledDriver()
        #expect(throws: RosterError.fieldDisabled(form: "login", field: "code")) { try driver.type(.code, "123456") }
        driver.submit()
        driver.complete(.failure(.codeRequired))
        #expect(driver.take() == [
            submitEvent(.running, .running, form: .login),
            .login(username: "alice1", password: Secret("pw"), code: nil),
            submitEvent(.failed, .codeRequired, form: .login),
            fieldEvent(.code, .empty, .empty, rev: 0, form: .login),
            submittable(false, form: .login),
            .finishSubmit(.failure(.codeRequired)),
        ])
        try driver.type(.code, "12345")
        driver.advance(to: 1000)
        #expect(driver.take() == [debounce(.code, at: 1000), fieldEvent(.code, .invalid, .notSixDigits, rev: 1, form: .login)])
        try driver.type(.code, "123 456")
        driver.advance(to: 1500)
        #expect(driver.take() == [debounce(.code, at: 1500), fieldEvent(.code, .valid, .valid, rev: 2, form: .login),
                                  submittable(true, form: .login)])
        driver.submit()
        driver.complete(.failure(.invalidCode))
        #expect(driver.take() == [
            submitEvent(.running, .running, form: .login),
            .login(username: "alice1", password: Secret("pw"), code: "123456"),
            submitEvent(.failed, .invalidCode, form: .login),
            .finishSubmit(.failure(.invalidCode)),
        ])
        // The next code, submitted before its debounce: judged at once, and sent.
        driver.advance(to: 1600)
        try driver.type(.code, "６５４３２１")
        driver.submit()
        #expect(driver.take() == [
            submittable(false, form: .login), debounce(.code, at: 2100),
            submitEvent(.running, .running, form: .login),
            fieldEvent(.code, .valid, .valid, rev: 3, form: .login), submittable(true, form: .login),
            .cancelTimer(.debounce(.code)),
            .login(username: "alice1", password: Secret("pw"), code: "654321"),
        ])
        driver.complete(.success("alice1"))
        #expect(driver.take() == [submitEvent(.succeeded, .succeeded, form: .login),
                                  .finishSubmit(.success(.loggedIn(username: "alice1")))])
    }

    /// The code belongs to the credentials the store accepted: editing the username or the password disables it
    /// (keeping what it shows), a submit then sends no code, and the same credentials again enable it again.
    @Test func theCodeFollowsTheCredentialsThatAskedForIt() throws {
        var driver = try filledDriver()
        driver.submit()
        driver.complete(.failure(.codeRequired))
        try driver.type(.code, "123456")
        driver.advance(to: 1000)
        _ = driver.take()
        try driver.type(.password, "pw2")
        driver.advance(to: 1500)
        #expect(driver.take() == [
            submittable(false, form: .login), debounce(.password, at: 1500),
            fieldEvent(.password, .valid, .entered, rev: 2, form: .login),
            fieldEvent(.code, .valid, .valid, enabled: false, rev: 1, form: .login),
            submittable(true, form: .login),
        ])
        #expect(throws: RosterError.fieldDisabled(form: "login", field: "code")) { try driver.type(.code, "654321") }
        driver.submit()
        driver.complete(.failure(.wrongPassword))
        #expect(driver.take() == [
            submitEvent(.running, .running, form: .login),
            .login(username: "alice1", password: Secret("pw2"), code: nil),
            submitEvent(.failed, .wrongPassword, form: .login),
            .finishSubmit(.failure(.wrongPassword)),
        ])
        try driver.type(.password, "pw")
        driver.advance(to: 2000)
        #expect(driver.take() == [
            submittable(false, form: .login), debounce(.password, at: 2000),
            fieldEvent(.password, .valid, .entered, rev: 3, form: .login),
            fieldEvent(.code, .valid, .valid, rev: 1, form: .login),
            submittable(true, form: .login),
        ])
        driver.submit()
        #expect(driver.take() == [submitEvent(.running, .running, form: .login),
                                  .login(username: "alice1", password: Secret("pw"), code: "123456")])
    }

    @Test(arguments: [
        ("", FieldVerdict.empty, nil), ("  ", .empty, nil), ("123456", .valid(.valid), "123456"),
        ("123 456", .valid(.valid), "123456"), (" 12 34 56 ", .valid(.valid), "123456"),
        ("１２３４５６", .valid(.valid), "123456"), ("12345", .invalid(.notSixDigits), nil),
        ("1234567", .invalid(.notSixDigits), nil), ("12345a", .invalid(.notSixDigits), nil),
        ("12-3456", .invalid(.notSixDigits), nil), ("¹²³⁴⁵⁶", .invalid(.notSixDigits), nil),
    ] as [(String, FieldVerdict, String?)])
    func aCodeIsSixDigits(_ typed: String, _ verdict: FieldVerdict, _ sent: String?) {
        #expect(LoginRules.code(Secret(typed)) == verdict)
        #expect(LoginRules.normalizedCode(Secret(typed)) == sent)
    }
}

import Testing
@testable import RosterCore

/// Another daemon's writes reach a form as `storeChanged`: the fields whose store checks the change concerns ask
/// again, a settled verdict stays shown meanwhile, and only a changed answer is told. Every test asserts the whole
/// history of actions.
@Suite("Forms after a store change")
struct StoreChangeTests {
    /// `form` with `value` typed into `field`, debounced and its check (token 1) answered `result`; history cleared.
    private func judged<Rules: FormRulebook>(_ form: FormKernel<Rules>, _ field: FieldName, _ value: String,
                                           _ result: CheckResult) throws -> FormDriver<Rules> {
        var driver = FormDriver(form)
        try driver.type(field, value)
        driver.advance(to: 500)
        driver.answer(token(1), result)
        _ = driver.take()
        return driver
    }

    /// A register form whose username "alice1" was answered `taken` (token 1); history cleared.
    private func takenUsername() throws -> FormDriver<RegisterRulebook> {
        try judged(RegisterForm(policy: .seed, debounce: .milliseconds(500)), .username, "alice1", .taken)
    }

    @Test func aDeletedNameIsAskedAgainAndTurnsAvailableWithoutAValidatingFlicker() throws {
        var driver = try takenUsername()
        driver.perform(driver.form.storeChanged(.accountRemoved(username: "alice1", email: nil)))
        #expect(driver.take() == [.startCheck(.usernameAvailable(canonical: "alice1"), token: token(2))])
        driver.answer(token(2), .available)
        #expect(driver.take() == [fieldEvent(.username, .valid, .available, rev: 1),
                                  fieldEvent(.password, .empty, .empty, rev: 0)])
    }

    @Test func aChangeThatConcernsNoFieldAsksNothing() throws {
        var driver = try takenUsername()
        #expect(driver.form.storeChanged(.accountRemoved(username: "bob123", email: "alice1")) == [])
        var filled = try filledRegisterDriver()
        // The password and confirm have no store check; only the username is asked again.
        filled.perform(filled.form.storeChanged(.anything))
        #expect(filled.take() == [.startCheck(.usernameAvailable(canonical: "alice1"), token: token(2))])
        filled.answer(token(2), .available)
        #expect(filled.take() == [])
        #expect(filled.form.snapshot.submittable)
    }

    /// A re-check that finds the name gone to someone else turns the field as a live `taken` would.
    @Test func aResyncThatFindsTheNameTakenTurnsItTaken() throws {
        var driver = try filledRegisterDriver()
        driver.perform(driver.form.storeChanged(.anything))
        _ = driver.take()
        driver.answer(token(2), .taken)
        #expect(driver.take() == [fieldEvent(.username, .invalid, .taken, rev: 1),
                                  fieldEvent(.password, .valid, .valid, enabled: false, rev: 1),
                                  fieldEvent(.confirm, .valid, .valid, enabled: false, rev: 1),
                                  submittable(false)])
    }

    /// A failed re-check (the store is down again) tells nothing new: the verdict stands.
    @Test func aFailedRecheckLeavesTheVerdict() throws {
        var driver = try takenUsername()
        driver.perform(driver.form.storeChanged(.anything))
        _ = driver.take()
        driver.answer(token(2), .failed)
        #expect(driver.take() == [])
        #expect(driver.form.snapshot.fields.first?.code == .taken)
    }

    /// flatMapLatest holds for re-checks: newer input, or a newer verdict (a live `taken`), wins over a
    /// re-check's late answer.
    @Test func aRecheckSupersededByInputOrALiveTakenIsDropped() throws {
        var driver = try takenUsername()
        driver.perform(driver.form.storeChanged(.accountRemoved(username: "alice1", email: nil)))
        _ = driver.take()
        try driver.type(.username, "alice2")
        #expect(driver.take() == [.cancelCheck(token(2)), debounce(.username, at: 1000)])
        driver.answerLate(token(2), .available)
        #expect(driver.take() == [])

        var live = try filledRegisterDriver()
        live.perform(live.form.storeChanged(.anything))
        live.perform(live.form.usernameRegistered(canonical: "alice1"))
        _ = live.take()
        live.answerLate(token(2), .available)
        #expect(live.take() == [])
        #expect(live.form.snapshot.fields.first?.code == .taken)
    }

    /// A check already out may have been answered before the change: it is replaced. A field still debouncing
    /// will ask anyway.
    @Test func aCheckOutIsAskedAnewAndADebouncingFieldIsLeftToItsTimer() throws {
        var driver = FormDriver(RegisterForm(policy: .seed, debounce: .milliseconds(500)))
        try driver.type(.username, "alice1")
        driver.advance(to: 500)
        try driver.type(.email, "a@b.co")
        _ = driver.take()
        driver.perform(driver.form.storeChanged(.anything))
        #expect(driver.take() == [.cancelCheck(token(1)),
                                  .startCheck(.usernameAvailable(canonical: "alice1"), token: token(2))])
        driver.answerLate(token(1), .taken)
        #expect(driver.take() == [])
        driver.answer(token(2), .available)
        #expect(driver.take() == [fieldEvent(.username, .valid, .available, rev: 1),
                                  fieldEvent(.password, .empty, .empty, rev: 0)])
    }

    /// An email freed by a deletion is asked again on the register form, and a log-in form holding the deleted
    /// account's name or email asks whether it still exists.
    @Test func theDeletedAccountsEmailAndLogInNamesAreAskedAgain() throws {
        var driver = try judged(RegisterForm(policy: .seed, debounce: .milliseconds(500)), .email, "Ann@Example.com", .taken)
        driver.perform(driver.form.storeChanged(.accountRemoved(username: "ann123", email: "ann@example.com")))
        #expect(driver.take() == [.startCheck(.emailAvailable(canonical: "ann@example.com"), token: token(2))])

        var login = try judged(LoginForm(policy: .seed, debounce: .milliseconds(500)), .username, "ann@example.com", .exists)
        login.perform(login.form.storeChanged(.accountRemoved(username: "ann123", email: "ann@example.com")))
        #expect(login.take() == [.startCheck(.accountExists(canonical: "ann@example.com"), token: token(2))])
        login.answer(token(2), .missing)
        #expect(login.take() == [fieldEvent(.username, .invalid, .notFound, rev: 1, form: .login)])
    }

    @Test func aFormThatRegisteredAsksNothingMore() throws {
        var driver = try filledRegisterDriver()
        driver.submit()
        driver.complete(.success("alice1"))
        _ = driver.take()
        #expect(driver.form.storeChanged(.anything) == [])
    }
}

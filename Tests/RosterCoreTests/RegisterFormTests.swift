import Testing
@testable import RosterCore

@Suite("RegisterForm")
struct RegisterFormTests {
    private func makeDriver(_ policy: Policy = .seed) -> FormDriver<RegisterRulebook> {
        FormDriver(RegisterForm(policy: policy, debounce: .milliseconds(500)))
    }

    @Test func openSnapshot() {
        let form = RegisterForm(policy: .seed, debounce: .milliseconds(500))
        #expect(form.snapshot == FormSnapshot(form: .register, fields: [
            FieldSnapshot(name: .username, enabled: true, state: .empty, code: .empty, rev: 0),
            FieldSnapshot(name: .password, enabled: false, state: .empty, code: .empty, rev: 0),
            FieldSnapshot(name: .confirm, enabled: false, state: .empty, code: .empty, rev: 0),
            FieldSnapshot(name: .email, enabled: true, state: .empty, code: .empty, rev: 0),
        ], submittable: false))
    }

    @Test func debounceMovesAndFiresOnceAtTheLastDeadline() throws {
        var driver = makeDriver()
        #expect(try driver.type(.username, "a") == 1)
        driver.advance(to: 60)
        #expect(try driver.type(.username, "ali") == 2)
        driver.advance(to: 120)
        #expect(try driver.type(.username, "alice1") == 3)
        #expect(driver.take() == [debounce(.username, at: 500), debounce(.username, at: 560),
                                  debounce(.username, at: 620)])
        driver.advance(to: 619)
        #expect(driver.take() == [])
        driver.advance(to: 620)
        #expect(driver.take() == [fieldEvent(.username, .validating, .validating, rev: 3),
                                  .startCheck(.usernameAvailable(canonical: "alice1"), token: token(1))])
        driver.answer(token(1), .available)
        #expect(driver.take() == [fieldEvent(.username, .valid, .available, rev: 3),
                                  fieldEvent(.password, .empty, .empty, enabled: true, rev: 0)])
    }

    @Test func earlyFireOfAMovedTimerIsIgnored() throws {
        var form = RegisterForm(policy: .seed, debounce: .milliseconds(500))
        _ = try form.inputReceived(field: .username, value: "alice", now: .zero)
        _ = try form.inputReceived(field: .username, value: "alice1", now: .milliseconds(100))
        #expect(form.timerFired(.debounce(.username), now: .milliseconds(500)) == [])
        #expect(form.timerFired(.debounce(.username), now: .milliseconds(600)) == [
            fieldEvent(.username, .validating, .validating, rev: 2),
            .startCheck(.usernameAvailable(canonical: "alice1"), token: token(1)),
        ])
    }

    @Test func equalInputKeepsItsRevAndDoesNothing() throws {
        var driver = makeDriver()
        #expect(try driver.type(.username, "alice1") == 1)
        _ = driver.take()
        driver.advance(to: 100)
        #expect(try driver.type(.username, "alice1") == 1)
        #expect(driver.take() == [])
        driver.advance(to: 499)
        #expect(driver.take() == [])
        driver.advance(to: 500)
        #expect(driver.take().count == 2)
    }

    @Test func localFailureIsSentWhenTheDebounceFiresWithoutValidating() throws {
        var driver = makeDriver()
        try driver.type(.username, "abc")
        driver.advance(to: 500)
        #expect(driver.take() == [debounce(.username, at: 500), fieldEvent(.username, .invalid, .tooShort, rev: 1)])
        try driver.type(.username, "abc!ef")
        driver.advance(to: 1000)
        #expect(driver.take() == [debounce(.username, at: 1000),
                                  fieldEvent(.username, .invalid, .forbiddenCharacters, rev: 2)])
        try driver.type(.username, "")
        driver.advance(to: 1500)
        #expect(driver.take() == [debounce(.username, at: 1500), fieldEvent(.username, .empty, .empty, rev: 3)])
    }

    @Test func staleTokenResultYieldsNothing() throws {
        var driver = makeDriver()
        try driver.type(.username, "alice1")
        driver.advance(to: 500)
        _ = driver.take()
        driver.advance(to: 600)
        #expect(try driver.type(.username, "alice2") == 2)
        #expect(driver.take() == [.cancelCheck(token(1)), debounce(.username, at: 1100)])
        driver.answerLate(token(1), .available)
        #expect(driver.take() == [])
        driver.advance(to: 1100)
        #expect(driver.take() == [fieldEvent(.username, .validating, .validating, rev: 2),
                                  .startCheck(.usernameAvailable(canonical: "alice2"), token: token(2))])
        driver.answerLate(token(1), .taken)
        #expect(driver.take() == [])
        driver.answer(token(2), .taken)
        #expect(driver.take() == [fieldEvent(.username, .invalid, .taken, rev: 2)])
        driver.answer(token(2), .available)
        #expect(driver.take() == [])
    }

    @Test func enablementAndSubmittableFollowTheVerdicts() throws {
        var driver = makeDriver()
        #expect(throws: RosterError.fieldDisabled(form: "register", field: "password")) {
            try driver.type(.password, "secret1")
        }
        try driver.type(.username, "alice1")
        driver.advance(to: 500)
        driver.answer(token(1), .available)
        _ = driver.take()
        try driver.type(.password, "secret1")
        driver.advance(to: 1000)
        #expect(driver.take() == [debounce(.password, at: 1000),
                                  fieldEvent(.password, .valid, .valid, rev: 1),
                                  fieldEvent(.confirm, .empty, .empty, enabled: true, rev: 0)])
        try driver.type(.confirm, "secret1")
        driver.advance(to: 1500)
        #expect(driver.take() == [debounce(.confirm, at: 1500),
                                  fieldEvent(.confirm, .valid, .valid, rev: 1), submittable(true)])
        // A new input is unchecked, so the form stops being submittable at once.
        driver.advance(to: 2000)
        try driver.type(.password, "secret2")
        #expect(driver.take() == [submittable(false), debounce(.password, at: 2500)])
        // combineLatest: confirm is judged again against the new password.
        driver.advance(to: 2500)
        #expect(driver.take() == [fieldEvent(.password, .valid, .valid, rev: 2),
                                  fieldEvent(.confirm, .invalid, .mismatch, rev: 1)])
        try driver.type(.confirm, "secret2")
        driver.advance(to: 3100)
        #expect(driver.take() == [debounce(.confirm, at: 3000),
                                  fieldEvent(.confirm, .valid, .valid, rev: 2), submittable(true)])
        // An invalid password disables confirm.
        try driver.type(.password, "abc")
        driver.advance(to: 3600)
        #expect(driver.take() == [submittable(false), debounce(.password, at: 3600),
                                  fieldEvent(.password, .invalid, .tooShort, rev: 3),
                                  fieldEvent(.confirm, .invalid, .mismatch, enabled: false, rev: 2)])
        #expect(throws: RosterError.fieldDisabled(form: "register", field: "confirm")) {
            try driver.type(.confirm, "abc")
        }
        // Re-checking the username does not disable password while it runs; a taken one does.
        try driver.type(.username, "alice2")
        driver.advance(to: 4100)
        #expect(driver.take() == [debounce(.username, at: 4100),
                                  fieldEvent(.username, .validating, .validating, rev: 2),
                                  .startCheck(.usernameAvailable(canonical: "alice2"), token: token(2))])
        driver.answer(token(2), .taken)
        #expect(driver.take() == [fieldEvent(.username, .invalid, .taken, rev: 2),
                                  fieldEvent(.password, .invalid, .tooShort, enabled: false, rev: 3)])
        #expect(driver.form.snapshot.fields.map(\.enabled) == [true, false, false, true])
    }

    @Test func aDebouncingFieldWhoseEnablementFlipsIsJudgedAtOnce() throws {
        var driver = try filledRegisterDriver()
        driver.advance(to: 1900)
        try driver.type(.username, "bob")
        driver.advance(to: 2000)
        try driver.type(.password, "secret9")
        driver.advance(to: 2400)
        #expect(driver.take() == [
            submittable(false), debounce(.username, at: 2400),
            debounce(.password, at: 2500),
            fieldEvent(.username, .invalid, .tooShort, rev: 2),
            fieldEvent(.password, .valid, .valid, enabled: false, rev: 2),
            fieldEvent(.confirm, .invalid, .mismatch, enabled: false, rev: 1),
            .cancelTimer(.debounce(.password)),
        ])
        #expect(driver.timers.isEmpty)
        driver.advance(to: 3000)
        #expect(driver.take() == [])
    }

    @Test func emailIsOptionalButCheckedWhenGiven() throws {
        var driver = try filledRegisterDriver()
        try driver.type(.email, "bad")
        #expect(driver.take() == [submittable(false), debounce(.email, at: 2000)])
        driver.advance(to: 2000)
        #expect(driver.take() == [fieldEvent(.email, .invalid, .invalidEmail, rev: 1)])
        try driver.type(.email, "Bob@Example.org")
        driver.advance(to: 2500)
        #expect(driver.take() == [debounce(.email, at: 2500),
                                  fieldEvent(.email, .validating, .validating, rev: 2),
                                  .startCheck(.emailAvailable(canonical: "bob@example.org"), token: token(2))])
        driver.answer(token(2), .taken)
        #expect(driver.take() == [fieldEvent(.email, .invalid, .taken, rev: 2)])
        try driver.type(.email, "")
        driver.advance(to: 3000)
        #expect(driver.take() == [debounce(.email, at: 3000), fieldEvent(.email, .empty, .empty, rev: 3),
                                  submittable(true)])
    }

    @Test func submitFlushesPendingDebouncesAndWaitsForChecks() throws {
        var driver = makeDriver()
        try driver.type(.username, "alice1")
        driver.advance(to: 500)
        driver.answer(token(1), .available)
        driver.advance(to: 600)
        try driver.type(.password, "secret1")
        driver.advance(to: 1100)
        driver.advance(to: 1200)
        try driver.type(.confirm, "secret1")
        driver.advance(to: 1250)
        try driver.type(.email, "a@b.co")
        _ = driver.take()
        driver.advance(to: 1300)
        driver.submit()
        #expect(driver.take() == [
            submitEvent(.running, .running),
            fieldEvent(.confirm, .valid, .valid, rev: 1),
            fieldEvent(.email, .validating, .validating, rev: 1),
            .cancelTimer(.debounce(.confirm)),
            .cancelTimer(.debounce(.email)),
            .startCheck(.emailAvailable(canonical: "a@b.co"), token: token(2)),
        ])
        #expect(driver.timers.isEmpty)
        // A second submit joins the running one.
        driver.submit()
        #expect(driver.take() == [])
        driver.answer(token(2), .available)
        #expect(driver.take() == [
            fieldEvent(.email, .valid, .valid, rev: 1), submittable(true),
            .register(username: "alice1", password: Secret("secret1"), email: "a@b.co"),
        ])
        driver.submit()
        #expect(driver.take() == [])
        driver.complete(.success("alice1"))
        #expect(driver.take() == [submitEvent(.succeeded, .succeeded),
                                  .finishSubmit(.success(.registered(username: "alice1")))])
        // Its own registration does not read back as taken.
        #expect(driver.form.usernameRegistered(canonical: "alice1") == [])
        driver.complete(.success("alice1"))
        #expect(driver.take() == [])
    }

    @Test func submitOfAnIncompleteFormFails() {
        var driver = makeDriver()
        driver.submit()
        #expect(driver.take() == [submitEvent(.running, .running), submitEvent(.failed, .notSubmittable),
                                  .finishSubmit(.failure(.notSubmittable(form: "register")))])
        #expect(!driver.form.isSubmitting)
    }

    @Test func submitIsForTheLatestInput() throws {
        var driver = try filledRegisterDriver()
        try driver.type(.username, "alice2")
        driver.submit()
        #expect(driver.take() == [
            submittable(false), debounce(.username, at: 2000),
            submitEvent(.running, .running),
            fieldEvent(.username, .validating, .validating, rev: 2),
            .cancelTimer(.debounce(.username)),
            .startCheck(.usernameAvailable(canonical: "alice2"), token: token(2)),
        ])
        // Input while the submit waits is judged at once.
        try driver.type(.username, "ab")
        #expect(driver.take() == [fieldEvent(.username, .invalid, .tooShort, rev: 3),
                                  fieldEvent(.password, .valid, .valid, enabled: false, rev: 1),
                                  fieldEvent(.confirm, .valid, .valid, enabled: false, rev: 1),
                                  submitEvent(.failed, .notSubmittable),
                                  .cancelCheck(token(2)),
                                  .finishSubmit(.failure(.notSubmittable(form: "register")))])
    }

    @Test func storeTakenFailsTheSubmitAndMarksTheField() throws {
        var driver = try filledRegisterDriver()
        driver.submit()
        #expect(driver.take() == [submitEvent(.running, .running),
                                  .register(username: "alice1", password: Secret("secret1"), email: nil)])
        driver.complete(.failure(.taken(field: "username")))
        #expect(driver.take() == [
            submitEvent(.failed, .taken),
            fieldEvent(.username, .invalid, .taken, rev: 1),
            fieldEvent(.password, .valid, .valid, enabled: false, rev: 1),
            fieldEvent(.confirm, .valid, .valid, enabled: false, rev: 1),
            submittable(false),
            .finishSubmit(.failure(.taken(field: "username"))),
        ])
    }

    @Test func liveTakenTurnsEveryHolderOfTheName() throws {
        var driver = try filledRegisterDriver()
        #expect(driver.form.usernameRegistered(canonical: "bob123") == [])
        driver.perform(driver.form.usernameRegistered(canonical: "alice1"))
        #expect(driver.take() == [
            fieldEvent(.username, .invalid, .taken, rev: 1),
            fieldEvent(.password, .valid, .valid, enabled: false, rev: 1),
            fieldEvent(.confirm, .valid, .valid, enabled: false, rev: 1),
            submittable(false),
        ])
        driver.perform(driver.form.usernameRegistered(canonical: "alice1"))
        #expect(driver.take() == [])
    }

    @Test func liveTakenCancelsARunningCheckAndMatchesCanonically() throws {
        var driver = makeDriver()
        try driver.type(.username, "ＡＬＩＣＥ１")
        driver.advance(to: 500)
        #expect(driver.take() == [debounce(.username, at: 500),
                                  fieldEvent(.username, .validating, .validating, rev: 1),
                                  .startCheck(.usernameAvailable(canonical: "alice1"), token: token(1))])
        driver.perform(driver.form.usernameRegistered(canonical: "alice1"))
        #expect(driver.take() == [fieldEvent(.username, .invalid, .taken, rev: 1), .cancelCheck(token(1))])
        driver.answerLate(token(1), .available)
        #expect(driver.take() == [])
    }

    @Test func liveTakenEmail() throws {
        var driver = try filledRegisterDriver()
        try driver.type(.email, "a@b.co")
        driver.advance(to: 2000)
        driver.answer(token(2), .available)
        _ = driver.take()
        driver.perform(driver.form.emailRegistered(canonical: "a@b.co"))
        #expect(driver.take() == [fieldEvent(.email, .invalid, .taken, rev: 1), submittable(false)])
    }

    @Test func unknownFieldIsRefused() {
        var form = RegisterForm(policy: .seed, debounce: .milliseconds(500))
        #expect(throws: RosterError.unknownField(form: "register", field: "query")) {
            try form.inputReceived(field: .query, value: "x", now: .zero)
        }
    }

    @Test func checkFailureIsShownNotGuessed() throws {
        var driver = makeDriver()
        try driver.type(.username, "alice1")
        driver.advance(to: 500)
        _ = driver.take()
        driver.answer(token(1), .failed)
        #expect(driver.take() == [fieldEvent(.username, .invalid, .checkFailed, rev: 1)])
    }

    @Test func closeCancelsEverything() throws {
        var driver = try filledRegisterDriver()
        try driver.type(.email, "a@b.co")
        driver.advance(to: 2000)
        try driver.type(.username, "alice9")
        #expect(driver.form.close() == [.cancelTimer(.debounce(.username)), .cancelCheck(token(2))])
    }
}


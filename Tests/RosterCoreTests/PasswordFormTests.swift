import Testing
@testable import RosterCore

/// The password form's whole histories on a manual clock: every action from the first keystroke, as the runtime
/// would perform them.
@Suite("PasswordForm")
struct PasswordFormTests {
    private func makeDriver(_ policy: Policy = .seed) -> FormDriver<PasswordRulebook> {
        FormDriver(PasswordForm(policy: policy, username: "alice1", debounce: .milliseconds(500)))
    }

    private func field(_ field: FieldName, _ state: FieldState, _ code: FieldCode, enabled: Bool = true,
                       rev: Int) -> FormAction {
        fieldEvent(field, state, code, enabled: enabled, rev: rev, form: .password)
    }

    @Test func openSnapshot() {
        #expect(PasswordForm(policy: .seed, username: "alice1", debounce: .milliseconds(500)).snapshot == FormSnapshot(
            form: .password, fields: [
                FieldSnapshot(name: .current, enabled: true, state: .empty, code: .empty, rev: 0),
                FieldSnapshot(name: .new, enabled: true, state: .empty, code: .empty, rev: 0),
                FieldSnapshot(name: .confirm, enabled: false, state: .empty, code: .empty, rev: 0),
            ], submittable: false))
    }

    /// The enablement chain, a wrong current password told only by the submit, and the change.
    @Test func aPasswordChangeFromTheFirstKeystrokeToTheAnswer() throws {
        var driver = makeDriver()
        #expect(throws: RosterError.fieldDisabled(form: "password", field: "confirm")) {
            try driver.type(.confirm, "secret2")
        }
        try driver.type(.current, "wrong1")
        driver.advance(to: 100)
        try driver.type(.new, "secret2")
        driver.advance(to: 600)
        // The current password is never checked while typing: non-empty is all it needs.
        #expect(driver.take() == [
            debounce(.current, at: 500), debounce(.new, at: 600),
            field(.current, .valid, .entered, rev: 1),
            field(.new, .valid, .valid, rev: 1),
            field(.confirm, .empty, .empty, rev: 0),
        ])
        try driver.type(.confirm, "secret")
        driver.advance(to: 1100)
        #expect(driver.take() == [debounce(.confirm, at: 1100), field(.confirm, .invalid, .mismatch, rev: 1)])
        try driver.type(.confirm, "secret2")
        driver.advance(to: 1600)
        #expect(driver.take() == [debounce(.confirm, at: 1600), field(.confirm, .valid, .valid, rev: 2),
                                  submittable(true, form: .password)])
        driver.submit()
        #expect(driver.take() == [submitEvent(.running, .running, form: .password),
                                  .changePassword(current: Secret("wrong1"), new: Secret("secret2"))])
        driver.complete(.failure(.wrongPassword))
        #expect(driver.take() == [submitEvent(.failed, .wrongPassword, form: .password),
                                  .finishSubmit(.failure(.wrongPassword))])
        // What was typed stays: only the current password is corrected.
        try driver.type(.current, "secret1")
        driver.advance(to: 2100)
        #expect(driver.take() == [
            submittable(false, form: .password), debounce(.current, at: 2100),
            field(.current, .valid, .entered, rev: 2), submittable(true, form: .password),
        ])
        driver.submit()
        driver.complete(.success("alice1"))
        #expect(driver.take() == [submitEvent(.running, .running, form: .password),
                                  .changePassword(current: Secret("secret1"), new: Secret("secret2")),
                                  submitEvent(.succeeded, .succeeded, form: .password),
                                  .finishSubmit(.success(.passwordChanged))])
    }

    /// `same_as_current` follows both fields: `new` is judged again whenever current's debounced value changes, in
    /// its own rev, and confirm's enablement follows.
    @Test func sameAsCurrentIsJudgedAgainWhenCurrentChanges() throws {
        var driver = makeDriver()
        try driver.type(.current, "secret1")
        try driver.type(.new, "secret1")
        driver.advance(to: 500)
        #expect(driver.take() == [
            debounce(.current, at: 500), debounce(.new, at: 500),
            field(.current, .valid, .entered, rev: 1),
            field(.new, .invalid, .sameAsCurrent, rev: 1),
        ])
        try driver.type(.current, "secret9")
        driver.advance(to: 1000)
        #expect(driver.take() == [
            debounce(.current, at: 1000),
            field(.current, .valid, .entered, rev: 2),
            field(.new, .valid, .valid, rev: 1),
            field(.confirm, .empty, .empty, rev: 0),
        ])
        try driver.type(.confirm, "secret1")
        driver.advance(to: 1500)
        #expect(driver.take() == [debounce(.confirm, at: 1500), field(.confirm, .valid, .valid, rev: 1),
                                  submittable(true, form: .password)])
        // Back to the same: new turns, confirm is disabled with the verdict it had, and nothing is submittable.
        try driver.type(.current, "secret1")
        driver.advance(to: 2000)
        #expect(driver.take() == [
            submittable(false, form: .password), debounce(.current, at: 2000),
            field(.current, .valid, .entered, rev: 3),
            field(.new, .invalid, .sameAsCurrent, rev: 1),
            field(.confirm, .valid, .valid, enabled: false, rev: 1),
        ])
        #expect(throws: RosterError.fieldDisabled(form: "password", field: "confirm")) {
            try driver.type(.confirm, "x")
        }
    }

    /// Sameness is on the normalized passwords (NFKC under the hardened preset, as a hash would verify either), and
    /// is decided before libpwquality, which is then never asked; a local rule still speaks first.
    @Test func sameAsCurrentComparesNormalizedValuesBeforeTheQualityCheck() throws {
        var driver = makeDriver(.hardened)
        try driver.type(.current, "correct horse battery")
        try driver.type(.new, "ｃｏｒｒｅｃｔ\u{3000}horse battery")
        driver.advance(to: 500)
        #expect(driver.take() == [
            debounce(.current, at: 500), debounce(.new, at: 500),
            field(.current, .valid, .entered, rev: 1),
            field(.new, .invalid, .sameAsCurrent, rev: 1),
        ])
        try driver.type(.current, "short")
        try driver.type(.new, "short")
        driver.advance(to: 1000)
        #expect(driver.take() == [
            debounce(.current, at: 1000), debounce(.new, at: 1000),
            field(.current, .valid, .entered, rev: 2),
            field(.new, .invalid, .tooShort, rev: 2),
        ])
    }

    /// flatMapLatest across fields: a quality check still out for `new` was asked before current changed, so its
    /// answer could not say `same_as_current`; it is dropped and new judged again.
    @Test func aQualityCheckOutWhenCurrentChangesIsReplaced() throws {
        var driver = makeDriver(.hardened)
        try driver.type(.new, "correct horse battery")
        driver.advance(to: 500)
        #expect(driver.take() == [
            debounce(.new, at: 500), field(.new, .validating, .validating, rev: 1),
            .startCheck(.passwordQuality(password: Secret("correct horse battery"), username: "alice1"), token: token(1)),
        ])
        try driver.type(.current, "correct horse battery")
        driver.advance(to: 1000)
        #expect(driver.take() == [
            debounce(.current, at: 1000),
            field(.current, .valid, .entered, rev: 1),
            field(.new, .invalid, .sameAsCurrent, rev: 1),
            .cancelCheck(token(1)),
        ])
        driver.answerLate(token(1), .qualityPassed)
        #expect(driver.take() == [])
        // A different current asks libpwquality again, with the session's username for contains_username.
        try driver.type(.current, "an older passphrase")
        driver.advance(to: 1500)
        #expect(driver.take() == [
            debounce(.current, at: 1500), field(.current, .valid, .entered, rev: 2),
            field(.new, .validating, .validating, rev: 1),
            .startCheck(.passwordQuality(password: Secret("correct horse battery"), username: "alice1"), token: token(2)),
        ])
        driver.answer(token(2), .qualityFailed(reason: "contains_username"))
        #expect(driver.take() == [field(.new, .invalid, .containsUsername, rev: 1)])
    }

    /// combineLatest: confirm is judged again when new's debounced value changes, in confirm's own rev.
    @Test func confirmIsJudgedAgainWhenNewChanges() throws {
        var driver = makeDriver()
        try driver.type(.current, "secret1")
        try driver.type(.new, "secret2")
        driver.advance(to: 500)
        try driver.type(.confirm, "secret2")
        driver.advance(to: 1000)
        _ = driver.take()
        try driver.type(.new, "secret3")
        driver.advance(to: 1500)
        #expect(driver.take() == [
            submittable(false, form: .password), debounce(.new, at: 1500),
            field(.new, .valid, .valid, rev: 2),
            field(.confirm, .invalid, .mismatch, rev: 1),
        ])
        try driver.type(.new, "secret2")
        driver.advance(to: 2000)
        #expect(driver.take() == [
            debounce(.new, at: 2000), field(.new, .valid, .valid, rev: 3),
            field(.confirm, .valid, .valid, rev: 1), submittable(true, form: .password),
        ])
    }

    /// A submit flushes every pending debounce at once and waits for the quality check it starts; the
    /// submitted values are the latest, normalized.
    @Test func submitFlushesPendingChecksAndWaits() throws {
        var driver = makeDriver(.hardened)
        try driver.type(.current, "correct horse battery")
        try driver.type(.new, "a different passphrase")
        driver.advance(to: 500)
        driver.answer(token(1), .qualityPassed)
        try driver.type(.confirm, "a different passphrase")
        driver.advance(to: 1000)
        #expect(driver.form.snapshot.submittable)
        _ = driver.take()
        driver.advance(to: 1200)
        try driver.type(.new, "another\u{00A0}new passphrase")
        try driver.type(.confirm, "another new passphrase")
        driver.submit()
        #expect(driver.take() == [
            submittable(false, form: .password), debounce(.new, at: 1700), debounce(.confirm, at: 1700),
            submitEvent(.running, .running, form: .password),
            field(.new, .validating, .validating, rev: 2),
            field(.confirm, .valid, .valid, rev: 2),
            .cancelTimer(.debounce(.new)),
            .startCheck(.passwordQuality(password: Secret("another new passphrase"), username: "alice1"), token: token(2)),
            .cancelTimer(.debounce(.confirm)),
        ])
        driver.answer(token(2), .qualityPassed)
        #expect(driver.take() == [
            field(.new, .valid, .valid, rev: 2), submittable(true, form: .password),
            .changePassword(current: Secret("correct horse battery"), new: Secret("another new passphrase")),
        ])
        driver.complete(.success("alice1"))
        #expect(driver.take() == [submitEvent(.succeeded, .succeeded, form: .password),
                                  .finishSubmit(.success(.passwordChanged))])
        #expect(driver.timers.isEmpty && driver.checks.isEmpty)
    }

    @Test func aSubmitOfAnIncompleteFormFails() throws {
        var driver = makeDriver()
        try driver.type(.current, "secret1")
        try driver.type(.new, "secret1")
        driver.submit()
        #expect(driver.take() == [
            debounce(.current, at: 500), debounce(.new, at: 500),
            submitEvent(.running, .running, form: .password),
            field(.current, .valid, .entered, rev: 1),
            field(.new, .invalid, .sameAsCurrent, rev: 1),
            submitEvent(.failed, .notSubmittable, form: .password),
            .cancelTimer(.debounce(.current)), .cancelTimer(.debounce(.new)),
            .finishSubmit(.failure(.notSubmittable(form: "password"))),
        ])
    }

    @Test func closeCancelsEverything() throws {
        var driver = makeDriver(.hardened)
        try driver.type(.new, "correct horse battery")
        driver.advance(to: 500)
        try driver.type(.current, "x")
        _ = driver.take()
        #expect(driver.form.close() == [.cancelTimer(.debounce(.current)), .cancelCheck(token(1))])
    }
}

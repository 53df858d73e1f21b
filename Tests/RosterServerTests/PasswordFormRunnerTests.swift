import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The password form's runner on a manual clock, with the real 500 ms debounce, an in-memory storage and fake
/// password work: the change goes through `AccountProcedures.changePassword`, and the sessions it revokes end.
@Suite("Password form runner on a manual clock")
struct PasswordFormRunnerTests {
    /// current, new and confirm typed and debounced; the form is submittable and its events are taken.
    private func filledForm(_ harness: FormRunnerHarness, current: String, new: String) throws -> FormRunner<PasswordRulebook> {
        let form = harness.passwordForm()
        try harness.type(form, .current, current)
        try harness.type(form, .new, new)
        harness.advance(ms: 500)
        try harness.type(form, .confirm, new)
        harness.advance(ms: 500)
        #expect(form.snapshot.submittable)
        _ = harness.session.take()
        return form
    }

    private func storedHash(_ harness: FormRunnerHarness, _ username: String) -> String? {
        var hash: String?
        harness.storage.acting(for: .daemon).credential(for: AccountIdentifier(loginIdentifier: username)) {
            hash = (try? $0.get())??.passwordHash
        }
        return hash
    }

    private func isLive(_ harness: FormRunnerHarness, _ token: [UInt8]) -> Bool {
        var live = false
        harness.storage.acting(for: .daemon).resumeToken(hash: token,
                                                         idleLimitMs: 60_000) { live = (try? $0.get()) != nil }
        return live
    }

    @Test func aChangeEndsEveryOtherSessionAndKeepsThisOne() throws {
        let harness = FormRunnerHarness()
        let (_, tokens) = harness.logIn("alice1", password: "secret1", sessions: 3)
        let form = harness.passwordForm()
        try harness.type(form, .current, "secret1")
        try harness.type(form, .new, "secret2")
        harness.advance(ms: 500)
        #expect(harness.session.take() == [
            field(.password, .current, .valid, .entered, rev: 1), field(.password, .new, .valid, .valid, rev: 1),
            field(.password, .confirm, .empty, .empty, rev: 0),
        ])
        try harness.type(form, .confirm, "secret2")
        harness.advance(ms: 500)
        #expect(harness.session.take() == [field(.password, .confirm, .valid, .valid, rev: 1), submittable(.password, true)])
        harness.submit(form)
        let history = harness.session.take()
        #expect(history.count == 4)
        #expect(history.first == submit(.password, .running, .running))
        guard history.count == 4, case .tokensRevoked(let revoked) = history[1] else {
            Issue.record("no revocation in \(history)")
            return
        }
        // The sessions of the other two tokens end before the form says it succeeded.
        #expect(Set(revoked) == Set(tokens.dropFirst()) && revoked.count == 2)
        #expect(Array(history.dropFirst(2)) == [submit(.password, .succeeded, .succeeded), .passwordChanged(revoked: 2)])
        #expect(storedHash(harness, "alice1") == FakePasswordWork.hash(of: "secret2"))
        #expect(isLive(harness, tokens[0]) && !isLive(harness, tokens[1]) && !isLive(harness, tokens[2]))
        #expect(harness.scheduler.pendingCount == 0)
    }

    /// The current password is verified only on submit, through the failed-log-in limiter: a wrong one fails the
    /// submit as `wrong_password`, is recorded as a failed log-in, and changes nothing.
    @Test func aWrongCurrentPasswordFailsTheSubmitAndCountsAsAFailedLogIn() throws {
        let harness = FormRunnerHarness()
        let (_, tokens) = harness.logIn("alice1", password: "secret1", sessions: 2)
        let form = try filledForm(harness, current: "secret0", new: "secret2")
        #expect(!harness.storage.calls.contains(.credentialOf) && !harness.storage.calls.contains(.credential))
        harness.submit(form)
        #expect(harness.session.take() == [
            submit(.password, .running, .running), submit(.password, .failed, .wrongPassword),
            .submitFailed(.wrongPassword),
        ])
        #expect(harness.storage.calls.contains(.recordFailure))
        #expect(!harness.storage.calls.contains(.changePassword))
        #expect(storedHash(harness, "alice1") == FakePasswordWork.hash(of: "secret1"))
        #expect(isLive(harness, tokens[1]))
        // The form keeps what was typed; the right current password then changes it.
        try harness.type(form, .current, "secret1")
        harness.advance(ms: 500)
        _ = harness.session.take()
        harness.submit(form)
        #expect(harness.session.take().suffix(2) == [submit(.password, .succeeded, .succeeded), .passwordChanged(revoked: 1)])
        #expect(harness.storage.auditLog.map(\.record) == [
            AuditRecord(event: .passwordChanged, username: "alice1", peer: harness.session.peer, outcome: .failed,
                        reason: "wrong_password"),
            AuditRecord(event: .passwordChanged, username: "alice1", peer: harness.session.peer),
        ])
    }

    /// A session with no stored token (its log-in could not store one) keeps nothing: every token is revoked.
    @Test func aSessionWithoutATokenRevokesThemAll() throws {
        let harness = FormRunnerHarness()
        let (_, tokens) = harness.logIn("alice1", password: "secret1", sessions: 2)
        harness.session.tokenHash = nil
        let form = try filledForm(harness, current: "secret1", new: "secret2")
        harness.submit(form)
        #expect(harness.session.take().last == .passwordChanged(revoked: 2))
        #expect(!isLive(harness, tokens[0]) && !isLive(harness, tokens[1]))
    }

    /// A form closed (and dropped, as the server drops it) while its change is being hashed answers
    /// `form_not_open` and says nothing more; the change still lands, so the other sessions still end.
    @Test func aFormClosedDuringTheChangeStillEndsTheRevokedSessions() throws {
        let harness = FormRunnerHarness(passwords: .onRelease)
        let (_, tokens) = harness.logIn("alice1", password: "secret1", sessions: 2)
        var form: FormRunner<PasswordRulebook>? = try filledForm(harness, current: "secret1", new: "secret2")
        form.map(harness.submit)
        #expect(harness.session.take() == [submit(.password, .running, .running)])
        form?.close()
        form = nil
        #expect(harness.session.take() == [.submitFailed(.formNotOpen(form: "password"))])
        harness.releaseEverything()
        #expect(harness.session.take() == [.tokensRevoked([tokens[1]])])
        #expect(storedHash(harness, "alice1") == FakePasswordWork.hash(of: "secret2"))
        #expect(harness.scheduler.pendingCount == 0)
    }
}

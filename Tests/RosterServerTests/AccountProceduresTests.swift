import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// What the account methods get from the account procedures, on the in-memory storage: `users.register`'s
/// rules, tokens and their idleness on the storage's clock, checks that fail.
@Suite("Account procedures")
struct AccountProceduresTests {
    private func register(_ harness: FormRunnerHarness, _ username: String, _ password: String, email: String = "",
                          announced: @escaping (Account) -> Void = { _ in })
        -> Result<Registration<Account>.Registered, RosterError>? {
        var outcome: Result<Registration<Account>.Registered, RosterError>?
        harness.accounts.register(.judging(username: username, password: Secret(password), email: email,
                                           policy: harness.policy),
                                  peer: harness.session.peer, charge: harness.session.queueCharge, announce: announced) { outcome = $0 }
        harness.releaseEverything()
        return outcome
    }

    private func logIn(_ harness: FormRunnerHarness, _ identifier: String, _ password: String)
        -> Result<LogIn<Account>.SignedIn, RosterError>? {
        var outcome: Result<LogIn<Account>.SignedIn, RosterError>?
        harness.accounts.logIn(LogInRequest(typedIdentifier: identifier, password: Secret(password), policy: harness.policy),
                               peer: harness.session.peer, charge: harness.session.queueCharge) { outcome = $0 }
        harness.releaseEverything()
        return outcome
    }

    @Test(arguments: [InMemoryStorage.Answering.immediately, .onRelease])
    func usersRegisterAsksTheStorageInTheRulesOrderAndAnnouncesBeforeItAnswers(answering: InMemoryStorage.Answering) {
        let harness = FormRunnerHarness(storage: answering)
        var order: [String] = []
        var outcome: Result<Registration<Account>.Registered, RosterError>?
        harness.accounts.register(.judging(username: "ＢＯＢ１２３", password: Secret("secret1"), email: "Bob@Example.com",
                                           policy: .seed),
                                  peer: harness.session.peer, charge: harness.session.queueCharge, announce: { order.append("announce \($0.username)") },
                                  completion: { outcome = $0; order.append("answer") })
        harness.releaseEverything()
        #expect(harness.storage.calls == [.isUsernameTaken, .isEmailTaken, .createAccount])
        #expect(order == ["announce bob123", "answer"])
        guard case .success(let registered) = outcome else {
            Issue.record("registration failed: \(String(describing: outcome))")
            return
        }
        #expect(registered.account.email == "bob@example.com")
        #expect(registered.token == nil)
    }

    @Test func usersRegisterAnswersTheFirstRefusedField() {
        let harness = FormRunnerHarness()
        harness.existingAccount("taken1", password: "secret1", email: "taken@example.com")
        #expect(register(harness, "TAKEN1", "abc").map(\.reason) == "taken")
        #expect(register(harness, "fresh1", "abc").map(\.reason) == "too_short")
        #expect(register(harness, "fresh1", "secret1", email: "TAKEN@example.com").map(\.reason) == "taken")
        #expect(register(harness, "fresh 1", "secret1").map(\.reason) == "forbidden_characters")
        // Only the account made before was ever created.
        #expect(harness.storage.calls.filter { $0 == .createAccount }.count == 1)
        // A check the storage could not answer reads as the field's check_failed, unless the database could not
        // be reached: that answers storage_unavailable, as the write would (issue 14).
        harness.storage.failures[.isUsernameTaken] = .other
        #expect(register(harness, "fresh1", "secret1").map(\.reason) == "check_failed")
        harness.storage.failures[.isUsernameTaken] = .unavailable(retryAfterMs: 10)
        #expect(register(harness, "fresh1", "secret1").map(\.reason) == "storage_unavailable")
        harness.storage.failures = [.isEmailTaken: .unavailable(retryAfterMs: 20)]
        #expect(register(harness, "fresh1", "secret1", email: "fresh@example.com").map(\.reason) == "storage_unavailable")
        #expect(harness.storage.calls.filter { $0 == .createAccount }.count == 1)
    }

    /// A token's idleness runs on the storage's clock: a session idle for less than the limit resumes, one idle
    /// for the whole limit does not, and a revoked token resumes nothing.
    @Test func tokensResumeUntilIdleOrRevokedOnTheStoragesClock() throws {
        let harness = FormRunnerHarness()
        harness.existingAccount("alice1", password: "secret1")
        let signedIn = try #require(try logIn(harness, "alice1", "secret1")?.get())
        let token = try signedIn.token.get()
        func resume() -> Result<(Account, [UInt8]), RosterError>? {
            var outcome: Result<(Account, [UInt8]), RosterError>?
            harness.accounts.resume(bearer: token.bearer, peer: harness.session.peer, charge: harness.session.queueCharge) { outcome = $0 }
            return outcome
        }
        let idleMs = Policy.seed.sessionIdle.nanoseconds / 1_000_000
        harness.clock.advance(byMs: idleMs - 1)
        #expect((try? resume()?.get())?.0.username == "alice1")
        #expect((try? resume()?.get())?.1 == token.hash)
        harness.clock.advance(byMs: idleMs)
        #expect(resume().map { $0.map(\.0.username) } == .failure(.notFound))
        let again = try #require(try logIn(harness, "alice1", "secret1")?.get()).token.get()
        var revoked: Result<Void, RosterError>?
        harness.accounts.revoke(tokenHash: again.hash, entry: AuditRecord(event: .logout, username: "alice1", peer: harness.session.peer), charge: harness.session.queueCharge) { revoked = $0 }
        #expect((try? revoked?.get()) != nil)
        var afterRevoke: Result<(Account, [UInt8]), RosterError>?
        harness.accounts.resume(bearer: again.bearer, peer: harness.session.peer, charge: harness.session.queueCharge) { afterRevoke = $0 }
        #expect(afterRevoke.map { $0.map(\.0.username) } == .failure(.notFound))
        var garbage: Result<(Account, [UInt8]), RosterError>?
        harness.accounts.resume(bearer: "not a token", peer: harness.session.peer, charge: harness.session.queueCharge) { garbage = $0 }
        #expect(garbage.map { $0.map(\.0.username) } == .failure(.notFound))
    }

    @Test func aCheckTheStorageCannotAnswerReadsAsFailed() {
        let harness = FormRunnerHarness()
        harness.storage.failure = .unavailable(retryAfterMs: 10)
        var results: [CheckResult] = []
        for check in [Check.usernameAvailable(canonical: "alice1"), .emailAvailable(canonical: "a@example.com"),
                      .accountExists(canonical: "alice1")] {
            harness.accounts.check(check, charge: harness.session.queueCharge) { results.append($0) }
        }
        #expect(results == [.failed, .failed, .failed])
    }

    @Test func aLogInByEmailIsTheAccountsAndUnknownPeopleAreNotFound() {
        let harness = FormRunnerHarness()
        harness.existingAccount("alice1", password: "secret1", email: "alice@example.com")
        #expect((try? logIn(harness, "Alice@Example.COM", "secret1")?.get())?.account.username == "alice1")
        #expect(logIn(harness, "nobody1", "secret1").map { $0.map(\.account.username) } == .failure(.notFound))
        #expect(logIn(harness, "alice1", "nope123").map { $0.map(\.account.username) } == .failure(.wrongPassword))
    }
}

private extension Result where Failure == RosterError {
    /// The failure's reason, or "ok".
    var reason: String {
        switch self {
        case .success: "ok"
        case .failure(let error): error.reason
        }
    }
}

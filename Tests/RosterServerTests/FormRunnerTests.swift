import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The runtime's register and log-in form runners on a manual clock, with the real 500 ms debounce, an in-memory
/// storage and fake password work; every test asserts the whole history its session and callers saw.
@Suite("Form runners on a manual clock")
struct FormRunnerTests {
    /// Username, password and confirm typed and debounced; the form is submittable.
    private func filledRegisterForm(_ harness: FormRunnerHarness) throws -> FormRunner<RegisterRulebook> {
        let form = harness.registerForm()
        try harness.type(form, .username, "alice1")
        harness.advance(ms: 500)
        try harness.type(form, .password, "secret1")
        harness.advance(ms: 500)
        try harness.type(form, .confirm, "secret1")
        harness.advance(ms: 500)
        return form
    }

    @Test func aRegistrationFromTheFirstKeystrokeToTheSessionsToken() throws {
        let harness = FormRunnerHarness()
        harness.session.peer.client = "form-test"
        let form = harness.registerForm()
        try harness.type(form, .username, "alice1")
        harness.advance(ms: 499)
        #expect(harness.session.take() == [])
        harness.advance(ms: 1)
        #expect(harness.session.take() == [
            field(.register, .username, .validating, .validating, rev: 1),
            field(.register, .username, .valid, .available, rev: 1),
            field(.register, .password, .empty, .empty, rev: 0),
        ])
        try harness.type(form, .password, "secret1")
        harness.advance(ms: 500)
        #expect(harness.session.take() == [
            field(.register, .password, .valid, .valid, rev: 1),
            field(.register, .confirm, .empty, .empty, rev: 0),
        ])
        try harness.type(form, .confirm, "secret1")
        harness.advance(ms: 500)
        #expect(harness.session.take() == [field(.register, .confirm, .valid, .valid, rev: 1), submittable(.register, true)])
        harness.submit(form)
        #expect(harness.session.take() == [
            submit(.register, .running, .running),
            .registered("alice1"),
            .loggedIn("alice1", withToken: true),
            submit(.register, .succeeded, .succeeded),
            .submitSucceeded(username: "alice1", withToken: true),
        ])
        #expect(harness.storage.calls == [.isUsernameTaken, .createAccount, .storeToken])
        #expect(harness.scheduler.pendingCount == 0)
        // One entry, the registration's, naming the form's peer; its first token has none of its own.
        #expect(harness.storage.auditLog.map(\.record) == [AuditRecord(event: .register, username: "alice1",
                                                                         peer: harness.session.peer)])
    }

    /// A database that cannot be reached fails the submit with its own code and hint, on both forms: nothing is
    /// stored, and the form says why rather than a bare `failed`.
    @Test func aSubmitDuringAnOutageFailsAsStorageUnavailable() throws {
        let harness = FormRunnerHarness()
        let form = try filledRegisterForm(harness)
        _ = harness.session.take()
        harness.storage.failures[.createAccount] = .unavailable(retryAfterMs: 500)
        harness.submit(form)
        #expect(harness.session.take() == [
            submit(.register, .running, .running), submit(.register, .failed, .storageUnavailable),
            .submitFailed(.storageUnavailable(retryAfterMs: 500)),
        ])
        harness.existingAccount("bob123", password: "secret1")
        let login = harness.loginForm(firstToken: 10)
        try harness.type(login, .username, "bob123")
        try harness.type(login, .password, "secret1")
        harness.advance(ms: 500)
        _ = harness.session.take()
        harness.storage.failure = .unavailable(retryAfterMs: 800)
        harness.submit(login)
        #expect(harness.session.take() == [
            submit(.login, .running, .running), submit(.login, .failed, .storageUnavailable),
            .submitFailed(.storageUnavailable(retryAfterMs: 800)),
        ])
        harness.storage.failure = nil
        var stored: Bool?
        harness.storage.acting(for: .daemon).isUsernameTaken("alice1") { stored = try? $0.get() }
        #expect(stored == false)
    }

    /// flatMapLatest at the runtime: the answer to a check that was superseded by newer input arrives, and
    /// nothing is said about it.
    @Test func aCheckThatAnswersAfterANewerInputIsDropped() throws {
        let harness = FormRunnerHarness(storage: .onRelease)
        let form = harness.registerForm()
        try harness.type(form, .username, "alice1")
        harness.advance(ms: 500)
        #expect(harness.session.take() == [field(.register, .username, .validating, .validating, rev: 1)])
        try harness.type(form, .username, "alice2")
        harness.existingAccount("alice2", password: "secret9")
        // The first check answers "available" for alice1, after alice2 was typed.
        #expect(harness.storage.releaseNext())
        #expect(harness.session.take() == [])
        harness.advance(ms: 500)
        #expect(harness.session.take() == [field(.register, .username, .validating, .validating, rev: 2)])
        #expect(harness.storage.releaseNext())
        #expect(harness.session.take() == [field(.register, .username, .invalid, .taken, rev: 2)])
    }

    @Test func aFormClosedWhileACheckIsOutSaysNothingMore() throws {
        let harness = FormRunnerHarness(storage: .onRelease)
        let form = harness.registerForm()
        try harness.type(form, .username, "alice1")
        harness.advance(ms: 500)
        harness.submit(form)
        #expect(harness.session.take() == [
            field(.register, .username, .validating, .validating, rev: 1),
            submit(.register, .running, .running),
        ])
        form.close()
        #expect(harness.session.take() == [.submitFailed(.formNotOpen(form: "register"))])
        #expect(harness.storage.releaseAll() == 1)
        harness.advance(ms: 10_000)
        #expect(harness.session.take() == [])
        #expect(harness.scheduler.pendingCount == 0)
    }

    @Test func aSubmitWaitsForThePendingCheckThenRegisters() throws {
        let harness = FormRunnerHarness()
        let form = try filledRegisterForm(harness)
        _ = harness.session.take()
        harness.storage.answering = .onRelease
        try harness.type(form, .email, "Alice@Example.com")
        #expect(harness.session.take() == [submittable(.register, false)])
        // The submit flushes the email's debounce and waits for its check.
        harness.submit(form)
        #expect(harness.session.take() == [
            submit(.register, .running, .running),
            field(.register, .email, .validating, .validating, rev: 1),
        ])
        #expect(harness.storage.pending == [.isEmailTaken])
        #expect(harness.storage.releaseNext())
        #expect(harness.session.take() == [field(.register, .email, .valid, .valid, rev: 1), submittable(.register, true)])
        #expect(harness.storage.pending == [.createAccount])
        harness.releaseEverything()
        #expect(harness.session.take() == [
            .registered("alice1"),
            .loggedIn("alice1", withToken: true),
            submit(.register, .succeeded, .succeeded),
            .submitSucceeded(username: "alice1", withToken: true),
        ])
        harness.storage.answering = .immediately
        harness.storage.acting(for: .daemon).credential(for: .email("alice@example.com")) { result in
            #expect((try? result.get())?.account.username == "alice1")
        }
    }

    /// Whether the storage and the hashing lane answer before their calls return or later, a client hears the
    /// same things in the same order.
    @Test func answersThatComeLaterTellTheSameStory() throws {
        func story(late: Bool) throws -> [Happening] {
            let harness = FormRunnerHarness(storage: late ? .onRelease : .immediately,
                                            passwords: late ? .onRelease : .immediately)
            let form = harness.registerForm()
            for (field, value) in [(FieldName.username, "alice1"), (.password, "secret1"), (.confirm, "secret1"),
                                   (.email, "alice@example.com")] {
                try harness.type(form, field, value)
                harness.advance(ms: 500)
                harness.releaseEverything()
            }
            harness.submit(form)
            harness.releaseEverything()
            let login = harness.loginForm(firstToken: 100)
            try harness.type(login, .username, "alice@example.com")
            try harness.type(login, .password, "secret1")
            harness.submit(login)
            harness.releaseEverything()
            return harness.session.history
        }
        let immediate = try story(late: false)
        // 16 for the registration, 8 for the log-in.
        #expect(immediate.count == 24)
        #expect(immediate.last == .submitSucceeded(username: "alice1", withToken: true))
        #expect(try story(late: true) == immediate)
    }

    @Test func aRegistrationThatLosesTheNameToAnotherWriterMarksItTaken() throws {
        let harness = FormRunnerHarness()
        let form = try filledRegisterForm(harness)
        _ = harness.session.take()
        harness.existingAccount("alice1", password: "elsewhere")
        harness.submit(form)
        #expect(harness.session.take() == [
            submit(.register, .running, .running),
            submit(.register, .failed, .taken),
            field(.register, .username, .invalid, .taken, rev: 1),
            field(.register, .password, .valid, .valid, enabled: false, rev: 1),
            field(.register, .confirm, .valid, .valid, enabled: false, rev: 1),
            submittable(.register, false),
            .submitFailed(.taken(field: "username")),
        ])
    }

    @Test func theHardenedPasswordIsJudgedOnTheChecksLane() throws {
        let harness = FormRunnerHarness(policy: .hardened, passwords: .onRelease)
        harness.passwords.quality = .qualityFailed(reason: "dictionary_word")
        let form = harness.registerForm()
        try harness.type(form, .username, "alice1")
        harness.advance(ms: 500)
        try harness.type(form, .password, "correct horse battery")
        harness.advance(ms: 500)
        #expect(harness.session.take() == [
            field(.register, .username, .validating, .validating, rev: 1),
            field(.register, .username, .valid, .available, rev: 1),
            field(.register, .password, .empty, .empty, rev: 0),
            field(.register, .password, .validating, .validating, rev: 1),
        ])
        #expect(harness.passwords.releaseNext())
        #expect(harness.session.take() == [field(.register, .password, .invalid, .dictionaryWord, rev: 1)])
    }

    // MARK: Log-in

    private func filledLoginForm(_ harness: FormRunnerHarness, password: String) throws -> FormRunner<LoginRulebook> {
        let form = harness.loginForm()
        try harness.type(form, .username, "alice1")
        harness.advance(ms: 500)
        try harness.type(form, .password, password)
        harness.advance(ms: 500)
        return form
    }

    @Test func aLogInFromTheFirstKeystrokeToTheSessionsToken() throws {
        let harness = FormRunnerHarness()
        harness.existingAccount("alice1", password: "secret1")
        let form = try filledLoginForm(harness, password: "secret1")
        harness.submit(form)
        #expect(harness.session.take() == [
            field(.login, .username, .validating, .validating, rev: 1),
            field(.login, .username, .valid, .available, rev: 1),
            field(.login, .password, .valid, .entered, rev: 1),
            submittable(.login, true),
            submit(.login, .running, .running),
            .loggedIn("alice1", withToken: true),
            submit(.login, .succeeded, .succeeded),
            .submitSucceeded(username: "alice1", withToken: true),
        ])
        #expect(harness.storage.calls == [.createAccount, .accountExists, .credential, .recentFailures, .storeToken])
        #expect(harness.storage.auditLog.map(\.record) == [AuditRecord(event: .login, username: "alice1",
                                                                         peer: harness.session.peer, method: .password)])
    }

    @Test func aHashMadeWithOtherParametersIsUpgradedBeforeTheAnswer() throws {
        let harness = FormRunnerHarness(storage: .onRelease)
        harness.existingAccount("alice1", password: "secret1")
        harness.passwords.upgradeTo = "$argon2id$upgraded"
        let form = try filledLoginForm(harness, password: "secret1")
        harness.releaseEverything()
        _ = harness.session.take()
        harness.submit(form)
        var order: [InMemoryStorage.Operation] = []
        while let next = harness.storage.pending.first {
            order.append(next)
            harness.storage.releaseNext()
        }
        #expect(order == [.credential, .recentFailures, .replacePasswordHash, .storeToken])
        #expect(harness.session.take().last == .submitSucceeded(username: "alice1", withToken: true))
    }

    /// Contract §5, on the storage's manual clock instead of a sleep: the limited attempt is told how long to
    /// wait, and after exactly that long the right password works again.
    @Test func afterTheWindowTheRightPasswordWorksAgain() throws {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        policy.rateLimitInterval = .seconds(1)
        let harness = FormRunnerHarness(policy: policy)
        harness.existingAccount("alice1", password: "secret1")
        let form = try filledLoginForm(harness, password: "nope123")
        _ = harness.session.take()
        for _ in 0..<2 {
            harness.submit(form)
            #expect(harness.session.take() == [
                submit(.login, .running, .running), submit(.login, .failed, .wrongPassword),
                .submitFailed(.wrongPassword),
            ])
        }
        try harness.type(form, .password, "secret1")
        harness.advance(ms: 500)
        _ = harness.session.take()
        harness.submit(form)
        #expect(harness.session.take() == [
            submit(.login, .running, .running), submit(.login, .failed, .rateLimited),
            .submitFailed(.rateLimited(retryAfterMs: 1_000)),
        ])
        harness.clock.advance(byMs: 999)
        harness.submit(form)
        #expect(harness.session.take().last == .submitFailed(.rateLimited(retryAfterMs: 1)))
        harness.clock.advance(byMs: 1)
        harness.submit(form)
        #expect(harness.session.take().last == .submitSucceeded(username: "alice1", withToken: true))
        #expect(harness.accounts.attemptsInFlight("account:alice1") == 0)
        let failed = { (reason: String) in
            AuditRecord(event: .login, username: "alice1", peer: harness.session.peer, outcome: .failed, reason: reason,
                        method: .password)
        }
        // The first failure on alice1 is written at once; the other three of that minute (a wrong password, two
        // limited attempts) are folded into one entry naming her, once the minute is over.
        #expect(harness.storage.auditLog.map(\.record) == [
            failed("wrong_password"),
            AuditRecord(event: .login, username: "alice1", peer: harness.session.peer, method: .password),
        ])
        harness.clock.advance(byMs: 60_000)
        harness.accounts.sweepFailedEntries()
        #expect(harness.storage.auditLog.last?.record == AuditRecord(
            event: .login, username: "alice1", peer: harness.session.peer, outcome: .failed, reason: "suppressed",
            suppressed: 3))
    }

    /// Attempts whose storage reads overlap still count each other: of three at a burst of two, the last waits.
    @Test func overlappingAttemptsCountAgainstThoseAfterThem() throws {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        let harness = FormRunnerHarness(policy: policy, storage: .onRelease, passwords: .onRelease)
        harness.existingAccount("alice1", password: "secret1")
        var answers: [Result<LogIn<Account>.SignedIn, RosterError>] = []
        for _ in 0..<3 {
            harness.accounts.logIn(LogInRequest(identifier: "alice1", password: Secret("nope123")), peer: harness.session.peer,
                                   charge: harness.session.queueCharge) { answers.append($0) }
        }
        harness.releaseEverything()
        #expect(answers.count == 3)
        let reasons = answers.map { result -> String in
            if case .failure(let error) = result { return error.reason }
            return "ok"
        }
        #expect(reasons.sorted() == ["rate_limited", "wrong_password", "wrong_password"])
        #expect(harness.accounts.attemptsInFlight("account:alice1") == 0)
    }

    /// A storage that cannot write what a log-in ends with: a failure it cannot record is the answer, a token it
    /// cannot store still logs the form's session in (the account is real); either way the gate is free again.
    @Test(arguments: [
        (InMemoryStorage.Operation.recordFailure, "nope123", [
            submit(.login, .running, .running), submit(.login, .failed, .failed), .submitFailed(.storageFull),
        ]),
        (.storeToken, "secret1", [
            submit(.login, .running, .running), .loggedIn("alice1", withToken: false),
            submit(.login, .succeeded, .succeeded), .submitSucceeded(username: "alice1", withToken: false),
        ]),
    ])
    func aLogInsLastWriteFailing(_ operation: InMemoryStorage.Operation, password: String, history: [Happening]) throws {
        let harness = FormRunnerHarness()
        harness.existingAccount("alice1", password: "secret1")
        let form = try filledLoginForm(harness, password: password)
        _ = harness.session.take()
        harness.storage.failures[operation] = .full
        harness.submit(form)
        #expect(harness.session.take() == history)
        #expect(harness.accounts.attemptsInFlight("account:alice1") == 0)
        #expect(harness.accounts.attemptsInFlight("uid:1000") == 0)
    }
}

import Testing
@testable import RosterCore

/// Stands for the storage's account in these tests.
struct TestAccount: Equatable, Sendable {
    var id: Int64
    var username: String
}

@Suite("Log-in procedure")
struct LogInTests {
    typealias Attempt = LogIn<TestAccount>

    let alice = TestAccount(id: 7, username: "alice1")
    let token = IssuedToken(bearer: "bearer", hash: [1, 2, 3])
    var found: Attempt.Found { Attempt.Found(account: alice, username: "alice1", passwordHash: "$argon2id$old") }
    let password = Secret("secret1")
    let t0: Int64 = 1_700_000_000_000

    func attempt(_ identifier: String = "alice1", policy: Policy = .seed) -> Attempt {
        Attempt(LogInRequest(identifier: identifier, password: password), peerUID: 1000, policy: policy)
    }

    /// Feeds `facts` in order and returns every effect, starting with the first.
    func run(_ login: inout Attempt, _ facts: [Attempt.Fact], gate: inout LoginGate) -> [Attempt.Effect] {
        var effects = login.start()
        for fact in facts { effects += login.step(fact, gate: &gate) }
        return effects
    }

    @Test func theRightPasswordIssuesAToken() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .accountFound(found), .failuresRead(times: [:], nowMs: t0), .verified(.accepted(upgradedHash: nil)),
        ], gate: &gate)
        #expect(effects == [
            .findAccount(identifier: "alice1"),
            .readFailures(keys: ["account:alice1", "uid:1000"], windowMs: 300_000),
            .verify(password: password, against: "$argon2id$old"),
            .issueToken(for: alice),
        ])
        // The verdict is known once the password verified; the token is not part of the attempt's count.
        #expect(gate.isIdle)
        #expect(login.step(.tokenIssued(token), gate: &gate) == [.finish(.success(.init(account: alice, token: .success(token))))])
        #expect(login.step(.tokenIssued(token), gate: &gate) == [])
    }

    @Test func anOldHashIsReplacedBeforeTheToken() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .accountFound(found), .failuresRead(times: [:], nowMs: t0), .verified(.accepted(upgradedHash: "$argon2id$new")),
        ], gate: &gate)
        #expect(effects.last == .replaceHash("$argon2id$new", of: alice))
        #expect(!gate.isIdle)
        #expect(login.step(.hashReplaced, gate: &gate) == [.issueToken(for: alice)])
        #expect(gate.isIdle)
    }

    @Test func aRefusalIsRecordedForBothKeysBeforeItIsAnswered() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(found), .failuresRead(times: [:], nowMs: t0), .verified(.refused)],
                          gate: &gate)
        #expect(effects.last == .recordFailure(keys: ["account:alice1", "uid:1000"]))
        #expect(gate.attemptsInFlight("account:alice1") == 1)
        #expect(login.step(.failureRecorded, gate: &gate) == [.finish(.failure(.wrongPassword))])
        #expect(gate.isIdle)
    }

    @Test func anUnknownIdentifierIsVerifiedAgainstADummyAndCountedUnderItsOwnKey() {
        var login = attempt("nobody9")
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(nil), .failuresRead(times: [:], nowMs: t0),
                                   .verified(.accepted(upgradedHash: nil)), .failureRecorded], gate: &gate)
        #expect(effects == [
            .findAccount(identifier: "nobody9"),
            .readFailures(keys: ["account:nobody9", "uid:1000"], windowMs: 300_000),
            .verify(password: password, against: nil),
            .recordFailure(keys: ["account:nobody9", "uid:1000"]),
            .finish(.failure(.notFound)),
        ])
    }

    @Test func theHardenedPolicyAnswersOneErrorForBoth() {
        for found in [found, nil] {
            var login = attempt(policy: .hardened)
            var gate = LoginGate()
            let effects = run(&login, [.accountFound(found), .failuresRead(times: [:], nowMs: t0), .verified(.refused),
                                       .failureRecorded], gate: &gate)
            #expect(effects.last == .finish(.failure(.invalidCredentials)))
        }
    }

    @Test func anEmailCountsUnderTheAccountsName() {
        var login = attempt("alice@example.com")
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(found)], gate: &gate)
        #expect(effects == [.findAccount(identifier: "alice@example.com"),
                            .readFailures(keys: ["account:alice1", "uid:1000"], windowMs: 300_000)])
    }

    @Test func aLimitedAttemptVerifiesNothing() {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        policy.rateLimitInterval = .seconds(1)
        var login = attempt(policy: policy)
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(found),
                                   .failuresRead(times: ["account:alice1": [t0 - 10, t0 - 5]], nowMs: t0)], gate: &gate)
        #expect(effects.last == .finish(.failure(.rateLimited(retryAfterMs: 990))))
        #expect(gate.isIdle)
    }

    /// Contract §5 on a manual clock: after the wait it was told, the right password works again.
    @Test func afterTheWindowTheRightPasswordWorksAgain() {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        policy.rateLimitInterval = .seconds(1)
        var gate = LoginGate()
        var failures: [Int64] = []
        var now = t0
        func tryLogIn(refused: Bool) -> Attempt.Effect? {
            var login = attempt(policy: policy)
            var effects = login.start() + login.step(.accountFound(found), gate: &gate)
            effects += login.step(.failuresRead(times: ["account:alice1": failures], nowMs: now), gate: &gate)
            guard case .verify = effects.last else { return effects.last }
            effects += login.step(.verified(refused ? .refused : .accepted(upgradedHash: nil)), gate: &gate)
            if refused {
                failures.append(now)
                effects += login.step(.failureRecorded, gate: &gate)
            }
            return effects.last
        }
        #expect(tryLogIn(refused: true) == .finish(.failure(.wrongPassword)))
        now += 3
        #expect(tryLogIn(refused: true) == .finish(.failure(.wrongPassword)))
        now += 2
        guard case .finish(.failure(.rateLimited(let wait))) = tryLogIn(refused: false) else {
            Issue.record("the third attempt within the window must be limited")
            return
        }
        #expect(wait > 0 && wait <= 1_000)
        now += wait - 1
        #expect(tryLogIn(refused: false) == .finish(.failure(.rateLimited(retryAfterMs: 1))))
        now += 1
        #expect(tryLogIn(refused: false) == .issueToken(for: alice))
        #expect(gate.isIdle)
    }

    @Test func everyFailureEndsTheAttemptInTheGate() {
        let upTo: [[Attempt.Fact]] = [
            [],
            [.failuresRead(times: [:], nowMs: t0)],
            [.failuresRead(times: [:], nowMs: t0), .verified(.refused)],
            [.failuresRead(times: [:], nowMs: t0), .verified(.accepted(upgradedHash: "$argon2id$new"))],
        ]
        for facts in upTo {
            var login = attempt()
            var gate = LoginGate()
            let effects = run(&login, [.accountFound(found)] + facts + [.failed(.storageFull)], gate: &gate)
            #expect(effects.last == .finish(.failure(.storageFull)))
            #expect(gate.isIdle)
        }
        var login = attempt()
        var gate = LoginGate()
        #expect(run(&login, [.failed(.internal)], gate: &gate).last == .finish(.failure(.internal)))
    }

    @Test func aTokenThatCannotBeStoredLeavesTheAttemptAccepted() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(found), .failuresRead(times: [:], nowMs: t0),
                                   .verified(.accepted(upgradedHash: nil)), .failed(.storageFull)], gate: &gate)
        #expect(effects.last == .finish(.success(.init(account: alice, token: .failure(.storageFull)))))
    }

    @Test func theRequestIsNormalizedAsTheFormNormalizesIt() {
        let request = LogInRequest(typedIdentifier: "ＡＬＩＣＥ１", password: Secret("a\u{00A0}b"), policy: .seed)
        #expect(request.identifier == "alice1")
        #expect(request.password == Secret("a b"))
        #expect(LogInRequest(typedIdentifier: "Alice@Example.COM", password: password, policy: .seed).identifier
                == "alice@example.com")
    }
}

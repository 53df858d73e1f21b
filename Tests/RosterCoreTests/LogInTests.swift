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

    let seal = TOTPSeal(sealed: [9, 9, 9], lastStep: 58_820_000)
    var foundWithTOTP: Attempt.Found {
        Attempt.Found(account: alice, username: "alice1", passwordHash: "$argon2id$old", totp: seal)
    }

    func attempt(_ identifier: String = "alice1", policy: Policy = .seed, code: String? = nil) -> Attempt {
        Attempt(LogInRequest(identifier: identifier, password: password, code: code), requester: .uid(1000), policy: policy)
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
            // The uid's count on real accounts judges it too, but the failure goes to its count on unknown names.
            .readFailures(keys: ["account:nobody9", "uid:1000", "unknown:uid:1000"], windowMs: 300_000),
            .verify(password: password, against: nil),
            .recordFailure(keys: ["account:nobody9", "unknown:uid:1000"]),
            .finish(.failure(.notFound)),
        ])
    }

    /// Under the hardened preset an unknown name reads and counts as a real one (one requester key), so no limit
    /// reacts to whether the name exists.
    @Test func theHardenedPolicyCountsAnUnknownNameUnderTheOneRequesterKey() {
        var login = attempt("nobody9", policy: .hardened)
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(nil), .failuresRead(times: [:], nowMs: t0), .verified(.refused),
                                   .failureRecorded], gate: &gate)
        #expect(effects == [
            .findAccount(identifier: "nobody9"),
            .readFailures(keys: ["account:nobody9", "uid:1000"], windowMs: 300_000),
            .verify(password: password, against: nil),
            .recordFailure(keys: ["account:nobody9", "uid:1000"]),
            .finish(.failure(.invalidCredentials)),
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
            [.failuresRead(times: [:], nowMs: t0), .verified(.accepted(upgradedHash: nil))],
            [.failuresRead(times: [:], nowMs: t0), .verified(.accepted(upgradedHash: nil)), .codeVerified(false)],
        ]
        for facts in upTo {
            var login = attempt(code: "123456")
            var gate = LoginGate()
            let effects = run(&login, [.accountFound(foundWithTOTP)] + facts + [.failed(.storageFull)], gate: &gate)
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

    // MARK: Two-step log-in (issue 15)

    @Test func aTOTPAccountWithoutACodeIsAskedForOneAndNothingIsRecorded() {
        for code in [nil, ""] {
            var login = attempt(code: code)
            var gate = LoginGate()
            let effects = run(&login, [.accountFound(foundWithTOTP), .failuresRead(times: [:], nowMs: t0),
                                       .verified(.accepted(upgradedHash: nil))], gate: &gate)
            #expect(effects == [
                .findAccount(identifier: "alice1"),
                .readFailures(keys: ["account:alice1", "uid:1000"], windowMs: 300_000),
                .verify(password: password, against: "$argon2id$old"),
                .finish(.failure(.codeRequired)),
            ])
            #expect(gate.isIdle)
            #expect(login.step(.failureRecorded, gate: &gate) == [])
        }
    }

    @Test func codeRequiredComesOnlyAfterTheRightPassword() {
        for code in [nil, "123456"] {
            var login = attempt(code: code)
            var gate = LoginGate()
            let effects = run(&login, [.accountFound(foundWithTOTP), .failuresRead(times: [:], nowMs: t0),
                                       .verified(.refused), .failureRecorded], gate: &gate)
            #expect(!effects.contains { if case .verifyCode = $0 { true } else { false } })
            #expect(effects.suffix(2) == [.recordFailure(keys: ["account:alice1", "uid:1000"]),
                                          .finish(.failure(.wrongPassword))])
            var hardened = attempt(policy: .hardened, code: code)
            let answer = run(&hardened, [.accountFound(foundWithTOTP), .failuresRead(times: [:], nowMs: t0),
                                         .verified(.refused), .failureRecorded], gate: &gate)
            #expect(answer.last == .finish(.failure(.invalidCredentials)))
        }
    }

    @Test func aRightCodeIssuesTheTokenAndHoldsTheGateUntilItsVerdict() {
        var login = attempt(code: "123456")
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(foundWithTOTP), .failuresRead(times: [:], nowMs: t0),
                                   .verified(.accepted(upgradedHash: nil))], gate: &gate)
        #expect(effects.suffix(2) == [.verify(password: password, against: "$argon2id$old"),
                                      .verifyCode(code: "123456", totp: seal, account: alice)])
        // A code being checked counts against the limit like a password being verified.
        #expect(gate.attemptsInFlight("account:alice1") == 1)
        #expect(gate.attemptsInFlight("uid:1000") == 1)
        #expect(login.step(.codeVerified(true), gate: &gate) == [.issueToken(for: alice)])
        #expect(gate.isIdle)
        #expect(login.step(.tokenIssued(token), gate: &gate) == [.finish(.success(.init(account: alice, token: .success(token))))])
    }

    /// A wrong code and a replayed one (the runtime's step check refuses a step already used) both answer false.
    @Test func aWrongOrReplayedCodeIsRecordedForBothKeysThenInvalidCode() {
        for policy in [Policy.seed, .hardened] {
            var login = attempt(policy: policy, code: "654321")
            var gate = LoginGate()
            let effects = run(&login, [.accountFound(foundWithTOTP), .failuresRead(times: [:], nowMs: t0),
                                       .verified(.accepted(upgradedHash: nil)), .codeVerified(false)], gate: &gate)
            #expect(effects.suffix(2) == [.verifyCode(code: "654321", totp: seal, account: alice),
                                          .recordFailure(keys: ["account:alice1", "uid:1000"])])
            #expect(gate.attemptsInFlight("account:alice1") == 1)
            #expect(login.step(.failureRecorded, gate: &gate) == [.finish(.failure(.invalidCode))])
            #expect(gate.isIdle)
            #expect(login.step(.codeVerified(true), gate: &gate) == [])
        }
    }

    @Test func anUpgradedHashIsStoredBeforeTheCodeIsChecked() {
        var login = attempt(code: "123456")
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(foundWithTOTP), .failuresRead(times: [:], nowMs: t0),
                                   .verified(.accepted(upgradedHash: "$argon2id$new")), .hashReplaced], gate: &gate)
        #expect(effects.suffix(2) == [.replaceHash("$argon2id$new", of: alice),
                                      .verifyCode(code: "123456", totp: seal, account: alice)])
        #expect(!gate.isIdle)
        var withoutCode = attempt()
        let asked = run(&withoutCode, [.accountFound(foundWithTOTP), .failuresRead(times: [:], nowMs: t0),
                                       .verified(.accepted(upgradedHash: "$argon2id$new")), .hashReplaced], gate: &gate)
        #expect(asked.last == .finish(.failure(.codeRequired)))
    }

    @Test func theRateLimitIsAnsweredBeforeThePasswordOrTheCode() {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        policy.rateLimitInterval = .seconds(1)
        for code in [nil, "123456"] {
            var login = attempt(policy: policy, code: code)
            var gate = LoginGate()
            let effects = run(&login, [.accountFound(foundWithTOTP),
                                       .failuresRead(times: ["account:alice1": [t0 - 10, t0 - 5]], nowMs: t0)], gate: &gate)
            #expect(effects.last == .finish(.failure(.rateLimited(retryAfterMs: 990))))
            #expect(gate.isIdle)
        }
    }

    /// Wrong codes count toward the limit: after `burst` of them, even the right password and code wait.
    @Test func wrongCodesFillTheLimitOnAManualClock() {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        policy.rateLimitInterval = .seconds(1)
        var gate = LoginGate()
        var failures: [String: [Int64]] = [:]
        var now = t0
        func tryCode(right: Bool) -> Attempt.Effect? {
            var login = attempt(policy: policy, code: "123456")
            var effects = login.start() + login.step(.accountFound(foundWithTOTP), gate: &gate)
            effects += login.step(.failuresRead(times: failures, nowMs: now), gate: &gate)
            guard case .verify = effects.last else { return effects.last }
            effects += login.step(.verified(.accepted(upgradedHash: nil)), gate: &gate)
            effects += login.step(.codeVerified(right), gate: &gate)
            if case .recordFailure(let keys) = effects.last {
                for key in keys { failures[key, default: []].append(now) }
                effects += login.step(.failureRecorded, gate: &gate)
            }
            return effects.last
        }
        #expect(tryCode(right: false) == .finish(.failure(.invalidCode)))
        now += 3
        #expect(tryCode(right: false) == .finish(.failure(.invalidCode)))
        now += 2
        #expect(tryCode(right: true) == .finish(.failure(.rateLimited(retryAfterMs: 995))))
        now += 995
        #expect(tryCode(right: true) == .issueToken(for: alice))
        #expect(gate.isIdle)
    }

    @Test func aCodeForAnAccountWithoutTOTPIsIgnored() {
        var login = attempt(code: "123456")
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(found), .failuresRead(times: [:], nowMs: t0),
                                   .verified(.accepted(upgradedHash: nil))], gate: &gate)
        #expect(effects.last == .issueToken(for: alice))
        #expect(gate.isIdle)
        var unknown = attempt("nobody9", code: "123456")
        let refused = run(&unknown, [.accountFound(nil), .failuresRead(times: [:], nowMs: t0),
                                     .verified(.accepted(upgradedHash: nil)), .failureRecorded], gate: &gate)
        #expect(refused.last == .finish(.failure(.notFound)))
    }

    @Test func theCodeTravelsInTheRequest() {
        #expect(LogInRequest(typedIdentifier: "Alice1", password: password, policy: .seed, code: "123456").code == "123456")
        #expect(LogInRequest(typedIdentifier: "Alice1", password: password, policy: .seed).code == nil)
        #expect(LogInRequest(identifier: "alice1", password: password).code == nil)
    }
}

/// A locked account (issue 16): `locked` only once the password is right, before any code; a wrong password reads
/// and counts as it always has, so a guesser learns nothing of the lock.
@Suite("Log-in of a locked account")
struct LockedLogInTests {
    typealias Attempt = LogIn<TestAccount>

    let alice = TestAccount(id: 7, username: "alice1")
    let password = Secret("secret1")
    let t0: Int64 = 1_700_000_000_000

    func found(totp: TOTPSeal?) -> Attempt.Found {
        Attempt.Found(account: alice, username: "alice1", passwordHash: "$argon2id$old", totp: totp, locked: true)
    }

    @Test(arguments: [nil, TOTPSeal(sealed: [9, 9, 9], lastStep: 1)], [nil, "123456"])
    func theRightPasswordIsAnsweredLockedBeforeAnyCodeAndNothingIsRecorded(totp: TOTPSeal?, code: String?) {
        var login = Attempt(LogInRequest(identifier: "alice1", password: password, code: code), requester: .uid(1000), policy: .seed)
        var gate = LoginGate()
        var effects = login.start()
        for fact: Attempt.Fact in [.accountFound(found(totp: totp)), .failuresRead(times: [:], nowMs: t0),
                                   .verified(.accepted(upgradedHash: nil))] {
            effects += login.step(fact, gate: &gate)
        }
        #expect(effects.last == .finish(.failure(.locked)))
        #expect(!effects.contains { if case .issueToken = $0 { true } else { false } })
        #expect(!effects.contains { if case .verifyCode = $0 { true } else { false } })
        #expect(!effects.contains { if case .recordFailure = $0 { true } else { false } })
        #expect(gate.isIdle)
    }

    @Test func aWrongPasswordIsAFailedLogInAsEver() {
        var login = Attempt(LogInRequest(identifier: "alice1", password: password), requester: .uid(1000), policy: .seed)
        var gate = LoginGate()
        _ = login.start()
        _ = login.step(.accountFound(found(totp: nil)), gate: &gate)
        _ = login.step(.failuresRead(times: [:], nowMs: t0), gate: &gate)
        #expect(login.step(.verified(.refused), gate: &gate) == [.recordFailure(keys: ["account:alice1", "uid:1000"])])
        #expect(login.step(.failureRecorded, gate: &gate) == [.finish(.failure(.wrongPassword))])
    }

    @Test func aRateLimitComesFirst() {
        var login = Attempt(LogInRequest(identifier: "alice1", password: password), requester: .uid(1000), policy: .seed)
        var gate = LoginGate()
        _ = login.start()
        _ = login.step(.accountFound(found(totp: nil)), gate: &gate)
        let full = [Int64](repeating: t0, count: Policy.seed.rateLimitBurst)
        let effects = login.step(.failuresRead(times: ["account:alice1": full], nowMs: t0), gate: &gate)
        guard case .finish(.failure(.rateLimited)) = effects.last else {
            Issue.record("expected rate_limited, got \(effects)")
            return
        }
    }
}

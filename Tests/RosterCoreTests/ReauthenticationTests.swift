import Testing
@testable import RosterCore

@Suite("Reauthentication procedure")
struct ReauthenticationTests {
    /// The outcome of an accepted code: here, the step a TOTP code matched.
    typealias Attempt = Reauthentication<TestAccount, Int64>

    let alice = TestAccount(id: 7, username: "alice1")
    let password = Secret("secret1")
    let t0: Int64 = 1_700_000_000_000
    let keys = ["account:alice1", "uid:1000"]

    func attempt(_ proof: Proof, account: TestAccount? = TestAccount(id: 7, username: "alice1"),
                 username: String = "alice1", policy: Policy = .seed) -> Attempt {
        Attempt(account, username: username, proof: proof, requester: .uid(1000), policy: policy)
    }

    /// Starts `attempt` and feeds `facts` in order; every effect, the first included.
    func run(_ attempt: inout Attempt, _ facts: [Attempt.Fact], gate: inout LoginGate) -> [Attempt.Effect] {
        var effects = attempt.start(gate: &gate)
        for fact in facts { effects += attempt.step(fact, gate: &gate) }
        return effects
    }

    @Test func theRightPasswordIsAcceptedAfterTheGateAndTheStoredHash() {
        var reauth = attempt(.password(password))
        var gate = LoginGate()
        let effects = run(&reauth, [.failuresRead(times: [:], nowMs: t0), .hashRead("$argon2id$h"), .passwordChecked(true)],
                          gate: &gate)
        #expect(effects == [
            .readFailures(keys: keys, windowMs: 300_000),
            .readHash(of: alice),
            .verifyPassword(password, against: "$argon2id$h"),
            .finish(.success(nil)),
        ])
        #expect(gate.isIdle)
    }

    @Test func aWrongPasswordIsRecordedForBothKeysBeforeItIsAnsweredWrongPassword() {
        var reauth = attempt(.password(password))
        var gate = LoginGate()
        let effects = run(&reauth, [.failuresRead(times: [:], nowMs: t0), .hashRead("$argon2id$h"), .passwordChecked(false)],
                          gate: &gate)
        #expect(effects.last == .recordFailure(keys: keys))
        // Still counted until the failure is durable: a parallel guess cannot slip past the limit.
        #expect(gate.attemptsInFlight("account:alice1") == 1)
        #expect(reauth.step(.failureRecorded, gate: &gate) == [.finish(.failure(.wrongPassword))])
        #expect(gate.isIdle)
    }

    @Test func aWrongCodeIsRecordedAndAnsweredInvalidCode() {
        var reauth = attempt(.code("123456"))
        var gate = LoginGate()
        let effects = run(&reauth, [.failuresRead(times: [:], nowMs: t0), .codeChecked(nil), .failureRecorded], gate: &gate)
        #expect(effects == [
            .readFailures(keys: keys, windowMs: 300_000),
            .checkCode("123456", of: alice),
            .recordFailure(keys: keys),
            .finish(.failure(.invalidCode)),
        ])
        #expect(gate.isIdle)
    }

    @Test func aRightCodeFinishesWithWhatAcceptingItDid() {
        var reauth = attempt(.code("123456"))
        var gate = LoginGate()
        let effects = run(&reauth, [.failuresRead(times: [:], nowMs: t0), .codeChecked(56_666_666)], gate: &gate)
        #expect(effects.last == .finish(.success(56_666_666)))
        #expect(gate.isIdle)
    }

    @Test(arguments: [Proof.password(Secret("secret1")), .code("123456")])
    func aLimitedAccountIsAnsweredBeforeAnythingIsVerifiedOrRecorded(_ proof: Proof) {
        var reauth = attempt(proof)
        var gate = LoginGate()
        let burst = Policy.seed.rateLimitBurst
        let failures = (0..<burst).map { t0 - 1_000 * Int64($0 + 1) }
        let effects = run(&reauth, [.failuresRead(times: ["account:alice1": failures], nowMs: t0)], gate: &gate)
        guard case .finish(.failure(.rateLimited(let wait))) = effects.last else {
            Issue.record("expected rate_limited, got \(effects)")
            return
        }
        #expect(wait > 0)
        #expect(effects.count == 2)
        #expect(gate.isIdle)
    }

    @Test func thePeersLimitCountsToo() {
        var reauth = attempt(.password(password))
        var gate = LoginGate()
        let failures = Array(repeating: t0 - 10, count: Policy.seed.rateLimitBurst * 10)
        let effects = run(&reauth, [.failuresRead(times: ["uid:1000": failures], nowMs: t0)], gate: &gate)
        guard case .finish(.failure(.rateLimited)) = effects.last else {
            Issue.record("expected rate_limited, got \(effects)")
            return
        }
    }

    @Test func attemptsInFlightCountAgainstTheOnesAfterThem() {
        var gate = LoginGate()
        let burst = Policy.seed.rateLimitBurst
        var attempts = (0...burst).map { _ in attempt(.password(password)) }
        for index in attempts.indices { _ = attempts[index].start(gate: &gate) }
        // Every earlier one is still being verified: the last one is refused although nothing is recorded yet.
        let last = attempts[burst].step(.failuresRead(times: [:], nowMs: t0), gate: &gate)
        guard case .finish(.failure(.rateLimited)) = last.last else {
            Issue.record("expected rate_limited, got \(last)")
            return
        }
        #expect(attempts[0].step(.failuresRead(times: [:], nowMs: t0), gate: &gate) == [.readHash(of: alice)])
    }

    @Test func anUnknownAccountsCodeStillGoesToTheRuntimeAndIsRefusedUnderTheNameAsTyped() {
        var reauth = attempt(.code("abcd"), account: nil, username: "nobody9")
        var gate = LoginGate()
        let effects = run(&reauth, [.failuresRead(times: [:], nowMs: t0), .codeChecked(7), .failureRecorded], gate: &gate)
        #expect(effects == [
            .readFailures(keys: ["account:nobody9", "uid:1000", "unknown:uid:1000"], windowMs: 300_000),
            .checkCode("abcd", of: nil),
            // Whatever the runtime said: no account, no acceptance.
            .recordFailure(keys: ["account:nobody9", "unknown:uid:1000"]),
            .finish(.failure(.invalidCode)),
        ])
    }

    @Test func anAccountDeletedMeanwhileIsUnauthenticatedAndNotAFailure() {
        var reauth = attempt(.password(password))
        var gate = LoginGate()
        let effects = run(&reauth, [.failuresRead(times: [:], nowMs: t0), .hashRead(nil)], gate: &gate)
        #expect(effects.last == .finish(.failure(.unauthenticated)))
        #expect(gate.isIdle)
    }

    @Test func aFailedEffectEndsTheAttemptAtTheGateOnEveryStage() {
        let prefixes: [[Attempt.Fact]] = [
            [], [.failuresRead(times: [:], nowMs: t0)],
            [.failuresRead(times: [:], nowMs: t0), .hashRead("$argon2id$h")],
            [.failuresRead(times: [:], nowMs: t0), .hashRead("$argon2id$h"), .passwordChecked(false)],
        ]
        for prefix in prefixes {
            var reauth = attempt(.password(password))
            var gate = LoginGate()
            let effects = run(&reauth, prefix + [.failed(.storageUnavailable(retryAfterMs: 5))], gate: &gate)
            #expect(effects.last == .finish(.failure(.storageUnavailable(retryAfterMs: 5))))
            #expect(gate.isIdle)
            #expect(reauth.step(.passwordChecked(true), gate: &gate) == [])
        }
    }

    @Test func factsNobodyAskedForChangeNothing() {
        var reauth = attempt(.password(password))
        var gate = LoginGate()
        _ = reauth.start(gate: &gate)
        #expect(reauth.step(.passwordChecked(true), gate: &gate) == [])
        #expect(reauth.step(.codeChecked(1), gate: &gate) == [])
        #expect(!gate.isIdle)
    }
}

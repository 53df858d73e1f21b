import Testing
@testable import RosterCore

@Suite("Passkey log-in procedure")
struct PasskeyLogInTests {
    typealias Attempt = PasskeyLogIn<TestAccount, String>

    let alice = TestAccount(id: 7, username: "alice1")
    let token = IssuedToken(bearer: "bearer", hash: [1, 2, 3])
    let credential: [UInt8] = [0xC1, 0xC2]
    let seal = TOTPSeal(sealed: [9, 9, 9], lastStep: nil)
    let t0: Int64 = 1_700_000_000_000

    func found(totp: TOTPSeal? = nil, locked: Bool = false, handleMatches: Bool = true) -> Attempt.Found {
        Attempt.Found(account: alice, username: "alice1", key: "key", handleMatches: handleMatches, totp: totp,
                      locked: locked)
    }

    func attempt(proof: PasskeyLogInRequest.Proof = .assertion(userHandle: [5]), allowed: [[UInt8]]? = nil,
                 code: String? = nil) -> Attempt {
        Attempt(PasskeyLogInRequest(credentialID: credential, proof: proof, allowed: allowed, code: code),
                requester: .uid(1000), policy: .seed)
    }

    func run(_ login: inout Attempt, _ facts: [Attempt.Fact], gate: inout LoginGate) -> [Attempt.Effect] {
        var effects = login.start()
        for fact in facts { effects += login.step(fact, gate: &gate) }
        return effects
    }

    @Test func aVerifiedAssertionWithAForwardCountIssuesAToken() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .passkeyFound(found()), .failuresRead(times: [:], nowMs: t0),
            .assertionVerified(.accepted(signCount: 3, userVerified: true)), .signCountUsed(true),
        ], gate: &gate)
        #expect(effects == [
            .findPasskey(credentialID: credential, userHandle: [5]),
            .readFailures(keys: ["account:alice1", "uid:1000"], windowMs: 300_000),
            .verifyAssertion(key: "key"),
            .useSignCount(credentialID: credential, signCount: 3),
            .issueToken(for: alice),
        ])
        #expect(gate.isIdle)
        #expect(login.step(.tokenIssued(token), gate: &gate) == [.finish(.success(.init(account: alice, token: .success(token))))])
    }

    @Test func aRejectionIsRecordedWithItsWhyBeforeItIsAnswered() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .passkeyFound(found()), .failuresRead(times: [:], nowMs: t0), .assertionVerified(.rejected(why: "signature")),
        ], gate: &gate)
        #expect(effects.last == .recordFailure(keys: ["account:alice1", "uid:1000"],
                                               refusal: .passkeyRejected(why: "signature"), username: "alice1"))
        #expect(!gate.isIdle)
        #expect(login.step(.failureRecorded, gate: &gate) == [.finish(.failure(.passkeyRejected(why: "signature")))])
        #expect(gate.isIdle)
    }

    @Test func aCountThatDidNotMoveForwardIsRefusedAsCounter() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .passkeyFound(found()), .failuresRead(times: [:], nowMs: t0),
            .assertionVerified(.accepted(signCount: 1, userVerified: true)), .signCountUsed(false), .failureRecorded,
        ], gate: &gate)
        #expect(effects.contains(.recordFailure(keys: ["account:alice1", "uid:1000"],
                                                refusal: .passkeyRejected(why: "counter"), username: "alice1")))
        #expect(effects.last == .finish(.failure(.passkeyRejected(why: "counter"))))
        #expect(!effects.contains(.issueToken(for: alice)))
    }

    @Test func anUnknownOrForeignOrUnaskedCredentialIsInvalidCredentialsWithoutVerifying() {
        for (found, allowed): (Attempt.Found?, [[UInt8]]?) in [
            (nil, nil), (found(handleMatches: false), nil), (found(), [[0xAA]]), (found(), []),
        ] {
            var login = attempt(allowed: allowed)
            var gate = LoginGate()
            let effects = run(&login, [.passkeyFound(found), .failuresRead(times: [:], nowMs: t0), .failureRecorded],
                              gate: &gate)
            #expect(effects[1] == .readFailures(keys: ["account:passkey:unknown", "uid:1000"], windowMs: 300_000))
            #expect(!effects.contains(.verifyAssertion(key: "key")))
            #expect(effects.last == .finish(.failure(.invalidCredentials)))
            #expect(gate.isIdle)
        }
        var login = attempt(allowed: [credential])
        var gate = LoginGate()
        let effects = run(&login, [.passkeyFound(found()), .failuresRead(times: [:], nowMs: t0)], gate: &gate)
        #expect(effects.last == .verifyAssertion(key: "key"))
    }

    @Test func theRateLimitIsAskedBeforeAnySignature() {
        var login = attempt()
        var gate = LoginGate()
        let failures = Array(repeating: t0 - 1000, count: 10)
        let effects = run(&login, [
            .passkeyFound(found()), .failuresRead(times: ["account:alice1": failures], nowMs: t0),
        ], gate: &gate)
        guard case .finish(.failure(.rateLimited))? = effects.last else {
            Issue.record("not limited: \(effects)")
            return
        }
        #expect(!effects.contains(.verifyAssertion(key: "key")))
        #expect(gate.isIdle)
    }

    @Test func aLockedAccountIsLockedOnlyAfterTheProof() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .passkeyFound(found(locked: true)), .failuresRead(times: [:], nowMs: t0),
        ], gate: &gate)
        #expect(effects.last == .verifyAssertion(key: "key"))
        let rest = login.step(.assertionVerified(.accepted(signCount: 2, userVerified: true)), gate: &gate)
            + login.step(.signCountUsed(true), gate: &gate)
        #expect(rest.last == .finish(.failure(.locked)))
        #expect(gate.isIdle)
    }

    @Test func userVerificationIsTheSecondFactorAndPresenceAloneAsksForTheCode() {
        var verified = attempt()
        var gate = LoginGate()
        let uv = run(&verified, [
            .passkeyFound(found(totp: seal)), .failuresRead(times: [:], nowMs: t0),
            .assertionVerified(.accepted(signCount: 2, userVerified: true)), .signCountUsed(true),
        ], gate: &gate)
        #expect(uv.last == .issueToken(for: alice))

        var present = attempt()
        let up = run(&present, [
            .passkeyFound(found(totp: seal)), .failuresRead(times: [:], nowMs: t0),
            .assertionVerified(.accepted(signCount: 3, userVerified: false)), .signCountUsed(true),
        ], gate: &gate)
        #expect(up.last == .finish(.failure(.codeRequired)))
        #expect(gate.isIdle)

        // The next finish continues with the code: no assertion is verified again.
        var continued = attempt(proof: .verifiedEarlier, code: "123456")
        let code = run(&continued, [.passkeyFound(found(totp: seal)), .failuresRead(times: [:], nowMs: t0)],
                       gate: &gate)
        #expect(code.first == .findPasskey(credentialID: credential, userHandle: nil))
        #expect(code.last == .verifyCode(code: "123456", totp: seal, account: alice))
        #expect(!gate.isIdle)
        #expect(continued.step(.codeVerified(false), gate: &gate)
            == [.recordFailure(keys: ["account:alice1", "uid:1000"], refusal: .invalidCode, username: "alice1")])
        #expect(continued.step(.failureRecorded, gate: &gate) == [.finish(.failure(.invalidCode))])

        var right = attempt(proof: .verifiedEarlier, code: "123456")
        _ = run(&right, [.passkeyFound(found(totp: seal)), .failuresRead(times: [:], nowMs: t0)], gate: &gate)
        #expect(right.step(.codeVerified(true), gate: &gate) == [.issueToken(for: alice)])
        #expect(gate.isIdle)
    }

    @Test func aCodeGivenWithAPresenceOnlyAssertionIsCheckedAtOnce() {
        var login = attempt(code: "654321")
        var gate = LoginGate()
        let effects = run(&login, [
            .passkeyFound(found(totp: seal)), .failuresRead(times: [:], nowMs: t0),
            .assertionVerified(.accepted(signCount: 3, userVerified: false)), .signCountUsed(true),
        ], gate: &gate)
        #expect(effects.last == .verifyCode(code: "654321", totp: seal, account: alice))
    }

    @Test func aFailedEffectEndsTheAttemptAndFreesTheGate() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .passkeyFound(found()), .failuresRead(times: [:], nowMs: t0), .failed(.storageUnavailable(retryAfterMs: 5)),
        ], gate: &gate)
        #expect(effects.last == .finish(.failure(.storageUnavailable(retryAfterMs: 5))))
        #expect(gate.isIdle)
        #expect(login.step(.signCountUsed(true), gate: &gate) == [])
    }
}

@Suite("Passkey ceremonies of a connection")
struct PasskeyCeremoniesTests {
    let settings = WebAuthnSettings()
    let t0: Int64 = 1_700_000_000_000

    @Test func aChallengeIsTakenOnceAndOnlyWithinItsLifetime() {
        var ceremonies = PasskeyCeremonies()
        let registration = PasskeyCeremonies.Registration(challenge: [1], account: 7, startedMs: t0, relyingParty: settings)
        ceremonies.begin(registration)
        #expect(ceremonies.takeRegistration(at: t0 + PasskeyCeremonies.lifetimeMs - 1) == registration)
        #expect(ceremonies.takeRegistration(at: t0 + 1) == nil)

        ceremonies.begin(registration)
        #expect(ceremonies.takeRegistration(at: t0 + PasskeyCeremonies.lifetimeMs) == nil)
        // An expired one is gone too, not kept for a clock that goes back.
        #expect(ceremonies.takeRegistration(at: t0) == nil)
        ceremonies.begin(registration)
        #expect(ceremonies.takeRegistration(at: t0 - 1) == nil)
    }

    @Test func aNewLogInReplacesTheOldAndWhatAwaitedItsCode() {
        var ceremonies = PasskeyCeremonies()
        let first = PasskeyCeremonies.LogIn(challenge: [1], allowed: nil, startedMs: t0, relyingParty: settings)
        let second = PasskeyCeremonies.LogIn(challenge: [2], allowed: [[9]], startedMs: t0 + 5, relyingParty: settings)
        ceremonies.awaitCode(PasskeyCeremonies.AwaitingCode(credentialID: [3], allowed: nil, startedMs: t0))
        ceremonies.begin(first)
        #expect(ceremonies.takeAwaitingCode(at: t0 + 10) == nil)
        ceremonies.begin(second)
        #expect(ceremonies.takeLogIn(at: t0 + 10) == second)
        #expect(ceremonies.takeLogIn(at: t0 + 10) == nil)
        let awaiting = PasskeyCeremonies.AwaitingCode(credentialID: [3], allowed: nil, startedMs: t0)
        ceremonies.awaitCode(awaiting)
        #expect(ceremonies.takeAwaitingCode(at: t0 + PasskeyCeremonies.lifetimeMs - 1) == awaiting)
        #expect(ceremonies.takeAwaitingCode(at: t0 + 1) == nil)
    }
}

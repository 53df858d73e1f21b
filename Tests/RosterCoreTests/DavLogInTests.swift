import Testing
@testable import RosterCore

/// `DavLogIn`: every effect in order, for each path a CardDAV client's credentials take.
@Suite("DAV log-in procedure")
struct DavLogInTests {
    typealias Attempt = DavLogIn<TestAccount>

    let alice = TestAccount(id: 7, username: "alice1")
    let token = IssuedToken(bearer: "dav.bearer", hash: [1, 2, 3])
    let t0: Int64 = 1_700_000_000_000
    let secret = Secret("abcdefghijklmnopqrstuvwx")
    let keys = ["account:alice1", "uid:1000"]

    func found(totp: Bool = false, locked: Bool = false) -> Attempt.Found {
        Attempt.Found(account: alice, username: "alice1", passwordHash: "$argon2id$h", hasTOTP: totp, locked: locked)
    }

    func attempt(_ username: String = "Alice1", policy: Policy = .seed) -> Attempt {
        Attempt(DavLogInRequest(typedIdentifier: username, password: secret, policy: policy), requester: .uid(1000),
                policy: policy)
    }

    func run(_ login: inout Attempt, _ facts: [Attempt.Fact], gate: inout LoginGate) -> [Attempt.Effect] {
        var effects = login.start()
        for fact in facts { effects += login.step(fact, gate: &gate) }
        return effects
    }

    @Test func anAppPasswordLogsInWithoutThePasswordLane() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [
            .accountFound(found(totp: true)), .failuresRead(times: [:], nowMs: t0), .appPasswordChecked(id: "id1"),
        ], gate: &gate)
        #expect(effects == [
            .findAccount(identifier: "alice1"),
            .readFailures(keys: keys, windowMs: 300_000),
            .checkAppPassword(password: secret, account: alice),
            .issueToken(for: alice, proof: .appPassword(id: "id1")),
        ])
        #expect(gate.isIdle)
        #expect(login.step(.tokenIssued(token), gate: &gate)
                == [.finish(.success(.init(account: alice, proof: .appPassword(id: "id1"), token: .success(token))))])
        #expect(login.step(.tokenIssued(token), gate: &gate) == [], "after finish, facts change nothing")
    }

    @Test func theAccountsPasswordLogsInOnlyWithoutTOTP() {
        var plain = attempt()
        var gate = LoginGate()
        let effects = run(&plain, [
            .accountFound(found()), .failuresRead(times: [:], nowMs: t0), .appPasswordChecked(id: nil), .verified(true),
        ], gate: &gate)
        #expect(Array(effects.suffix(2)) == [.verify(password: secret, against: "$argon2id$h"),
                                             .issueToken(for: alice, proof: .password)])
        #expect(gate.isIdle)

        // With TOTP, the right password is refused and counted: a DAV client cannot type a code.
        var twoStep = attempt()
        let refused = run(&twoStep, [
            .accountFound(found(totp: true)), .failuresRead(times: [:], nowMs: t0), .appPasswordChecked(id: nil),
            .verified(true),
        ], gate: &gate)
        #expect(refused.last == .recordFailure(keys: keys, refusal: .appPasswordRequired, username: "alice1"))
        #expect(!gate.isIdle, "in the gate until the failure is recorded")
        #expect(twoStep.step(.failureRecorded, gate: &gate) == [.finish(.failure(.invalidCredentials))])
        #expect(gate.isIdle)
    }

    @Test func aWrongSecretAndAnUnknownNameAreRecordedBeforeTheyAreAnswered() {
        var wrong = attempt()
        var gate = LoginGate()
        let effects = run(&wrong, [
            .accountFound(found()), .failuresRead(times: [:], nowMs: t0), .appPasswordChecked(id: nil), .verified(false),
            .failureRecorded,
        ], gate: &gate)
        #expect(Array(effects.suffix(2)) == [.recordFailure(keys: keys, refusal: .wrongPassword, username: "alice1"),
                                             .finish(.failure(.wrongPassword))])
        // An unknown name is verified against a dummy of the same cost, and no app password is looked for.
        var unknown = attempt("nobody1")
        let missing = run(&unknown, [.accountFound(nil), .failuresRead(times: [:], nowMs: t0), .verified(false)],
                          gate: &gate)
        #expect(missing.contains(.verify(password: secret, against: nil)))
        guard case .recordFailure(_, .unknownUser, nil)? = missing.last else {
            Issue.record("not recorded as unknown: \(missing)")
            return
        }
        #expect(unknown.step(.failureRecorded, gate: &gate) == [.finish(.failure(.notFound))])
        // A policy that hides unknown names answers both alike.
        var hidden = attempt("nobody1", policy: .hardened)
        _ = run(&hidden, [.accountFound(nil), .failuresRead(times: [:], nowMs: t0), .verified(false)], gate: &gate)
        #expect(hidden.step(.failureRecorded, gate: &gate) == [.finish(.failure(.invalidCredentials))])
        #expect(gate.isIdle)
    }

    @Test func theRateLimitIsAskedBeforeAnySecretIsCompared() {
        var login = attempt()
        var gate = LoginGate()
        let failures = Array(repeating: t0 - 1_000, count: 10)
        let effects = run(&login, [.accountFound(found()), .failuresRead(times: ["account:alice1": failures], nowMs: t0)],
                          gate: &gate)
        guard case .finish(.failure(.rateLimited))? = effects.last else {
            Issue.record("not limited: \(effects)")
            return
        }
        #expect(!effects.contains { if case .checkAppPassword = $0 { true } else { false } })
        #expect(gate.isIdle)
    }

    @Test func aLockedAccountIsLockedOnlyAfterTheSecret() {
        var right = attempt()
        var gate = LoginGate()
        let effects = run(&right, [
            .accountFound(found(locked: true)), .failuresRead(times: [:], nowMs: t0), .appPasswordChecked(id: "id1"),
        ], gate: &gate)
        #expect(effects.last == .finish(.failure(.locked)))
        var wrong = attempt()
        let refused = run(&wrong, [
            .accountFound(found(locked: true)), .failuresRead(times: [:], nowMs: t0), .appPasswordChecked(id: nil),
            .verified(false),
        ], gate: &gate)
        #expect(refused.last == .recordFailure(keys: keys, refusal: .wrongPassword, username: "alice1"))
    }

    @Test func aFailedEffectEndsTheAttemptAndLeavesTheGate() {
        var login = attempt()
        var gate = LoginGate()
        let effects = run(&login, [.accountFound(found()), .failuresRead(times: [:], nowMs: t0),
                                   .failed(.storageUnavailable(retryAfterMs: 1_000))], gate: &gate)
        #expect(effects.last == .finish(.failure(.storageUnavailable(retryAfterMs: 1_000))))
        #expect(gate.isIdle)
        // A token that could not be stored still leaves the attempt accepted; the caller decides.
        var issued = attempt()
        _ = run(&issued, [.accountFound(found()), .failuresRead(times: [:], nowMs: t0), .appPasswordChecked(id: "i")],
                gate: &gate)
        #expect(issued.step(.failed(.internal), gate: &gate)
                == [.finish(.success(.init(account: alice, proof: .appPassword(id: "i"), token: .failure(.internal))))])
    }

    @Test func aContactsSessionCallsOnlyTheContactsAndWhatSurroundsThem() {
        for method in ["contacts.list", "contacts.get_vcard", "contacts.changes", "session.hello", "session.resume",
                       "session.logout", "rpc.describe"] {
            #expect(SessionScope.contacts.allows(method), "\(method)")
        }
        for method in ["auth.login", "auth.dav_login", "account.show", "account.app_password_create", "session.list",
                       "form.open", "admin.stats", "contactsx", "session.whoami"] {
            #expect(!SessionScope.contacts.allows(method), "\(method)")
            #expect(SessionScope.full.allows(method))
        }
    }
}

import RosterCore
@testable import RosterCrypto
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The account-life procedures (contract §8) on an in-memory storage, fake password work and a manual wall clock:
/// what each proves first, what it stores, and what it counts as a failed log-in.
@Suite("Account-life procedures on an in-memory storage")
struct AccountLifeProceduresTests {
    let clock = ManualWallClock(nowMs: 1_700_000_000_000)
    let storage: InMemoryStorage
    let passwords = FakePasswordWork()
    let secrets: AccountSecrets
    let accounts: AccountProcedures
    let peer = AuditPeer(uid: 1000, pid: 4242, client: nil)
    let charge = QueueCharge(payer: .peer(1000), connection: 1)

    init() throws {
        storage = InMemoryStorage(clock: clock)
        secrets = try AccountSecrets.ephemeral()
        accounts = AccountProcedures(storage: storage, passwords: passwords, policy: .seed, logger: Logger(level: .emerg),
                                     secrets: secrets, clock: clock)
    }

    /// An account with `password`, made straight in the storage.
    func account(_ name: String = "alice1", email: String? = nil, password: String = "secret1") throws -> Account {
        var made: Result<Account, StorageFailure>?
        storage.acting(for: charge).createAccount(NewAccount(username: name, display: name, email: email,
                                                             passwordHash: FakePasswordWork.hash(of: password))) { made = $0 }
        return try #require(made).get()
    }

    /// A token stored for `account`, as a log-in would.
    func token(_ byte: UInt8, for account: Account) -> [UInt8] {
        let hash = [UInt8](repeating: byte, count: 32)
        storage.acting(for: charge).storeToken(hash: hash, for: account.id, client: "test") { _ in }
        return hash
    }

    /// The answer of an operation whose storage and password work answer at once.
    func now<T>(_ operation: (@escaping (Result<T, RosterError>) -> Void) -> Void) throws -> Result<T, RosterError> {
        var answer: Result<T, RosterError>?
        operation { answer = $0 }
        return try #require(answer)
    }

    func failures(_ key: String) -> Int {
        var times: RecentFailures?
        storage.acting(for: charge).recentFailures(keys: [key], windowMs: 300_000) { times = try? $0.get() }
        return times?.times[key]?.count ?? -1
    }

    func works(_ password: String, for account: Account) -> Bool {
        var credential: Credential?
        storage.acting(for: charge).credential(of: account.id) { credential = try? $0.get() }
        return credential?.passwordHash == FakePasswordWork.hash(of: password)
    }

    func liveTokens(of account: Account) -> [[UInt8]] {
        var sessions: [StoredSession] = []
        storage.acting(for: charge).sessions(of: account.id, idleLimitMs: 1 << 40) { sessions = (try? $0.get()) ?? [] }
        return sessions.map(\.tokenHash)
    }

    // MARK: Password

    @Test func aPasswordChangeRevokesEveryOtherTokenAndKeepsThisOne() throws {
        let alice = try account()
        let mine = token(1, for: alice)
        let other = token(2, for: alice)
        let result = try now { accounts.changePassword(of: alice, current: Secret("secret1"), new: Secret("better22"),
                                                       keeping: mine, peer: peer, charge: charge, completion: $0) }
        #expect(try result.get() == [other])
        #expect(liveTokens(of: alice) == [mine])
        #expect(works("better22", for: alice))
    }

    @Test func aWrongCurrentPasswordIsWrongPasswordAndAFailedLogInForBothKeys() throws {
        let alice = try account()
        let result = try now { accounts.changePassword(of: alice, current: Secret("nope123"), new: Secret("better22"),
                                                       keeping: nil, peer: peer, charge: charge, completion: $0) }
        #expect(result.failure == .wrongPassword)
        #expect(failures("account:alice1") == 1)
        #expect(failures("uid:1000") == 1)
        #expect(works("secret1", for: alice))
    }

    @Test func theSameAsTheCurrentOneIsRefusedOnlyOnceTheCurrentOneIsProven() throws {
        let alice = try account()
        let same = try now { accounts.changePassword(of: alice, current: Secret("secret1"), new: Secret("secret1"),
                                                     keeping: nil, peer: peer, charge: charge, completion: $0) }
        #expect(same.failure == .invalidField(field: "new", code: "same_as_current"))
        // A guess of the current password that is wrong says wrong_password, never whether new = current.
        let guess = try now { accounts.changePassword(of: alice, current: Secret("guess12"), new: Secret("guess12"),
                                                      keeping: nil, peer: peer, charge: charge, completion: $0) }
        #expect(guess.failure == .wrongPassword)
    }

    @Test func theNewPasswordFollowsThePresetsRulesBeforeAnythingIsProven() throws {
        let alice = try account()
        let short = try now { accounts.changePassword(of: alice, current: Secret("nope123"), new: Secret("ab"),
                                                      keeping: nil, peer: peer, charge: charge, completion: $0) }
        guard case .invalidField(field: "new", _) = short.failure else {
            Issue.record("expected invalid_field new, got \(short)")
            return
        }
        #expect(failures("account:alice1") == 0)
        passwords.quality = .qualityFailed(reason: "dictionary")
        let hardened = AccountProcedures(storage: storage, passwords: passwords, policy: .hardened,
                                         logger: Logger(level: .emerg), secrets: secrets, clock: clock)
        let weak = try now { hardened.changePassword(of: alice, current: Secret("secret1"), new: Secret("Zebra-Piano-2026x"),
                                                     keeping: nil, peer: peer, charge: charge, completion: $0) }
        guard case .invalidField(field: "new", code: FieldCode.weak.rawValue) = weak.failure else {
            Issue.record("expected invalid_field new, got \(weak)")
            return
        }
    }

    @Test func theLimiterCountsWrongCurrentPasswordsAndThenRefusesTheRightOne() throws {
        let alice = try account()
        for _ in 0..<Policy.seed.rateLimitBurst {
            _ = try now { accounts.changePassword(of: alice, current: Secret("nope123"), new: Secret("better22"),
                                                  keeping: nil, peer: peer, charge: charge, completion: $0) }
        }
        let right = try now { accounts.changePassword(of: alice, current: Secret("secret1"), new: Secret("better22"),
                                                      keeping: nil, peer: peer, charge: charge, completion: $0) }
        guard case .rateLimited = right.failure else {
            Issue.record("expected rate_limited, got \(right)")
            return
        }
        #expect(works("secret1", for: alice))
        #expect(accounts.attemptsInFlight("account:alice1") == 0)
    }

    // MARK: Email and deletion

    @Test func anEmailChangeFollowsTheRegistrationsRules() throws {
        let alice = try account(email: "a@example.org")
        _ = try account("bob123", email: "b@example.org")
        let taken = try now { accounts.changeEmail(of: alice, password: Secret("secret1"), email: "B@example.org",
                                                   peer: peer, charge: charge, completion: $0) }
        #expect(taken.failure == .taken(field: "email"))
        let invalid = try now { accounts.changeEmail(of: alice, password: Secret("secret1"), email: "nope",
                                                     peer: peer, charge: charge, completion: $0) }
        guard case .invalidField(field: "email", _) = invalid.failure else {
            Issue.record("expected invalid_field email, got \(invalid)")
            return
        }
        let removed = try now { accounts.changeEmail(of: alice, password: Secret("secret1"), email: "",
                                                     peer: peer, charge: charge, completion: $0) }
        #expect(try removed.get().email == nil)
        let wrong = try now { accounts.changeEmail(of: alice, password: Secret("nope123"), email: "c@example.org",
                                                   peer: peer, charge: charge, completion: $0) }
        #expect(wrong.failure == .wrongPassword)
    }

    @Test func aDeletionRemovesTheAccountItsTokensAndItsFailedLogIns() throws {
        let alice = try account()
        let mine = token(1, for: alice)
        _ = try now { accounts.changeEmail(of: alice, password: Secret("nope123"), email: "", peer: peer,
                                           charge: charge, completion: $0) }
        #expect(failures("account:alice1") == 1)
        let deleted = try now { accounts.deleteAccount(alice, password: Secret("secret1"), peer: peer, charge: charge,
                                                       completion: $0) }
        #expect(try deleted.get().revokedTokens == [mine])
        #expect(failures("account:alice1") == 0)
        // The peer's count is not the account's: it stays.
        #expect(failures("uid:1000") == 1)
        var taken: Bool?
        storage.acting(for: charge).isUsernameTaken("alice1") { taken = try? $0.get() }
        #expect(taken == false)
        let again = try now { accounts.deleteAccount(alice, password: Secret("secret1"), peer: peer, charge: charge,
                                                     completion: $0) }
        #expect(again.failure == .unauthenticated)
    }

    // MARK: Recovery codes

    @Test func aRecoveryCodeWorksOnceAndAUsedOneIsInvalidCodeAndCounts() throws {
        let alice = try account()
        _ = token(1, for: alice)
        let codes = try now { accounts.replaceRecoveryCodes(of: alice, password: Secret("secret1"), peer: peer,
                                                            charge: charge, completion: $0) }.get()
        #expect(codes.count == 10)
        #expect(Set(codes).count == 10)
        let first = try now { accounts.recover(username: "Alice1", code: codes[0].uppercased(), newPassword: Secret("better22"),
                                               peer: AuditPeer(uid: 1000, pid: 4242, client: "cli"), charge: charge, completion: $0) }.get()
        #expect(first.account.id == alice.id)
        #expect(first.revoked.count == 1)
        #expect(works("better22", for: alice))
        // Only the recovered connection's token is left.
        #expect(try liveTokens(of: alice) == [first.token.get().hash])
        let replay = try now { accounts.recover(username: "alice1", code: codes[0], newPassword: Secret("other333"),
                                                peer: peer, charge: charge, completion: $0) }
        #expect(replay.failure == .invalidCode)
        #expect(failures("account:alice1") == 1)
        #expect(works("better22", for: alice))
        let unknown = try now { accounts.recover(username: "nobody9", code: codes[1], newPassword: Secret("other333"),
                                                 peer: peer, charge: charge, completion: $0) }
        #expect(unknown.failure == .invalidCode)
        #expect(failures("account:nobody9") == 1)
    }

    /// A locked account's recovery says `locked` only to a right code, as log-in says it only to a right password:
    /// with any other code it answers exactly as an unlocked or unknown account does (`invalid_code`, a failed
    /// log-in), so a caller without a code cannot tell a locked account from any other. The right code is kept and
    /// the password stays; once unlocked, that code works.
    @Test func aLockedAccountsRecoverySaysLockedOnlyToARightCodeAndUsesNothingUp() throws {
        let alice = try account()
        _ = try account("bob123")
        let codes = try now { accounts.replaceRecoveryCodes(of: alice, password: Secret("secret1"), peer: peer,
                                                            charge: charge, completion: $0) }.get()
        storage.acting(for: charge).lockAccount(alice.id, reason: "stolen laptop") { _ in }
        func recover(_ name: String, _ code: String) throws -> RosterError? {
            try now { accounts.recover(username: name, code: code, newPassword: Secret("better22"), peer: peer,
                                       charge: charge, completion: $0) }.failure
        }
        let madeUp = "abcd-efgh-ijkl-mnop"
        #expect(try recover("alice1", madeUp) == .invalidCode)
        #expect(try recover("bob123", madeUp) == .invalidCode)
        #expect(try recover("nobody9", madeUp) == .invalidCode)
        #expect(failures("account:alice1") == 1)
        #expect(try recover("alice1", codes[0]) == .locked)
        // A right code to a locked account is no failed log-in, uses nothing up and changes no password.
        #expect(failures("account:alice1") == 1)
        #expect(try now { accounts.security(of: alice, charge: charge, completion: $0) }.get().recoveryCodesLeft == 10)
        #expect(works("secret1", for: alice))
        storage.acting(for: charge).unlockAccount(alice.id) { _ in }
        #expect(try recover("alice1", codes[0]) == nil)
        #expect(works("better22", for: alice))
    }

    @Test func newRecoveryCodesReplaceTheOldOnes() throws {
        let alice = try account()
        let old = try now { accounts.replaceRecoveryCodes(of: alice, password: Secret("secret1"), peer: peer,
                                                          charge: charge, completion: $0) }.get()
        _ = try now { accounts.replaceRecoveryCodes(of: alice, password: Secret("secret1"), peer: peer,
                                                    charge: charge, completion: $0) }.get()
        let stale = try now { accounts.recover(username: "alice1", code: old[0], newPassword: Secret("better22"),
                                               peer: peer, charge: charge, completion: $0) }
        #expect(stale.failure == .invalidCode)
        #expect(try now { accounts.security(of: alice, charge: charge, completion: $0) }.get().recoveryCodesLeft == 10)
    }

    // MARK: TOTP

    /// The code of the pending or confirmed secret for `unix`, by liboath.
    func code(of alice: Account, at unix: Int64) throws -> String {
        let security = try now { accounts.security(of: alice, charge: charge, completion: $0) }.get()
        let sealed = try #require(security.pendingTOTP ?? security.totp?.sealed)
        let secret = try #require(SecretBox.open(sealed, key: secrets.totpSeal))
        return try #require(TOTP.generate(secret: secret, nowUnix: unix))
    }

    @Test func anEnrolmentIsPendingUntilACodeOfItConfirmsIt() throws {
        let alice = try account()
        let enrolled = try now { accounts.enrollTOTP(of: alice, password: Secret("secret1"), peer: peer, charge: charge,
                                                     completion: $0) }.get()
        #expect(enrolled.uri.hasPrefix("otpauth://totp/Roster:alice1?secret=\(enrolled.secret)&issuer=Roster"))
        var security = try now { accounts.security(of: alice, charge: charge, completion: $0) }.get()
        #expect(security.totp == nil && security.pendingTOTP != nil)
        let now = clock.nowMs() / 1_000
        let tooLate = try code(of: alice, at: now + 90)
        let wrong = try self.now { accounts.confirmTOTP(of: alice, code: tooLate, peer: peer, charge: charge,
                                                        completion: $0) }
        #expect(wrong.failure == .invalidCode)
        #expect(failures("account:alice1") == 1)
        let previous = try code(of: alice, at: now - 30)
        _ = try self.now { accounts.confirmTOTP(of: alice, code: previous, peer: peer, charge: charge,
                                                completion: $0) }.get()
        security = try self.now { accounts.security(of: alice, charge: charge, completion: $0) }.get()
        #expect(security.pendingTOTP == nil)
        #expect(security.totp?.lastStep == now / 30 - 1)
        let disabled = try self.now { accounts.disableTOTP(of: alice, password: Secret("secret1"), peer: peer,
                                                           charge: charge, completion: $0) }
        #expect((try? disabled.get()) != nil)
        #expect(try self.now { accounts.security(of: alice, charge: charge, completion: $0) }.get().totp == nil)
    }

    @Test func confirmingWithNothingPendingIsInvalidCode() throws {
        let alice = try account()
        let result = try now { accounts.confirmTOTP(of: alice, code: "123456", peer: peer, charge: charge, completion: $0) }
        #expect(result.failure == .invalidCode)
    }
}

extension Result {
    /// The error, for `#expect`s on refusals.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

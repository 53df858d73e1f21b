import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// The life of an account (protocol.md §The life of an account): a deletion takes everything of the account and frees its name, a password
/// change or a recovery revokes exactly the tokens it names, a recovery code works once, a TOTP step is accepted
/// once and only forwards, and a session list shows live tokens oldest first with their clients.
@Suite("Storage contract: the life of an account")
struct AccountLifeContractTests {
    private static let twelveHours: Int64 = 12 * 3_600 * 1_000
    private static let newHash = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdA$bmV3aGFzaA"

    private func token(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }
    private func code(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    private func store(_ byte: UInt8, for account: Account, client: String? = nil, _ backend: Backend) throws {
        try backend.value { backend.storage.acting(for: charge(account.id)).storeToken(hash: token(byte),
                for: account.id, client: client, completion: $0) }
    }

    private func resumes(_ byte: UInt8, _ backend: Backend) throws -> Account? {
        try backend.value { backend.storage.acting(for: peerCharge).resumeToken(hash: token(byte),
                                                                                idleLimitMs: Self.twelveHours,
                                                                                completion: $0) }
    }

    private func security(_ account: Account, _ backend: Backend) throws -> AccountSecurity? {
        try backend.value { backend.storage.acting(for: charge(account.id)).security(of: account.id, completion: $0) }
    }

    // MARK: Deletion

    @Test(arguments: BackendKind.allCases)
    func aDeletionTakesEverythingOfTheAccountAndFreesItsName(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        storage.warmUp()
        try backend.settle()
        let alice = try backend.account("alice1", email: "alice@example.com")
        let bob = try backend.account("bobby1", email: "bob@example.com")
        try store(1, for: alice, backend)
        try store(2, for: alice, backend)
        try store(3, for: bob, backend)
        for (owner, name) in [(alice, "Carol"), (alice, "Dan"), (bob, "Erin")] {
            _ = try backend.value { storage.acting(for: charge(owner.id)).addContact(ContactDraft(name: name),
                    for: owner.id, completion: $0) }
        }
        try backend.value { storage.acting(for: charge(alice.id)).replaceRecoveryCodes(of: alice.id,
                hashes: [code(1), code(2)], completion: $0) }
        try backend.value { storage.acting(for: charge(alice.id)).storePendingTOTP(of: alice.id, sealed: [1, 2, 3],
                completion: $0) }
        #expect(try backend.value { storage.acting(for: charge(alice.id)).confirmTOTP(of: alice.id, step: 7,
                completion: $0) })
        try backend.value { storage.acting(for: peerCharge).recordFailure(keys: ["account:alice1", "uid:1000", "account:bobby1"],
                                                                          completion: $0) }

        let deleted = try backend.value {
            storage.acting(for: charge(alice.id)).deleteAccount(alice.id, failureKeys: ["account:alice1"],
                                                                completion: $0)
        }
        #expect(deleted?.account == alice)
        #expect(Set(deleted?.revokedTokens ?? []) == [token(1), token(2)])

        #expect(try backend.value { storage.acting(for: peerCharge).credential(for: .username("alice1"),
                                                                               completion: $0) } == nil)
        #expect(try backend.value { storage.acting(for: peerCharge).credential(of: alice.id, completion: $0) } == nil)
        #expect(try security(alice, backend) == nil)
        #expect(try !backend.value { storage.acting(for: peerCharge).isUsernameTaken("ALICE1", completion: $0) })
        #expect(storage.knownUsernameTaken("alice1") != true)
        #expect(try !backend.value { storage.acting(for: peerCharge).isEmailTaken("alice@example.com",
                completion: $0) })
        #expect(try resumes(1, backend) == nil)
        // Only the named failure keys went; the peer's and the other account's stay.
        let failures = try backend.value {
            storage.acting(for: peerCharge).recentFailures(keys: ["account:alice1", "uid:1000", "account:bobby1"],
                                                           windowMs: 60_000, completion: $0)
        }
        #expect(failures.times["account:alice1"] ?? [] == [])
        #expect(failures.times["uid:1000"]?.count == 1)
        #expect(failures.times["account:bobby1"]?.count == 1)
        // Bob keeps all he had.
        #expect(try resumes(3, backend) == bob)
        let statistics = try backend.value { storage.statistics(completion: $0) }
        #expect(statistics.accounts == 1)
        #expect(statistics.contacts == 1)

        // The name and the email are free: a new account takes them, with nothing of the old one.
        let again = try backend.account("alice1", email: "alice@example.com")
        #expect(again.id != alice.id)
        #expect(try security(again, backend) == AccountSecurity(totp: nil, pendingTOTP: nil, recoveryCodesLeft: 0))
        #expect(try backend.value { storage.acting(for: charge(again.id)).sessions(of: again.id,
                idleLimitMs: Self.twelveHours, completion: $0) } == [])
        #expect(storage.knownUsernameTaken("alice1") != false)
        #expect(try backend.value { storage.acting(for: .daemon).deleteAccount(alice.id, failureKeys: [],
                                                                               completion: $0) } == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aDeletionIsThereForTheNextInstance(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let frank = try backend.account("frank1")
        try store(4, for: frank, backend)
        _ = try backend.value { backend.storage.acting(for: .daemon).deleteAccount(frank.id, failureKeys: [],
                completion: $0) }
        let reopened = try backend.reopened()
        reopened.warmUp()
        try backend.settle()
        #expect(try !backend.value { reopened.acting(for: peerCharge).isUsernameTaken("frank1", completion: $0) })
        #expect(try backend.value { reopened.acting(for: peerCharge).resumeToken(hash: token(4),
                idleLimitMs: Self.twelveHours, completion: $0) } == nil)
    }

    // MARK: Password and tokens

    @Test(arguments: BackendKind.allCases)
    func aPasswordChangeKeepsExactlyTheTokenItNames(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let gina = try backend.account("gina01")
        let hugo = try backend.account("hugo01")
        for byte: UInt8 in [1, 2, 3] { try store(byte, for: gina, backend) }
        try store(4, for: hugo, backend)

        let revoked = try backend.value {
            storage.acting(for: charge(gina.id)).changePassword(of: gina.id, to: Self.newHash, keeping: token(2),
                                                                completion: $0)
        }
        #expect(Set(revoked) == [token(1), token(3)])
        #expect(revoked.count == 2)
        #expect(try resumes(1, backend) == nil)
        #expect(try resumes(2, backend) == gina)
        #expect(try resumes(3, backend) == nil)
        #expect(try resumes(4, backend) == hugo)
        let credential = try backend.value { storage.acting(for: charge(gina.id)).credential(of: gina.id,
                completion: $0) }
        #expect(credential?.passwordHash == Self.newHash)
        #expect(credential?.account == gina)

        // Keeping none revokes all; what is not an Argon2id hash changes nothing.
        #expect(try backend.answer { storage.acting(for: charge(gina.id)).changePassword(of: gina.id, to: "hunter2",
                keeping: nil, completion: $0) } == .failure(.other))
        #expect(try resumes(2, backend) == gina)
        #expect(try backend.value { storage.acting(for: charge(gina.id)).changePassword(of: gina.id,
                to: placeholderHash, keeping: nil, completion: $0) } == [token(2)])
        #expect(try resumes(2, backend) == nil)
        let reopened = try backend.reopened()
        #expect(try backend.value { reopened.acting(for: peerCharge).credential(for: .username("gina01"),
                                                                                completion: $0) }?
                    .passwordHash == placeholderHash)
    }

    @Test(arguments: BackendKind.allCases)
    func revokingOthersKeepsTheNamedTokenAndTouchesNoOtherAccount(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let ines = try backend.account("ines01")
        let jack = try backend.account("jack01")
        for byte: UInt8 in [5, 6, 7] { try store(byte, for: ines, backend) }
        try store(8, for: jack, backend)
        #expect(try Set(backend.value { storage.acting(for: charge(ines.id)).revokeTokens(of: ines.id, except: token(7),
                completion: $0) }) == [token(5), token(6)])
        #expect(try backend.value { storage.acting(for: charge(ines.id)).revokeTokens(of: ines.id, except: token(7),
                completion: $0) } == [])
        #expect(try resumes(7, backend) == ines)
        #expect(try backend.value { storage.acting(for: charge(ines.id)).revokeTokens(of: ines.id, except: nil,
                completion: $0) } == [token(7)])
        #expect(try resumes(8, backend) == jack)
    }

    // MARK: Email

    @Test(arguments: BackendKind.allCases)
    func anEmailChangeClashesWithAnotherAccountOnlyAndCanRemoveIt(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let kate = try backend.account("kate01", email: "kate@example.com")
        _ = try backend.account("liam01", email: "liam@example.com")
        #expect(try backend.answer { storage.acting(for: charge(kate.id)).changeEmail(of: kate.id,
                to: "LIAM@example.com", completion: $0) } == .failure(.conflict(.email)))
        // Her own address in another case is no clash.
        #expect(try backend.value { storage.acting(for: charge(kate.id)).changeEmail(of: kate.id,
                to: "Kate@Example.com", completion: $0) }?.email == "Kate@Example.com")
        var changed = kate
        changed.email = "kate@new.example"
        #expect(try backend.value { storage.acting(for: charge(kate.id)).changeEmail(of: kate.id,
                to: "kate@new.example", completion: $0) } == changed)
        #expect(try !backend.value { storage.acting(for: peerCharge).isEmailTaken("kate@example.com", completion: $0) })
        #expect(try backend.value { storage.acting(for: peerCharge).credential(for: .email("KATE@new.example"),
                                                                               completion: $0) }?.account == changed)
        changed.email = nil
        #expect(try backend.value { storage.acting(for: charge(kate.id)).changeEmail(of: kate.id, to: nil,
                completion: $0) }
                == changed)
        #expect(try !backend.value { storage.acting(for: peerCharge).isEmailTaken("kate@new.example", completion: $0) })
        // Liam's address is still his, and a removed one is free for anyone.
        #expect(try backend.value { storage.acting(for: peerCharge).isEmailTaken("liam@example.com", completion: $0) })
        #expect(try backend.value { storage.acting(for: .daemon).changeEmail(of: 9_999, to: "x@example.com",
                                                                             completion: $0) }
                == nil)
    }

    // MARK: Recovery codes

    @Test(arguments: BackendKind.allCases)
    func aRecoveryCodeWorksOnceForItsOwnAccountAndRevokesEveryToken(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let mia = try backend.account("mia001")
        let ned = try backend.account("ned001")
        try backend.value { storage.acting(for: charge(mia.id)).replaceRecoveryCodes(of: mia.id,
                hashes: [code(1), code(2), code(3)], completion: $0) }
        try backend.value { storage.acting(for: charge(ned.id)).replaceRecoveryCodes(of: ned.id, hashes: [code(9)],
                completion: $0) }
        #expect(try security(mia, backend)?.recoveryCodesLeft == 3)
        try store(1, for: mia, backend)
        try store(2, for: mia, backend)
        try store(3, for: ned, backend)

        func redeem(_ byte: UInt8, of account: Account) throws -> [[UInt8]]? {
            try backend.value { storage.acting(for: peerCharge).redeemRecoveryCode(of: account.id, codeHash: code(byte),
                    newPasswordHash: Self.newHash, completion: $0) }
        }
        func holds(_ byte: UInt8, _ account: Account) throws -> Bool {
            try backend.value { storage.acting(for: peerCharge).holdsRecoveryCode(of: account.id, codeHash: code(byte),
                    completion: $0) }
        }
        // Asking whether a code is held spends nothing.
        #expect(try holds(2, mia))
        #expect(try holds(2, mia))
        #expect(try !holds(9, mia))
        #expect(try holds(9, ned))
        #expect(try security(mia, backend)?.recoveryCodesLeft == 3)
        #expect(try redeem(9, of: mia) == nil)
        #expect(try Set(redeem(2, of: mia) ?? []) == [token(1), token(2)])
        #expect(try !holds(2, mia))
        #expect(try holds(1, mia))
        #expect(try backend.value { storage.acting(for: peerCharge).credential(of: mia.id,
                                                                               completion: $0) }?.passwordHash
                == Self.newHash)
        #expect(try security(mia, backend)?.recoveryCodesLeft == 2)
        #expect(try redeem(2, of: mia) == nil)
        #expect(try redeem(1, of: mia) == [])
        // Ned's code and token were never Mia's to spend.
        #expect(try security(ned, backend)?.recoveryCodesLeft == 1)
        #expect(try resumes(3, backend) == ned)

        // New codes replace every old one.
        try backend.value { storage.acting(for: charge(mia.id)).replaceRecoveryCodes(of: mia.id, hashes: [code(4)],
                completion: $0) }
        #expect(try security(mia, backend)?.recoveryCodesLeft == 1)
        #expect(try redeem(3, of: mia) == nil)
        #expect(try redeem(4, of: mia) == [])
        #expect(try redeem(1, of: backend.account("olly01")) == nil)
    }

    // MARK: TOTP

    @Test(arguments: BackendKind.allCases)
    func aPendingSecretCountsOnlyOnceConfirmed(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let pia = try backend.account("pia001", email: "pia@example.com")
        func credentials() throws -> [TOTPSeal?] {
            [try backend.value { storage.acting(for: peerCharge).credential(of: pia.id, completion: $0) }?.totp,
             try backend.value { storage.acting(for: peerCharge).credential(for: .username("pia001"),
                                                                            completion: $0) }?.totp,
             try backend.value { storage.acting(for: peerCharge).credential(for: .email("pia@example.com"),
                                                                            completion: $0) }?.totp]
        }
        #expect(try security(pia, backend) == AccountSecurity(totp: nil, pendingTOTP: nil, recoveryCodesLeft: 0))
        #expect(try !backend.value { storage.acting(for: charge(pia.id)).confirmTOTP(of: pia.id, step: 10,
                completion: $0) })

        try backend.value { storage.acting(for: charge(pia.id)).storePendingTOTP(of: pia.id, sealed: [1, 1],
                completion: $0) }
        try backend.value { storage.acting(for: charge(pia.id)).storePendingTOTP(of: pia.id, sealed: [2, 2],
                completion: $0) }
        #expect(try security(pia, backend) == AccountSecurity(totp: nil, pendingTOTP: [2, 2], recoveryCodesLeft: 0))
        #expect(try credentials() == [nil, nil, nil])
        #expect(try !backend.value { storage.acting(for: peerCharge).acceptTOTPStep(of: pia.id, step: 11,
                completion: $0) })

        #expect(try backend.value { storage.acting(for: charge(pia.id)).confirmTOTP(of: pia.id, step: 10,
                completion: $0) })
        let confirmed = TOTPSeal(sealed: [2, 2], lastStep: 10)
        #expect(try security(pia, backend) == AccountSecurity(totp: confirmed, pendingTOTP: nil, recoveryCodesLeft: 0))
        #expect(try credentials() == [confirmed, confirmed, confirmed])
        #expect(try !backend.value { storage.acting(for: charge(pia.id)).confirmTOTP(of: pia.id, step: 12,
                completion: $0) })

        // A new enrolment waits beside the confirmed secret, which stays in force until it is confirmed.
        try backend.value { storage.acting(for: charge(pia.id)).storePendingTOTP(of: pia.id, sealed: [3, 3],
                completion: $0) }
        #expect(try security(pia, backend) == AccountSecurity(totp: confirmed, pendingTOTP: [3, 3], recoveryCodesLeft: 0))
        #expect(try credentials() == [confirmed, confirmed, confirmed])
        #expect(try backend.value { storage.acting(for: charge(pia.id)).confirmTOTP(of: pia.id, step: 20,
                completion: $0) })
        #expect(try credentials().first == TOTPSeal(sealed: [3, 3], lastStep: 20))

        try backend.value { storage.acting(for: charge(pia.id)).removeTOTP(of: pia.id, completion: $0) }
        #expect(try security(pia, backend) == AccountSecurity(totp: nil, pendingTOTP: nil, recoveryCodesLeft: 0))
        #expect(try credentials() == [nil, nil, nil])
        #expect(try !backend.value { storage.acting(for: peerCharge).acceptTOTPStep(of: pia.id, step: 21,
                completion: $0) })
    }

    @Test(arguments: BackendKind.allCases)
    func aTOTPStepIsAcceptedOnceAndOnlyAfterTheLastOne(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let quin = try backend.account("quin01")
        let rosa = try backend.account("rosa01")
        for account in [quin, rosa] {
            try backend.value { storage.acting(for: charge(account.id)).storePendingTOTP(of: account.id, sealed: [4],
                    completion: $0) }
            #expect(try backend.value { storage.acting(for: charge(account.id)).confirmTOTP(of: account.id, step: 100,
                    completion: $0) })
        }
        func accept(_ step: Int64, _ account: Account = quin) throws -> Bool {
            try backend.value { storage.acting(for: peerCharge).acceptTOTPStep(of: account.id, step: step,
                                                                               completion: $0) }
        }
        // The confirming code's step is used already.
        #expect(try !accept(100))
        #expect(try !accept(99))
        #expect(try accept(101))
        #expect(try !accept(101))
        #expect(try !accept(100))
        #expect(try accept(103))
        #expect(try !accept(102))
        #expect(try backend.value { storage.acting(for: peerCharge).credential(of: quin.id,
                                                                               completion: $0) }?.totp?.lastStep == 103)
        // Another account's steps are its own.
        #expect(try accept(101, rosa))
        #expect(try !accept(104, backend.account("sam001")))

        // One code sent by two log-ins at once: exactly one wins.
        var answers: [Result<Bool, StorageFailure>] = []
        for _ in 0..<4 {
            storage.acting(for: peerCharge).acceptTOTPStep(of: quin.id, step: 110,
                                                           completion: backend.completion { answers.append($0) })
        }
        try backend.run(until: { answers.count == 4 })
        #expect(answers.filter { (try? $0.get()) == true }.count == 1)
        #expect(answers.allSatisfy { (try? $0.get()) != nil })
        let reopened = try backend.reopened()
        #expect(try backend.value { reopened.acting(for: peerCharge).credential(of: quin.id,
                                                                                completion: $0) }?.totp?.lastStep
                == 110)
    }

    // MARK: Sessions

    @Test(arguments: BackendKind.allCases)
    func sessionsAreTheLiveTokensOldestFirstWithTheirClients(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let tess = try backend.account("tess01")
        let uma = try backend.account("uma001")
        let start = backend.clock.nowMs()
        try store(1, for: tess, client: "rosterctl 1.0", backend)
        backend.clock.advance(byMs: 1_000)
        try store(2, for: tess, backend)
        backend.clock.advance(byMs: 1_000)
        try store(3, for: tess, client: "roster-web", backend)
        try store(4, for: uma, client: "other", backend)
        func sessions() throws -> [StoredSession] {
            try backend.value { storage.acting(for: charge(tess.id)).sessions(of: tess.id,
                                                                              idleLimitMs: Self.twelveHours,
                                                                              completion: $0) }
        }
        #expect(try sessions() == [
            StoredSession(tokenHash: token(1), createdAtMs: start, lastUsedAtMs: start, client: "rosterctl 1.0"),
            StoredSession(tokenHash: token(2), createdAtMs: start + 1_000, lastUsedAtMs: start + 1_000, client: nil),
            StoredSession(tokenHash: token(3), createdAtMs: start + 2_000, lastUsedAtMs: start + 2_000, client: "roster-web"),
        ])
        // Token 1 unused for exactly the limit is gone from the list; token 2, used, is listed with its last use.
        backend.clock.advance(byMs: Self.twelveHours - 2_000 - 1)
        #expect(try resumes(2, backend) == tess)
        backend.clock.advance(byMs: 1)
        #expect(try sessions().map(\.tokenHash) == [token(2), token(3)])
        #expect(try sessions().first?.lastUsedAtMs == start + Self.twelveHours - 1)
        #expect(try sessions().first?.createdAtMs == start + 1_000)
        #expect(try backend.value { storage.acting(for: .daemon).sessions(of: 9_999, idleLimitMs: Self.twelveHours,
                                                                          completion: $0) } == [])
    }

    // MARK: A gone account

    @Test(arguments: BackendKind.allCases)
    func callsOnAnAccountThatIsGoneAnswerNilOrFalse(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let gone: AccountID = 9_999
        #expect(try backend.value { storage.acting(for: .daemon).security(of: gone, completion: $0) } == nil)
        #expect(try backend.value { storage.acting(for: .daemon).credential(of: gone, completion: $0) } == nil)
        #expect(try backend.value { storage.acting(for: .daemon).deleteAccount(gone, failureKeys: ["account:x"],
                                                                               completion: $0) }
                == nil)
        #expect(try !backend.value { storage.acting(for: .daemon).confirmTOTP(of: gone, step: 1, completion: $0) })
        #expect(try !backend.value { storage.acting(for: .daemon).acceptTOTPStep(of: gone, step: 1, completion: $0) })
        #expect(try backend.value { storage.acting(for: .daemon).redeemRecoveryCode(of: gone, codeHash: code(1),
                newPasswordHash: Self.newHash, completion: $0) } == nil)
        #expect(try backend.value { storage.acting(for: .daemon).revokeTokens(of: gone, except: nil,
                                                                              completion: $0) } == [])
    }
}

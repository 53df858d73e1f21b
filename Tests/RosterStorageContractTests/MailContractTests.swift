import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// The outbox and the mailed codes (protocol.md §Storage), alike on every backend, every time given: a mail commits
/// with the write that causes it or not at all, under the cap of queued mails per account; a code mail waits out
/// the interval since the last code of its purpose and replaces that code; a code works once, until it expires,
/// for five wrong tries, and only while the account still has the address it went to; a claim is one claimant's
/// until its lease ends, only that claimant finishes it, and a failed mail stays failed; a deletion takes the
/// account's codes and code mails and leaves its notices.
@Suite("Storage contract: mail")
struct MailContractTests {
    private static let newHash = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdA$bmV3aGFzaA"
    private static let minute: Int64 = 60_000
    private static let lease: Int64 = 30_000

    private func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    /// A mail of `kind` about `account` to `to`, its message `[byte]` (the bytes are the backend's to keep, not to
    /// read), with a code of `code`'s hash byte when given.
    private func mail(_ kind: MailKindName, _ account: Account, to: String? = nil, message byte: UInt8 = 1,
                      code: UInt8? = nil, purpose: MailCodePurpose = .verifyEmail, expiresAtMs: Int64 = .max) -> QueuedMail {
        let recipient = to ?? account.email ?? "nobody@example.com"
        return QueuedMail(account: account.id, kind: kind, recipient: recipient, sealedMessage: [byte, 2, 3],
                          code: code.map { NewMailCode(purpose: purpose, codeHash: hash($0), expiresAtMs: expiresAtMs,
                                                       email: recipient) })
    }

    private func verificationMail(_ account: Account, code: UInt8, expiresAtMs: Int64 = .max) -> QueuedMail {
        mail(.verification, account, code: code, expiresAtMs: expiresAtMs)
    }

    private func recoveryMail(_ account: Account, code: UInt8) -> QueuedMail {
        mail(.recovery, account, code: code, purpose: .recover)
    }

    private func queue(_ mail: QueuedMail, for account: Account, intervalMs: Int64 = 0, audit: AuditRecord? = nil,
                       _ backend: Backend) throws -> CodeMailQueueing {
        try backend.value { backend.storage.acting(for: charge(account.id)).queueCodeMail(of: account.id, mail,
                minimumIntervalMs: intervalMs, audit: audit, completion: $0) }
    }

    private func verify(_ code: UInt8, of account: Account, atMs nowMs: Int64, audit: AuditRecord? = nil,
                        _ backend: Backend) throws -> MailCodeCheck {
        try backend.value { backend.storage.acting(for: charge(account.id)).verifyEmail(of: account.id,
                codeHash: hash(code), nowMs: nowMs, audit: audit, completion: $0) }
    }

    private func listed(_ backend: Backend, status: MailStatus? = nil, limit: Int = 100) throws -> [MailListing] {
        try backend.value { backend.storage.acting(for: .daemon).listMail(status: status, limit: limit, completion: $0) }
    }

    /// The outbox's counts, which `admin.stats` reads from the statistics: both ways must agree.
    private func counts(_ backend: Backend) throws -> MailCounts {
        let counted = try backend.value { backend.storage.acting(for: .daemon).mailCounts(completion: $0) }
        let statistics = try backend.value { backend.storage.statistics(completion: $0) }
        #expect(statistics.mail == counted)
        return counted
    }

    private func claim(_ claimant: String, atMs nowMs: Int64, limit: Int = 100, on storage: (any Storage)? = nil,
                       _ backend: Backend) throws -> [ClaimedMail] {
        try backend.value { (storage ?? backend.storage).acting(for: .daemon).claimDueMail(claimant: claimant, nowMs: nowMs,
                leaseMs: Self.lease, limit: limit, completion: $0) }
    }

    private func finish(_ id: MailID, _ claimant: String, _ outcome: MailHandOffResult, audit: AuditRecord? = nil,
                        _ backend: Backend) throws -> Bool {
        try backend.value { backend.storage.acting(for: .daemon).finishMail(id, claimant: claimant, outcome: outcome,
                audit: audit, completion: $0) }
    }

    private func stored(_ account: Account, _ backend: Backend) throws -> Account? {
        try backend.value { backend.storage.acting(for: charge(account.id)).credential(of: account.id, completion: $0) }?.account
    }

    // MARK: Mail with its write

    @Test(arguments: BackendKind.allCases)
    func aRegistrationQueuesItsCodeMailUnderTheNewAccountAndItsCodeVerifiesTheEmail(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let placeholder = Account(id: 0, username: "", display: "", email: "alice@example.com", createdAtMs: 0)
        let alice = try backend.value {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "alice1", display: "alice1", email: "alice@example.com",
                                                                     passwordHash: placeholderHash), audit: nil,
                                                          mail: [verificationMail(placeholder, code: 7)], completion: $0)
        }
        #expect(!alice.emailVerified)
        let queued = try listed(backend)
        #expect(queued.map(\.account) == [alice.id])
        #expect(queued.first?.kind == .verification)
        #expect(queued.first?.recipient == "alice@example.com")
        #expect(queued.first?.status == .queued && queued.first?.attempts == 0)
        #expect(queued.first?.queuedAtMs == backend.clock.nowMs() && queued.first?.nextAttemptAtMs == backend.clock.nowMs())
        #expect(try counts(backend) == MailCounts(queued: 1, failed: 0, sent: 0))

        let now = backend.clock.nowMs()
        #expect(try verify(7, of: alice, atMs: now, backend) == .verified(email: "alice@example.com"))
        #expect(try stored(alice, backend)?.emailVerified == true)
        #expect(try backend.value { storage.acting(for: .daemon).accountSummary(.username("alice1"), completion: $0) }?
                    .account.emailVerified == true)
        #expect(try backend.value { storage.acting(for: .daemon).listAccounts(matching: nil, limit: 10, offset: 0,
                                                                              completion: $0) }.items.map(\.account.emailVerified) == [true])
        // A right code is used up.
        #expect(try verify(7, of: alice, atMs: now, backend) == .noLiveCode)
        // Durable, as every write: another instance finds the flag and the mail.
        let reopened = try backend.reopened()
        #expect(try backend.value { reopened.acting(for: peerCharge).credential(for: .username("alice1"), completion: $0) }?
                    .account.emailVerified == true)
        #expect(try backend.value { reopened.acting(for: .daemon).listMail(status: nil, limit: 10, completion: $0) } == queued)
    }

    @Test(arguments: BackendKind.allCases)
    func aWriteThatFailsOrChangesNothingQueuesNoMail(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        let bob = try backend.account("bobby1", email: "bob@example.com")
        // A registration refused for its name, an email change refused for its address.
        let refused = try backend.answer {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "alice1", display: "alice1", email: "new@example.com",
                                                                     passwordHash: placeholderHash), audit: nil,
                                                          mail: [verificationMail(alice, code: 1)], completion: $0)
        }
        #expect(refused == .failure(.conflict(.username)))
        let taken = try backend.answer {
            storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "bob@example.com", audit: nil,
                                                              mail: [verificationMail(alice, code: 2),
                                                                     mail(.emailChanged, alice)], completion: $0)
        }
        #expect(taken == .failure(.conflict(.email)))
        // Writes on an account that is gone.
        _ = try backend.value { storage.acting(for: .daemon).deleteAccount(bob.id, failureKeys: [], audit: nil, mail: [],
                                                                           completion: $0) }
        #expect(try backend.value { storage.acting(for: .daemon).deleteAccount(bob.id, failureKeys: [], audit: nil,
                mail: [mail(.accountDeleted, bob)], completion: $0) } == nil)
        try backend.value { storage.acting(for: .daemon).removeTOTP(of: bob.id, audit: nil, mail: [mail(.totpDisabled, bob)],
                                                                    completion: $0) }
        try backend.value { storage.acting(for: .daemon).replaceRecoveryCodes(of: bob.id, hashes: [], audit: nil,
                mail: [mail(.recoveryCodesMade, bob)], completion: $0) }
        #expect(try backend.value { storage.acting(for: .daemon).changeEmail(of: bob.id, to: "b2@example.com", audit: nil,
                mail: [mail(.emailChanged, bob)], completion: $0) } == nil)
        #expect(try backend.value { storage.acting(for: .daemon).redeemRecoveryCode(of: alice.id, codeHash: hash(9),
                newPasswordHash: Self.newHash, audit: nil, mail: [mail(.passwordChanged, alice)], completion: $0) } == nil)
        #expect(try queue(verificationMail(bob, code: 3), for: bob, backend) == .gone)
        #expect(try listed(backend) == [])
        // The codes of the refused writes were not stored either.
        #expect(try verify(1, of: alice, atMs: backend.clock.nowMs(), backend) == .noLiveCode)
        #expect(try verify(2, of: alice, atMs: backend.clock.nowMs(), backend) == .noLiveCode)
    }

    @Test(arguments: [BackendKind.sqlite, .postgres])
    func aMailThatCannotBeStoredTakesItsWriteWithIt(_ kind: BackendKind) throws {
        let backend = try kind.make(rowLimit: 24)
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        var full = false
        for index in 0..<400 where !full {
            let added = try backend.answer {
                storage.acting(for: charge(alice.id)).addContact(ContactDraft(name: "Filler \(index)",
                                                                              note: String(repeating: "x", count: 3_900)),
                                                                 for: alice.id, completion: $0)
            }
            full = (try? added.get()) == nil
        }
        #expect(full)
        var notice = mail(.passwordChanged, alice)
        notice.sealedMessage = [UInt8](repeating: 7, count: 64 * 1_024)
        let changed = try backend.answer {
            storage.acting(for: charge(alice.id)).changePassword(of: alice.id, to: Self.newHash, keeping: nil, audit: nil,
                                                                 mail: [notice], completion: $0)
        }
        #expect(changed == .failure(.full))
        #expect(try backend.value { storage.acting(for: .daemon).credential(of: alice.id, completion: $0) }?.passwordHash
                == placeholderHash, "the password change went with its mail")
        #expect(try listed(backend) == [])
        // The same change without the mail fits.
        _ = try backend.value { storage.acting(for: charge(alice.id)).changePassword(of: alice.id, to: Self.newHash,
                keeping: nil, audit: nil, mail: [], completion: $0) }
        #expect(try backend.value { storage.acting(for: .daemon).credential(of: alice.id, completion: $0) }?.passwordHash
                == Self.newHash)
    }

    @Test(arguments: BackendKind.allCases)
    func eachWriteQueuesItsMailWhenItChangedSomething(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        let data = storage.acting(for: charge(alice.id))
        _ = try backend.value { data.changePassword(of: alice.id, to: Self.newHash, keeping: nil, audit: nil,
                                                    mail: [mail(.passwordChanged, alice, message: 1)], completion: $0) }
        try backend.value { data.removeTOTP(of: alice.id, audit: nil, mail: [mail(.totpDisabled, alice, message: 2)],
                                            completion: $0) }
        try backend.value { data.replaceRecoveryCodes(of: alice.id, hashes: [hash(4)], audit: nil,
                                                      mail: [mail(.recoveryCodesMade, alice, message: 3)], completion: $0) }
        _ = try backend.value { data.redeemRecoveryCode(of: alice.id, codeHash: hash(4), newPasswordHash: Self.newHash,
                                                        audit: nil, mail: [mail(.passwordChanged, alice, message: 4)],
                                                        completion: $0) }
        let changed = try backend.value {
            data.changeEmail(of: alice.id, to: "new@example.com", audit: nil,
                             mail: [mail(.verification, alice, to: "new@example.com", message: 5, code: 5),
                                    mail(.emailChanged, alice, to: "alice@example.com", message: 6)], completion: $0)
        }
        #expect(changed?.email == "new@example.com" && changed?.emailVerified == false)
        let queued = try listed(backend)
        #expect(queued.map(\.kind) == [.emailChanged, .verification, .passwordChanged, .recoveryCodesMade, .totpDisabled,
                                       .passwordChanged])
        #expect(queued.map(\.recipient) == ["alice@example.com", "new@example.com"] + Array(repeating: "alice@example.com", count: 4))
        #expect(Set(queued.map(\.account)) == [alice.id])
        // The messages come back as they went in, to the sender.
        let claimed = try claim("sender", atMs: backend.clock.nowMs(), backend)
        #expect(claimed.map(\.sealedMessage) == (1...6).map { [UInt8($0), 2, 3] })
        #expect(try verify(5, of: alice, atMs: backend.clock.nowMs(), backend) == .verified(email: "new@example.com"))
    }

    // MARK: The cap

    @Test(arguments: BackendKind.allCases)
    func pastTheCapACodeMailIsRefusedAndAWriteGoesAheadWithoutItsMail(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        let other = try backend.account("bobby1", email: "bob@example.com")
        for index in 0..<(MailLimits.queuedPerAccount - 1) {
            guard case .queued = try queue(verificationMail(alice, code: UInt8(index)), for: alice, backend) else {
                Issue.record("code mail \(index) was not queued")
                return
            }
        }
        // One place left: of a write's two mails, the first goes and the second is skipped, and the write is done.
        let changed = try backend.value {
            storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "new@example.com", audit: nil,
                                                              mail: [mail(.verification, alice, to: "new@example.com", code: 40),
                                                                     mail(.emailChanged, alice, to: "alice@example.com")],
                                                              completion: $0)
        }
        #expect(changed?.email == "new@example.com")
        #expect(try counts(backend).queued == MailLimits.queuedPerAccount)
        #expect(try listed(backend, limit: 1).first?.kind == .verification)
        #expect(try queue(verificationMail(alice, code: 41), for: alice, backend) == .queueFull)
        _ = try backend.value { storage.acting(for: charge(alice.id)).changePassword(of: alice.id, to: Self.newHash,
                keeping: nil, audit: nil, mail: [mail(.passwordChanged, alice)], completion: $0) }
        #expect(try backend.value { storage.acting(for: charge(alice.id)).credential(of: alice.id, completion: $0) }?
                    .passwordHash == Self.newHash)
        #expect(try counts(backend).queued == MailLimits.queuedPerAccount)
        // The refused code mail stored no code, and the one queued before it still works.
        #expect(try verify(41, of: alice, atMs: backend.clock.nowMs(), backend) == .wrong(triesLeft: 4))
        // The cap is per account, and counts only what is queued: a sent mail frees its place.
        #expect(try queue(verificationMail(other, code: 1), for: other, backend) != .queueFull)
        let first = try #require(try claim("sender", atMs: backend.clock.nowMs(), limit: 1, backend).first)
        #expect(first.account == alice.id)
        #expect(try finish(first.id, "sender", .sent(atMs: backend.clock.nowMs()), backend))
        #expect(try queue(verificationMail(alice, code: 42), for: alice, backend) != .queueFull)
    }

    // MARK: Codes

    @Test(arguments: BackendKind.allCases)
    func aCodeMailWaitsOutTheIntervalSinceTheLastCodeOfItsPurpose(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1", email: "alice@example.com")
        guard case .queued(let first) = try queue(verificationMail(alice, code: 1), for: alice, intervalMs: Self.minute,
                                                  backend) else {
            Issue.record("the first code mail was refused")
            return
        }
        backend.clock.advance(byMs: 20_000)
        #expect(try queue(verificationMail(alice, code: 2), for: alice, intervalMs: Self.minute, backend)
                == .tooSoon(retryAfterMs: 40_000))
        // Per purpose: a recovery code has its own minute.
        #expect(try queue(recoveryMail(alice, code: 3), for: alice, intervalMs: Self.minute, backend).isQueued)
        backend.clock.advance(byMs: 39_999)
        #expect(try queue(verificationMail(alice, code: 2), for: alice, intervalMs: Self.minute, backend)
                == .tooSoon(retryAfterMs: 1))
        // It holds for another instance on the same data (another daemon): the time is the stored code's.
        let reopened = try backend.reopened()
        #expect(try backend.value { reopened.acting(for: charge(alice.id)).queueCodeMail(of: alice.id,
                verificationMail(alice, code: 2), minimumIntervalMs: Self.minute, audit: nil, completion: $0) }
                == .tooSoon(retryAfterMs: 1))
        backend.clock.advance(byMs: 1)
        guard case .queued(let second) = try queue(verificationMail(alice, code: 2), for: alice, intervalMs: Self.minute,
                                                   backend) else {
            Issue.record("the second code mail was refused")
            return
        }
        #expect(second > first)
        // Even a used code keeps the time it was made: using it does not open the next minute early.
        #expect(try verify(2, of: alice, atMs: backend.clock.nowMs(), backend) == .verified(email: "alice@example.com"))
        #expect(try queue(verificationMail(alice, code: 5), for: alice, intervalMs: Self.minute, backend)
                == .tooSoon(retryAfterMs: Self.minute))
    }

    @Test(arguments: BackendKind.allCases)
    func aNewCodeReplacesTheOldOne(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1", email: "alice@example.com")
        #expect(try queue(verificationMail(alice, code: 1), for: alice, backend).isQueued)
        #expect(try queue(verificationMail(alice, code: 2), for: alice, backend).isQueued)
        let now = backend.clock.nowMs()
        // The old code is one wrong try now; the new one works, with every try it had.
        #expect(try verify(1, of: alice, atMs: now, backend) == .wrong(triesLeft: MailLimits.triesPerCode - 1))
        #expect(try verify(2, of: alice, atMs: now, backend) == .verified(email: "alice@example.com"))
        // Both mails stay queued: the first may be on its way already; only its code is dead.
        #expect(try counts(backend).queued == 2)
    }

    @Test(arguments: BackendKind.allCases)
    func fiveWrongTriesKillACode(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1", email: "alice@example.com")
        #expect(try queue(verificationMail(alice, code: 7), for: alice, backend).isQueued)
        let now = backend.clock.nowMs()
        let tries = try (1...MailLimits.triesPerCode).map { _ in try verify(8, of: alice, atMs: now, backend) }
        #expect(tries == (0..<MailLimits.triesPerCode).reversed().map { .wrong(triesLeft: $0) })
        #expect(try verify(7, of: alice, atMs: now, backend) == .noLiveCode)
        #expect(try verify(8, of: alice, atMs: now, backend) == .noLiveCode)
        #expect(try stored(alice, backend)?.emailVerified == false)
    }

    @Test(arguments: BackendKind.allCases)
    func aCodeIsDeadFromItsExpiryOn(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1", email: "alice@example.com")
        let expiry = backend.clock.nowMs() + 15 * Self.minute
        #expect(try queue(verificationMail(alice, code: 7, expiresAtMs: expiry), for: alice, backend).isQueued)
        // Dead at its expiry, and a try then costs nothing: the time is the caller's, as given.
        #expect(try verify(7, of: alice, atMs: expiry, backend) == .noLiveCode)
        #expect(try verify(8, of: alice, atMs: expiry + 1, backend) == .noLiveCode)
        #expect(try verify(8, of: alice, atMs: expiry - 1, backend) == .wrong(triesLeft: 4))
        #expect(try verify(7, of: alice, atMs: expiry - 1, backend) == .verified(email: "alice@example.com"))
    }

    @Test(arguments: BackendKind.allCases)
    func aCodeMailedToAnAddressTheAccountNoLongerHasIsNoLiveCode(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        #expect(try queue(verificationMail(alice, code: 7), for: alice, backend).isQueued)
        #expect(try queue(recoveryMail(alice, code: 8), for: alice, backend).isQueued)
        _ = try backend.value { storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "new@example.com",
                                                                                  audit: nil, mail: [], completion: $0) }
        let now = backend.clock.nowMs()
        #expect(try verify(7, of: alice, atMs: now, backend) == .noLiveCode)
        #expect(try backend.value { storage.acting(for: .daemon).redeemMailedCode(of: alice.id, codeHash: hash(8), nowMs: now,
                newPasswordHash: Self.newHash, audit: nil, mail: [], completion: $0) } == .noLiveCode)
        // Back to the address it went to (ASCII case aside, as the email compares), it is live again.
        _ = try backend.value { storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "ALICE@example.com",
                                                                                  audit: nil, mail: [], completion: $0) }
        #expect(try verify(7, of: alice, atMs: now, backend) == .verified(email: "alice@example.com"))
        #expect(try stored(alice, backend)?.emailVerified == true)
        // A verified email is unverified again as soon as it changes; a change to the same address keeps it.
        let same = try backend.value { storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "ALICE@example.com",
                                                                                         audit: nil, mail: [], completion: $0) }
        #expect(same?.emailVerified == true)
        let changed = try backend.value { storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "other@example.com",
                                                                                            audit: nil, mail: [], completion: $0) }
        #expect(changed?.emailVerified == false)
        #expect(try stored(alice, backend)?.emailVerified == false)
        let removed = try backend.value { storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: nil,
                                                                                            audit: nil, mail: [], completion: $0) }
        #expect(removed?.emailVerified == false && removed?.email == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aMailedRecoveryCodeSetsThePasswordRevokesEveryTokenAndQueuesTheNotice(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        for byte: UInt8 in [1, 2] {
            try backend.value { storage.acting(for: charge(alice.id)).storeToken(hash: hash(byte), for: alice.id,
                                                                                 completion: $0) }
        }
        #expect(try queue(recoveryMail(alice, code: 7), for: alice, backend).isQueued)
        let now = backend.clock.nowMs()
        func redeem(_ code: UInt8) throws -> MailedCodeRedemption {
            try backend.value { storage.acting(for: .daemon).redeemMailedCode(of: alice.id, codeHash: hash(code), nowMs: now,
                    newPasswordHash: Self.newHash, audit: AuditRecord(event: .recovered, username: "alice1",
                                                                      peer: AuditPeer(uid: 0, pid: 1, client: nil)),
                    mail: [mail(.passwordChanged, alice, message: 9)], completion: $0) }
        }
        // A verification code is no recovery code, nor the other way round.
        #expect(try verify(7, of: alice, atMs: now, backend) == .noLiveCode)
        #expect(try redeem(8) == .wrong(triesLeft: 4))
        #expect(try stored(alice, backend) != nil)
        #expect(try backend.value { storage.acting(for: .daemon).credential(of: alice.id, completion: $0) }?.passwordHash
                == placeholderHash)
        guard case .redeemed(let revoked) = try redeem(7) else {
            Issue.record("the right code was refused")
            return
        }
        #expect(Set(revoked) == [hash(1), hash(2)])
        #expect(try backend.value { storage.acting(for: .daemon).credential(of: alice.id, completion: $0) }?.passwordHash
                == Self.newHash)
        #expect(try redeem(7) == .noLiveCode)
        #expect(try listed(backend).map(\.kind) == [.passwordChanged, .recovery])
        let entries = try backend.value { storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 10), completion: $0) }
        #expect(entries.map(\.record.event) == [.mailQueued, .recovered],
                "only the redemption that happened has its entries: its own and its notice's")
    }

    // MARK: Audit

    @Test(arguments: BackendKind.allCases)
    func eachMailCallCommitsItsEntryOnlyWhenItHappened(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1", email: "alice@example.com")
        let peer = AuditPeer(uid: 1_000, pid: 42, client: "rosterctl")
        let queued = AuditRecord(event: .mailQueued, username: "alice1", peer: peer, reason: "verification")
        #expect(try queue(verificationMail(alice, code: 7), for: alice, intervalMs: Self.minute, audit: queued, backend).isQueued)
        #expect(try queue(verificationMail(alice, code: 8), for: alice, intervalMs: Self.minute, audit: queued, backend)
                == .tooSoon(retryAfterMs: Self.minute))
        let verified = AuditRecord(event: .emailVerified, username: "alice1", peer: peer)
        let now = backend.clock.nowMs()
        #expect(try verify(9, of: alice, atMs: now, audit: verified, backend) == .wrong(triesLeft: 4))
        #expect(try verify(7, of: alice, atMs: now, audit: verified, backend) == .verified(email: "alice@example.com"))
        let mail = try #require(try claim("sender", atMs: now, backend).first)
        let failed = AuditRecord(event: .mailFailed, username: "alice1", peer: AuditPeer(uid: 0, pid: 1, client: nil),
                                 outcome: .failed, reason: "verification")
        #expect(try !finish(mail.id, "somebody else", .failed(error: "exit_status"), audit: failed, backend))
        #expect(try finish(mail.id, "sender", .failed(error: "exit_status"), audit: failed, backend))
        let entries = try backend.value { backend.storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 10),
                                                                                             completion: $0) }
        #expect(entries.map(\.record) == [failed, verified, queued])
        #expect(backend.heard.entries.map(\.entry) == entries.reversed())
        #expect(backend.heard.entries.allSatisfy { $0.origin == .here })
    }

    @Test(arguments: BackendKind.allCases)
    func eachMailAWriteQueuedHasAnEntryOfItsOwnAfterTheWrites(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let peer = AuditPeer(uid: 1_000, pid: 42, client: "rosterctl")
        func entry(_ event: AuditEvent) -> AuditRecord { AuditRecord(event: event, username: "alice1", peer: peer) }
        let new = NewAccount(username: "alice1", display: "alice1", email: "alice@example.com",
                             passwordHash: placeholderHash)
        let placeholder = try backend.account("zed001", email: "zed@example.com")
        let alice = try backend.value {
            storage.acting(for: charge(placeholder.id)).createAccount(new, audit: entry(.register),
                    mail: [mail(.verification, placeholder, to: "alice@example.com", code: 1)], completion: $0)
        }
        let data = storage.acting(for: charge(alice.id))
        _ = try backend.value { data.changeEmail(of: alice.id, to: "new@example.com", audit: entry(.emailChanged),
                mail: [mail(.verification, alice, to: "new@example.com", code: 2),
                       mail(.emailChanged, alice, to: "alice@example.com")], completion: $0) }
        _ = try backend.value { data.changePassword(of: alice.id, to: Self.newHash, keeping: nil,
                audit: entry(.passwordChanged), mail: [mail(.passwordChanged, alice)], completion: $0) }
        try backend.value { data.replaceRecoveryCodes(of: alice.id, hashes: [hash(9)], audit: entry(.recoveryCodesCreated),
                                                      mail: [mail(.recoveryCodesMade, alice)], completion: $0) }
        _ = try backend.value { data.redeemRecoveryCode(of: alice.id, codeHash: hash(9), newPasswordHash: Self.newHash,
                audit: entry(.recovered), mail: [mail(.passwordChanged, alice)], completion: $0) }
        try backend.value { data.removeTOTP(of: alice.id, audit: entry(.totpDisabled), mail: [mail(.totpDisabled, alice)],
                                            completion: $0) }
        let moved = try #require(try stored(alice, backend))
        #expect(try queue(recoveryMail(moved, code: 3), for: moved, backend).isQueued)
        #expect(try backend.value { data.redeemMailedCode(of: alice.id, codeHash: hash(3), nowMs: backend.clock.nowMs(),
                newPasswordHash: Self.newHash, audit: entry(.recovered), mail: [mail(.passwordChanged, moved)],
                completion: $0) }.isRedeemed)
        // Writes that changed nothing queue no mail, and so have no mail entries.
        _ = try backend.value { data.redeemRecoveryCode(of: alice.id, codeHash: hash(9), newPasswordHash: Self.newHash,
                audit: entry(.recovered), mail: [mail(.passwordChanged, alice)], completion: $0) }
        _ = try backend.value { data.changeEmail(of: alice.id + 1_000, to: "x@example.com", audit: entry(.emailChanged),
                mail: [mail(.emailChanged, alice)], completion: $0) }
        let deleted = try backend.value { data.deleteAccount(alice.id, failureKeys: [], audit: entry(.deleted),
                                                             mail: [mail(.accountDeleted, moved)], completion: $0) }
        #expect(deleted != nil)
        let entries = try backend.value { storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 100),
                                                                                    completion: $0) }
        let queued = AuditEvent.mailQueued
        #expect(entries.reversed().map { [$0.record.event.rawValue, $0.record.reason ?? ""] } == [
            ["register", ""], [queued.rawValue, "verification"],
            ["email_changed", ""], [queued.rawValue, "verification"], [queued.rawValue, "email_changed"],
            ["password_changed", ""], [queued.rawValue, "password_changed"],
            ["recovery_codes_created", ""], [queued.rawValue, "recovery_codes_made"],
            ["recovered", ""], [queued.rawValue, "password_changed"],
            ["totp_disabled", ""], [queued.rawValue, "totp_disabled"],
            ["recovered", ""], [queued.rawValue, "password_changed"],
            ["deleted", ""], [queued.rawValue, "account_deleted"],
        ])
        #expect(entries.filter { $0.record.event == queued }.allSatisfy { $0.record.username == "alice1" && $0.record.peer == peer })
        #expect(backend.heard.entries.map(\.entry) == entries.reversed())
        #expect(backend.heard.entries.allSatisfy { $0.origin == .here })
        // Every mail queued has its entry: the outbox holds as many as there are mail entries.
        #expect(try listed(backend).count == entries.filter { $0.record.event == queued }.count - 2,
                "the three code mails went with the account, and the recovery mail, asked for with no entry, is one more")
    }

    @Test(arguments: BackendKind.allCases)
    func aMailTheCapLeftOutHasNoEntry(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1", email: "alice@example.com")
        for index in 0..<(MailLimits.queuedPerAccount - 1) {
            #expect(try queue(verificationMail(alice, code: UInt8(index)), for: alice, backend).isQueued)
        }
        let peer = AuditPeer(uid: 1_000, pid: 42, client: nil)
        _ = try backend.value {
            backend.storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "new@example.com",
                    audit: AuditRecord(event: .emailChanged, username: "alice1", peer: peer),
                    mail: [mail(.verification, alice, to: "new@example.com", code: 40),
                           mail(.emailChanged, alice, to: "alice@example.com")], completion: $0)
        }
        let entries = try backend.value { backend.storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 10),
                                                                                            completion: $0) }
        #expect(entries.map(\.record) == [AuditRecord(event: .mailQueued, username: "alice1", peer: peer,
                                                       reason: "verification"),
                                           AuditRecord(event: .emailChanged, username: "alice1", peer: peer)])
    }

    // MARK: Claims

    @Test(arguments: BackendKind.allCases)
    func aClaimIsOneClaimantsUntilItsLeaseEndsAndOnlyThatClaimantFinishesIt(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        var ids: [MailID] = []
        for byte: UInt8 in 1...3 {
            _ = try backend.value { storage.acting(for: charge(alice.id)).changePassword(of: alice.id, to: Self.newHash,
                    keeping: nil, audit: nil, mail: [mail(.passwordChanged, alice, message: byte)], completion: $0) }
            backend.clock.advance(byMs: 1)
        }
        ids = try listed(backend).map(\.id).reversed()
        let t = backend.clock.nowMs()
        // Not due before it was queued.
        #expect(try claim("a", atMs: t - 10_000, backend) == [])
        let byA = try claim("a", atMs: t, limit: 2, backend)
        #expect(byA.map(\.id) == Array(ids.prefix(2)), "oldest due first")
        #expect(byA.map(\.attempts) == [0, 0])
        #expect(byA.first?.queuedAtMs == t - 3 && byA.first?.account == alice.id && byA.first?.kind == .passwordChanged)
        #expect(try claim("b", atMs: t + 1, backend).map(\.id) == [ids[2]])
        #expect(try claim("b", atMs: t + Self.lease - 1, backend) == [])
        // A's claim expired (its daemon died, say): B takes those rows, and A's finish changes nothing.
        #expect(try claim("b", atMs: t + Self.lease, backend).map(\.id) == Array(ids.prefix(2)))
        #expect(try !finish(ids[0], "a", .sent(atMs: t + Self.lease), backend))
        #expect(try finish(ids[0], "b", .sent(atMs: t + Self.lease + 5), backend))
        #expect(try !finish(ids[0], "b", .sent(atMs: t + Self.lease + 6), backend), "a sent mail is finished once")
        // A retry is due again at its time, with the attempt counted and the error kept.
        #expect(try finish(ids[1], "b", .retry(nextAttemptAtMs: t + 100_000, error: "exit_status_75"), backend))
        // A claim that was never finished lets its row go at its lease's end, claimed again as it was.
        #expect(try claim("c", atMs: t + 99_999, backend).map(\.id) == [ids[2]])
        let retried = try claim("c", atMs: t + 100_000, backend)
        #expect(retried.map(\.id) == [ids[1]] && retried.first?.attempts == 1)
        #expect(try finish(ids[1], "c", .failed(error: "gave_up"), backend))
        // A failed mail stays failed: never claimed again, never finished again.
        #expect(try claim("d", atMs: .max / 2, backend).map(\.id) == [ids[2]])
        #expect(try !finish(ids[1], "c", .sent(atMs: t), backend))
        #expect(try counts(backend) == MailCounts(queued: 1, failed: 1, sent: 1))

        let all = try listed(backend)
        #expect(all.map(\.id) == ids.reversed(), "newest first")
        #expect(all.map(\.status) == [.queued, .failed, .sent])
        #expect(all.map(\.attempts) == [0, 2, 1])
        #expect(all[1].lastError == "gave_up" && all[1].nextAttemptAtMs == nil && all[1].sentAtMs == nil)
        #expect(all[2].sentAtMs == t + Self.lease + 5 && all[2].nextAttemptAtMs == nil && all[2].lastError == nil)
        #expect(all[0].nextAttemptAtMs == t - 1 && all[0].sentAtMs == nil)
        #expect(try listed(backend, status: .failed).map(\.id) == [ids[1]])
        #expect(try listed(backend, status: .queued).map(\.id) == [ids[2]])
        #expect(try listed(backend, limit: 2).map(\.id) == [ids[2], ids[1]])
        #expect(try listed(backend, limit: 0) == [])
    }

    // MARK: Deletion

    @Test(arguments: BackendKind.allCases)
    func aDeletionTakesTheCodesAndCodeMailsAndKeepsTheNotices(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        let bob = try backend.account("bobby1", email: "bob@example.com")
        #expect(try queue(verificationMail(alice, code: 1), for: alice, backend).isQueued)
        #expect(try queue(recoveryMail(alice, code: 2), for: alice, backend).isQueued)
        #expect(try queue(verificationMail(bob, code: 3), for: bob, backend).isQueued)
        _ = try backend.value { storage.acting(for: charge(alice.id)).changePassword(of: alice.id, to: Self.newHash,
                keeping: nil, audit: nil, mail: [mail(.passwordChanged, alice)], completion: $0) }
        // A code mail already handed off is history, not a queued mail: it stays too.
        let sentOne = try #require(try claim("sender", atMs: backend.clock.nowMs(), limit: 1, backend).first)
        #expect(try finish(sentOne.id, "sender", .sent(atMs: backend.clock.nowMs()), backend))

        let deleted = try backend.value {
            storage.acting(for: charge(alice.id)).deleteAccount(alice.id, failureKeys: [], audit: nil,
                                                                mail: [mail(.accountDeleted, alice)], completion: $0)
        }
        #expect(deleted?.account.id == alice.id)
        let left = try listed(backend)
        #expect(left.map(\.kind) == [.accountDeleted, .passwordChanged, .verification, .verification])
        #expect(left.map(\.account) == [alice.id, alice.id, bob.id, alice.id])
        #expect(left.map(\.status) == [.queued, .queued, .queued, .sent])
        // The notice is handed off as any mail, its account gone.
        let claimed = try claim("sender", atMs: backend.clock.nowMs(), backend)
        #expect(claimed.map(\.kind) == [.verification, .passwordChanged, .accountDeleted])
        #expect(try verify(1, of: alice, atMs: backend.clock.nowMs(), backend) == .gone)
        #expect(try backend.value { storage.acting(for: .daemon).redeemMailedCode(of: alice.id, codeHash: hash(2),
                nowMs: backend.clock.nowMs(), newPasswordHash: Self.newHash, audit: nil, mail: [], completion: $0) }
                == .noLiveCode)
        // Bob's code is untouched.
        #expect(try verify(3, of: bob, atMs: backend.clock.nowMs(), backend) == .verified(email: "bob@example.com"))
    }

    // MARK: Two daemons on one database

    @Test func twoDaemonsOnOnePostgreSQLClaimEveryMailExactlyOnce() throws {
        let backend = try BackendKind.postgres.make()
        let other = try backend.reopened()
        let storage = backend.storage
        var accounts: [Account] = []
        for index in 0..<10 { accounts.append(try backend.account("user\(index)", email: "user\(index)@example.com")) }
        for account in accounts {
            for message: UInt8 in 1...10 {
                try backend.value { storage.acting(for: charge(account.id)).removeTOTP(of: account.id, audit: nil,
                        mail: [mail(.totpDisabled, account, message: message)], completion: $0) }
            }
        }
        #expect(try counts(backend).queued == 100)
        let t = backend.clock.nowMs()
        // Both daemons claim in rounds of 7, each asking again as soon as it is answered, until neither gets any.
        var claimed: [String: [MailID]] = ["one": [], "two": []]
        var asking: Set<String> = []
        var done: Set<String> = []
        func ask(_ name: String, _ daemon: any Storage) {
            asking.insert(name)
            daemon.acting(for: .daemon).claimDueMail(claimant: name, nowMs: t, leaseMs: Self.lease, limit: 7,
                                                     completion: backend.completion { result in
                asking.remove(name)
                let ids = (try? result.get().map(\.id)) ?? []
                if case .failure(let failure) = result { Issue.record("\(name) failed to claim: \(failure)") }
                claimed[name, default: []] += ids
                if ids.isEmpty { done.insert(name) } else { ask(name, daemon) }
            })
        }
        ask("one", storage)
        ask("two", other)
        try backend.run(until: { done.count == 2 && asking.isEmpty })
        let all = (claimed["one"] ?? []) + (claimed["two"] ?? [])
        #expect(all.count == 100)
        #expect(Set(all).count == 100, "no mail claimed twice")
        #expect(Set(all) == Set(try listed(backend).map(\.id)))
        #expect(!(claimed["one"] ?? []).isEmpty && !(claimed["two"] ?? []).isEmpty, "both daemons took part")
        // A second round finds nothing until the leases end; then everything again, once.
        #expect(try claim("one", atMs: t + Self.lease - 1, backend) == [])
        #expect(try claim("two", atMs: t + Self.lease - 1, on: other, backend) == [])
        let again = try claim("two", atMs: t + Self.lease, on: other, backend)
        #expect(Set(again.map(\.id)) == Set(all))
    }

    @Test func wrongTriesOnTwoDaemonsAllCount() throws {
        let backend = try BackendKind.postgres.make()
        let other = try backend.reopened()
        let alice = try backend.account("alice1", email: "alice@example.com")
        #expect(try queue(verificationMail(alice, code: 7), for: alice, backend).isQueued)
        let now = backend.clock.nowMs()
        var answers: [MailCodeCheck] = []
        for index in 0..<MailLimits.triesPerCode {
            let daemon = index.isMultiple(of: 2) ? backend.storage : other
            daemon.acting(for: charge(alice.id)).verifyEmail(of: alice.id, codeHash: hash(8), nowMs: now, audit: nil,
                                                             completion: backend.completion { result in
                answers.append((try? result.get()) ?? .gone)
            })
        }
        try backend.run(until: { answers.count == MailLimits.triesPerCode })
        #expect(answers.sorted { "\($0)" < "\($1)" } == (0..<MailLimits.triesPerCode).map { .wrong(triesLeft: $0) })
        #expect(try verify(7, of: alice, atMs: now, backend) == .noLiveCode)
    }

    @Test func aCodeMailOnTwoDaemonsAtOnceIsQueuedOnce() throws {
        let backend = try BackendKind.postgres.make()
        let other = try backend.reopened()
        let alice = try backend.account("alice1", email: "alice@example.com")
        var answers: [CodeMailQueueing] = []
        for (daemon, code) in [(backend.storage, UInt8(1)), (other, 2), (backend.storage, 3), (other, 4)] {
            daemon.acting(for: charge(alice.id)).queueCodeMail(of: alice.id, verificationMail(alice, code: code),
                                                               minimumIntervalMs: Self.minute, audit: nil,
                                                               completion: backend.completion { result in
                answers.append((try? result.get()) ?? .gone)
            })
        }
        try backend.run(until: { answers.count == 4 })
        #expect(answers.filter(\.isQueued).count == 1)
        #expect(answers.filter { $0 == .tooSoon(retryAfterMs: Self.minute) }.count == 3)
        #expect(try counts(backend).queued == 1)
    }
}

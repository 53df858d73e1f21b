import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// What the account procedures queue as mail (protocol.md §Email), on an in-memory storage with a manual wall
/// clock and scheduler: the codes they mail and take back, the notices of each change, and the limits.
@Suite("Mail from the account procedures")
struct MailProceduresTests {
    let clock = ManualWallClock(nowMs: 1_796_144_048_000)
    let scheduler = ManualScheduler()
    let storage: InMemoryStorage
    let passwords = FakePasswordWork()
    let accounts: AccountProcedures
    let outbox: MailOutbox
    let peer = AuditPeer(uid: 1000, pid: 4242, client: nil)
    let charge = QueueCharge(payer: .peer(1000), connection: 1)
    /// How often a write told the sender that mail was queued.
    let pokes = Locked(0)

    init() {
        storage = InMemoryStorage(clock: clock)
        accounts = AccountProcedures(storage: storage, passwords: passwords, policy: .seed, logger: Logger(level: .emerg),
                                     secrets: testSecrets, clock: clock)
        outbox = MailOutbox(settings: MailSettings(sendmail: "/usr/sbin/sendmail"), hostName: "roster.example.org",
                            secrets: testSecrets, wallClock: clock, scheduler: scheduler, logger: Logger(level: .emerg))
        outbox.onCommitted = { [pokes] in pokes.withLock { $0 += 1 } }
        accounts.mail = outbox
    }

    // MARK: Helpers

    func account(_ name: String = "alice1", email: String? = "alice@example.com", verified: Bool = false,
                 password: String = "secret1") throws -> Account {
        var made: Result<Account, StorageFailure>?
        storage.acting(for: charge).createAccount(NewAccount(username: name, display: name, email: email,
                                                             passwordHash: FakePasswordWork.hash(of: password))) { made = $0 }
        var account = try #require(made).get()
        if verified { account = try verify(account) }
        return account
    }

    /// `account` with its email verified the way a user does it: a code mailed, then typed back.
    func verify(_ account: Account) throws -> Account {
        try now { accounts.sendVerification(of: account, peer: peer, charge: charge, locale: .en, completion: $0) }.get()
        let code = try #require(try mails().last { $0.kind == .verification }?.code)
        clock.advance(byMs: AccountProcedures.codeMailIntervalMs)
        return try now { accounts.verifyEmail(of: account, code: code, peer: peer, charge: charge, completion: $0) }.get()
    }

    func now<T>(_ operation: (@escaping (Result<T, RosterError>) -> Void) -> Void) throws -> Result<T, RosterError> {
        var answer: Result<T, RosterError>?
        operation { answer = $0 }
        return try #require(answer)
    }

    /// A queued mail as the sender would hand it off: opened, its code (if any) read from the body.
    struct Opened {
        let kind: MailKindName
        let recipient: String
        let headers: [String]
        let body: String
        let code: String?
    }

    /// Every mail queued so far (each claimed once, so a call sees only the ones queued since the last).
    func mails() throws -> [Opened] {
        var claimed: [ClaimedMail] = []
        storage.acting(for: .daemon).claimDueMail(claimant: "test", nowMs: .max / 2, leaseMs: 1, limit: 1_000) {
            claimed = (try? $0.get()) ?? []
        }
        return try claimed.map { mail in
            let (headers, body) = try openedMail(mail.sealedMessage)
            let carries = mail.kind == .verification || mail.kind == .recovery
            return Opened(kind: mail.kind, recipient: mail.recipient, headers: headers, body: body,
                          code: carries ? try mailedCode(in: body) : nil)
        }
    }

    func listed() -> [MailListing] {
        var items: [MailListing] = []
        storage.acting(for: .daemon).listMail(status: nil, limit: 1_000) { items = (try? $0.get()) ?? [] }
        return items
    }

    func auditEvents() -> [String] {
        var entries: [AuditEntry] = []
        storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 1_000)) { entries = (try? $0.get()) ?? [] }
        return entries.map(\.record.event.rawValue)
    }

    func failures(of account: Account) -> Int {
        let key = AccountProcedures.failureKey(of: account)
        var times: RecentFailures?
        storage.acting(for: charge).recentFailures(keys: [key], windowMs: 300_000) { times = try? $0.get() }
        return times?.times[key]?.count ?? -1
    }

    func register(_ name: String, email: String, locale: RosterLocale = .en) throws -> Account {
        var outcome: Result<Registration<Account>.Registered, RosterError>?
        accounts.register(.judging(username: name, password: Secret("secret1-long"), email: email, policy: .seed),
                          peer: peer, charge: charge, locale: locale, announce: { _ in }) { outcome = $0 }
        return try #require(outcome).get().account
    }

    // MARK: Verification

    @Test func aRegistrationWithAnEmailMailsACodeInTheSessionsLanguageWhichVerifiesIt() throws {
        let bob = try register("bob123", email: "Bob@Example.com", locale: .vi)
        #expect(!bob.emailVerified)
        let mail = try #require(try mails().first)
        #expect(mail.kind == .verification && mail.recipient == "bob@example.com")
        #expect(mail.headers.contains("Content-Language: vi"))
        #expect(pokes.withLock { $0 } == 1)
        let code = try #require(mail.code)
        let verified = try now { accounts.verifyEmail(of: bob, code: code, peer: peer, charge: charge,
                                                      completion: $0) }.get()
        #expect(verified.emailVerified && verified.email == "bob@example.com")
        #expect(auditEvents().contains("email_verified"))
        // Used up: the same code again is a wrong one, and counts.
        let again = try now { accounts.verifyEmail(of: bob, code: code, peer: peer, charge: charge, completion: $0) }
        #expect(again == .failure(.invalidCode))
        #expect(failures(of: bob) == 1)
    }

    @Test func aRegistrationWithoutAnEmailOrWithMailOffMailsNothing() throws {
        _ = try register("carol1", email: "")
        outbox.settings = MailSettings()
        _ = try register("dave12", email: "dave@example.com")
        #expect(listed().isEmpty)
        #expect(pokes.withLock { $0 } == 0)
    }

    @Test func aWrongCodeIsInvalidCodeAndAFailedLogInAndFiveKillTheCode() throws {
        let alice = try account()
        try now { accounts.sendVerification(of: alice, peer: peer, charge: charge, locale: .en, completion: $0) }.get()
        let code = try #require(try mails().first?.code)
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 0..<MailLimits.triesPerCode {
            #expect(try now { accounts.verifyEmail(of: alice, code: wrong, peer: peer, charge: charge, completion: $0) }
                    == .failure(.invalidCode))
        }
        #expect(failures(of: alice) == MailLimits.triesPerCode)
        // Dead now, even the right one.
        #expect(try now { accounts.verifyEmail(of: alice, code: code, peer: peer, charge: charge, completion: $0) }
                == .failure(.invalidCode))
        // Not six digits: refused the same way, and counted.
        #expect(try now { accounts.verifyEmail(of: alice, code: "abc", peer: peer, charge: charge, completion: $0) }
                == .failure(.invalidCode))
    }

    @Test func aVerificationNeedsAnEmailAndMailAndWaitsAMinuteAfterTheLast() throws {
        let nobody = try account("eve123", email: nil)
        #expect(try now { accounts.sendVerification(of: nobody, peer: peer, charge: charge, locale: .en, completion: $0) }.map { true }
                == .failure(.noEmail))
        let alice = try account()
        try now { accounts.sendVerification(of: alice, peer: peer, charge: charge, locale: .en, completion: $0) }.get()
        clock.advance(byMs: 59_000)
        #expect(try now { accounts.sendVerification(of: alice, peer: peer, charge: charge, locale: .en, completion: $0) }.map { true }
                == .failure(.rateLimited(retryAfterMs: 1_000)))
        clock.advance(byMs: 1_000)
        try now { accounts.sendVerification(of: alice, peer: peer, charge: charge, locale: .en, completion: $0) }.get()
        // The newer code replaced the older: only it verifies.
        let codes = try mails().compactMap(\.code)
        try #require(codes.count == 2)
        if codes[0] != codes[1] {
            #expect(try now { accounts.verifyEmail(of: alice, code: codes[0], peer: peer, charge: charge,
                                                   completion: $0) } == .failure(.invalidCode))
        }
        #expect(try now { accounts.verifyEmail(of: alice, code: codes[1], peer: peer, charge: charge, completion: $0) }
                .map(\.emailVerified) == .success(true))
        #expect(auditEvents().filter { $0 == "mail_queued" }.count == 2)
        outbox.settings = MailSettings()
        #expect(try now { accounts.sendVerification(of: alice, peer: peer, charge: charge, locale: .en, completion: $0) }.map { true }
                == .failure(.mailUnavailable))
    }

    @Test func oneRequesterMaySendTenCodeMailsAMinute() throws {
        for index in 0..<MailPeerLimit.perMinute {
            let user = try account("user\(index)x", email: "u\(index)@example.com")
            try now { accounts.sendVerification(of: user, peer: peer, charge: charge, locale: .en, completion: $0) }.get()
        }
        let one = try account("user99x", email: "u99@example.com")
        guard case .failure(.rateLimited(let wait)) = try now({
            accounts.sendVerification(of: one, peer: peer, charge: charge, locale: .en, completion: $0)
        }) else {
            Issue.record("the eleventh code mail of a minute went out")
            return
        }
        #expect(wait > 0 && wait <= 60_000)
        // Another requester is not held up by this one.
        let other = AuditPeer(uid: 1001, pid: 1, client: nil)
        try now { accounts.sendVerification(of: one, peer: other, charge: charge, locale: .en, completion: $0) }.get()
        scheduler.advance(by: .seconds(60))
        let two = try account("user98x", email: "u98@example.com")
        try now { accounts.sendVerification(of: two, peer: peer, charge: charge, locale: .en, completion: $0) }.get()
    }

    // MARK: Recovery

    @Test func recoveryByMailSetsANewPasswordOnceAndTellsTheOwner() throws {
        let alice = try account(verified: true)
        _ = try mails()
        try now { accounts.startRecovery(username: "ALICE1", peer: peer, charge: charge, locale: .ko, completion: $0) }
            .get()
        let mail = try #require(try mails().first)
        #expect(mail.kind == .recovery && mail.headers.contains("Content-Language: ko"))
        let code = try #require(mail.code)
        #expect(mail.body.contains("http://127.0.0.1:8080/recover?user=alice1&code=\(code)"))
        let recovered = try now { accounts.recover(username: "alice1", code: code, newPassword: Secret("brand-new-22"),
                                                   peer: peer, charge: charge, locale: .ko, completion: $0) }.get()
        #expect(recovered.account.id == alice.id)
        let notices = try mails()
        #expect(notices.map(\.kind) == [.passwordChanged] && notices.first?.headers.contains("Content-Language: ko") == true)
        // Used once.
        #expect(try now { accounts.recover(username: "alice1", code: code, newPassword: Secret("other-new-33"),
                                           peer: peer, charge: charge, completion: $0) }.map(\.account.id)
                == .failure(.invalidCode))
    }

    @Test func recoveryStartAnswersAlikeAndMailsOnlyAVerifiedUnlockedAccount() throws {
        _ = try account("unver1", email: "unver@example.com")
        let locked = try account("locked1", email: "locked@example.com", verified: true)
        storage.acting(for: charge).lockAccount(locked.id, reason: nil, audit: nil) { _ in }
        _ = try mails()
        for name in ["nobody9", "unver1", "locked1", "unver@example.com"] {
            #expect(try now { accounts.startRecovery(username: name, peer: peer, charge: charge, locale: .en,
                                                     completion: $0) }.map { true } == .success(true))
        }
        #expect(try mails().isEmpty)
        outbox.settings = MailSettings()
        #expect(try now { accounts.startRecovery(username: "nobody9", peer: peer, charge: charge, locale: .en,
                                                 completion: $0) }.map { true } == .failure(.mailUnavailable))
    }

    @Test func aMailedCodeSentBeforeALockOrAnEmailChangeNoLongerRecovers() throws {
        let alice = try account(verified: true)
        _ = try mails()
        try now { accounts.startRecovery(username: "alice1", peer: peer, charge: charge, locale: .en, completion: $0) }.get()
        let code = try #require(try mails().first?.code)
        _ = try now { accounts.changeEmail(of: alice, password: Secret("secret1"), email: "new@example.com", peer: peer,
                                           charge: charge, completion: $0) }.get()
        #expect(try now { accounts.recover(username: "alice1", code: code, newPassword: Secret("brand-new-22"),
                                           peer: peer, charge: charge, completion: $0) }.map(\.account.id)
                == .failure(.invalidCode))
    }

    // MARK: Notices

    @Test func eachChangeTellsTheAddressItConcernsAndNeverCarriesACode() throws {
        let alice = try account()
        _ = try now { accounts.changePassword(of: alice, current: Secret("secret1"), new: Secret("better-22x"),
                                              keeping: nil, peer: peer, charge: charge, completion: $0) }.get()
        let changed = try now { accounts.changeEmail(of: alice, password: Secret("better-22x"),
                                                     email: "alice@new.example", peer: peer, charge: charge,
                                                     completion: $0) }.get()
        #expect(!changed.emailVerified)
        _ = try now { accounts.replaceRecoveryCodes(of: changed, password: Secret("better-22x"), peer: peer,
                                                    charge: charge, completion: $0) }.get()
        let sent = try mails()
        #expect(sent.map(\.kind) == [.passwordChanged, .emailChanged, .verification, .recoveryCodesMade])
        #expect(sent.map(\.recipient) == ["alice@example.com", "alice@example.com", "alice@new.example",
                                           "alice@new.example"])
        for notice in sent where notice.kind != .verification {
            #expect(!notice.body.contains("http") && notice.body.split(whereSeparator: { !$0.isNumber })
                .allSatisfy { $0.count != 6 })
        }
        _ = try now { accounts.deleteAccount(changed, password: Secret("better-22x"), peer: peer, charge: charge,
                                             completion: $0) }.get()
        #expect(try mails().map(\.kind) == [.accountDeleted])
        // Each mail has its entry, right after its change's.
        #expect(auditEvents().reversed() == ["password_changed", "mail_queued", "email_changed", "mail_queued",
                                             "mail_queued", "recovery_codes_created", "mail_queued", "deleted",
                                             "mail_queued"])
    }

    @Test func aChangeGoesAheadWithoutItsNoticeWhenMailIsOffOrTheAccountHasNoEmail() throws {
        let nobody = try account("frank1", email: nil)
        _ = try now { accounts.changePassword(of: nobody, current: Secret("secret1"), new: Secret("better-22x"),
                                              keeping: nil, peer: peer, charge: charge, completion: $0) }.get()
        outbox.settings = MailSettings()
        let alice = try account()
        _ = try now { accounts.changePassword(of: alice, current: Secret("secret1"), new: Secret("better-22x"),
                                              keeping: nil, peer: peer, charge: charge, completion: $0) }.get()
        #expect(listed().isEmpty)
    }
}

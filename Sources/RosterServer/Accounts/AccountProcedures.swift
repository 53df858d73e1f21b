import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

/// Runs Core's account procedures (`Registration`, `LogIn`) against the storage and the password work, and
/// answers the register and log-in forms' checks; the methods and the forms' runners both come here, so each
/// rule is carried out one way. Holds the log-in gate that every attempt on this daemon shares.
///
/// Every completion runs on the loop thread, once, whether the storage answered before its call returned or
/// later. Session changes (announcing an account, logging a session in) are the caller's: it knows the session.
final class AccountProcedures {
    /// The storage an account procedure needs: accounts, session tokens, failed log-ins and the life of an account
    /// and what an administrator does to it, nothing of contacts. Audited: each change's entry commits with it.
    typealias Backend = AccountStorage & SessionTokenStorage & LoginFailureStorage & AccountLifeStorage & AdminStorage
        & AuditStorage & MailStorage & PasskeyStorage & AppPasswordStorage

    /// Each call bound to the payer of the request it serves.
    let storage: BoundStorage<any Backend>
    let passwords: any PasswordWork
    let logger: Logger
    /// The key file's subkeys: TOTP seals and recovery-code hashes.
    let secrets: AccountSecrets
    /// Wall time for TOTP steps (injected, so tests fix it).
    let clock: any WallClock
    var gate = LoginGate()
    /// Which failed entries each requester writes this minute (`[Audit] FailedLoginEntriesPerMinute=`).
    var failedEntries: FailedLoginEntryCap<AuditPeer>
    /// The policy in force; a procedure keeps the one it started under.
    var policy: Policy
    /// Told of the tokens a new log-in pushed out past `[Login] MaxSessionsPerUser=`, so the sessions holding
    /// them end (`session` `user: null`) as on any revocation; the server sets it.
    var tokensPushedOut: ([[UInt8]]) -> Void = { _ in }
    /// What a change mails, and the code mails' requester limit; nil, as in tests that send none, is mail off.
    var mail: MailOutbox?

    init(storage: any Storage, passwords: any PasswordWork, policy: Policy, logger: Logger,
         secrets: AccountSecrets, clock: any WallClock = SystemWallClock(), audit: AuditSettings = AuditSettings()) {
        self.storage = BoundStorage { storage.acting(for: $0) }
        self.failedEntries = FailedLoginEntryCap(perMinute: audit.failedLoginEntriesPerMinute)
        self.passwords = passwords
        self.policy = policy
        self.logger = logger
        self.secrets = secrets
        self.clock = clock
    }

    /// Log-in attempts in flight under `key`, for tests.
    func attemptsInFlight(_ key: String) -> Int { gate.attemptsInFlight(key) }

    // MARK: Checks

    /// A register or log-in form's question, answered by the storage or libpwquality; `.failed` when it could
    /// not be asked (the field then shows `check_failed` rather than a guess).
    func check(_ check: Check, charge: QueueCharge, completion: @escaping (CheckResult) -> Void) {
        ask(check, charge: charge) { result in
            switch result {
            case .success(let answer): completion(answer)
            case .failure: completion(.failed)
            }
        }
    }

    /// The answer to `check`, or why the storage could not give it.
    private func ask(_ check: Check, charge: QueueCharge, completion: @escaping (Result<CheckResult, RosterError>) -> Void) {
        let data = storage.acting(for: charge)
        switch check {
        case .usernameAvailable(let canonical):
            data.isUsernameTaken(canonical) { completion(Self.result($0, yes: .taken, no: .available)) }
        case .emailAvailable(let canonical):
            data.isEmailTaken(canonical) { completion(Self.result($0, yes: .taken, no: .available)) }
        case .accountExists(let canonical):
            data.accountExists(AccountIdentifier(loginIdentifier: canonical)) {
                completion(Self.result($0, yes: .exists, no: .missing))
            }
        case .passwordQuality(let password, let username):
            passwords.checkQuality(password, username: username, charge: charge) { completion(.success($0)) }
        }
    }

    private static func result(_ answer: Result<Bool, StorageFailure>, yes: CheckResult,
                               no: CheckResult) -> Result<CheckResult, RosterError> {
        answer.map { $0 ? yes : no }.mapError(\.rosterError)
    }

    // MARK: Registration

    /// Carries `registration` out for `peer`; `announce` runs once the account exists, before the completion. An
    /// email registered with it is sent a verification code in `locale` (`codeMailIfAny`), queued with the account.
    func register(_ registration: Registration<Account>, peer: AuditPeer, charge: QueueCharge,
                  locale: RosterLocale = .default, announce: @escaping (Account) -> Void,
                  completion: @escaping (Result<Registration<Account>.Registered, RosterError>) -> Void) {
        var registration = registration
        let driver = MachineDriver<Registration<Account>.Fact, Registration<Account>.Effect> { registration.step($0) }
        driver.perform = { [self] effect, driver in
            switch effect {
            case .check(let check):
                ask(check, charge: charge) { result in
                    driver.feed(result.map { .checked($0) }.orFailed())
                }
            case .hash(let password):
                passwords.hash(password, charge: charge) { result in
                    driver.feed(result.map { .hashed(passwordHash: $0) }.orFailed())
                }
            case .create(let username, let email, let hash):
                let account = NewAccount(username: username, display: username, email: email, passwordHash: hash)
                let entry = AuditRecord(event: .register, username: username, peer: peer)
                // The storage files the mail under the account it creates: its id is not known yet.
                let mail = email.map {
                    codeMailIfAny(.verifyEmail, to: MailRecipient(account: 0, display: username, email: $0,
                                                                  locale: locale), peer: peer)
                } ?? []
                storage.acting(for: charge).createAccount(account, audit: entry, mail: mail) { [self] result in
                    if case .success = result, !mail.isEmpty { self.mail?.committed() }
                    driver.feed(result.map { .created($0) }.orFailed())
                }
            case .announce(let account):
                announce(account)
            case .issueToken(let account):
                // The registration's entry says it all: its first token has none of its own.
                issueToken(for: account, peer: peer, entry: nil, charge: charge) {
                    driver.feed($0.map { .tokenIssued($0) }.orFailed())
                }
            case .finish(let result):
                completion(result)
            }
        }
        driver.perform(registration.start())
    }

    // MARK: Log-in

    /// Carries one log-in attempt of `peer` out under the gate, with its entry: `login` succeeded with the token,
    /// or failed with why (see `FailedEntryReason`).
    func logIn(_ request: LogInRequest, peer: AuditPeer, charge: QueueCharge,
               completion: @escaping (Result<LogIn<Account>.SignedIn, RosterError>) -> Void) {
        let data = storage.acting(for: charge)
        var attempt = LogIn<Account>(request, requester: peer.requester, policy: policy)
        // What the entry of a refusal says: whose account (nil: none), and whether a code was what failed.
        var username: String?
        var codeChecked = false
        let first = attempt.start()
        let driver = MachineDriver<LogIn<Account>.Fact, LogIn<Account>.Effect> { [self] fact in
            attempt.step(fact, gate: &gate)
        }
        driver.perform = { [self] effect, driver in
            switch effect {
            case .findAccount(let identifier):
                data.credential(for: AccountIdentifier(loginIdentifier: identifier)) { result in
                    if case .success(let found) = result { username = found?.account.username }
                    driver.feed(result.map { found in
                        .accountFound(found.map {
                            LogIn.Found(account: $0.account, username: $0.account.username, passwordHash: $0.passwordHash,
                                        totp: $0.totp, locked: $0.account.locked)
                        })
                    }.orFailed())
                }
            case .readFailures(let keys, let windowMs):
                data.recentFailures(keys: keys, windowMs: windowMs) { result in
                    driver.feed(result.map { .failuresRead(times: $0.times, nowMs: $0.nowMs) }.orFailed())
                }
            case .verify(let password, let hash):
                passwords.verify(password, against: hash, charge: charge) { driver.feed($0.map { .verified($0) }.orFailed()) }
            case .recordFailure(let keys):
                let reason: FailedEntryReason = codeChecked ? .invalidCode : username == nil ? .unknownUser : .wrongPassword
                let entry = failedEntry(.login, username: username, reason: reason, peer: peer, method: .password)
                data.recordFailure(keys: keys, audit: entry) { driver.feed($0.map { .failureRecorded }.orFailed()) }
            case .replaceHash(let hash, let account):
                data.replacePasswordHash(hash, of: account.id) { [logger] result in
                    if case .success = result {
                        logger.info("password hash upgraded to the parameters in force", [("ROSTER_USER", account.username)])
                    }
                    driver.feed(result.map { .hashReplaced }.orFailed())
                }
            case .verifyCode(let code, let totp, let account):
                codeChecked = true
                verifyCode(code, totp: totp, of: account, charge: charge) { driver.feed($0) }
            case .issueToken(let account):
                let entry = AuditRecord(event: .login, username: account.username, peer: peer, method: .password)
                issueToken(for: account, peer: peer, entry: entry, charge: charge) {
                    driver.feed($0.map { .tokenIssued($0) }.orFailed())
                }
            case .finish(let result):
                guard case .failure(let error) = result, let reason = Self.unwrittenRefusal(error) else {
                    return completion(result)
                }
                appendFailedEntry(.login, username: username, reason: reason, peer: peer, method: .password,
                                  charge: charge) {
                    completion(result)
                }
            }
        }
        driver.perform(first)
    }

    /// `codeVerified(true)` when `code` is the sealed secret's within ±1 step of the wall clock and its step is
    /// newer than any accepted before, and the storage made it the last accepted step (so a code works once).
    func verifyCode(_ code: String, totp: TOTPSeal, of account: Account, charge: QueueCharge,
                            completion: @escaping (LogIn<Account>.Fact) -> Void) {
        switch totpStep(code, sealed: totp.sealed, of: account) {
        case .failure(let error):
            completion(.failed(error))
        case .success(nil):
            completion(.codeVerified(false))
        case .success(let step?):
            // The storage's update is the atomic check; this one only spares it a replay it would refuse anyway.
            if let last = totp.lastStep, step <= last { return completion(.codeVerified(false)) }
            storage.acting(for: charge).acceptTOTPStep(of: account.id, step: step) { result in
                completion(result.map { .codeVerified($0) }.orFailed())
            }
        }
    }

    // MARK: Tokens

    /// A fresh bearer token for `account`, stored only as its hash, with `entry` (and `peer`'s client name); a
    /// contacts-only one (`auth.dav_login`'s) when `contactsOnly`. It follows a verified password or a new account,
    /// so the storage never refuses it: the expensive part already ran. Either kind counts toward the per-user cap.
    func issueToken(for account: Account, peer: AuditPeer, entry: AuditRecord?, contactsOnly: Bool = false,
                    charge: QueueCharge, completion: @escaping (Result<IssuedToken, RosterError>) -> Void) {
        let token: SessionToken
        do {
            token = try SessionToken.generate(contactsOnly: contactsOnly)
        } catch {
            logger.error("token generation failed: \(error)")
            return completion(.failure(.internal))
        }
        // The new token is never among those pushed out: the storage counts the ones held before it.
        let revocation = AuditRecord(event: .sessionRevoked, username: account.username, peer: peer,
                                     reason: Self.sessionLimitReason)
        let limit = TokenLimit(maxTokens: policy.maxSessionsPerUser, revocation: revocation)
        storage.acting(for: charge).storeToken(hash: token.hash, for: account.id, client: peer.client, audit: entry,
                                               limit: limit) { [self] result in
            if case .success(let revoked) = result, !revoked.isEmpty { tokensPushedOut(revoked) }
            completion(result.map { _ in IssuedToken(bearer: token.bearer, hash: token.hash) }.mapError(\.rosterError))
        }
    }

    /// The reason of the `session_revoked` entry for tokens a log-in pushed out past the per-user cap.
    static let sessionLimitReason = "session_limit"

    /// The account behind a token that has not idled out, and the token's hash; `not_found` for any other, and
    /// `locked` for a token of a locked account (whose tokens stay stored, dead, until an unlock deletes them),
    /// answered once its failed entry is stored. An unknown token has no entry: no account is named, and anyone
    /// could fill the log with them. A resume that worked commits its entry with the token's move, named by the
    /// storage as the account it resumed (a revocation that races it follows with its own entry).
    func resume(bearer: String, peer: AuditPeer, charge: QueueCharge,
                completion: @escaping (Result<(Account, [UInt8]), RosterError>) -> Void) {
        guard let hash = SessionToken.hash(bearer: bearer) else { return completion(.failure(.notFound)) }
        let idleMs = policy.sessionIdle.nanoseconds / 1_000_000
        let entry = AuditRecord(event: .resume, username: nil, peer: peer)
        storage.acting(for: charge).resumeToken(hash: hash, idleLimitMs: idleMs, audit: entry) { [self] result in
            let answer = result.mapError(\.rosterError).flatMap { account -> Result<(Account, [UInt8]), RosterError> in
                guard let account else { return .failure(.notFound) }
                return account.locked ? .failure(.locked) : .success((account, hash))
            }
            guard case .failure(.locked) = answer, case .success(let account?) = result else { return completion(answer) }
            appendFailedEntry(.resume, username: account.username, reason: .locked, peer: peer, charge: charge) {
                completion(answer)
            }
        }
    }

    /// Revokes a token with `entry` (committed only when the token was there); the storage never refuses it, so a
    /// log-out takes effect even while the budget is spent.
    func revoke(tokenHash: [UInt8], entry: AuditRecord, charge: QueueCharge,
                completion: @escaping (Result<Void, RosterError>) -> Void) {
        storage.acting(for: charge).revokeToken(hash: tokenHash, audit: entry) { completion($0.map { _ in }.mapError(\.rosterError)) }
    }
}

/// A procedure's fact for an effect that could not be carried out.
protocol FailableFact {
    static func failed(_ error: RosterError) -> Self
}

extension Registration.Fact: FailableFact {}
extension LogIn.Fact: FailableFact {}
extension Reauthentication.Fact: FailableFact {}
extension PasskeyLogIn.Fact: FailableFact {}

extension Result where Success: FailableFact, Failure == StorageFailure {
    /// A storage answer as the procedure's fact: the value, or `failed` with what a client is told.
    func orFailed() -> Success {
        switch self {
        case .success(let fact): fact
        case .failure(let failure): .failed(failure.rosterError)
        }
    }
}

extension Result where Success: FailableFact, Failure == RosterError {
    /// A password lane's or a token's answer as the procedure's fact.
    func orFailed() -> Success {
        switch self {
        case .success(let fact): fact
        case .failure(let error): .failed(error)
        }
    }
}

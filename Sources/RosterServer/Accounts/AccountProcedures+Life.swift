import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

// The life of an account after sign-up (protocol.md "The life of an account"), carried out against the storage, the password lanes and
// the daemon's secrets. Each operation that needs proof of who you are runs `Reauthentication` first, under the
// log-in gate every log-in shares; what follows it is the operation's own. The caller (a method, the password
// form) owns the session changes: ending revoked sessions, logging a recovered connection in.

/// A recovery that worked: the account, its new token (or why there is none), and the tokens it revoked.
struct Recovered {
    let account: Account
    let token: Result<IssuedToken, RosterError>
    let revoked: [[UInt8]]
}

/// A TOTP secret enrolled and pending: shown once, to the one who enrolled it.
struct EnrolledTOTP {
    let secret: String
    let uri: String
}

extension AccountProcedures {
    // MARK: Proof

    /// Runs one `Reauthentication` of `account` (nil: no account holds `username`) under the shared gate.
    /// `checkCode` checks a code proof and does what it is for; a password proof is verified here. A refusal's
    /// entry is `event` failed, with why.
    func reauthenticate<Outcome: Sendable>(
        _ account: Account?, username: String, proof: Proof, for event: AuditEvent, peer: AuditPeer,
        charge: QueueCharge,
        checkCode: @escaping (String, Account?, @escaping (Result<Outcome?, RosterError>) -> Void) -> Void = { _, _, done in
            done(.success(nil))
        },
        completion: @escaping (Result<Outcome?, RosterError>) -> Void
    ) {
        let data = storage.acting(for: charge)
        var attempt = Reauthentication<Account, Outcome>(account, username: username, proof: proof, requester: peer.requester,
                                                         policy: policy)
        let first = attempt.start(gate: &gate)
        let driver = MachineDriver<Reauthentication<Account, Outcome>.Fact, Reauthentication<Account, Outcome>.Effect> {
            [self] fact in attempt.step(fact, gate: &gate)
        }
        driver.perform = { [self] effect, driver in
            switch effect {
            case .readFailures(let keys, let windowMs):
                data.recentFailures(keys: keys, windowMs: windowMs) { result in
                    driver.feed(result.map { .failuresRead(times: $0.times, nowMs: $0.nowMs) }.orFailed())
                }
            case .readHash(let account):
                data.credential(of: account.id) { result in
                    driver.feed(result.map { .hashRead($0?.passwordHash) }.orFailed())
                }
            case .verifyPassword(let password, let hash):
                passwords.verify(password, against: hash, charge: charge) { result in
                    driver.feed(result.map { .passwordChecked($0 != .refused) }.orFailed())
                }
            case .checkCode(let code, let account):
                checkCode(code, account) { driver.feed($0.map { .codeChecked($0) }.orFailed()) }
            case .recordFailure(let keys):
                let reason: FailedEntryReason = if case .password = proof { .wrongPassword } else { .invalidCode }
                let entry = failedEntry(event, username: account?.username, reason: reason, peer: peer)
                data.recordFailure(keys: keys, audit: entry) { driver.feed($0.map { .failureRecorded }.orFailed()) }
            case .finish(let result):
                guard case .failure(let error) = result, let reason = Self.unwrittenRefusal(error) else {
                    return completion(result)
                }
                appendFailedEntry(event, username: account?.username, reason: reason, peer: peer, charge: charge) {
                    completion(result)
                }
            }
        }
        driver.perform(first)
    }

    /// `account`'s password, proven again for `event`; `wrong_password` (a failed log-in) otherwise.
    func provePassword(_ account: Account, _ password: Secret, for event: AuditEvent, peer: AuditPeer,
                               charge: QueueCharge, then: @escaping () -> Void, failure: @escaping (RosterError) -> Void) {
        let normalized = Normalization.normalizedPassword(password, nfkc: policy.passwordNFKC)
        reauthenticate(account, username: account.username, proof: .password(normalized), for: event, peer: peer,
                       charge: charge) { (result: Result<Never?, RosterError>) in
            switch result {
            case .success: then()
            case .failure(let error): failure(error)
            }
        }
    }

    /// A new password judged by the preset's rules for `username` (the quality check too); the refusal is
    /// `invalid_field` for `field`, nil when it passes.
    private func judgeNewPassword(_ password: Secret, username: String, field: String, charge: QueueCharge,
                                  completion: @escaping (RosterError?) -> Void) {
        let refusal = { (verdict: FieldVerdict) -> RosterError? in
            verdict.state == .valid ? nil : .invalidField(field: field, code: verdict.code.rawValue)
        }
        switch RegisterRules.password(password, username: username, policy: policy) {
        case .settled(let verdict):
            completion(refusal(verdict))
        case .check(let check):
            self.check(check, charge: charge) { completion(refusal(check.verdict(for: $0))) }
        }
    }

    // MARK: Password and email

    /// `account.change_password` and the password form's submit: verifies `current` through the log-in gate (a
    /// wrong one is `wrong_password` and a failed log-in), judges `new` by the preset's rules (`same_as_current`
    /// too), hashes it, stores it and revokes every other token of the account but `keeping`, in one transaction.
    /// Answers the revoked hashes; the caller ends the sessions bound to them (`Server.tokensRevoked`).
    func changePassword(of account: Account, current: Secret, new: Secret, keeping: [UInt8]?, peer: AuditPeer,
                        charge: QueueCharge, locale: RosterLocale = .default, completion: @escaping (Result<[[UInt8]], RosterError>) -> Void) {
        judgeNewPassword(new, username: account.username, field: "new", charge: charge) { [self] refusal in
            if let refusal { return completion(.failure(refusal)) }
            provePassword(account, current, for: .passwordChanged, peer: peer, charge: charge, then: { [self] in
                // Only after `current` is proven: before, the answer would tell a guesser whether `new` is it.
                let nfkc = policy.passwordNFKC
                let newPassword = Normalization.normalizedPassword(new, nfkc: nfkc)
                guard newPassword != Normalization.normalizedPassword(current, nfkc: nfkc) else {
                    return completion(.failure(.invalidField(field: "new", code: "same_as_current")))
                }
                passwords.hash(newPassword, charge: charge) { [self] hashed in
                    guard case .success(let hash) = hashed else { return completion(hashed.map { _ in [] }) }
                    let entry = AuditRecord(event: .passwordChanged, username: account.username, peer: peer)
                    let mail = notice(.passwordChanged, about: account, locale: locale)
                    storage.acting(for: charge).changePassword(of: account.id, to: hash, keeping: keeping, audit: entry,
                                                               mail: mail) { [self] result in
                        committed(mail, result)
                        if case .success = result { logger.info("password changed", [("ROSTER_USER", account.username)]) }
                        completion(result.mapError(\.rosterError))
                    }
                }
            }, failure: { completion(.failure($0)) })
        }
    }

    /// `account.change_email`: `""` removes it; the registration's email rules, `taken` when another holds it.
    /// The old address is told (`email_changed`), the new one is sent a verification code. Answers the account as
    /// it is now (its email unverified).
    func changeEmail(of account: Account, password: Secret, email typed: String, peer: AuditPeer, charge: QueueCharge,
                     locale: RosterLocale = .default, completion: @escaping (Result<Account, RosterError>) -> Void) {
        let email: String?
        switch RegisterRules.email(typed) {
        case .settled(let verdict) where verdict.state == .empty:
            email = nil
        case .settled(let verdict):
            return completion(.failure(.invalidField(field: "email", code: verdict.code.rawValue)))
        case .check(.emailAvailable(let canonical)):
            // The storage's unique index decides availability, in the same transaction as the change.
            email = canonical
        case .check:
            return completion(.failure(.internal))
        }
        provePassword(account, password, for: .emailChanged, peer: peer, charge: charge, then: { [self] in
            let entry = AuditRecord(event: .emailChanged, username: account.username, peer: peer)
            var mail: [QueuedMail] = []
            if account.email != email {
                mail = notice(.emailChanged, about: account, locale: locale)
                if let email {
                    mail += codeMailIfAny(.verifyEmail, to: MailRecipient(account: account.id, display: account.display,
                                                                          email: email, locale: locale), peer: peer)
                }
            }
            storage.acting(for: charge).changeEmail(of: account.id, to: email, audit: entry, mail: mail) { [self] result in
                committed(mail, result)
                completion(result.mapError(\.rosterError).flatMap { $0.map { .success($0) } ?? .failure(.unauthenticated) })
            }
        }, failure: { completion(.failure($0)) })
    }

    // MARK: Deletion

    /// `account.delete`: the account and everything of it, with its failed log-ins, in one transaction.
    func deleteAccount(_ account: Account, password: Secret, peer: AuditPeer, charge: QueueCharge,
                       locale: RosterLocale = .default, completion: @escaping (Result<DeletedAccount, RosterError>) -> Void) {
        provePassword(account, password, for: .deleted, peer: peer, charge: charge, then: { [self] in
            let keys = [LoginRateLimit.accountKey(found: account.username, identifier: account.username)]
            let entry = AuditRecord(event: .deleted, username: account.username, peer: peer)
            let mail = notice(.accountDeleted, about: account, locale: locale)
            storage.acting(for: charge).deleteAccount(account.id, failureKeys: keys, audit: entry, mail: mail) { [self] result in
                committed(mail, result)
                if case .success(.some) = result { logger.notice("account deleted", [("ROSTER_USER", account.username)]) }
                completion(result.mapError(\.rosterError).flatMap { $0.map { .success($0) } ?? .failure(.unauthenticated) })
            }
        }, failure: { completion(.failure($0)) })
    }

    // MARK: Reading

    /// The account as stored now: whether its email is verified may have changed on another connection or daemon
    /// since the session read it.
    func stored(_ account: Account, charge: QueueCharge, completion: @escaping (Result<Account, RosterError>) -> Void) {
        storage.acting(for: charge).credential(of: account.id) { result in
            completion(result.mapError(\.rosterError).flatMap { $0.map { .success($0.account) } ?? .failure(.unauthenticated) })
        }
    }

    /// What `account.show` and `account.export` say of the second factor and the recovery codes.
    func security(of account: Account, charge: QueueCharge, completion: @escaping (Result<AccountSecurity, RosterError>) -> Void) {
        storage.acting(for: charge).security(of: account.id) { result in
            completion(result.mapError(\.rosterError).flatMap { $0.map { .success($0) } ?? .failure(.unauthenticated) })
        }
    }

    /// The account's live tokens, oldest first.
    func sessions(of account: Account, charge: QueueCharge, completion: @escaping (Result<[StoredSession], RosterError>) -> Void) {
        storage.acting(for: charge).sessions(of: account.id, idleLimitMs: policy.sessionIdle.nanoseconds / 1_000_000) {
            completion($0.mapError(\.rosterError))
        }
    }

    /// Revokes every token of `account` but `keeping` (`session.revoke_others`, one `session_revoked` entry);
    /// answers the revoked hashes.
    func revokeTokens(of account: Account, except keeping: [UInt8]?, peer: AuditPeer, charge: QueueCharge,
                      completion: @escaping (Result<[[UInt8]], RosterError>) -> Void) {
        let entry = AuditRecord(event: .sessionRevoked, username: account.username, peer: peer)
        storage.acting(for: charge).revokeTokens(of: account.id, except: keeping, audit: entry) { completion($0.mapError(\.rosterError)) }
    }

    // MARK: Recovery codes

    /// `account.recovery_codes`: ten new codes replace the old ones; only their hashes are stored.
    func replaceRecoveryCodes(of account: Account, password: Secret, peer: AuditPeer, charge: QueueCharge,
                              locale: RosterLocale = .default, completion: @escaping (Result<[String], RosterError>) -> Void) {
        provePassword(account, password, for: .recoveryCodesCreated, peer: peer, charge: charge, then: { [self] in
            let issued: RecoveryCodes.Issued
            do {
                issued = try RecoveryCodes.generate(key: secrets.recoveryCodes)
            } catch {
                logger.error("recovery codes could not be generated: \(error)")
                return completion(.failure(.internal))
            }
            let entry = AuditRecord(event: .recoveryCodesCreated, username: account.username, peer: peer)
            let mail = notice(.recoveryCodesMade, about: account, locale: locale)
            storage.acting(for: charge).replaceRecoveryCodes(of: account.id, hashes: issued.hashes, audit: entry,
                                                             mail: mail) { [self] result in
                committed(mail, result)
                if case .success = result { logger.info("recovery codes replaced", [("ROSTER_USER", account.username)]) }
                completion(result.map { issued.codes }.mapError(\.rosterError))
            }
        }, failure: { completion(.failure($0)) })
    }

    /// `auth.recover`: a recovery code of `username`, or the six digits mailed by `auth.recover_start`, sets a new
    /// password (the preset's rules), is used up, and revokes every token of the account; then a token for this
    /// connection, and the password-changed notice. A bad code is `invalid_code` and a failed log-in.
    func recover(username typed: String, code: String, newPassword: Secret, peer: AuditPeer, charge: QueueCharge,
                 locale: RosterLocale = .default, completion: @escaping (Result<Recovered, RosterError>) -> Void) {
        let data = storage.acting(for: charge)
        let username = Normalization.canonicalUsername(typed)
        let password = Normalization.normalizedPassword(newPassword, nfkc: policy.passwordNFKC)
        judgeNewPassword(newPassword, username: username, field: "new_password", charge: charge) { [self] refusal in
            if let refusal { return completion(.failure(refusal)) }
            data.credential(for: .username(username)) { [self] found in
                let account: Account?
                switch found {
                case .success(let credential): account = credential?.account
                case .failure(let failure): return completion(.failure(failure.rosterError))
                }
                reauthenticate(account, username: account?.username ?? username, proof: .code(code), for: .recovered,
                               peer: peer, charge: charge, checkCode: { [self] code, account, answer in
                    // The new hash is made whether or not the account exists, so the time taken tells nothing.
                    passwords.hash(password, charge: charge) { [self] hashed in
                        guard case .success(let hash) = hashed else { return answer(hashed.map { _ in nil }) }
                        guard let account else { return answer(.success(nil)) }
                        let entry = AuditRecord(event: .recovered, username: account.username, peer: peer)
                        let mail = notice(.passwordChanged, about: account, locale: locale)
                        if let mailedHash = MailCodes.hash(code, key: secrets.mailCodes) {
                            // A locked account has no live mailed code to anyone who asks: its mail is never sent,
                            // and one sent before the lock is refused as any wrong code, used up or not.
                            guard !account.locked else { return answer(.success(nil)) }
                            return data.redeemMailedCode(of: account.id, codeHash: mailedHash, nowMs: clock.nowMs(),
                                                         newPasswordHash: hash, audit: entry, mail: mail) { [self] result in
                                committed(mail, result)
                                answer(result.map { redeemed in
                                    if case .redeemed(let revoked) = redeemed { revoked } else { nil }
                                }.mapError(\.rosterError))
                            }
                        }
                        guard let codeHash = RecoveryCodes.hash(code, key: secrets.recoveryCodes) else {
                            return answer(.success(nil))
                        }
                        // A locked account answers `locked` only to a right code, as log-in does only to a right
                        // password: before that, it answers as any account with a wrong code, so a caller without
                        // one learns nothing of the lock. The code is not used up, and the password stays.
                        if account.locked {
                            return data.holdsRecoveryCode(of: account.id, codeHash: codeHash) { held in
                                switch held {
                                case .success(true): answer(.failure(.locked))
                                case .success(false): answer(.success(nil))
                                case .failure(let failure): answer(.failure(failure.rosterError))
                                }
                            }
                        }
                        data.redeemRecoveryCode(of: account.id, codeHash: codeHash, newPasswordHash: hash,
                                                audit: entry, mail: mail) { [self] result in
                            committed(mail, result)
                            answer(result.mapError(\.rosterError))
                        }
                    }
                }, completion: { [self] (result: Result<[[UInt8]]?, RosterError>) in
                    switch result {
                    case .failure(let error):
                        completion(.failure(error))
                    case .success(let revoked):
                        guard let account else { return completion(.failure(.invalidCode)) }
                        logger.notice("recovered with a recovery or mailed code", [("ROSTER_USER", account.username)])
                        // The redemption's `recovered` entry says what changed; the log-in it ends in is a `login`
                        // like any other, saying it was proved by recovery.
                        let entry = AuditRecord(event: .login, username: account.username, peer: peer, method: .recovery)
                        issueToken(for: account, peer: peer, entry: entry, charge: charge) { token in
                            completion(.success(Recovered(account: account, token: token, revoked: revoked ?? [])))
                        }
                    }
                })
            }
        }
    }

    // MARK: TOTP

    /// `account.totp_enroll`: a fresh secret, sealed and stored pending; shown once.
    /// A refused password is a failed `totp_enabled` entry; a pending secret is no change the log records (its
    /// confirmation is).
    func enrollTOTP(of account: Account, password: Secret, peer: AuditPeer, charge: QueueCharge,
                    completion: @escaping (Result<EnrolledTOTP, RosterError>) -> Void) {
        provePassword(account, password, for: .totpEnabled, peer: peer, charge: charge, then: { [self] in
            let enrolled: EnrolledTOTP
            let sealed: [UInt8]
            do {
                var secret = try TOTP.generateSecret()
                defer { Self.wipe(&secret) }
                sealed = try SecretBox.seal(secret, key: secrets.totpSeal)
                enrolled = EnrolledTOTP(secret: TOTP.base32(secret), uri: TOTP.uri(secret: secret, username: account.username))
            } catch {
                logger.error("a TOTP secret could not be made: \(error)")
                return completion(.failure(.internal))
            }
            storage.acting(for: charge).storePendingTOTP(of: account.id, sealed: sealed) { result in
                completion(result.map { enrolled }.mapError(\.rosterError))
            }
        }, failure: { completion(.failure($0)) })
    }

    /// `account.totp_confirm`: a code of the pending secret makes it the account's; a wrong one (or nothing
    /// pending) is `invalid_code` and a failed log-in.
    func confirmTOTP(of account: Account, code: String, peer: AuditPeer, charge: QueueCharge,
                     completion: @escaping (Result<Void, RosterError>) -> Void) {
        let data = storage.acting(for: charge)
        reauthenticate(account, username: account.username, proof: .code(code), for: .totpEnabled, peer: peer,
                       charge: charge,
                       checkCode: { [self] code, _, answer in
            data.security(of: account.id) { [self] read in
                guard case .success(let security) = read else { return answer(read.map { _ in nil }.mapError(\.rosterError)) }
                guard let pending = security?.pendingTOTP else { return answer(.success(nil)) }
                switch totpStep(code, sealed: pending, of: account) {
                case .failure(let error):
                    answer(.failure(error))
                case .success(nil):
                    answer(.success(nil))
                case .success(let step?):
                    let entry = AuditRecord(event: .totpEnabled, username: account.username, peer: peer)
                    data.confirmTOTP(of: account.id, step: step, audit: entry) { confirmed in
                        answer(confirmed.map { $0 ? step : nil }.mapError(\.rosterError))
                    }
                }
            }
        }, completion: { [logger] (result: Result<Int64?, RosterError>) in
            if case .success = result { logger.notice("TOTP enabled", [("ROSTER_USER", account.username)]) }
            completion(result.map { _ in })
        })
    }

    /// `account.totp_disable`.
    func disableTOTP(of account: Account, password: Secret, peer: AuditPeer, charge: QueueCharge,
                     locale: RosterLocale = .default, completion: @escaping (Result<Void, RosterError>) -> Void) {
        provePassword(account, password, for: .totpDisabled, peer: peer, charge: charge, then: { [self] in
            let entry = AuditRecord(event: .totpDisabled, username: account.username, peer: peer)
            let mail = notice(.totpDisabled, about: account, locale: locale)
            storage.acting(for: charge).removeTOTP(of: account.id, audit: entry, mail: mail) { [self] result in
                committed(mail, result)
                if case .success = result { logger.notice("TOTP disabled", [("ROSTER_USER", account.username)]) }
                completion(result.mapError(\.rosterError))
            }
        }, failure: { completion(.failure($0)) })
    }

    /// The step whose code `code` is, for the secret sealed in `sealed`, within one step either side of the wall
    /// clock; nil for a wrong code. A seal that does not open is `internal` (logged): the operator's key file,
    /// not the user's guess, so it is never counted as a wrong code.
    func totpStep(_ code: String, sealed: [UInt8], of account: Account) -> Result<Int64?, RosterError> {
        switch TOTP.validate(code, sealed: sealed, key: secrets.totpSeal, nowUnix: clock.nowMs() / 1_000) {
        case .unopenable:
            logger.error("a TOTP secret does not open with the key file's key (another key file?)",
                         [("ROSTER_USER", account.username)])
            return .failure(.internal)
        case .mismatch:
            return .success(nil)
        case .matched(let step):
            return .success(step)
        }
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}

import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

// Verified email and recovery by mail (protocol.md §Email), against the outbox and the mailed codes.
//
// RULES
//   • A code mail is queued only through `queueCodeMail`: one a minute per account and purpose (the outbox's own
//     interval, on every daemon), 10 a minute per requester (`MailOutbox`), and `mail_queued` commits with it.
//   • A mailed code is proven like any code (`Reauthentication`): through the log-in gate, a wrong one is
//     `invalid_code` and a failed log-in.
//   • `auth.recover_start` answers the same `{}` at once, before anything is looked up, whether or not the account
//     exists, is locked, or has a verified email; what happens after is only logged, never answered.

extension AccountProcedures {
    /// How long after a code mail of one purpose the next may be queued for the same account.
    static let codeMailIntervalMs: Int64 = 60_000

    /// `account.email_verify_send`: a verification code to the account's email, as stored now (`no_email`
    /// without one, `mail_unavailable` with mail off, `rate_limited` within a minute of the last).
    func sendVerification(of account: Account, peer: AuditPeer, charge: QueueCharge, locale: RosterLocale,
                          completion: @escaping (Result<Void, RosterError>) -> Void) {
        guard let mail, mail.enabled else { return completion(.failure(.mailUnavailable)) }
        storage.acting(for: charge).credential(of: account.id) { [self] found in
            switch found {
            case .failure(let failure):
                completion(.failure(failure.rosterError))
            case .success(nil):
                completion(.failure(.unauthenticated))
            case .success(let credential?):
                guard let email = credential.account.email else { return completion(.failure(.noEmail)) }
                let recipient = MailRecipient(account: account.id, display: credential.account.display, email: email,
                                              locale: locale)
                queueCodeMail(.verifyEmail, to: recipient, of: credential.account, peer: peer, charge: charge,
                              outbox: mail, completion: completion)
            }
        }
    }

    /// `account.email_verify`: a code mailed to the account's present email marks it verified; answers the
    /// account as it is now.
    func verifyEmail(of account: Account, code: String, peer: AuditPeer, charge: QueueCharge,
                     completion: @escaping (Result<Account, RosterError>) -> Void) {
        let data = storage.acting(for: charge)
        reauthenticate(account, username: account.username, proof: .code(code), for: .emailVerified, peer: peer,
                       charge: charge, checkCode: { [self] code, _, answer in
            guard let hash = MailCodes.hash(code, key: secrets.mailCodes) else { return answer(.success(nil)) }
            let entry = AuditRecord(event: .emailVerified, username: account.username, peer: peer)
            data.verifyEmail(of: account.id, codeHash: hash, nowMs: clock.nowMs(), audit: entry) { result in
                switch result {
                case .success(.verified(let email)): answer(.success(email))
                case .success(.wrong), .success(.noLiveCode): answer(.success(nil))
                case .success(.gone): answer(.failure(.unauthenticated))
                case .failure(let failure): answer(.failure(failure.rosterError))
                }
            }
        }, completion: { [logger] (result: Result<String?, RosterError>) in
            completion(result.map { email in
                logger.info("email verified", [("ROSTER_USER", account.username)])
                var verified = account
                verified.email = email ?? account.email
                verified.emailVerified = true
                return verified
            })
        })
    }

    /// `auth.recover_start`: answers at once (`mail_unavailable` only when mail is off, which says nothing of any
    /// account); then, when `typed` names an unlocked account with a verified email, mails it a recovery code.
    func startRecovery(username typed: String, peer: AuditPeer, charge: QueueCharge, locale: RosterLocale,
                       completion: (Result<Void, RosterError>) -> Void) {
        guard let mail, mail.enabled else { return completion(.failure(.mailUnavailable)) }
        completion(.success(()))
        let identifier = AccountIdentifier(loginIdentifier: Normalization.canonicalLoginIdentifier(typed))
        storage.acting(for: charge).credential(for: identifier) { [self] found in
            guard case .success(let credential?) = found else { return }
            let account = credential.account
            guard !account.locked, account.emailVerified, let email = account.email else {
                return logger.info("recovery by mail asked for an account that cannot have it (locked, or no "
                                   + "verified email); nothing sent", [("ROSTER_USER", account.username)])
            }
            let recipient = MailRecipient(account: account.id, display: account.display, email: email, locale: locale)
            queueCodeMail(.recover, to: recipient, of: account, peer: peer, charge: charge, outbox: mail) { [logger] in
                if case .failure(let error) = $0 {
                    logger.info("recovery mail not sent: \(error.reason)", [("ROSTER_USER", account.username)])
                }
            }
        }
    }

    /// The notice to queue with a change of `account`, in `locale`, to `email` (its address unless given).
    func notice(_ notice: MailNotice, about account: Account, to email: String?? = nil,
                locale: RosterLocale) -> [QueuedMail] {
        mail?.notice(notice, about: account, to: email ?? account.email, locale: locale) ?? []
    }

    /// A code mail that goes with a change (a registration, an email change), or none: with mail off or past the
    /// requester's limit the change goes ahead without it, and `account.email_verify_send` can ask again.
    func codeMailIfAny(_ purpose: MailCodePurpose, to recipient: MailRecipient, peer: AuditPeer) -> [QueuedMail] {
        guard let mail, mail.enabled else { return [] }
        switch mail.codeMail(purpose, to: recipient, for: peer.requester) {
        case .success(let queued):
            return [queued]
        case .failure(let error):
            logger.info("the \(purpose.kind.rawValue) mail of a change was left out (\(error.reason)); the change "
                        + "goes ahead")
            return []
        }
    }

    /// Tells the sender that a write which answered `result` queued `mails`.
    func committed<Value>(_ mails: [QueuedMail], _ result: Result<Value, StorageFailure>) {
        if case .success = result, !mails.isEmpty { mail?.committed() }
    }

    private func queueCodeMail(_ purpose: MailCodePurpose, to recipient: MailRecipient, of account: Account,
                               peer: AuditPeer, charge: QueueCharge, outbox: MailOutbox,
                               completion: @escaping (Result<Void, RosterError>) -> Void) {
        let queued: QueuedMail
        switch outbox.codeMail(purpose, to: recipient, for: peer.requester) {
        case .success(let mail): queued = mail
        case .failure(let error): return completion(.failure(error))
        }
        let entry = AuditRecord.mailQueued(purpose.kind, username: account.username, peer: peer)
        storage.acting(for: charge).queueCodeMail(of: account.id, queued, minimumIntervalMs: Self.codeMailIntervalMs,
                                                  audit: entry) { result in
            switch result {
            case .success(.queued):
                outbox.committed()
                completion(.success(()))
            case .success(.tooSoon(let retryAfterMs)):
                completion(.failure(.rateLimited(retryAfterMs: retryAfterMs)))
            case .success(.queueFull):
                completion(.failure(.rateLimited(retryAfterMs: Self.codeMailIntervalMs)))
            case .success(.gone):
                completion(.failure(.unauthenticated))
            case .failure(let failure):
                completion(.failure(failure.rosterError))
            }
        }
    }
}

import RosterCore
import RosterRuntime
import RosterStorage

// The life of an account (protocol.md §The life of an account): each call one round trip (a deletion two, to name the account in its
// notification), its writes in one transaction. Revocations, deletion, a redeemed code and a TOTP step are
// forced (the protocol says they are never refused); the rest the pool's budget may refuse. Every revoked token
// and every deletion is announced in the transaction that makes it, so the other daemons end exactly those
// sessions and forget exactly that name.

extension PostgreSQLStorage {
    /// How often a deletion is tried again when the account's email changed between reading and deleting it.
    static let deletionAttempts = 3

    public func security(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<AccountSecurity?>) {
        query(PostgreSQLQueries.security(of: account), charge: charge, "account security read") { result in
            completion(result.map { found in
                found.rows.first.map { row in
                    AccountSecurity(totp: row.bytes(0).map { TOTPSeal(sealed: $0, lastStep: row.int(2)) },
                                    pendingTOTP: row.bytes(1), recoveryCodesLeft: Int(row.int(3) ?? 0))
                }
            })
        }
    }

    public func credential(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Credential?>) {
        query(PostgreSQLQueries.credential(of: account), charge: charge, "account read") { result in
            completion(result.map { $0.rows.first.flatMap(Self.credential) })
        }
    }

    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                               mail: [QueuedMail], charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>) {
        guard acceptable(passwordHash, completion), acceptable(mail, "password change", completion) else { return }
        let logger = self.logger
        let audit = auditWrite(audit)
        var statements = [PostgreSQLQueries.replacePasswordHash(passwordHash, of: account),
                          PostgreSQLQueries.revokeTokens(of: account, except: keeping, announcing: tokenRevokedPrefix,
                                                         now: now, audit: nil)]
        if let audit { statements.append(PostgreSQLQueries.insertAudit(audit, ifAccountExists: account, now: now)) }
        let write = mailing(mail, for: account, statements, queuedAfter: true, audit: audit)
        query(write.statements, transaction: true, charge: charge, force: true,
              "password change") { [weak self] result in
            completion(result.flatMap { all in
                let results = write.own(all)
                guard results.first?.affectedRows ?? 0 > 0 else {
                    logger.error("password change failed: account \(account) is not there")
                    return .failure(.other)
                }
                self?.committed(audit, results.dropFirst(2).first)
                self?.committed(write.mailAudit, all)
                return .success(Self.hashes(results.dropFirst().first, column: 0))
            })
        }
    }

    public func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?, mail: [QueuedMail],
                            charge: QueueCharge, completion: @escaping StorageCompletion<Account?>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard PGText.storable(email), storable(mail) else { return completion(.failure(unstorable("email change"))) }
        let logger = self.logger
        let audit = auditWrite(audit)
        let announcement = ChangeNotification.emailChangedPrefix(origin: origin, account: account)
        let change = PostgreSQLQueries.changeEmail(of: account, to: email, announcing: announcement, now: now, audit: audit,
                                                   mail: mail)
        let write = mailing(mail, for: account, [change], audit: audit)
        pool.execute(write.statements, transaction: write.needsTransaction,
                     charge: charge) { [weak self] result in
            switch result {
            case .failure(.server(sqlState: "23505", _)):
                // Another daemon committed the address between this statement's check and its write.
                completion(.failure(.conflict(.email)))
            case .failure(let failure):
                completion(.failure(failure.storageFailure(logging: logger, "email change")))
            case .success(let all):
                let changed = write.own(all).last
                guard let row = changed?.rows.first else { return completion(.failure(.other)) }
                if row.bool(0) == true { return completion(.failure(.conflict(.email))) }
                guard let id = row.int(1), let canonical = row.text(2), let display = row.text(3),
                      let createdAt = row.int(5) else { return completion(.success(nil)) }
                self?.committed(audit, changed)
                self?.committed(write.mailAudit, all)
                completion(.success(Account(id: id, username: canonical, display: display, email: row.text(4),
                                            createdAtMs: createdAt, emailVerified: row.bool(6) ?? false)))
            }
        }
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?, mail: [QueuedMail],
                              charge: QueueCharge, completion: @escaping StorageCompletion<DeletedAccount?>) {
        guard PGText.storable(failureKeys.joined()), storable(mail) else {
            return completion(.failure(unstorable("account deletion")))
        }
        deleteAccount(account, failureKeys: failureKeys, audit: auditWrite(audit), mail: mail, charge: charge, attempt: 1,
                      completion: completion)
    }

    /// Reads the account (its name and email go into the notification), then deletes it only if its email is
    /// still the one read; an email changed meanwhile means one more try.
    private func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditWrite?, mail: [QueuedMail],
                               charge: QueueCharge, attempt: Int, completion: @escaping StorageCompletion<DeletedAccount?>) {
        query(PostgreSQLQueries.credential(of: account), charge: charge, force: true, "account deletion") { [weak self] read in
            guard let self else { return completion(.failure(StorageFailure.stopped)) }
            let found: Credential?
            switch read {
            case .failure(let failure): return completion(.failure(failure))
            case .success(let result): found = result.rows.first.flatMap(Self.credential)
            }
            guard let victim = found?.account else { return completion(.success(nil)) }
            let deleted = self.notification(.accountDeleted(id: victim.id, username: victim.username, email: victim.email))
            let statement = PostgreSQLQueries.deleteAccount(account, email: victim.email, failureKeys: failureKeys,
                                                            notification: deleted, announcingTokens: self.tokenRevokedPrefix,
                                                            now: self.now, audit: audit, mail: mail)
            let write = self.mailing(mail, for: account, [statement], audit: audit)
            self.query(write.statements, transaction: write.needsTransaction, charge: charge,
                       force: true, "account deletion") { [weak self] result in
                guard let self else { return completion(.failure(StorageFailure.stopped)) }
                switch result.map({ write.own($0).last }) {
                case .failure(let failure):
                    completion(.failure(failure))
                case .success(nil):
                    completion(.failure(.other))
                case .success(let gone?) where gone.rows.isEmpty:
                    guard attempt < Self.deletionAttempts else {
                        self.logger.error("account deletion failed: account \(account) kept changing its email")
                        return completion(.failure(.other))
                    }
                    self.deleteAccount(account, failureKeys: failureKeys, audit: audit, mail: mail, charge: charge,
                                       attempt: attempt + 1, completion: completion)
                case .success(let gone?):
                    self.usernames.remove(victim.username)
                    self.committed(audit, gone)
                    if case .success(let all) = result { self.committed(write.mailAudit, all) }
                    completion(.success(DeletedAccount(account: victim, revokedTokens: Self.hashes(gone, column: 1))))
                }
            }
        }
    }

    public func sessions(of account: AccountID, idleLimitMs: Int64, charge: QueueCharge,
                  completion: @escaping StorageCompletion<[StoredSession]>) {
        query(PostgreSQLQueries.sessions(of: account, idleLimitMs: idleLimitMs, now: now), charge: charge,
              "session list") { result in
            completion(result.map { found in
                found.rows.compactMap { row in
                    guard let hash = row.bytes(0), let created = row.int(1), let used = row.int(2) else { return nil }
                    return StoredSession(tokenHash: hash, createdAtMs: created, lastUsedAtMs: used, client: row.text(3))
                }
            })
        }
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?, charge: QueueCharge,
                      completion: @escaping StorageCompletion<[[UInt8]]>) {
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.revokeTokens(of: account, except: keeping, announcing: tokenRevokedPrefix, now: now,
                                             audit: audit),
              charge: charge, force: true, "token revocation") { [weak self] result in
            if case .success(let gone) = result { self?.committed(audit, gone) }
            completion(result.map { Self.hashes($0, column: 0) })
        }
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?, mail: [QueuedMail],
                                     charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        guard acceptable(mail, "recovery codes", completion) else { return }
        let audit = auditWrite(audit)
        let statements = PostgreSQLQueries.replaceRecoveryCodes(of: account, hashes: hashes, now: now, audit: audit)
        let write = mailing(mail, for: account, statements, queuedAfter: true, audit: audit)
        query(write.statements, transaction: true, charge: charge,
              "recovery codes") { [weak self] result in
            if case .success(let results) = result {
                self?.committed(audit, write.own(results).dropFirst(statements.count - 1).first)
                self?.committed(write.mailAudit, results)
            }
            completion(result.map { _ in () })
        }
    }

    public func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8], charge: QueueCharge,
                           completion: @escaping StorageCompletion<Bool>) {
        query(PostgreSQLQueries.holdsRecoveryCode(of: account, codeHash: codeHash), charge: charge, "recovery code read") { result in
            completion(result.map { !$0.rows.isEmpty })
        }
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String, audit: AuditRecord?,
                                   mail: [QueuedMail], charge: QueueCharge,
                                   completion: @escaping StorageCompletion<[[UInt8]]?>) {
        guard acceptable(newPasswordHash, completion), acceptable(mail, "recovery", completion) else { return }
        let audit = auditWrite(audit)
        let statement = PostgreSQLQueries.redeemRecoveryCode(of: account, codeHash: codeHash, newPasswordHash: newPasswordHash,
                                                             announcingTokens: tokenRevokedPrefix, now: now, audit: audit,
                                                             mail: mail)
        let write = mailing(mail, for: account, [statement], audit: audit)
        query(write.statements, transaction: write.needsTransaction, charge: charge, force: true,
              "recovery") { [weak self] result in
            let used = result.map { write.own($0).last }
            if case .success(let used?) = used, !used.rows.isEmpty {
                self?.committed(audit, used)
                if case .success(let all) = result { self?.committed(write.mailAudit, all) }
            }
            completion(used.map { used in (used?.rows.isEmpty ?? true) ? nil : Self.hashes(used, column: 0) })
        }
    }

    public func storePendingTOTP(of account: AccountID, sealed: [UInt8], charge: QueueCharge,
                          completion: @escaping StorageCompletion<Void>) {
        query(PostgreSQLQueries.storePendingTOTP(of: account, sealed: sealed), charge: charge, "TOTP enrolment") { result in
            completion(result.map { _ in () })
        }
    }

    public func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.confirmTOTP(of: account, step: step, now: now, audit: audit), charge: charge,
              "TOTP confirmation") { [weak self] result in
            if case .success(let confirmed) = result { self?.committed(audit, confirmed) }
            completion(result.map { !$0.rows.isEmpty })
        }
    }

    public func acceptTOTPStep(of account: AccountID, step: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<Bool>) {
        query(PostgreSQLQueries.acceptTOTPStep(of: account, step: step), charge: charge, force: true, "TOTP step") { result in
            completion(result.map { $0.affectedRows > 0 })
        }
    }

    public func removeTOTP(of account: AccountID, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                           completion: @escaping StorageCompletion<Void>) {
        guard acceptable(mail, "TOTP removal", completion) else { return }
        let audit = auditWrite(audit)
        let removal = PostgreSQLQueries.removeTOTP(of: account, now: now, audit: audit)
        let write = mailing(mail, for: account, [removal], queuedAfter: true, audit: audit)
        query(write.statements, transaction: write.needsTransaction, charge: charge,
              "TOTP removal") { [weak self] result in
            if case .success(let results) = result {
                self?.committed(audit, write.own(results).first)
                self?.committed(write.mailAudit, results)
            }
            completion(result.map { _ in () })
        }
    }

    // MARK: Helpers

    /// What every statement revoking tokens binds, for the others to end exactly those sessions.
    var tokenRevokedPrefix: String { ChangeNotification.tokenRevokedPrefix(origin: origin) }

    /// The non-NULL token hashes in `column` of a result's rows.
    private static func hashes(_ result: PGResult?, column: Int) -> [[UInt8]] {
        result?.rows.compactMap { $0.bytes(column) } ?? []
    }

    /// The statements of a write that queues `mail`, for its transaction: the account's lock first
    /// (`lockAccountForMail`), then `statements`, then, with `queuedAfter` (a write whose own statements queue
    /// none), the statement that queues the mails (`queueMail`), then, when the write has an entry, the mails'
    /// entries (`auditQueuedMail`). Without mail, `statements` as they are.
    func mailing(_ mail: [QueuedMail], for account: AccountID, _ statements: [PGStatement], queuedAfter: Bool = false,
                 audit: AuditWrite?) -> MailingWrite {
        guard !mail.isEmpty else { return MailingWrite(statements: statements, locked: false, mailAudit: nil) }
        let queued = queuedAfter ? [PostgreSQLQueries.queueMail(mail, ifAccountExists: account, now: now)] : []
        let lock = PostgreSQLQueries.lockAccountForMail(account)
        return MailingWrite(statements: [lock] + statements + queued, locked: true,
                            mailAudit: mailAudit(audit, mail, in: .id(account)))
    }

    /// The statement that writes the entries of `mail` queued with a write whose entry is `audit` (none without one).
    func mailAudit(_ audit: AuditWrite?, _ mail: [QueuedMail], in account: PostgreSQLQueries.MailAccount) -> MailAudit? {
        guard let audit, !mail.isEmpty else { return nil }
        var kinds: [MailKindName] = []
        for kind in mail.map(\.kind) where !kinds.contains(kind) { kinds.append(kind) }
        let entries = kinds.map { AuditWrite(audit.record.mailQueued($0), origin: origin) }
        return MailAudit(record: audit.record, statement: PostgreSQLQueries.auditQueuedMail(entries, in: account, now: now))
    }

    /// Once a write that queued mail committed: its mails' entries (the last result's rows) go to `onAudit` as
    /// this daemon's, after the write's own.
    func committed(_ audit: MailAudit?, _ results: [PGResult]) {
        guard let audit, let rows = results.last?.rows else { return }
        for row in rows {
            guard let id = row.int(0), let time = row.int(1), let kind = row.text(2).flatMap(MailKindName.init(rawValue:))
            else { continue }
            onAudit?(AuditEntry(id: id, timeMs: time, record: audit.record.mailQueued(kind)), .here)
        }
    }

    /// Whether every mail may be stored (PostgreSQL's text holds no NUL); if not, the call has answered.
    private func acceptable<T>(_ mail: [QueuedMail], _ operation: String, _ completion: StorageCompletion<T>) -> Bool {
        guard storable(mail) else {
            completion(.failure(unstorable(operation)))
            return false
        }
        return true
    }

    /// Whether `hash` may be stored; if not, the call has answered (logged, `.other`), as registration does.
    private func acceptable<T>(_ hash: String, _ completion: StorageCompletion<T>) -> Bool {
        guard !stopped else {
            completion(.failure(StorageFailure.stopped))
            return false
        }
        guard StoredPasswordHash.isStorable(hash) else {
            completion(.failure(StoredPasswordHash.refusal(logging: logger)))
            return false
        }
        return true
    }
}

/// The entries of a write's mails: the statement that writes them, last in the write's transaction, and the
/// write's own record they are made from.
struct MailAudit {
    let record: AuditRecord
    let statement: PGStatement
}

/// A write that queues mail, as the statements of one transaction (`PostgreSQLStorage.mailing`).
struct MailingWrite {
    let mailAudit: MailAudit?
    private let locked: Bool
    private let written: [PGStatement]

    init(statements: [PGStatement], locked: Bool, mailAudit: MailAudit?) {
        written = statements
        self.locked = locked
        self.mailAudit = mailAudit
    }

    /// Every statement, the mails' entries last.
    var statements: [PGStatement] { written + (mailAudit.map { [$0.statement] } ?? []) }

    /// Whether the statements need a transaction of their own: with mail, they stand or fall together.
    var needsTransaction: Bool { locked }

    /// The results of the write's own statements, without the lock's and the mails' entries'.
    func own(_ results: [PGResult]) -> ArraySlice<PGResult> {
        results.dropFirst(locked ? 1 : 0).dropLast(mailAudit == nil ? 0 : 1)
    }
}

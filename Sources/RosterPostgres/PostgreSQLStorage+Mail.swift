import RosterCore
import RosterRuntime
import RosterStorage

// The outbox and the mailed codes (protocol.md §Storage): each call one round trip, a code mail's after the
// account's lock in one transaction. A redeemed code and the sender's calls are forced (the protocol says they
// are never refused); queueing, a verification and the reads the pool's budget may refuse.
extension PostgreSQLStorage {
    public func queueCodeMail(of account: AccountID, _ mail: QueuedMail, minimumIntervalMs: Int64, audit: AuditRecord?,
                              charge: QueueCharge, completion: @escaping StorageCompletion<CodeMailQueueing>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard let code = mail.code else {
            logger.error("code mail refused: the mail carries no code")
            return completion(.failure(.other))
        }
        guard storable([mail]) else { return completion(.failure(unstorable("code mail"))) }
        let audit = auditWrite(audit)
        let statements = [PostgreSQLQueries.lockAccountForMail(account),
                          PostgreSQLQueries.queueCodeMail(mail, code: code, of: account,
                                                          minimumIntervalMs: minimumIntervalMs, now: now, audit: audit)]
        query(statements, transaction: true, charge: charge, "code mail") { [weak self] result in
            completion(result.flatMap { results in
                guard let row = results.last?.rows.first, let verdict = row.text(0) else { return .failure(.other) }
                switch verdict {
                case "gone": return .success(.gone)
                case "full": return .success(.queueFull)
                case "too_soon":
                    let wait = row.int(1).flatMap { created in
                        row.int(2).flatMap { MailLimits.tooSoon(createdAtMs: created, minimumIntervalMs: minimumIntervalMs,
                                                                nowMs: $0) }
                    }
                    return .success(.tooSoon(retryAfterMs: wait ?? 1))
                default:
                    guard let id = row.int(3) else { return .failure(.other) }
                    self?.committed(audit, results.last)
                    return .success(.queued(id))
                }
            })
        }
    }

    public func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, audit: AuditRecord?,
                            charge: QueueCharge, completion: @escaping StorageCompletion<MailCodeCheck>) {
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.verifyEmail(of: account, codeHash: codeHash, nowMs: nowMs, now: now, audit: audit),
              charge: charge, "email verification") { [weak self] result in
            completion(result.flatMap { tried in
                guard let row = tried.rows.first else { return .failure(.other) }
                guard row.bool(0) == true else { return .success(.gone) }
                guard let matched = row.bool(1), let left = row.int(2) else { return .success(.noLiveCode) }
                guard matched else { return .success(.wrong(triesLeft: Int(left))) }
                self?.committed(audit, tried)
                return .success(.verified(email: row.text(3) ?? ""))
            })
        }
    }

    public func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                                 audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                                 completion: @escaping StorageCompletion<MailedCodeRedemption>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard StoredPasswordHash.isStorable(newPasswordHash) else {
            return completion(.failure(StoredPasswordHash.refusal(logging: logger)))
        }
        guard storable(mail) else { return completion(.failure(unstorable("recovery by mail"))) }
        let audit = auditWrite(audit)
        let statement = PostgreSQLQueries.redeemMailedCode(of: account, codeHash: codeHash, nowMs: nowMs,
                                                           newPasswordHash: newPasswordHash,
                                                           announcingTokens: tokenRevokedPrefix, now: now, audit: audit,
                                                           mail: mail)
        let write = mailing(mail, for: account, [statement], audit: audit)
        query(write.statements, transaction: write.needsTransaction, charge: charge, force: true,
              "recovery by mail") { [weak self] result in
            completion(result.map { results in
                guard let tried = write.own(results).last, let row = tried.rows.first, let matched = row.bool(0) else {
                    return .noLiveCode
                }
                guard matched else { return .wrong(triesLeft: Int(row.int(1) ?? 0)) }
                self?.committed(audit, tried)
                self?.committed(write.mailAudit, results)
                return .redeemed(revokedTokens: tried.rows.compactMap { $0.bytes(2) })
            })
        }
    }

    public func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[ClaimedMail]>) {
        guard PGText.storable(claimant) else { return completion(.failure(unstorable("claiming due mail"))) }
        query(PostgreSQLQueries.claimDueMail(claimant: claimant, nowMs: nowMs, leaseMs: leaseMs, limit: limit),
              charge: charge, force: true, "claiming due mail") { result in
            completion(result.map { claimed in
                // RETURNING comes in no promised order.
                claimed.rows.compactMap { row -> (due: Int64, mail: ClaimedMail)? in
                    guard let id = row.int(0), let account = row.int(1),
                          let kind = row.text(2).flatMap(MailKindName.init(rawValue:)), let recipient = row.text(3),
                          let message = row.bytes(4), let attempts = row.int(5), let queued = row.int(6),
                          let due = row.int(7) else { return nil }
                    return (due, ClaimedMail(id: id, account: account, kind: kind, recipient: recipient,
                                             sealedMessage: message, attempts: Int(attempts), queuedAtMs: queued))
                }.sorted { ($0.due, $0.mail.id) < ($1.due, $1.mail.id) }.map(\.mail)
            })
        }
    }

    public func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, audit: AuditRecord?,
                           charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        let error: String? = switch outcome {
        case .sent: nil
        case .retry(_, let error), .failed(let error): error
        }
        guard PGText.storable(claimant, error) else { return completion(.failure(unstorable("mail hand-off"))) }
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.finishMail(id, claimant: claimant, outcome: outcome, now: now, audit: audit),
              charge: charge, force: true, "mail hand-off") { [weak self] result in
            if case .success(let finished) = result { self?.committed(audit, finished) }
            completion(result.map { !$0.rows.isEmpty })
        }
    }

    public func listMail(status: MailStatus?, limit: Int, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[MailListing]>) {
        query(PostgreSQLQueries.listMail(status: status, limit: limit), charge: charge, "mail list") { result in
            completion(result.map { listed in
                listed.rows.compactMap { row in
                    guard let id = row.int(0), let account = row.int(1),
                          let kind = row.text(2).flatMap(MailKindName.init(rawValue:)), let recipient = row.text(3),
                          let status = row.text(4).flatMap(MailStatus.init(rawValue:)), let attempts = row.int(5),
                          let queued = row.int(7) else { return nil }
                    return MailListing(id: id, account: account, kind: kind, recipient: recipient, status: status,
                                       attempts: Int(attempts), lastError: row.text(6), queuedAtMs: queued,
                                       nextAttemptAtMs: row.int(8), sentAtMs: row.int(9))
                }
            })
        }
    }

    public func mailCounts(charge: QueueCharge, completion: @escaping StorageCompletion<MailCounts>) {
        query(PostgreSQLQueries.mailCounts, charge: charge, "mail counts") { result in
            completion(result.flatMap { counted in
                guard let row = counted.rows.first else { return .failure(.other) }
                return .success(MailCounts(queued: Int(row.int(0) ?? 0), failed: Int(row.int(1) ?? 0),
                                           sent: Int(row.int(2) ?? 0)))
            })
        }
    }

    /// Whether PostgreSQL's text can hold every field of `mail` (no NUL).
    func storable(_ mail: [QueuedMail]) -> Bool {
        mail.allSatisfy { PGText.storable($0.recipient, $0.code?.email) }
    }
}

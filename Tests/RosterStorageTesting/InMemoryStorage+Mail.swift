import RosterCore
import RosterRuntime
import RosterStorage

// The outbox and the mailed codes (protocol.md §Storage) on the in-memory rows, as the SQL backends keep them:
// each call is one transaction (it runs whole when answered), a claim is a claimant and an expiry on the row.
extension InMemoryStorage {
    public func queueCodeMail(of account: AccountID, _ mail: QueuedMail, minimumIntervalMs: Int64, audit: AuditRecord?,
                              charge: QueueCharge, completion: @escaping StorageCompletion<CodeMailQueueing>) {
        answer(.queueCodeMail, completion) {
            guard self.accounts[account] != nil else { return .success(.gone) }
            guard let code = mail.code else { return .failure(.other) }
            let now = self.clock.nowMs()
            if let last = self.mailCodes[account]?[code.purpose],
               let wait = MailLimits.tooSoon(createdAtMs: last.createdAtMs, minimumIntervalMs: minimumIntervalMs,
                                             nowMs: now) {
                return .success(.tooSoon(retryAfterMs: wait))
            }
            guard self.queuedMailCount(of: account) < MailLimits.queuedPerAccount else { return .success(.queueFull) }
            let id = self.insert(mail, for: account, now: now)
            self.audited(audit)
            return .success(.queued(id))
        }
    }

    public func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, audit: AuditRecord?,
                            charge: QueueCharge, completion: @escaping StorageCompletion<MailCodeCheck>) {
        answer(.verifyEmail, completion) {
            guard self.accounts[account] != nil else { return .success(.gone) }
            switch self.tryCode(codeHash, of: account, purpose: .verifyEmail, nowMs: nowMs) {
            case .noLiveCode: return .success(.noLiveCode)
            case .wrong(let left): return .success(.wrong(triesLeft: left))
            case .right(let email):
                self.accounts[account]?.account.emailVerified = true
                self.audited(audit)
                return .success(.verified(email: email))
            }
        }
    }

    public func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                                 audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                                 completion: @escaping StorageCompletion<MailedCodeRedemption>) {
        answer(.redeemMailedCode, completion) {
            guard StoredPasswordHash.isStorable(newPasswordHash) else { return .failure(.other) }
            switch self.tryCode(codeHash, of: account, purpose: .recover, nowMs: nowMs) {
            case .noLiveCode: return .success(.noLiveCode)
            case .wrong(let left): return .success(.wrong(triesLeft: left))
            case .right:
                self.accounts[account]?.passwordHash = newPasswordHash
                self.audited(audit, queuing: mail, for: account)
                return .success(.redeemed(revokedTokens: self.removeTokens(of: account, except: nil)))
            }
        }
    }

    public func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[ClaimedMail]>) {
        answer(.claimDueMail, completion) {
            let due = self.outbox.values.filter { row in
                row.status == .queued && (row.nextAttemptAtMs ?? .max) <= nowMs
                    && (row.claimExpiresAtMs.map { $0 <= nowMs } ?? true)
            }.sorted { ($0.nextAttemptAtMs ?? .max, $0.id) < ($1.nextAttemptAtMs ?? .max, $1.id) }
            let expiry = Self.saturatingSum(nowMs, leaseMs)
            return .success(due.prefix(max(0, limit)).map { row in
                self.outbox[row.id]?.claimant = claimant
                self.outbox[row.id]?.claimExpiresAtMs = expiry
                return ClaimedMail(id: row.id, account: row.account, kind: row.kind, recipient: row.recipient,
                                   sealedMessage: row.sealedMessage, attempts: row.attempts, queuedAtMs: row.queuedAtMs)
            })
        }
    }

    public func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, audit: AuditRecord?,
                           charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        answer(.finishMail, completion) {
            guard var row = self.outbox[id], row.status == .queued, row.claimant == claimant else {
                return .success(false)
            }
            row.attempts += 1
            row.claimant = nil
            row.claimExpiresAtMs = nil
            switch outcome {
            case .sent(let atMs):
                row.status = .sent
                row.sentAtMs = atMs
                row.nextAttemptAtMs = nil
            case .retry(let next, let error):
                row.nextAttemptAtMs = next
                row.lastError = error
            case .failed(let error):
                row.status = .failed
                row.nextAttemptAtMs = nil
                row.lastError = error
            }
            self.outbox[id] = row
            self.audited(audit)
            return .success(true)
        }
    }

    public func listMail(status: MailStatus?, limit: Int, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[MailListing]>) {
        answer(.listMail, completion) {
            let rows = self.outbox.values.filter { status == nil || $0.status == status }.sorted { $0.id > $1.id }
            return .success(rows.prefix(max(0, limit)).map { row in
                MailListing(id: row.id, account: row.account, kind: row.kind, recipient: row.recipient,
                            status: row.status, attempts: row.attempts, lastError: row.lastError,
                            queuedAtMs: row.queuedAtMs, nextAttemptAtMs: row.nextAttemptAtMs, sentAtMs: row.sentAtMs)
            })
        }
    }

    public func mailCounts(charge: QueueCharge, completion: @escaping StorageCompletion<MailCounts>) {
        answer(.mailCounts, completion) {
            let statuses = self.outbox.values.map(\.status)
            return .success(MailCounts(queued: statuses.filter { $0 == .queued }.count,
                                       failed: statuses.filter { $0 == .failed }.count,
                                       sent: statuses.filter { $0 == .sent }.count))
        }
    }

    // MARK: Rows

    /// A write's entry, then its mails, as many as the cap admits, each with its code and (when the write has an
    /// entry) a `mail_queued` entry of its own: called in the answer that makes the write.
    func audited(_ audit: AuditRecord?, queuing mails: [QueuedMail], for account: AccountID) {
        audited(audit)
        let now = clock.nowMs()
        for mail in MailLimits.admitted(mails, queued: queuedMailCount(of: account)) {
            insert(mail, for: account, now: now)
            audited(audit?.mailQueued(mail.kind))
        }
    }

    @discardableResult
    private func insert(_ mail: QueuedMail, for account: AccountID, now: Int64) -> MailID {
        let id = nextMailID
        nextMailID += 1
        outbox[id] = CopiedMail(id: id, account: account, kind: mail.kind, recipient: mail.recipient,
                                sealedMessage: mail.sealedMessage, status: .queued, attempts: 0, nextAttemptAtMs: now,
                                claimant: nil, claimExpiresAtMs: nil, lastError: nil, queuedAtMs: now, sentAtMs: nil)
        if let code = mail.code {
            mailCodes[account, default: [:]][code.purpose] = StoredMailCode(code, createdAtMs: now)
        }
        return id
    }

    private func queuedMailCount(of account: AccountID) -> Int {
        outbox.values.filter { $0.account == account && $0.status == .queued }.count
    }

    /// One try of the account's code of `purpose`, its tries and use written back.
    private func tryCode(_ codeHash: [UInt8], of account: AccountID, purpose: MailCodePurpose,
                         nowMs: Int64) -> MailCodeTry {
        guard let stored = mailCodes[account]?[purpose] else { return .noLiveCode }
        let tried = stored.tried(codeHash, atMs: nowMs, accountEmail: accounts[account]?.account.email)
        if let after = tried.after { mailCodes[account]?[purpose] = after }
        return tried.outcome
    }

    private static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }
}

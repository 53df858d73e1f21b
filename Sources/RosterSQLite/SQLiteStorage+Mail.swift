import RosterRuntime
import RosterStorage

// The outbox and the mailed codes (protocol.md §Storage). Every call runs on the workers, each write in the write
// turn with its entry in its transaction (`auditedWrite`). A redeemed code and the sender's calls are forced (the
// protocol says they are never refused); queueing, a verification and the reads a budget may refuse.

extension SQLiteStorage {
    public func queueCodeMail(of account: AccountID, _ mail: QueuedMail, minimumIntervalMs: Int64, audit: AuditRecord?,
                              charge: QueueCharge, completion: @escaping StorageCompletion<CodeMailQueueing>) {
        auditedWrite(charge, "code mail", audit: audit, rule: AuditRule(happened: { $0.isQueued }), { database, now in
            try MailStore(database: database).queueCode(mail, for: account, minimumIntervalMs: minimumIntervalMs,
                                                        now: now)
        }, completion: completion)
    }

    public func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, audit: AuditRecord?,
                            charge: QueueCharge, completion: @escaping StorageCompletion<MailCodeCheck>) {
        auditedWrite(charge, "email verification", audit: audit, rule: AuditRule(happened: { $0.isVerified }),
                     { database, _ in
            try MailStore(database: database).verifyEmail(of: account, codeHash: codeHash, nowMs: nowMs)
        }, completion: completion)
    }

    public func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                                 audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                                 completion: @escaping StorageCompletion<MailedCodeRedemption>) {
        auditedWrite(charge, force: true, "recovery by mail", audit: audit,
                     rule: AuditRule(happened: { $0.isRedeemed }), mail: .of(account, mail), { database, _ in
            try AccountLifeStore(database: database).redeemMailedCode(userID: account, codeHash: codeHash, nowMs: nowMs,
                                                                       newHash: newPasswordHash)
        }, completion: completion)
    }

    public func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[ClaimedMail]>) {
        let logger = self.logger
        work(charge, force: true, { worker in
            do throws(StoreError) {
                let store = MailStore(database: try worker.database())
                return .success(try worker.writeTurn.take { () throws(StoreError) in
                    try store.claim(claimant: claimant, nowMs: nowMs, leaseMs: leaseMs, limit: limit)
                })
            } catch {
                return .failure(error.storageFailure(logging: logger, "claiming due mail"))
            }
        }, completion: completion)
    }

    public func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, audit: AuditRecord?,
                           charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, force: true, "mail hand-off", audit: audit, rule: .whenTrue, { database, _ in
            try MailStore(database: database).finish(id, claimant: claimant, outcome: outcome)
        }, completion: completion)
    }

    public func listMail(status: MailStatus?, limit: Int, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[MailListing]>) {
        mailRead(charge, "mail list", { (store) throws(StoreError) in try store.list(status: status, limit: limit) },
                 completion: completion)
    }

    public func mailCounts(charge: QueueCharge, completion: @escaping StorageCompletion<MailCounts>) {
        mailRead(charge, "mail counts", { (store) throws(StoreError) in try store.counts() }, completion: completion)
    }

    /// `body` on a worker's store, which reads only.
    private func mailRead<T: Sendable>(_ charge: QueueCharge, _ operation: String,
                                       _ body: @escaping @Sendable (MailStore) throws(StoreError) -> T,
                                       completion: @escaping StorageCompletion<T>) {
        workerRead(charge, operation, { (database) throws(StoreError) in try body(MailStore(database: database)) },
                   completion: completion)
    }
}

import RosterRuntime
import RosterStorage

// The audit log (protocol.md §The audit log). An audited write runs its change and its entry in one enclosing transaction in the
// write turn, so a crash keeps both or neither; once the worker is done (the commit is on disk) the loop tells
// `onAudit` of the entry, then answers. An appended entry is forced (never refused by a budget), as is pruning,
// the daemon's own housekeeping; a query a budget may refuse.

extension SQLiteStorage {
    /// Entries deleted per transaction while pruning.
    static let pruneBatch = 1_000

    public func appendAudit(_ record: AuditRecord, charge: QueueCharge, completion: @escaping StorageCompletion<AuditEntry>) {
        // A write that changes nothing but the log: its entry is there whenever it succeeded.
        committing(charge, force: true, "audit entry", audit: record, rule: .always, mail: .none, { _, _ in () },
                   completion: { completion($0.flatMap { $0.entries.first.map { .success($0) } ?? .failure(.other) }) })
    }

    public func auditEntries(_ query: AuditQuery, charge: QueueCharge, completion: @escaping StorageCompletion<[AuditEntry]>) {
        let logger = self.logger
        work(charge, { worker in
            do throws(StoreError) {
                return .success(try AuditLogStore(database: try worker.database()).entries(query))
            } catch {
                return .failure(error.storageFailure(logging: logger, "audit log read"))
            }
        }, completion: completion)
    }

    public func pruneAudit(before beforeMs: Int64, charge: QueueCharge, completion: @escaping StorageCompletion<Int>) {
        let logger = self.logger
        let batch = Self.pruneBatch
        work(charge, force: true, { worker in
            do throws(StoreError) {
                let store = AuditLogStore(database: try worker.database())
                var pruned = 0
                while true {
                    let deleted = try worker.writeTurn.take { () throws(StoreError) in
                        try store.prune(before: beforeMs, limit: batch)
                    }
                    pruned += deleted
                    if deleted < batch { return .success(pruned) }
                }
            } catch {
                return .failure(error.storageFailure(logging: logger, "audit log pruning"))
            }
        }, completion: completion)
    }

    /// Runs `change` (given the worker's connection and the time it writes at) and, when `rule` gives an entry
    /// for what it answered, appends that entry at the same time, in one enclosing transaction
    /// in the write turn; on the loop, `onAudit` hears the committed entry before `completion` has the value.
    /// `mail` is queued in the same transaction when `rule` says the write happened, whether or not it has an entry;
    /// with an entry, each mail the outbox's cap admits gets a `mail_queued` entry of its own after it.
    /// What `change` throws (a `StoreError`, or a `UserStoreError` for a clash or a refused hash) rolls both
    /// back, is logged as `operation` and mapped.
    func auditedWrite<T: Sendable>(_ charge: QueueCharge, order: QueueOrder? = nil, force: Bool = false,
                                   _ operation: String, audit: AuditRecord?,
                                   rule: AuditRule<T> = .always, mail: WriteMail<T> = .none,
                                   _ change: @escaping @Sendable (Database, Int64) throws -> T,
                                   completion: @escaping StorageCompletion<T>) {
        committing(charge, order: order, force: force, operation, audit: audit, rule: rule, mail: mail, change,
                   completion: { completion($0.map(\.value)) })
    }

    /// `auditedWrite`, answering the entry too.
    private func committing<T: Sendable>(_ charge: QueueCharge, order: QueueOrder? = nil, force: Bool,
                                         _ operation: String, audit: AuditRecord?,
                                         rule: AuditRule<T>, mail: WriteMail<T>,
                                         _ change: @escaping @Sendable (Database, Int64) throws -> T,
                                         completion: @escaping StorageCompletion<AuditedValue<T>>) {
        let clock = self.clock
        let logger = self.logger
        work(charge, order: order, force: force, { worker -> Result<AuditedValue<T>, StorageFailure> in
            do {
                let database = try worker.database()
                return .success(try worker.writeTurn.take {
                    try database.enclosingTransaction {
                        let now = clock.nowMs()
                        let value = try change(database, now)
                        var queued: ArraySlice<QueuedMail> = []
                        if !mail.mails.isEmpty, rule.happened(value), let account = mail.account(value) {
                            let ids = try MailStore(database: database).queue(mail.mails, for: account, now: now)
                            queued = mail.mails.prefix(ids.count)
                        }
                        guard let audit = rule.entry(audit, after: value) else {
                            return AuditedValue(value: value, entries: [])
                        }
                        let log = AuditLogStore(database: database)
                        var entries = [try log.append(audit, at: now)]
                        for mail in queued { entries.append(try log.append(audit.mailQueued(mail.kind), at: now)) }
                        return AuditedValue(value: value, entries: entries)
                    }
                })
            } catch {
                return .failure(storageFailure(error, operation, logging: logger))
            }
        }, completion: { [weak self] result in
            if case .success(let audited) = result {
                for entry in audited.entries { self?.onAudit?(entry, .here) }
            }
            completion(result)
        })
    }
}

/// A write's mails, and the account they are filed under once the write's value is known (a registration's is
/// the account it made).
struct WriteMail<T>: Sendable {
    let mails: [QueuedMail]
    let account: @Sendable (T) -> AccountID?

    static var none: WriteMail { WriteMail(mails: [], account: { _ in nil }) }

    /// `mails`, filed under `account`.
    static func of(_ account: AccountID, _ mails: [QueuedMail]) -> WriteMail {
        WriteMail(mails: mails, account: { _ in account })
    }
}

/// What an audited write's worker hands the loop: the write's value and the entries it committed, oldest first:
/// the change's, then one `mail_queued` for each mail the outbox took with it.
struct AuditedValue<T: Sendable>: Sendable {
    let value: T
    let entries: [AuditEntry]
}

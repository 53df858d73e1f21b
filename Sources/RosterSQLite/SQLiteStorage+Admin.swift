import RosterRuntime
import RosterStorage

// The administrator's calls (protocol.md §Administering users). Reads and writes run on the workers, writes in the write turn; a lock
// and a reset are forced (the protocol says they are never refused).
extension SQLiteStorage {
    private typealias Store = AdminStore

    public func listAccounts(matching query: String?, limit: Int, offset: Int, charge: QueueCharge,
                      completion: @escaping StorageCompletion<AccountPage>) {
        admin(charge, "account list", { (store: Store) throws(StoreError) in try store.list(query: query ?? "", limit: limit, offset: offset) },
              completion: completion)
    }

    public func accountSummary(_ identifier: AccountIdentifier, charge: QueueCharge,
                        completion: @escaping StorageCompletion<AccountSummary?>) {
        admin(charge, "account summary", { (store: Store) throws(StoreError) in try store.summary(identifier) }, completion: completion)
    }

    public func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, force: true, "account lock", audit: audit, rule: .whenTrue, { database, now in
            try Store(database: database).lock(userID: account, reason: reason, now: now)
        }, completion: completion)
    }

    public func unlockAccount(_ account: AccountID, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, "account unlock", audit: audit, rule: .whenTrue, { database, _ in
            try Store(database: database).unlock(userID: account)
        }, completion: completion)
    }

    public func resetFailures(keys: [String], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        auditedWrite(charge, force: true, "failure reset", audit: audit, { database, _ in
            try Store(database: database).resetFailures(keys: keys)
        }, completion: completion)
    }

    /// `body` on a worker's store; a failure is logged as `operation` and mapped.
    private func admin<T: Sendable>(_ charge: QueueCharge, _ operation: String,
                                    _ body: @escaping @Sendable (AdminStore) throws(StoreError) -> T,
                                    completion: @escaping StorageCompletion<T>) {
        workerRead(charge, operation, { (database) throws(StoreError) in try body(AdminStore(database: database)) },
                   completion: completion)
    }
}

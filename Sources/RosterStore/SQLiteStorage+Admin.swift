import RosterRuntime
import RosterStorage

// The administrator's calls (issue 16). Reads and writes run on the workers, writes in the write turn; a lock
// and a reset are forced (the protocol says they are never refused).
extension SQLiteStorage: AdminStorage {
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
        let clock = self.clock
        admin(charge, write: true, force: true, "account lock", { (store: Store) throws(StoreError) in
            try store.lock(userID: account, reason: reason, now: clock.nowMs())
        }, completion: completion)
    }

    public func unlockAccount(_ account: AccountID, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        admin(charge, write: true, "account unlock", { (store: Store) throws(StoreError) in try store.unlock(userID: account) }, completion: completion)
    }

    public func resetFailures(keys: [String], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        admin(charge, write: true, force: true, "failure reset", { (store: Store) throws(StoreError) in try store.resetFailures(keys: keys) },
              completion: completion)
    }

    /// `body` on a worker's store, a write in the write turn; a failure is logged as `operation` and mapped.
    private func admin<T: Sendable>(_ charge: QueueCharge, write: Bool = false, force: Bool = false, _ operation: String,
                                    _ body: @escaping @Sendable (AdminStore) throws(StoreError) -> T,
                                    completion: @escaping StorageCompletion<T>) {
        let logger = self.logger
        work(charge, force: force, { worker in
            do throws(StoreError) {
                let store = AdminStore(database: try worker.database())
                let value = write ? try worker.writeTurn.take { () throws(StoreError) in try body(store) } : try body(store)
                return .success(value)
            } catch {
                return .failure(error.storageFailure(logging: logger, operation))
            }
        }, completion: completion)
    }
}

import RosterRuntime
import RosterStorage

// App passwords (protocol.md "App passwords"). Every call runs on the workers, charged to whoever asked, each write
// in the write turn with its entry in its transaction (`auditedWrite`). A removal and a log-in's last use are forced
// (a leaked secret must be removable however full the queue is; a use follows an accepted log-in); the list and an
// addition a budget may refuse.

extension SQLiteStorage {
    public func appPasswords(of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[StoredAppPassword]>) {
        workerRead(charge, "app password list", { (database) throws(StoreError) in
            try AppPasswordStore(database: database).appPasswords(of: account)
        }, completion: completion)
    }

    public func addAppPassword(_ appPassword: StoredAppPassword, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                               completion: @escaping StorageCompletion<AppPasswordAddition>) {
        guard appPassword.isStorable else {
            logger.error("app password refused: an id of \(appPassword.id.unicodeScalars.count) characters or a bad hash")
            return completion(.failure(.other))
        }
        auditedWrite(charge, "app password creation", audit: audit, rule: AuditRule(happened: { $0.isAdded }),
                     { database, now in
            try AppPasswordStore(database: database).add(appPassword, limit: limit, now: now)
        }, completion: completion)
    }

    public func removeAppPassword(of account: AccountID, id: String, audit: AuditRecord?, charge: QueueCharge,
                                  completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, force: true, "app password removal", audit: audit, rule: .whenTrue, { database, _ in
            try AppPasswordStore(database: database).remove(of: account, id: id)
        }, completion: completion)
    }

    public func touchAppPassword(of account: AccountID, id: String, usedMs: Int64, charge: QueueCharge,
                                 completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, force: true, "app password use", audit: nil, { database, _ in
            try AppPasswordStore(database: database).touch(of: account, id: id, usedMs: usedMs)
        }, completion: completion)
    }
}

import RosterRuntime
import RosterStorage

// Passkeys and user handles (protocol.md §Storage). Every call runs on the workers, charged to whoever asked, each
// write in the write turn with its entry in its transaction (`auditedWrite`). A removal and a log-in's count are
// forced (each follows a password or a signature already verified); the reads, a handle and an addition a budget
// may refuse.

extension SQLiteStorage {
    public func passkeyUserHandle(of account: AccountID, candidate: [UInt8], charge: QueueCharge,
                                  completion: @escaping StorageCompletion<[UInt8]?>) {
        guard PasskeyLimits.storedUserHandleBytes.contains(candidate.count) else {
            logger.error("passkey user handle refused: a candidate of \(candidate.count) bytes")
            return completion(.failure(.other))
        }
        auditedWrite(charge, "passkey user handle", audit: nil, { database, _ in
            try PasskeyStore(database: database).userHandle(of: account, candidate: candidate)
        }, completion: completion)
    }

    public func account(forUserHandle handle: [UInt8], charge: QueueCharge,
                        completion: @escaping StorageCompletion<Account?>) {
        workerRead(charge, "passkey user handle read", { (database) throws(StoreError) in
            try PasskeyStore(database: database).account(forHandle: handle)
        }, completion: completion)
    }

    public func passkeys(of account: AccountID, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[StoredPasskey]>) {
        workerRead(charge, "passkey list", { (database) throws(StoreError) in
            try PasskeyStore(database: database).passkeys(of: account)
        }, completion: completion)
    }

    public func passkey(credentialID: [UInt8], charge: QueueCharge,
                        completion: @escaping StorageCompletion<OwnedPasskey?>) {
        workerRead(charge, "passkey read", { (database) throws(StoreError) in
            try PasskeyStore(database: database).passkey(credentialID: credentialID)
        }, completion: completion)
    }

    public func addPasskey(_ passkey: StoredPasskey, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                           completion: @escaping StorageCompletion<PasskeyAddition>) {
        guard passkey.isStorable else {
            logger.error("passkey refused: a credential id of \(passkey.credentialID.count) bytes or no key")
            return completion(.failure(.other))
        }
        auditedWrite(charge, "passkey registration", audit: audit, rule: AuditRule(happened: { $0.isAdded }),
                     { database, now in
            try PasskeyStore(database: database).add(passkey, limit: limit, now: now)
        }, completion: completion)
    }

    public func removePasskey(of account: AccountID, credentialID: [UInt8], audit: AuditRecord?, mail: [QueuedMail],
                              charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, force: true, "passkey removal", audit: audit, rule: .whenTrue, mail: .of(account, mail),
                     { database, _ in
            try PasskeyStore(database: database).remove(of: account, credentialID: credentialID)
        }, completion: completion)
    }

    public func usePasskey(credentialID: [UInt8], signCount: UInt32, usedMs: Int64, charge: QueueCharge,
                           completion: @escaping StorageCompletion<PasskeyUse>) {
        auditedWrite(charge, force: true, "passkey log-in", audit: nil, { database, _ in
            try PasskeyStore(database: database).use(credentialID: credentialID, signCount: signCount, usedMs: usedMs)
        }, completion: completion)
    }
}

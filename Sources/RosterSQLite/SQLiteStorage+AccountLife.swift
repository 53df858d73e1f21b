import RosterRuntime
import RosterStorage

// The life of an account (protocol.md §The life of an account). Its security state and credential are point reads on the loop's connection;
// everything else runs on the workers, each write in the write turn, an audited one with its entry in its
// transaction (`auditedWrite`). Revocations, deletion, a redeemed code and a TOTP step are forced (the protocol
// says they are never refused); the rest a budget may refuse.

extension SQLiteStorage {
    public func security(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<AccountSecurity?>) {
        read("account security read", completion) { () throws(StoreError) in
            try AccountLifeStore(database: users.database).security(userID: account)
        }
    }

    public func credential(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Credential?>) {
        read("user database read", completion) { () throws(StoreError) in try users.credential(id: account) }
    }

    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                               mail: [QueuedMail], charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>) {
        auditedWrite(charge, force: true, "password change", audit: audit, mail: .of(account, mail), { database, _ in
            try AccountLifeStore(database: database).changePassword(userID: account, hash: passwordHash, keeping: keeping)
        }, completion: completion)
    }

    public func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?, mail: [QueuedMail],
                            charge: QueueCharge, completion: @escaping StorageCompletion<Account?>) {
        auditedWrite(charge, "email change", audit: audit, rule: .whenFound(), mail: .of(account, mail), { database, _ in
            try AccountLifeStore(database: database).changeEmail(userID: account, to: email).map(Account.init)
        }, completion: completion)
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?, mail: [QueuedMail],
                              charge: QueueCharge, completion: @escaping StorageCompletion<DeletedAccount?>) {
        // In the user's contact order, so a contact write asked for before the deletion is not left behind it.
        auditedWrite(charge, order: .contacts(userID: account), force: true, "account deletion", audit: audit,
                     rule: .whenFound(), mail: .of(account, mail), { database, _ in
            try AccountLifeStore(database: database).delete(userID: account, failureKeys: failureKeys).map { record, tokens in
                DeletedAccount(account: Account(record), revokedTokens: tokens)
            }
        }, completion: { [weak self] result in
            if case .success(let deleted?) = result { self?.usernames.remove(deleted.account.username) }
            completion(result)
        })
    }

    public func sessions(of account: AccountID, idleLimitMs: Int64, charge: QueueCharge,
                  completion: @escaping StorageCompletion<[StoredSession]>) {
        let clock = self.clock
        let logger = self.logger
        work(charge, { worker in
            do throws(StoreError) {
                let store = AccountLifeStore(database: try worker.database())
                return .success(try store.sessions(userID: account, now: clock.nowMs(), idleLimitMs: idleLimitMs))
            } catch {
                return .failure(error.storageFailure(logging: logger, "session list"))
            }
        }, completion: completion)
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?, charge: QueueCharge,
                      completion: @escaping StorageCompletion<[[UInt8]]>) {
        accountWrite(account, charge, force: true, "token revocation", audit: audit, { store in
            try store.revokeTokens(userID: account, except: keeping)
        }, completion: completion)
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?, mail: [QueuedMail],
                                     charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        accountWrite(account, charge, "recovery codes", audit: audit, mail: mail, { store in
            try store.replaceRecoveryCodes(userID: account, hashes: hashes)
        }, completion: completion)
    }

    public func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8], charge: QueueCharge,
                           completion: @escaping StorageCompletion<Bool>) {
        read("recovery code read", completion) { () throws(StoreError) in
            try AccountLifeStore(database: users.database).holdsRecoveryCode(userID: account, codeHash: codeHash)
        }
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String, audit: AuditRecord?,
                                   mail: [QueuedMail], charge: QueueCharge,
                                   completion: @escaping StorageCompletion<[[UInt8]]?>) {
        auditedWrite(charge, force: true, "recovery", audit: audit, rule: .whenFound(), mail: .of(account, mail),
                     { database, _ in
            try AccountLifeStore(database: database).redeemRecoveryCode(userID: account, codeHash: codeHash,
                                                                         newHash: newPasswordHash)
        }, completion: completion)
    }

    public func storePendingTOTP(of account: AccountID, sealed: [UInt8], charge: QueueCharge,
                          completion: @escaping StorageCompletion<Void>) {
        write(charge, "TOTP enrolment", { store in
            try store.storePendingTOTP(userID: account, sealed: sealed)
        }, completion: completion)
    }

    public func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, "TOTP confirmation", audit: audit, rule: .whenTrue, { database, _ in
            try AccountLifeStore(database: database).confirmTOTP(userID: account, step: step)
        }, completion: completion)
    }

    public func acceptTOTPStep(of account: AccountID, step: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<Bool>) {
        write(charge, force: true, "TOTP step", { store in
            try store.acceptTOTPStep(userID: account, step: step)
        }, completion: completion)
    }

    public func removeTOTP(of account: AccountID, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                           completion: @escaping StorageCompletion<Void>) {
        accountWrite(account, charge, "TOTP removal", audit: audit, mail: mail, { store in
            try store.removeTOTP(userID: account)
        }, completion: completion)
    }

    /// `body` on the account, audited when the account was there (whether or not `body` found anything to change:
    /// a revocation of no other session is still the user's act), in one transaction.
    private func accountWrite<T: Sendable>(_ account: AccountID, _ charge: QueueCharge, force: Bool = false,
                                           _ operation: String, audit: AuditRecord?, mail: [QueuedMail] = [],
                                           _ body: @escaping @Sendable (AccountLifeStore) throws -> T,
                                           completion: @escaping StorageCompletion<T>) {
        auditedWrite(charge, force: force, operation, audit: audit, rule: AuditRule(happened: { $0.existed }),
                     mail: .of(account, mail), { database, _ in
            let existed = try UserStore(database: database).user(id: account) != nil
            return AccountWriteValue(value: try body(AccountLifeStore(database: database)), existed: existed)
        }, completion: { completion($0.map(\.value)) })
    }

    /// `body` on a worker's store, in the write turn; what it throws (a `StoreError`, or a `UserStoreError` for a
    /// clash or a refused hash) is logged as `operation` and mapped.
    private func write<T: Sendable>(_ charge: QueueCharge, order: QueueOrder? = nil, force: Bool = false,
                                    _ operation: String, _ body: @escaping @Sendable (AccountLifeStore) throws -> T,
                                    completion: @escaping StorageCompletion<T>) {
        let logger = self.logger
        work(charge, order: order, force: force, { worker in
            do {
                let store = AccountLifeStore(database: try worker.database())
                return .success(try worker.writeTurn.take { try body(store) })
            } catch {
                return .failure(storageFailure(error, operation, logging: logger))
            }
        }, completion: completion)
    }
}

/// An account write's value, and whether the account was there for it.
private struct AccountWriteValue<T: Sendable>: Sendable {
    let value: T
    let existed: Bool
}

import RosterCore
import RosterRuntime
import RosterStorage

// The data calls as the server makes them: through a view bound to whoever pays for the work. Each call hands its
// charge to the backend's own method of the same name, which admits the work to the queue under that payer's and
// connection's budgets.

extension InMemoryStorage {
    public func acting(for charge: QueueCharge) -> Acting { Acting(storage: self, charge: charge) }

    /// `InMemoryStorage`'s data, every call charged to one payer and connection.
    public struct Acting: StorageCalls {
        let storage: InMemoryStorage
        let charge: QueueCharge
    }
}

extension InMemoryStorage.Acting {
    public func isUsernameTaken(_ canonical: String, completion: @escaping StorageCompletion<Bool>) {
        storage.isUsernameTaken(canonical, charge: charge, completion: completion)
    }

    public func isEmailTaken(_ canonical: String, completion: @escaping StorageCompletion<Bool>) {
        storage.isEmailTaken(canonical, charge: charge, completion: completion)
    }

    public func accountExists(_ identifier: AccountIdentifier, completion: @escaping StorageCompletion<Bool>) {
        storage.accountExists(identifier, charge: charge, completion: completion)
    }

    public func credential(for identifier: AccountIdentifier, completion: @escaping StorageCompletion<Credential?>) {
        storage.credential(for: identifier, charge: charge, completion: completion)
    }

    public func createAccount(_ account: NewAccount, audit: AuditRecord?,
                              completion: @escaping StorageCompletion<Account>) {
        storage.createAccount(account, audit: audit, charge: charge, completion: completion)
    }

    public func replacePasswordHash(_ hash: String, of account: AccountID,
                                    completion: @escaping StorageCompletion<Void>) {
        storage.replacePasswordHash(hash, of: account, charge: charge, completion: completion)
    }

    public func security(of account: AccountID, completion: @escaping StorageCompletion<AccountSecurity?>) {
        storage.security(of: account, charge: charge, completion: completion)
    }

    public func credential(of account: AccountID, completion: @escaping StorageCompletion<Credential?>) {
        storage.credential(of: account, charge: charge, completion: completion)
    }

    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                               completion: @escaping StorageCompletion<[[UInt8]]>) {
        storage.changePassword(of: account, to: passwordHash, keeping: keeping, audit: audit, charge: charge,
                               completion: completion)
    }

    public func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Account?>) {
        storage.changeEmail(of: account, to: email, audit: audit, charge: charge, completion: completion)
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?,
                              completion: @escaping StorageCompletion<DeletedAccount?>) {
        storage.deleteAccount(account, failureKeys: failureKeys, audit: audit, charge: charge, completion: completion)
    }

    public func sessions(of account: AccountID, idleLimitMs: Int64,
                         completion: @escaping StorageCompletion<[StoredSession]>) {
        storage.sessions(of: account, idleLimitMs: idleLimitMs, charge: charge, completion: completion)
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?,
                             completion: @escaping StorageCompletion<[[UInt8]]>) {
        storage.revokeTokens(of: account, except: keeping, audit: audit, charge: charge, completion: completion)
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?,
                                     completion: @escaping StorageCompletion<Void>) {
        storage.replaceRecoveryCodes(of: account, hashes: hashes, audit: audit, charge: charge, completion: completion)
    }

    public func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8],
                                  completion: @escaping StorageCompletion<Bool>) {
        storage.holdsRecoveryCode(of: account, codeHash: codeHash, charge: charge, completion: completion)
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String,
                                   audit: AuditRecord?, completion: @escaping StorageCompletion<[[UInt8]]?>) {
        storage.redeemRecoveryCode(of: account, codeHash: codeHash, newPasswordHash: newPasswordHash, audit: audit,
                                   charge: charge, completion: completion)
    }

    public func storePendingTOTP(of account: AccountID, sealed: [UInt8],
                                 completion: @escaping StorageCompletion<Void>) {
        storage.storePendingTOTP(of: account, sealed: sealed, charge: charge, completion: completion)
    }

    public func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Bool>) {
        storage.confirmTOTP(of: account, step: step, audit: audit, charge: charge, completion: completion)
    }

    public func acceptTOTPStep(of account: AccountID, step: Int64, completion: @escaping StorageCompletion<Bool>) {
        storage.acceptTOTPStep(of: account, step: step, charge: charge, completion: completion)
    }

    public func removeTOTP(of account: AccountID, audit: AuditRecord?, completion: @escaping StorageCompletion<Void>) {
        storage.removeTOTP(of: account, audit: audit, charge: charge, completion: completion)
    }

    public func listAccounts(matching query: String?, limit: Int, offset: Int,
                             completion: @escaping StorageCompletion<AccountPage>) {
        storage.listAccounts(matching: query, limit: limit, offset: offset, charge: charge, completion: completion)
    }

    public func accountSummary(_ identifier: AccountIdentifier,
                               completion: @escaping StorageCompletion<AccountSummary?>) {
        storage.accountSummary(identifier, charge: charge, completion: completion)
    }

    public func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Bool>) {
        storage.lockAccount(account, reason: reason, audit: audit, charge: charge, completion: completion)
    }

    public func unlockAccount(_ account: AccountID, audit: AuditRecord?,
                              completion: @escaping StorageCompletion<Bool>) {
        storage.unlockAccount(account, audit: audit, charge: charge, completion: completion)
    }

    public func resetFailures(keys: [String], audit: AuditRecord?, completion: @escaping StorageCompletion<Void>) {
        storage.resetFailures(keys: keys, audit: audit, charge: charge, completion: completion)
    }

    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?,
                           limit: TokenLimit?, completion: @escaping StorageCompletion<[[UInt8]]>) {
        storage.storeToken(hash: hash, for: account, client: client, audit: audit, limit: limit, charge: charge,
                           completion: completion)
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Account?>) {
        storage.resumeToken(hash: hash, idleLimitMs: idleLimitMs, audit: audit, charge: charge, completion: completion)
    }

    public func revokeToken(hash: [UInt8], audit: AuditRecord?, completion: @escaping StorageCompletion<Bool>) {
        storage.revokeToken(hash: hash, audit: audit, charge: charge, completion: completion)
    }

    public func recentFailures(keys: [String], windowMs: Int64,
                               completion: @escaping StorageCompletion<RecentFailures>) {
        storage.recentFailures(keys: keys, windowMs: windowMs, charge: charge, completion: completion)
    }

    public func recordFailure(keys: [String], audit: AuditRecord?, completion: @escaping StorageCompletion<Void>) {
        storage.recordFailure(keys: keys, audit: audit, charge: charge, completion: completion)
    }

    public func loadSearchIndex<T: Sendable>(of user: AccountID, build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                             completion: @escaping StorageCompletion<T>) {
        storage.loadSearchIndex(of: user, charge: charge, build: build, completion: completion)
    }

    public func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, cancelled: Locked<Bool>,
                                          encode: @escaping @Sendable ([Contact]) -> T,
                                          completion: @escaping StorageCompletion<T>) {
        storage.readContacts(ids, of: user, charge: charge, cancelled: cancelled, encode: encode,
                             completion: completion)
    }

    public func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant,
                           completion: @escaping StorageCompletion<StoredContact>) {
        storage.addContact(draft, for: user, session: session, charge: charge, completion: completion)
    }

    public func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                              completion: @escaping StorageCompletion<ContactUpdate>) {
        storage.updateContact(id, of: user, session: session, with: patch, charge: charge, completion: completion)
    }

    public func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant,
                              completion: @escaping StorageCompletion<Bool>) {
        storage.removeContact(id, of: user, session: session, charge: charge, completion: completion)
    }

    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                               completion: @escaping StorageCompletion<ContactImportOutcome>) {
        storage.importContacts(data, format: format, for: user, session: session, charge: charge,
                               completion: completion)
    }

    public func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink,
                                                        cancelled: Locked<Bool>,
                                                        completion: @escaping StorageCompletion<Sink.Output>) {
        storage.exportContacts(of: user, after: after, into: sink, charge: charge, cancelled: cancelled,
                               completion: completion)
    }

    public func appendAudit(_ record: AuditRecord, completion: @escaping StorageCompletion<AuditEntry>) {
        storage.appendAudit(record, charge: charge, completion: completion)
    }

    public func auditEntries(_ query: AuditQuery, completion: @escaping StorageCompletion<[AuditEntry]>) {
        storage.auditEntries(query, charge: charge, completion: completion)
    }

    public func pruneAudit(before beforeMs: Int64, completion: @escaping StorageCompletion<Int>) {
        storage.pruneAudit(before: beforeMs, charge: charge, completion: completion)
    }

    public func backup(to path: String, completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void) {
        storage.backup(to: path, charge: charge, completion: completion)
    }
}

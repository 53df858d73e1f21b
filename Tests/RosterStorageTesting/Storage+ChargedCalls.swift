import RosterCore
import RosterRuntime
import RosterStorage

// The data calls with the charge named at each one, as tests that are about one call (not about who pays for
// it) write them: each binds a view with `acting(for:)` and makes the call through it, as the server does.

extension Storage {
    public func isUsernameTaken(_ canonical: String, charge: QueueCharge,
                                completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).isUsernameTaken(canonical, completion: completion)
    }

    public func isEmailTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).isEmailTaken(canonical, completion: completion)
    }

    public func accountExists(_ identifier: AccountIdentifier, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).accountExists(identifier, completion: completion)
    }

    public func credential(for identifier: AccountIdentifier, charge: QueueCharge,
                           completion: @escaping StorageCompletion<Credential?>) {
        acting(for: charge).credential(for: identifier, completion: completion)
    }

    public func createAccount(_ account: NewAccount, audit: AuditRecord?, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Account>) {
        acting(for: charge).createAccount(account, audit: audit, completion: completion)
    }

    public func replacePasswordHash(_ hash: String, of account: AccountID, charge: QueueCharge,
                                    completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).replacePasswordHash(hash, of: account, completion: completion)
    }

    public func security(of account: AccountID, charge: QueueCharge,
                         completion: @escaping StorageCompletion<AccountSecurity?>) {
        acting(for: charge).security(of: account, completion: completion)
    }

    public func credential(of account: AccountID, charge: QueueCharge,
                           completion: @escaping StorageCompletion<Credential?>) {
        acting(for: charge).credential(of: account, completion: completion)
    }

    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                               charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>) {
        acting(for: charge).changePassword(of: account, to: passwordHash, keeping: keeping, audit: audit,
               completion: completion)
    }

    public func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Account?>) {
        acting(for: charge).changeEmail(of: account, to: email, audit: audit, completion: completion)
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?, charge: QueueCharge,
                              completion: @escaping StorageCompletion<DeletedAccount?>) {
        acting(for: charge).deleteAccount(account, failureKeys: failureKeys, audit: audit, completion: completion)
    }

    public func sessions(of account: AccountID, idleLimitMs: Int64, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[StoredSession]>) {
        acting(for: charge).sessions(of: account, idleLimitMs: idleLimitMs, completion: completion)
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[[UInt8]]>) {
        acting(for: charge).revokeTokens(of: account, except: keeping, audit: audit, completion: completion)
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?, charge: QueueCharge,
                                     completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).replaceRecoveryCodes(of: account, hashes: hashes, audit: audit, completion: completion)
    }

    public func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8], charge: QueueCharge,
                                  completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).holdsRecoveryCode(of: account, codeHash: codeHash, completion: completion)
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String,
                                   audit: AuditRecord?, charge: QueueCharge,
                                   completion: @escaping StorageCompletion<[[UInt8]]?>) {
        acting(for: charge).redeemRecoveryCode(of: account, codeHash: codeHash, newPasswordHash: newPasswordHash,
               audit: audit, completion: completion)
    }

    public func storePendingTOTP(of account: AccountID, sealed: [UInt8], charge: QueueCharge,
                                 completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).storePendingTOTP(of: account, sealed: sealed, completion: completion)
    }

    public func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).confirmTOTP(of: account, step: step, audit: audit, completion: completion)
    }

    public func acceptTOTPStep(of account: AccountID, step: Int64, charge: QueueCharge,
                               completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).acceptTOTPStep(of: account, step: step, completion: completion)
    }

    public func removeTOTP(of account: AccountID, audit: AuditRecord?, charge: QueueCharge,
                           completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).removeTOTP(of: account, audit: audit, completion: completion)
    }

    public func listAccounts(matching query: String?, limit: Int, offset: Int, charge: QueueCharge,
                             completion: @escaping StorageCompletion<AccountPage>) {
        acting(for: charge).listAccounts(matching: query, limit: limit, offset: offset, completion: completion)
    }

    public func accountSummary(_ identifier: AccountIdentifier, charge: QueueCharge,
                               completion: @escaping StorageCompletion<AccountSummary?>) {
        acting(for: charge).accountSummary(identifier, completion: completion)
    }

    public func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).lockAccount(account, reason: reason, audit: audit, completion: completion)
    }

    public func unlockAccount(_ account: AccountID, audit: AuditRecord?, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).unlockAccount(account, audit: audit, completion: completion)
    }

    public func resetFailures(keys: [String], audit: AuditRecord?, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).resetFailures(keys: keys, audit: audit, completion: completion)
    }

    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?,
                           limit: TokenLimit?, charge: QueueCharge,
                           completion: @escaping StorageCompletion<[[UInt8]]>) {
        acting(for: charge).storeToken(hash: hash, for: account, client: client, audit: audit, limit: limit,
               completion: completion)
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Account?>) {
        acting(for: charge).resumeToken(hash: hash, idleLimitMs: idleLimitMs, audit: audit, completion: completion)
    }

    public func revokeToken(hash: [UInt8], audit: AuditRecord?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).revokeToken(hash: hash, audit: audit, completion: completion)
    }

    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?,
                           charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).storeToken(hash: hash, for: account, client: client, audit: audit, completion: completion)
    }

    public func recentFailures(keys: [String], windowMs: Int64, charge: QueueCharge,
                               completion: @escaping StorageCompletion<RecentFailures>) {
        acting(for: charge).recentFailures(keys: keys, windowMs: windowMs, completion: completion)
    }

    public func recordFailure(keys: [String], audit: AuditRecord?, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).recordFailure(keys: keys, audit: audit, completion: completion)
    }

    public func loadSearchIndex<T: Sendable>(of user: AccountID, charge: QueueCharge,
                                             build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                             completion: @escaping StorageCompletion<T>) {
        acting(for: charge).loadSearchIndex(of: user, build: build, completion: completion)
    }

    public func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, charge: QueueCharge,
                                          cancelled: Locked<Bool>, encode: @escaping @Sendable ([Contact]) -> T,
                                          completion: @escaping StorageCompletion<T>) {
        acting(for: charge).readContacts(ids, of: user, cancelled: cancelled, encode: encode, completion: completion)
    }

    public func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant, charge: QueueCharge,
                           completion: @escaping StorageCompletion<StoredContact>) {
        acting(for: charge).addContact(draft, for: user, session: session, completion: completion)
    }

    public func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                              charge: QueueCharge, completion: @escaping StorageCompletion<ContactUpdate>) {
        acting(for: charge).updateContact(id, of: user, session: session, with: patch, completion: completion)
    }

    public func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).removeContact(id, of: user, session: session, completion: completion)
    }

    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                               charge: QueueCharge, completion: @escaping StorageCompletion<ContactImportOutcome>) {
        acting(for: charge).importContacts(data, format: format, for: user, session: session, completion: completion)
    }

    public func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink,
                                                        charge: QueueCharge, cancelled: Locked<Bool>,
                                                        completion: @escaping StorageCompletion<Sink.Output>) {
        acting(for: charge).exportContacts(of: user, after: after, into: sink, cancelled: cancelled,
               completion: completion)
    }

    public func appendAudit(_ record: AuditRecord, charge: QueueCharge,
                            completion: @escaping StorageCompletion<AuditEntry>) {
        acting(for: charge).appendAudit(record, completion: completion)
    }

    public func auditEntries(_ query: AuditQuery, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[AuditEntry]>) {
        acting(for: charge).auditEntries(query, completion: completion)
    }

    public func pruneAudit(before beforeMs: Int64, charge: QueueCharge, completion: @escaping StorageCompletion<Int>) {
        acting(for: charge).pruneAudit(before: beforeMs, completion: completion)
    }

    public func backup(to path: String, charge: QueueCharge,
                       completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void) {
        acting(for: charge).backup(to: path, completion: completion)
    }

    public func createAccount(_ account: NewAccount, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Account>) {
        acting(for: charge).createAccount(account, completion: completion)
    }

    public func storeToken(hash: [UInt8], for account: AccountID, client: String? = nil, charge: QueueCharge,
                           completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).storeToken(hash: hash, for: account, client: client, completion: completion)
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Account?>) {
        acting(for: charge).resumeToken(hash: hash, idleLimitMs: idleLimitMs, completion: completion)
    }

    public func revokeToken(hash: [UInt8], charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).revokeToken(hash: hash, completion: completion)
    }

    public func recordFailure(keys: [String], charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).recordFailure(keys: keys, completion: completion)
    }

    public func lockAccount(_ account: AccountID, reason: String?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).lockAccount(account, reason: reason, completion: completion)
    }

    public func unlockAccount(_ account: AccountID, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).unlockAccount(account, completion: completion)
    }

    public func resetFailures(keys: [String], charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).resetFailures(keys: keys, completion: completion)
    }

    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, charge: QueueCharge,
                               completion: @escaping StorageCompletion<[[UInt8]]>) {
        acting(for: charge).changePassword(of: account, to: passwordHash, keeping: keeping, completion: completion)
    }

    public func changeEmail(of account: AccountID, to email: String?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Account?>) {
        acting(for: charge).changeEmail(of: account, to: email, completion: completion)
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], charge: QueueCharge,
                              completion: @escaping StorageCompletion<DeletedAccount?>) {
        acting(for: charge).deleteAccount(account, failureKeys: failureKeys, completion: completion)
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[[UInt8]]>) {
        acting(for: charge).revokeTokens(of: account, except: keeping, completion: completion)
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], charge: QueueCharge,
                                     completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).replaceRecoveryCodes(of: account, hashes: hashes, completion: completion)
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String,
                                   charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]?>) {
        acting(for: charge).redeemRecoveryCode(of: account, codeHash: codeHash, newPasswordHash: newPasswordHash,
               completion: completion)
    }

    public func confirmTOTP(of account: AccountID, step: Int64, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).confirmTOTP(of: account, step: step, completion: completion)
    }

    public func removeTOTP(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        acting(for: charge).removeTOTP(of: account, completion: completion)
    }

    public func addContact(_ draft: ContactDraft, for user: AccountID, charge: QueueCharge,
                           completion: @escaping StorageCompletion<StoredContact>) {
        acting(for: charge).addContact(draft, for: user, completion: completion)
    }

    public func updateContact(_ id: Int64, of user: AccountID, with patch: ContactPatch, charge: QueueCharge,
                              completion: @escaping StorageCompletion<ContactUpdate>) {
        acting(for: charge).updateContact(id, of: user, with: patch, completion: completion)
    }

    public func removeContact(_ id: Int64, of user: AccountID, charge: QueueCharge,
                              completion: @escaping StorageCompletion<Bool>) {
        acting(for: charge).removeContact(id, of: user, completion: completion)
    }

    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID, charge: QueueCharge,
                               completion: @escaping StorageCompletion<ContactImportOutcome>) {
        acting(for: charge).importContacts(data, format: format, for: user, completion: completion)
    }
}

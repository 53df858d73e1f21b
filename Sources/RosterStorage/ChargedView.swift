import RosterCore
import RosterRuntime

/// What a backend implements: every data call of `StorageCalls`, with the charge its queue admits the work under
/// (the payer's and the connection's budgets). The server never calls these: it reaches the data through
/// `ChargedView`, which `Storage.acting(for:)` binds to one payer, so the charge is written once per request and
/// the data protocols speak of data only. Each requirement's meaning is its `StorageCalls` namesake's.
public protocol ChargedStorageCalls: AnyObject {
    func isUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)
    func isEmailTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)
    func accountExists(_ identifier: AccountIdentifier, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>)
    func credential(for identifier: AccountIdentifier, charge: QueueCharge,
                    completion: @escaping StorageCompletion<Credential?>)
    func createAccount(_ account: NewAccount, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                       completion: @escaping StorageCompletion<Account>)
    func replacePasswordHash(_ hash: String, of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<Void>)
    func security(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<AccountSecurity?>)
    func credential(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Credential?>)
    func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                        mail: [QueuedMail], charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>)
    func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?, mail: [QueuedMail],
                     charge: QueueCharge, completion: @escaping StorageCompletion<Account?>)
    func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?, mail: [QueuedMail],
                       charge: QueueCharge, completion: @escaping StorageCompletion<DeletedAccount?>)
    func sessions(of account: AccountID, idleLimitMs: Int64, charge: QueueCharge,
                  completion: @escaping StorageCompletion<[StoredSession]>)
    func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?, charge: QueueCharge,
                      completion: @escaping StorageCompletion<[[UInt8]]>)
    func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?, mail: [QueuedMail],
                              charge: QueueCharge, completion: @escaping StorageCompletion<Void>)
    func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8], charge: QueueCharge,
                           completion: @escaping StorageCompletion<Bool>)
    func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String, audit: AuditRecord?,
                            mail: [QueuedMail], charge: QueueCharge,
                            completion: @escaping StorageCompletion<[[UInt8]]?>)
    func storePendingTOTP(of account: AccountID, sealed: [UInt8], charge: QueueCharge,
                          completion: @escaping StorageCompletion<Void>)
    func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Bool>)
    func acceptTOTPStep(of account: AccountID, step: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<Bool>)
    func removeTOTP(of account: AccountID, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                    completion: @escaping StorageCompletion<Void>)
    func listAccounts(matching query: String?, limit: Int, offset: Int, charge: QueueCharge,
                      completion: @escaping StorageCompletion<AccountPage>)
    func accountSummary(_ identifier: AccountIdentifier, charge: QueueCharge,
                        completion: @escaping StorageCompletion<AccountSummary?>)
    func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Bool>)
    func unlockAccount(_ account: AccountID, audit: AuditRecord?, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>)
    func resetFailures(keys: [String], audit: AuditRecord?, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Void>)
    func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?, limit: TokenLimit?,
                    charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>)
    func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Account?>)
    func revokeToken(hash: [UInt8], audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Bool>)
    func recentFailures(keys: [String], windowMs: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<RecentFailures>)
    func recordFailure(keys: [String], audit: AuditRecord?, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Void>)
    func loadSearchIndex<T: Sendable>(of user: AccountID, charge: QueueCharge,
                                      build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                      completion: @escaping StorageCompletion<T>)
    func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, charge: QueueCharge, cancelled: Locked<Bool>,
                                   encode: @escaping @Sendable ([Contact]) -> T,
                                   completion: @escaping StorageCompletion<T>)
    func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant, charge: QueueCharge,
                    completion: @escaping StorageCompletion<StoredContact>)
    func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                       charge: QueueCharge, completion: @escaping StorageCompletion<ContactUpdate>)
    func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>)
    func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                        charge: QueueCharge, completion: @escaping StorageCompletion<ContactImportOutcome>)
    func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink, charge: QueueCharge,
                                                 cancelled: Locked<Bool>,
                                                 completion: @escaping StorageCompletion<Sink.Output>)
    func contactChanges(of user: AccountID, since: Int64?, limit: Int, charge: QueueCharge,
                        completion: @escaping StorageCompletion<ContactChangesRead>)
    func readCards(_ uids: [String], of user: AccountID, byteLimit: Int, charge: QueueCharge,
                   completion: @escaping StorageCompletion<CardsRead>)
    func putCard(_ card: String, uid: String, precondition: CardPrecondition, for user: AccountID,
                 session: SessionGrant, charge: QueueCharge, completion: @escaping StorageCompletion<CardPut>)
    func removeCard(uid: String, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                    charge: QueueCharge, completion: @escaping StorageCompletion<CardRemoval>)
    func appendAudit(_ record: AuditRecord, charge: QueueCharge, completion: @escaping StorageCompletion<AuditEntry>)
    func auditEntries(_ query: AuditQuery, charge: QueueCharge, completion: @escaping StorageCompletion<[AuditEntry]>)
    func pruneAudit(before beforeMs: Int64, charge: QueueCharge, completion: @escaping StorageCompletion<Int>)
    func backup(to path: String, charge: QueueCharge,
                completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void)
    func queueCodeMail(of account: AccountID, _ mail: QueuedMail, minimumIntervalMs: Int64, audit: AuditRecord?,
                       charge: QueueCharge, completion: @escaping StorageCompletion<CodeMailQueueing>)
    func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<MailCodeCheck>)
    func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                          audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                          completion: @escaping StorageCompletion<MailedCodeRedemption>)
    func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int, charge: QueueCharge,
                      completion: @escaping StorageCompletion<[ClaimedMail]>)
    func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, audit: AuditRecord?,
                    charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)
    func listMail(status: MailStatus?, limit: Int, charge: QueueCharge,
                  completion: @escaping StorageCompletion<[MailListing]>)
    func mailCounts(charge: QueueCharge, completion: @escaping StorageCompletion<MailCounts>)
    func passkeyUserHandle(of account: AccountID, candidate: [UInt8], charge: QueueCharge,
                           completion: @escaping StorageCompletion<[UInt8]?>)
    func account(forUserHandle handle: [UInt8], charge: QueueCharge, completion: @escaping StorageCompletion<Account?>)
    func passkeys(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<[StoredPasskey]>)
    func passkey(credentialID: [UInt8], charge: QueueCharge, completion: @escaping StorageCompletion<OwnedPasskey?>)
    func addPasskey(_ passkey: StoredPasskey, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                    completion: @escaping StorageCompletion<PasskeyAddition>)
    func removePasskey(of account: AccountID, credentialID: [UInt8], audit: AuditRecord?, mail: [QueuedMail],
                       charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)
    func usePasskey(credentialID: [UInt8], signCount: UInt32, usedMs: Int64, charge: QueueCharge,
                    completion: @escaping StorageCompletion<PasskeyUse>)
    func appPasswords(of account: AccountID, charge: QueueCharge,
                      completion: @escaping StorageCompletion<[StoredAppPassword]>)
    func addAppPassword(_ appPassword: StoredAppPassword, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                        completion: @escaping StorageCompletion<AppPasswordAddition>)
    func removeAppPassword(of account: AccountID, id: String, audit: AuditRecord?, charge: QueueCharge,
                           completion: @escaping StorageCompletion<Bool>)
    func touchAppPassword(of account: AccountID, id: String, usedMs: Int64, charge: QueueCharge,
                          completion: @escaping StorageCompletion<Bool>)
}

/// A backend's data as one payer reaches it: each call hands `charge` to the backend's namesake in
/// `ChargedStorageCalls`. What `Storage.acting(for:)` answers, for every backend: cheap, made per request.
public struct ChargedView<Backend: ChargedStorageCalls>: StorageCalls {
    let backend: Backend
    let charge: QueueCharge

    public init(_ backend: Backend, charge: QueueCharge) {
        self.backend = backend
        self.charge = charge
    }
}

extension ChargedView {
    public func isUsernameTaken(_ canonical: String, completion: @escaping StorageCompletion<Bool>) {
        backend.isUsernameTaken(canonical, charge: charge, completion: completion)
    }

    public func isEmailTaken(_ canonical: String, completion: @escaping StorageCompletion<Bool>) {
        backend.isEmailTaken(canonical, charge: charge, completion: completion)
    }

    public func accountExists(_ identifier: AccountIdentifier, completion: @escaping StorageCompletion<Bool>) {
        backend.accountExists(identifier, charge: charge, completion: completion)
    }

    public func credential(for identifier: AccountIdentifier, completion: @escaping StorageCompletion<Credential?>) {
        backend.credential(for: identifier, charge: charge, completion: completion)
    }

    public func createAccount(_ account: NewAccount, audit: AuditRecord?, mail: [QueuedMail],
                              completion: @escaping StorageCompletion<Account>) {
        backend.createAccount(account, audit: audit, mail: mail, charge: charge, completion: completion)
    }

    public func replacePasswordHash(_ hash: String, of account: AccountID,
                                    completion: @escaping StorageCompletion<Void>) {
        backend.replacePasswordHash(hash, of: account, charge: charge, completion: completion)
    }

    public func security(of account: AccountID, completion: @escaping StorageCompletion<AccountSecurity?>) {
        backend.security(of: account, charge: charge, completion: completion)
    }

    public func credential(of account: AccountID, completion: @escaping StorageCompletion<Credential?>) {
        backend.credential(of: account, charge: charge, completion: completion)
    }

    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                               mail: [QueuedMail], completion: @escaping StorageCompletion<[[UInt8]]>) {
        backend.changePassword(of: account, to: passwordHash, keeping: keeping, audit: audit, mail: mail,
                               charge: charge, completion: completion)
    }

    public func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?, mail: [QueuedMail],
                            completion: @escaping StorageCompletion<Account?>) {
        backend.changeEmail(of: account, to: email, audit: audit, mail: mail, charge: charge, completion: completion)
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?, mail: [QueuedMail],
                              completion: @escaping StorageCompletion<DeletedAccount?>) {
        backend.deleteAccount(account, failureKeys: failureKeys, audit: audit, mail: mail, charge: charge,
                              completion: completion)
    }

    public func sessions(of account: AccountID, idleLimitMs: Int64,
                         completion: @escaping StorageCompletion<[StoredSession]>) {
        backend.sessions(of: account, idleLimitMs: idleLimitMs, charge: charge, completion: completion)
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?,
                             completion: @escaping StorageCompletion<[[UInt8]]>) {
        backend.revokeTokens(of: account, except: keeping, audit: audit, charge: charge, completion: completion)
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?,
                                     mail: [QueuedMail], completion: @escaping StorageCompletion<Void>) {
        backend.replaceRecoveryCodes(of: account, hashes: hashes, audit: audit, mail: mail, charge: charge,
                                     completion: completion)
    }

    public func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8],
                                  completion: @escaping StorageCompletion<Bool>) {
        backend.holdsRecoveryCode(of: account, codeHash: codeHash, charge: charge, completion: completion)
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String,
                                   audit: AuditRecord?, mail: [QueuedMail],
                                   completion: @escaping StorageCompletion<[[UInt8]]?>) {
        backend.redeemRecoveryCode(of: account, codeHash: codeHash, newPasswordHash: newPasswordHash, audit: audit,
                                   mail: mail, charge: charge, completion: completion)
    }

    public func storePendingTOTP(of account: AccountID, sealed: [UInt8],
                                 completion: @escaping StorageCompletion<Void>) {
        backend.storePendingTOTP(of: account, sealed: sealed, charge: charge, completion: completion)
    }

    public func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Bool>) {
        backend.confirmTOTP(of: account, step: step, audit: audit, charge: charge, completion: completion)
    }

    public func acceptTOTPStep(of account: AccountID, step: Int64, completion: @escaping StorageCompletion<Bool>) {
        backend.acceptTOTPStep(of: account, step: step, charge: charge, completion: completion)
    }

    public func removeTOTP(of account: AccountID, audit: AuditRecord?, mail: [QueuedMail],
                           completion: @escaping StorageCompletion<Void>) {
        backend.removeTOTP(of: account, audit: audit, mail: mail, charge: charge, completion: completion)
    }

    public func listAccounts(matching query: String?, limit: Int, offset: Int,
                             completion: @escaping StorageCompletion<AccountPage>) {
        backend.listAccounts(matching: query, limit: limit, offset: offset, charge: charge, completion: completion)
    }

    public func accountSummary(_ identifier: AccountIdentifier,
                               completion: @escaping StorageCompletion<AccountSummary?>) {
        backend.accountSummary(identifier, charge: charge, completion: completion)
    }

    public func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Bool>) {
        backend.lockAccount(account, reason: reason, audit: audit, charge: charge, completion: completion)
    }

    public func unlockAccount(_ account: AccountID, audit: AuditRecord?,
                              completion: @escaping StorageCompletion<Bool>) {
        backend.unlockAccount(account, audit: audit, charge: charge, completion: completion)
    }

    public func resetFailures(keys: [String], audit: AuditRecord?, completion: @escaping StorageCompletion<Void>) {
        backend.resetFailures(keys: keys, audit: audit, charge: charge, completion: completion)
    }

    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?,
                           limit: TokenLimit?, completion: @escaping StorageCompletion<[[UInt8]]>) {
        backend.storeToken(hash: hash, for: account, client: client, audit: audit, limit: limit, charge: charge,
                           completion: completion)
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Account?>) {
        backend.resumeToken(hash: hash, idleLimitMs: idleLimitMs, audit: audit, charge: charge, completion: completion)
    }

    public func revokeToken(hash: [UInt8], audit: AuditRecord?, completion: @escaping StorageCompletion<Bool>) {
        backend.revokeToken(hash: hash, audit: audit, charge: charge, completion: completion)
    }

    public func recentFailures(keys: [String], windowMs: Int64,
                               completion: @escaping StorageCompletion<RecentFailures>) {
        backend.recentFailures(keys: keys, windowMs: windowMs, charge: charge, completion: completion)
    }

    public func recordFailure(keys: [String], audit: AuditRecord?, completion: @escaping StorageCompletion<Void>) {
        backend.recordFailure(keys: keys, audit: audit, charge: charge, completion: completion)
    }

    public func loadSearchIndex<T: Sendable>(of user: AccountID, build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                             completion: @escaping StorageCompletion<T>) {
        backend.loadSearchIndex(of: user, charge: charge, build: build, completion: completion)
    }

    public func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, cancelled: Locked<Bool>,
                                          encode: @escaping @Sendable ([Contact]) -> T,
                                          completion: @escaping StorageCompletion<T>) {
        backend.readContacts(ids, of: user, charge: charge, cancelled: cancelled, encode: encode,
                             completion: completion)
    }

    public func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant,
                           completion: @escaping StorageCompletion<StoredContact>) {
        backend.addContact(draft, for: user, session: session, charge: charge, completion: completion)
    }

    public func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                              completion: @escaping StorageCompletion<ContactUpdate>) {
        backend.updateContact(id, of: user, session: session, with: patch, charge: charge, completion: completion)
    }

    public func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant,
                              completion: @escaping StorageCompletion<Bool>) {
        backend.removeContact(id, of: user, session: session, charge: charge, completion: completion)
    }

    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                               completion: @escaping StorageCompletion<ContactImportOutcome>) {
        backend.importContacts(data, format: format, for: user, session: session, charge: charge,
                               completion: completion)
    }

    public func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink,
                                                        cancelled: Locked<Bool>,
                                                        completion: @escaping StorageCompletion<Sink.Output>) {
        backend.exportContacts(of: user, after: after, into: sink, charge: charge, cancelled: cancelled,
                               completion: completion)
    }

    public func contactChanges(of user: AccountID, since: Int64?, limit: Int,
                               completion: @escaping StorageCompletion<ContactChangesRead>) {
        backend.contactChanges(of: user, since: since, limit: limit, charge: charge, completion: completion)
    }

    public func readCards(_ uids: [String], of user: AccountID, byteLimit: Int,
                          completion: @escaping StorageCompletion<CardsRead>) {
        backend.readCards(uids, of: user, byteLimit: byteLimit, charge: charge, completion: completion)
    }

    public func putCard(_ card: String, uid: String, precondition: CardPrecondition, for user: AccountID,
                        session: SessionGrant, completion: @escaping StorageCompletion<CardPut>) {
        backend.putCard(card, uid: uid, precondition: precondition, for: user, session: session, charge: charge,
                        completion: completion)
    }

    public func removeCard(uid: String, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                           completion: @escaping StorageCompletion<CardRemoval>) {
        backend.removeCard(uid: uid, precondition: precondition, of: user, session: session, charge: charge,
                           completion: completion)
    }

    public func appendAudit(_ record: AuditRecord, completion: @escaping StorageCompletion<AuditEntry>) {
        backend.appendAudit(record, charge: charge, completion: completion)
    }

    public func auditEntries(_ query: AuditQuery, completion: @escaping StorageCompletion<[AuditEntry]>) {
        backend.auditEntries(query, charge: charge, completion: completion)
    }

    public func pruneAudit(before beforeMs: Int64, completion: @escaping StorageCompletion<Int>) {
        backend.pruneAudit(before: beforeMs, charge: charge, completion: completion)
    }

    public func backup(to path: String, completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void) {
        backend.backup(to: path, charge: charge, completion: completion)
    }

    public func queueCodeMail(of account: AccountID, _ mail: QueuedMail, minimumIntervalMs: Int64, audit: AuditRecord?,
                              completion: @escaping StorageCompletion<CodeMailQueueing>) {
        backend.queueCodeMail(of: account, mail, minimumIntervalMs: minimumIntervalMs, audit: audit, charge: charge,
                              completion: completion)
    }

    public func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<MailCodeCheck>) {
        backend.verifyEmail(of: account, codeHash: codeHash, nowMs: nowMs, audit: audit, charge: charge,
                            completion: completion)
    }

    public func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                                 audit: AuditRecord?, mail: [QueuedMail],
                                 completion: @escaping StorageCompletion<MailedCodeRedemption>) {
        backend.redeemMailedCode(of: account, codeHash: codeHash, nowMs: nowMs, newPasswordHash: newPasswordHash,
                                 audit: audit, mail: mail, charge: charge, completion: completion)
    }

    public func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int,
                             completion: @escaping StorageCompletion<[ClaimedMail]>) {
        backend.claimDueMail(claimant: claimant, nowMs: nowMs, leaseMs: leaseMs, limit: limit, charge: charge,
                             completion: completion)
    }

    public func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, audit: AuditRecord?,
                           completion: @escaping StorageCompletion<Bool>) {
        backend.finishMail(id, claimant: claimant, outcome: outcome, audit: audit, charge: charge,
                           completion: completion)
    }

    public func listMail(status: MailStatus?, limit: Int, completion: @escaping StorageCompletion<[MailListing]>) {
        backend.listMail(status: status, limit: limit, charge: charge, completion: completion)
    }

    public func mailCounts(completion: @escaping StorageCompletion<MailCounts>) {
        backend.mailCounts(charge: charge, completion: completion)
    }

    public func passkeyUserHandle(of account: AccountID, candidate: [UInt8],
                                  completion: @escaping StorageCompletion<[UInt8]?>) {
        backend.passkeyUserHandle(of: account, candidate: candidate, charge: charge, completion: completion)
    }

    public func account(forUserHandle handle: [UInt8], completion: @escaping StorageCompletion<Account?>) {
        backend.account(forUserHandle: handle, charge: charge, completion: completion)
    }

    public func passkeys(of account: AccountID, completion: @escaping StorageCompletion<[StoredPasskey]>) {
        backend.passkeys(of: account, charge: charge, completion: completion)
    }

    public func passkey(credentialID: [UInt8], completion: @escaping StorageCompletion<OwnedPasskey?>) {
        backend.passkey(credentialID: credentialID, charge: charge, completion: completion)
    }

    public func addPasskey(_ passkey: StoredPasskey, limit: Int, audit: AuditRecord?,
                           completion: @escaping StorageCompletion<PasskeyAddition>) {
        backend.addPasskey(passkey, limit: limit, audit: audit, charge: charge, completion: completion)
    }

    public func removePasskey(of account: AccountID, credentialID: [UInt8], audit: AuditRecord?, mail: [QueuedMail],
                              completion: @escaping StorageCompletion<Bool>) {
        backend.removePasskey(of: account, credentialID: credentialID, audit: audit, mail: mail, charge: charge,
                              completion: completion)
    }

    public func usePasskey(credentialID: [UInt8], signCount: UInt32, usedMs: Int64,
                           completion: @escaping StorageCompletion<PasskeyUse>) {
        backend.usePasskey(credentialID: credentialID, signCount: signCount, usedMs: usedMs, charge: charge,
                           completion: completion)
    }

    public func appPasswords(of account: AccountID, completion: @escaping StorageCompletion<[StoredAppPassword]>) {
        backend.appPasswords(of: account, charge: charge, completion: completion)
    }

    public func addAppPassword(_ appPassword: StoredAppPassword, limit: Int, audit: AuditRecord?,
                               completion: @escaping StorageCompletion<AppPasswordAddition>) {
        backend.addAppPassword(appPassword, limit: limit, audit: audit, charge: charge, completion: completion)
    }

    public func removeAppPassword(of account: AccountID, id: String, audit: AuditRecord?,
                                  completion: @escaping StorageCompletion<Bool>) {
        backend.removeAppPassword(of: account, id: id, audit: audit, charge: charge, completion: completion)
    }

    public func touchAppPassword(of account: AccountID, id: String, usedMs: Int64,
                                 completion: @escaping StorageCompletion<Bool>) {
        backend.touchAppPassword(of: account, id: id, usedMs: usedMs, charge: charge, completion: completion)
    }
}

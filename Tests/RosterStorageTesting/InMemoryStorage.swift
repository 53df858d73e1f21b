import RosterCore
import RosterRuntime
import RosterStorage

/// A whole `Storage` in memory, for tests of what sits above the storage boundary (form runners on a
/// `ManualScheduler`, methods). It passes the storage contract suite, as every backend must.
///
/// Theory of operation: each call is one piece of work and one answer. Whether a call fails (`failure`,
/// `failures`, or after `stop()`) is decided when it is made; what it reads or writes is done when it is
/// answered. `answering` says when that is: at once, on the caller's thread, or when the test releases it
/// (`releaseNext()`, `releaseAll()`), to play an answer that comes late or after a newer input. Held answers go
/// out oldest first, so one user's contact writes keep their order as the contract asks.
///
/// Uniqueness compares canonical names the way the SQLite column does (`COLLATE NOCASE`: ASCII letters without
/// case, every other character as given); callers canonicalize before they ask.
public final class InMemoryStorage: Storage {
    /// When answers are given.
    public enum Answering: Equatable, Sendable {
        /// Before the call returns.
        case immediately
        /// When the test releases them.
        case onRelease
    }

    /// The storage calls, to make one of them fail or to see what was asked.
    public enum Operation: String, Equatable, Hashable, Sendable, CaseIterable {
        case isUsernameTaken, isEmailTaken, accountExists, credential, createAccount, replacePasswordHash
        case storeToken, resumeToken, revokeToken
        case recentFailures, recordFailure
        case loadSearchIndex, readContacts, addContact, updateContact, removeContact, importContacts, exportContacts
        case contactChanges, readCards, putCard, removeCard
        case backup, statistics
        case security, credentialOf, changePassword, changeEmail, deleteAccount, sessions, revokeTokens
        case replaceRecoveryCodes, redeemRecoveryCode, storePendingTOTP, confirmTOTP, acceptTOTPStep, removeTOTP
        case listAccounts, accountSummary, lockAccount, unlockAccount, resetFailures
        case appendAudit, auditEntries, pruneAudit
        case holdsRecoveryCode
        case queueCodeMail, verifyEmail, redeemMailedCode, claimDueMail, finishMail, listMail, mailCounts
        case passkeyUserHandle, accountForUserHandle, passkeys, passkey, addPasskey, removePasskey, usePasskey
        case appPasswords, addAppPassword, removeAppPassword, touchAppPassword
    }


    public var answering: Answering
    public var onChange: ((StorageChange) -> Void)?
    public var onAudit: ((AuditEntry, AuditOrigin) -> Void)?
    public var onStateChange: ((StorageState) -> Void)?
    /// Up from the start; a test sets it (`changeState`) to play an outage.
    public private(set) var state = StorageState(backend: "memory", phase: .up, sinceMs: 0)
    /// While set, every call fails with it (nothing is written).
    public var failure: StorageFailure?
    /// While set for an operation, its calls fail with it (nothing is written).
    public var failures: [Operation: StorageFailure] = [:]
    /// Every call made, in order (pruning, warming up and applying settings are not calls that answer).
    public private(set) var calls: [Operation] = []
    /// What each import was charged: its view's charge with the data's size as `bytes`, as a backend queues it.
    public private(set) var importCharges: [QueueCharge] = []
    /// The budgets last applied.
    public private(set) var settings: ServerSettings?
    /// Past this many stored rows (accounts, tokens, failures, contacts and passkeys together), a write that adds rows
    /// answers `.full` and writes nothing: a disk that fills up.
    public var rowLimit: Int?
    /// The backup targets written so far (no file is made).
    public private(set) var backups: [String] = []
    /// Each `pruneExpired` asked for, oldest first (it answers nothing, so it is not among `calls`).
    public private(set) var expiredPrunings: [(failureWindowMs: Int64, tokenIdleMs: Int64)] = []

    let clock: any WallClock
    private var held: [(operation: Operation, answer: () -> Void)] = []
    private var stopped = false
    private var backupTurn = BackupTurn()

    // The rows below are internal, not private, because the account-life calls live in their own file
    // (InMemoryStorage+AccountLife.swift) and read and write the same rows.
    struct StoredAccount {
        var account: Account
        var passwordHash: String
        var recoveryCodes: Set<[UInt8]> = []
        /// The confirmed secret and its last accepted step.
        var totp: TOTPSeal?
        var pendingTOTP: [UInt8]?
        var lastLoginMs: Int64?
        var lockedMs: Int64?
        var lockedReason: String?
    }

    struct StoredToken {
        var account: AccountID
        var createdMs: Int64
        var lastUsedMs: Int64
        var client: String?
    }

    var accounts: [AccountID: StoredAccount] = [:]
    var accountByUsername: [String: AccountID] = [:]
    var accountByEmail: [String: AccountID] = [:]
    private var nextAccountID: AccountID = 1
    var tokens: [[UInt8]: StoredToken] = [:]
    var failureTimes: [String: [Int64]] = [:]
    var contacts: [Int64: (owner: AccountID, stored: StoredContact)] = [:]
    /// The cards clients sent, by contact id.
    var sentCards: [Int64: String] = [:]
    /// Each user's change sequence: the newest revision given, and the newest of a tombstone forgotten.
    var books: [AccountID: (revision: Int64, forgotten: Int64)] = [:]
    /// Each user's tombstones by uid: the removal's revision and time.
    var tombstones: [AccountID: [String: (revision: Int64, removedAt: Int64)]] = [:]
    /// The audit log, oldest first.
    public internal(set) var auditLog: [AuditEntry] = []
    var nextAuditID: Int64 = 1
    private var nextContactID: Int64 = 1
    /// The outbox by id, every column as a backend stores it.
    public internal(set) var outbox: [MailID: CopiedMail] = [:]
    var nextMailID: MailID = 1
    /// Each account's mailed code of each purpose.
    var mailCodes: [AccountID: [MailCodePurpose: StoredMailCode]] = [:]
    /// Passkeys by credential id, every column as a backend stores it.
    public internal(set) var passkeyRows: [[UInt8]: StoredPasskey] = [:]
    /// Each account's WebAuthn user handle.
    public internal(set) var passkeyHandles: [AccountID: [UInt8]] = [:]
    /// App passwords by id, every column as a backend stores it.
    public internal(set) var appPasswordRows: [String: StoredAppPassword] = [:]

    /// Storage on `clock` (a `ManualWallClock` in tests), answering as `answering` says.
    public init(clock: any WallClock = ManualWallClock(), answering: Answering = .immediately) {
        self.clock = clock
        self.answering = answering
    }

    // MARK: Held answers

    /// The operations whose answers are held, oldest first.
    public var pending: [Operation] { held.map(\.operation) }

    /// Answers the held call at `index` (0 is the oldest); false when there is none. Out of order only where the
    /// contract lets answers cross (not one user's contact writes).
    @discardableResult
    public func release(at index: Int) -> Bool {
        guard held.indices.contains(index) else { return false }
        held.remove(at: index).answer()
        return true
    }

    /// Answers the oldest held call; false when none is held.
    @discardableResult
    public func releaseNext() -> Bool { release(at: 0) }

    /// Answers every call held now, oldest first, and returns how many; calls made by those answers' completions
    /// stay held.
    @discardableResult
    public func releaseAll() -> Int {
        let count = held.count
        for _ in 0..<count { releaseNext() }
        return count
    }

    /// Answers `completion` with `work`'s result, now or on release; see the theory of operation.
    func answer<T>(_ operation: Operation, _ completion: @escaping StorageCompletion<T>,
                           _ work: @escaping () -> Result<T, StorageFailure>) {
        calls.append(operation)
        let refusal = stopped ? StorageFailure.stopped : failures[operation] ?? failure
        let answer = {
            if let refusal { return completion(.failure(refusal)) }
            completion(work())
        }
        switch answering {
        case .immediately: answer()
        case .onRelease: held.append((operation, answer))
        }
    }

    // MARK: AccountStorage

    /// No directory: only `isUsernameTaken` can tell.
    public func knownUsernameTaken(_ canonical: String) -> Bool? { nil }

    public func isUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        answer(.isUsernameTaken, completion) { .success(self.accountByUsername[Self.noCase(canonical)] != nil) }
    }

    public func isEmailTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        answer(.isEmailTaken, completion) { .success(self.accountByEmail[Self.noCase(canonical)] != nil) }
    }

    public func accountExists(_ identifier: AccountIdentifier, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>) {
        answer(.accountExists, completion) { .success(self.accountID(identifier) != nil) }
    }

    public func credential(for identifier: AccountIdentifier, charge: QueueCharge,
                    completion: @escaping StorageCompletion<Credential?>) {
        answer(.credential, completion) {
            .success(self.accountID(identifier).flatMap { self.accounts[$0] }.map {
                Credential(account: $0.account, passwordHash: $0.passwordHash, totp: $0.totp)
            })
        }
    }

    public func createAccount(_ new: NewAccount, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                              completion: @escaping StorageCompletion<Account>) {
        answer(.createAccount, completion) {
            // What the SQLite schema's CHECKs refuse, refused alike.
            guard !new.username.isEmpty, new.email != "", StoredPasswordHash.isStorable(new.passwordHash) else {
                return .failure(.other)
            }
            if self.accountByUsername[Self.noCase(new.username)] != nil { return .failure(.conflict(.username)) }
            if let email = new.email, self.accountByEmail[Self.noCase(email)] != nil { return .failure(.conflict(.email)) }
            guard self.hasRoom(for: 1) else { return .failure(.full) }
            let account = Account(id: self.nextAccountID, username: new.username, display: new.display, email: new.email,
                                  createdAtMs: self.clock.nowMs())
            self.nextAccountID += 1
            self.accounts[account.id] = StoredAccount(account: account, passwordHash: new.passwordHash)
            self.accountByUsername[Self.noCase(new.username)] = account.id
            if let email = new.email { self.accountByEmail[Self.noCase(email)] = account.id }
            self.audited(audit, queuing: mail, for: account.id)
            return .success(account)
        }
    }

    public func replacePasswordHash(_ hash: String, of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<Void>) {
        answer(.replacePasswordHash, completion) {
            guard StoredPasswordHash.isStorable(hash), self.accounts[account] != nil else { return .failure(.other) }
            self.accounts[account]?.passwordHash = hash
            return .success(())
        }
    }

    private func accountID(_ identifier: AccountIdentifier) -> AccountID? {
        switch identifier {
        case .username(let name): accountByUsername[Self.noCase(name)]
        case .email(let email): accountByEmail[Self.noCase(email)]
        }
    }

    /// `COLLATE NOCASE`: ASCII capitals as small letters, every other byte as it is.
    static func noCase(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    // MARK: SessionTokenStorage

    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?, limit: TokenLimit?,
                    charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>) {
        answer(.storeToken, completion) {
            guard hash.count == 32, self.tokens[hash] == nil, self.accounts[account] != nil else { return .failure(.other) }
            guard self.hasRoom(for: 1) else { return .failure(.full) }
            let now = self.clock.nowMs()
            var revoked: [[UInt8]] = []
            if let limit {
                // Least recently used first, ties by creation then hash, as the SQL backends order them.
                let held = self.tokens.filter { $0.value.account == account }.sorted { a, b in
                    (a.value.lastUsedMs, a.value.createdMs) != (b.value.lastUsedMs, b.value.createdMs)
                        ? (a.value.lastUsedMs, a.value.createdMs) < (b.value.lastUsedMs, b.value.createdMs)
                        : a.key.lexicographicallyPrecedes(b.key)
                }
                revoked = held.prefix(limit.excess(held: held.count)).map(\.key)
                for gone in revoked { self.tokens[gone] = nil }
                if !revoked.isEmpty { self.audited(limit.revocation) }
            }
            self.tokens[hash] = StoredToken(account: account, createdMs: now, lastUsedMs: now, client: client)
            self.accounts[account]?.lastLoginMs = now
            self.audited(audit)
            return .success(revoked)
        }
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Account?>) {
        answer(.resumeToken, completion) {
            guard let token = self.tokens[hash] else { return .success(nil) }
            let now = self.clock.nowMs()
            if Self.elapsed(since: token.lastUsedMs, now: now) >= idleLimitMs {
                self.tokens[hash] = nil
                return .success(nil)
            }
            self.tokens[hash]?.lastUsedMs = max(token.lastUsedMs, now)
            self.accounts[token.account]?.lastLoginMs = now
            let account = self.accounts[token.account]?.account
            self.audited(AuditRule.resumed.entry(audit, after: account))
            return .success(account)
        }
    }

    public func revokeToken(hash: [UInt8], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        answer(.revokeToken, completion) {
            guard self.tokens.removeValue(forKey: hash) != nil else { return .success(false) }
            self.audited(audit)
            return .success(true)
        }
    }

    static func elapsed(since start: Int64, now: Int64) -> Int64 {
        let (difference, overflow) = now.subtractingReportingOverflow(start)
        return overflow ? (start > 0 ? .min : .max) : difference
    }

    // MARK: LoginFailureStorage

    public func recentFailures(keys: [String], windowMs: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<RecentFailures>) {
        answer(.recentFailures, completion) {
            let now = self.clock.nowMs()
            var times: [String: [Int64]] = [:]
            for key in keys {
                times[key] = (self.failureTimes[key] ?? []).filter { Self.elapsed(since: $0, now: now) < windowMs }.sorted()
            }
            return .success(RecentFailures(nowMs: now, times: times))
        }
    }

    public func recordFailure(keys: [String], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        answer(.recordFailure, completion) {
            guard self.hasRoom(for: keys.count) else { return .failure(.full) }
            let now = self.clock.nowMs()
            for key in keys { self.failureTimes[key, default: []].append(now) }
            self.audited(audit)
            return .success(())
        }
    }

    // MARK: ContactStorage

    public func loadSearchIndex<T: Sendable>(of user: AccountID, charge: QueueCharge,
                                      build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                      completion: @escaping StorageCompletion<T>) {
        answer(.loadSearchIndex, completion) {
            .success(build(self.contacts(of: user).map { (id: $0.contact.id, keys: $0.keys) }))
        }
    }

    public func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, charge: QueueCharge, cancelled: Locked<Bool>,
                                   encode: @escaping @Sendable ([Contact]) -> T,
                                   completion: @escaping StorageCompletion<T>) {
        answer(.readContacts, completion) {
            if let skipped = StorageFailure.skipped(cancelled) { return .failure(skipped) }
            return .success(encode(ids.compactMap { self.contact($0, of: user)?.contact }))
        }
    }

    /// What the SQLite and PostgreSQL backends check in a write's transaction: the grant's token still stored
    /// for the user, whose account is not locked.
    func holdsSession(_ session: SessionGrant, _ user: AccountID) -> Bool { holds(session, user) }

    private func holds(_ session: SessionGrant, _ user: AccountID) -> Bool {
        if session.isEnded { return false }
        guard let hash = session.tokenHash else { return true }
        return tokens[hash]?.account == user && accounts[user].map { $0.lockedMs == nil } ?? false
    }

    public func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant, charge: QueueCharge,
                    completion: @escaping StorageCompletion<StoredContact>) {
        answer(.addContact, completion) {
            guard self.holds(session, user) else { return .failure(.revoked) }
            guard self.hasRoom(for: 1) else { return .failure(.full) }
            guard let added = self.insert([draft], for: user).first else { return .failure(.other) }
            return .success(added)
        }
    }

    public func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                       charge: QueueCharge, completion: @escaping StorageCompletion<ContactUpdate>) {
        answer(.updateContact, completion) {
            guard self.holds(session, user) else { return .failure(.revoked) }
            guard let current = self.contact(id, of: user) else { return .success(.notFound) }
            let draft = patch.applied(to: current.contact)
            do throws(ContactError) {
                try draft.validate()
            } catch {
                return .success(.invalid(error))
            }
            if let sent = self.sentCards[id] { self.sentCards[id] = VCard.rewritten(sent, from: current.contact.draft, to: draft) }
            let updated = StoredContact(contact: Contact(id: id, draft: draft, createdAt: current.contact.createdAt,
                                                         updatedAt: self.clock.nowMs(), uid: current.contact.uid,
                                                         revision: self.nextRevision(of: user)),
                                        keys: ContactSearchKeys(draft: draft))
            self.contacts[id] = (user, updated)
            return .success(.updated(updated))
        }
    }

    public func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>) {
        answer(.removeContact, completion) {
            guard self.holds(session, user) else { return .failure(.revoked) }
            guard let existing = self.contact(id, of: user) else { return .success(false) }
            self.remove(existing.contact, of: user)
            return .success(true)
        }
    }

    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                        charge: QueueCharge, completion: @escaping StorageCompletion<ContactImportOutcome>) {
        // As a backend's queue would hold it: with the data's size.
        var charge = charge
        charge.bytes = data.utf8.count
        importCharges.append(charge)
        answer(.importContacts, completion) {
            guard self.holds(session, user) else { return .failure(.revoked) }
            let parsed = format.parse(data)
            var sharing = CoreSharing()
            let stored = Set(self.contacts(of: user).map(\.contact.draft))
            let (fresh, skipped) = ContactImportRule.sort(parsed.contacts, sharing: &sharing) { stored.contains($0) }
            guard fresh.isEmpty || self.accounts[user] != nil else { return .failure(.other) }
            guard self.hasRoom(for: fresh.count) else { return .failure(.full) }
            var random = SystemRandomNumberGenerator()
            let uids = Set(self.contacts(of: user).map(\.contact.uid))
            let rows = ContactImportRule.uids(for: fresh, random: &random) { uids.contains($0) }
            return .success(ContactImportOutcome(added: self.insert(rows, for: user), skipped: skipped,
                                                 errors: parsed.errors))
        }
    }

    public func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink, charge: QueueCharge,
                                                 cancelled: Locked<Bool>,
                                                 completion: @escaping StorageCompletion<Sink.Output>) {
        answer(.exportContacts, completion) {
            if let skipped = StorageFailure.skipped(cancelled) { return .failure(skipped) }
            var sink = sink
            let remaining = self.contacts(of: user).filter { $0.contact.id > after }
            let taken = remaining.prefix { sink.add($0.contact) }.count
            return .success(sink.finish(more: taken < remaining.count))
        }
    }

    func hasRoom(for rows: Int) -> Bool {
        guard let rowLimit else { return true }
        let stored = accounts.count + tokens.count + failureTimes.values.reduce(0) { $0 + $1.count } + contacts.count
            + passkeyRows.count + appPasswordRows.count
        return stored + rows <= rowLimit
    }

    /// A user's contacts in id order.
    private func contacts(of user: AccountID) -> [StoredContact] {
        contacts.values.filter { $0.owner == user }.map(\.stored).sorted { $0.contact.id < $1.contact.id }
    }

    /// Another user's id reads as missing.
    private func contact(_ id: Int64, of user: AccountID) -> StoredContact? {
        contacts[id].flatMap { $0.owner == user ? $0.stored : nil }
    }

    /// Empty when `user` is no account (the SQLite foreign key refuses the rows).
    private func insert(_ drafts: [ContactDraft], for user: AccountID) -> [StoredContact] {
        var random = SystemRandomNumberGenerator()
        return insert(drafts.map { NewContactRow(draft: $0, keys: ContactSearchKeys(draft: $0),
                                                 uid: ContactUID.random(using: &random)) }, for: user)
    }

    /// Each row under its uid, with the next revisions of the user's sequence.
    func insert(_ rows: [NewContactRow], for user: AccountID) -> [StoredContact] {
        guard accounts[user] != nil else { return [] }
        let now = clock.nowMs()
        return rows.map { row in
            let stored = StoredContact(contact: Contact(id: nextContactID, draft: row.draft, createdAt: now, updatedAt: now,
                                                        uid: row.uid, revision: nextRevision(of: user)),
                                       keys: row.keys)
            nextContactID += 1
            contacts[stored.contact.id] = (user, stored)
            sentCards[stored.contact.id] = row.card
            tombstones[user]?[row.uid] = nil
            return stored
        }
    }

    /// Takes the next revision of the user's change sequence.
    func nextRevision(of user: AccountID) -> Int64 {
        let next = (books[user]?.revision ?? 0) + 1
        books[user] = (next, books[user]?.forgotten ?? 0)
        return next
    }

    /// Removes `contact`, leaving its tombstone, and forgets the user's tombstones past their keep.
    func remove(_ contact: Contact, of user: AccountID) {
        contacts[contact.id] = nil
        sentCards[contact.id] = nil
        let now = clock.nowMs()
        tombstones[user, default: [:]][contact.uid] = (nextRevision(of: user), now)
        let cutoff = now - ContactChangesRule.tombstoneKeepMs
        let old = tombstones[user, default: [:]].filter { $0.value.removedAt < cutoff }
        if let newest = old.values.map(\.revision).max(), let book = books[user] {
            books[user] = (book.revision, max(book.forgotten, newest))
        }
        for uid in old.keys { tombstones[user]?[uid] = nil }
    }

    /// The user's contact under `uid`.
    func contact(uid: String, of user: AccountID) -> StoredContact? {
        contacts.values.first { $0.owner == user && $0.stored.contact.uid == uid }?.stored
    }

    // MARK: StorageMaintenance

    public func warmUp() {}

    public func apply(_ settings: ServerSettings) { self.settings = settings }

    public func pruneExpired(failureWindowMs: Int64, tokenIdleMs: Int64) {
        expiredPrunings.append((failureWindowMs, tokenIdleMs))
        let now = clock.nowMs()
        failureTimes = failureTimes.compactMapValues { times in
            let kept = times.filter { Self.elapsed(since: $0, now: now) <= failureWindowMs }
            return kept.isEmpty ? nil : kept
        }
        tokens = tokens.filter { Self.elapsed(since: $0.value.lastUsedMs, now: now) < tokenIdleMs }
    }

    public func backup(to path: String, charge: QueueCharge,
                completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void) {
        if let refusal = backupTurn.take() { return completion(.failure(refusal)) }
        answer(.backup, { (result: Result<BackupSummary, StorageFailure>) in
            self.backupTurn.release()
            switch result {
            case .success(let summary) where self.backups.contains(summary.path): completion(.failure(.refused(.targetExists)))
            case .success(let summary):
                self.backups.append(summary.path)
                completion(.success(summary))
            case .failure(let failure): completion(.failure(.storage(failure)))
            }
        }) { .success(BackupSummary(path: path, pages: 0, bytes: 0)) }
    }

    public func statistics(completion: @escaping StorageCompletion<StorageStatistics>) {
        answer(.statistics, completion) {
            let statuses = self.outbox.values.map(\.status)
            return .success(StorageStatistics(accounts: self.accounts.count, contacts: self.contacts.count,
                                              usernameDirectory: "ready", queues: [:], state: self.state,
                                              mail: MailCounts(queued: statuses.filter { $0 == .queued }.count,
                                                               failed: statuses.filter { $0 == .failed }.count,
                                                               sent: statuses.filter { $0 == .sent }.count)))
        }
    }

    public func stop() { stopped = true }

    public func finish() { stop() }
}

extension InMemoryStorage {
    /// Plays what another daemon's change would bring: the feed reports `change` to the server, as a backend
    /// that shares its database would.
    public func simulate(_ change: StorageChange) {
        onChange?(change)
    }

    /// Deletes an account with its tokens and contacts, as another daemon sharing the database would (the storage
    /// call itself comes with account deletion); nothing is reported: `simulate` the change that follows.
    @discardableResult
    public func removeAccount(username canonical: String) -> Account? {
        guard let id = accountByUsername.removeValue(forKey: Self.noCase(canonical)),
              let stored = accounts.removeValue(forKey: id) else { return nil }
        if let email = stored.account.email { accountByEmail[Self.noCase(email)] = nil }
        tokens = tokens.filter { $0.value.account != id }
        contacts = contacts.filter { $0.value.owner != id }
        books[id] = nil
        tombstones[id] = nil
        mailCodes[id] = nil
        removePasskeys(of: id)
        return stored.account
    }

    /// Plays a change of connection state (an outage and its end), reported as a real backend reports it.
    public func changeState(to phase: StorageState.Phase, atMs: Int64) {
        state = StorageState(backend: state.backend, phase: phase, sinceMs: atMs)
        onStateChange?(state)
    }
}

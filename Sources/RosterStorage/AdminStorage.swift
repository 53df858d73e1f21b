/// What an administrator does to accounts (protocol.md §Administering users): find them, read one, lock, unlock, and clear failed
/// log-ins. Every write is one durable transaction; `false` or `nil` answers mean the account is gone.
///
/// A lock leaves the account's tokens stored but dead: a resume of one answers the account with `locked` set (so
/// the server can say `locked`, not an unknown token), and the unlock deletes them, in its own transaction, so
/// unlocking restores log-in and never an old session. On a shared database (PostgreSQL) a lock is announced as
/// `sessionsEnded`, which ends that account's sessions on every other daemon.
///
/// Each write's `audit` entry commits in its transaction, and only when the account was there.
public protocol AdminStorage {
    /// Accounts ordered by canonical username, `limit` of them after `offset`, and how many match in all; `query`
    /// (nil or empty: every account) as a substring of the username or the email, ASCII letters without case.
    func listAccounts(matching query: String?, limit: Int, offset: Int,
                      completion: @escaping StorageCompletion<AccountPage>)

    /// One account as an administrator sees it; nil when none answers to `identifier`.
    func accountSummary(_ identifier: AccountIdentifier, completion: @escaping StorageCompletion<AccountSummary?>)

    /// Locks the account at the backend's now, with an optional reason (a lock of a locked account keeps its
    /// first time and takes the new reason); false when it is gone. Never refused by a budget: a lock must take
    /// effect.
    func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?,
                     completion: @escaping StorageCompletion<Bool>)

    /// Unlocks the account and deletes its tokens (dead since the lock), in one transaction; false when it is gone.
    func unlockAccount(_ account: AccountID, audit: AuditRecord?, completion: @escaping StorageCompletion<Bool>)

    /// Deletes every failed log-in recorded under `keys`. Never refused by a budget.
    func resetFailures(keys: [String], audit: AuditRecord?, completion: @escaping StorageCompletion<Void>)
}

/// An account as `admin.users.list` and `admin.users.show` describe it (never its hash).
public struct AccountSummary: Equatable, Sendable {
    public var account: Account
    /// Unix milliseconds of the last log-in or resume; nil when it never logged in since the database kept it.
    public var lastLoginAtMs: Int64?
    /// Unix milliseconds of the lock; nil while unlocked.
    public var lockedAtMs: Int64?
    public var lockedReason: String?
    /// Whether log-in needs a TOTP code.
    public var totp: Bool

    public init(account: Account, lastLoginAtMs: Int64?, lockedAtMs: Int64?, lockedReason: String?, totp: Bool) {
        self.account = account
        self.lastLoginAtMs = lastLoginAtMs
        self.lockedAtMs = lockedAtMs
        self.lockedReason = lockedReason
        self.totp = totp
    }
}

/// One page of `listAccounts`.
public struct AccountPage: Equatable, Sendable {
    public var items: [AccountSummary]
    /// How many accounts match the query, on every page.
    public var total: Int

    public init(items: [AccountSummary], total: Int) {
        self.items = items
        self.total = total
    }
}

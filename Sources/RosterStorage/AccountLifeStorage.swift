import RosterCore

/// The life of an account after sign-up (protocol.md §The life of an account): its password, email, sessions, recovery codes, TOTP and
/// deletion. Every call acts on one account by id; `nil` or `false` answers mean the row the call needed is not
/// there (the account was deleted meanwhile, no such code, a replayed step). Every write is durable before it
/// answers and is one transaction: a crash leaves all of it or none.
///
/// On a shared database (PostgreSQL) each write that other daemons must hear of is announced in its own
/// transaction, as `createAccount` is: a revoked token as `tokenRevoked`, a deletion as `accountDeleted`.
///
/// A write's `audit` entry commits in its transaction, and only when the write changed something (the account
/// was there, the code was unused, a secret was pending); a nil entry writes none. A write's `mail` (its notice,
/// or a code) is queued by the same rule, under `MailStorage`'s cap.
public protocol AccountLifeStorage {
    /// What `account.show` and the second factor need: TOTP state and how many recovery codes are left.
    func security(of account: AccountID, completion: @escaping StorageCompletion<AccountSecurity?>)

    /// The account and its stored hash, to verify `current` or `password` with; nil when it is gone.
    func credential(of account: AccountID, completion: @escaping StorageCompletion<Credential?>)

    /// Replaces the password hash and revokes every token of the account except `keeping`, in one transaction;
    /// answers the hashes it revoked. Never refused by a budget: it follows a hash that was paid for.
    func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                        mail: [QueuedMail], completion: @escaping StorageCompletion<[[UInt8]]>)

    /// Sets (or, with nil, removes) the canonical email; `.conflict(.email)` when another account holds it. A
    /// new address is unverified until `verifyEmail`. Answers the account as it is now; nil when it is gone.
    func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?, mail: [QueuedMail],
                     completion: @escaping StorageCompletion<Account?>)

    /// Deletes the account and everything of it in one transaction: contacts, tokens, recovery codes, TOTP,
    /// passkeys and the WebAuthn user handle, and the failed-log-in rows under `failureKeys`, its mailed codes and
    /// its queued mails that carry one; its queued notices stay, and `mail` (the deletion's notice) joins them.
    /// The backend's username directory forgets the name. Answers what was deleted (nil when it was gone already). Never refused by a budget.
    func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?, mail: [QueuedMail],
                       completion: @escaping StorageCompletion<DeletedAccount?>)

    /// The account's tokens used within the last `idleLimitMs`, oldest first.
    func sessions(of account: AccountID, idleLimitMs: Int64, completion: @escaping StorageCompletion<[StoredSession]>)

    /// Revokes every token of the account except `keeping`; answers the hashes it revoked. Never refused by a
    /// budget: a revocation must take effect.
    func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?,
                      completion: @escaping StorageCompletion<[[UInt8]]>)

    /// Replaces every recovery code of the account with these hashes.
    func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?, mail: [QueuedMail],
                              completion: @escaping StorageCompletion<Void>)

    /// Whether the account holds an unused recovery code with this hash, changing nothing: a locked account's
    /// recovery answers `locked` only to whoever has a right code, and its code is not used up.
    func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8], completion: @escaping StorageCompletion<Bool>)

    /// Uses up the unused recovery code with this hash, sets the new password hash and revokes every token of
    /// the account, in one transaction; answers the revoked hashes, or nil when there is no such unused code
    /// (then nothing changed). Never refused by a budget.
    func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String, audit: AuditRecord?,
                            mail: [QueuedMail], completion: @escaping StorageCompletion<[[UInt8]]?>)

    /// Stores a pending (unconfirmed) TOTP secret, replacing any pending one; a confirmed secret stays in force
    /// until `confirmTOTP` replaces it.
    func storePendingTOTP(of account: AccountID, sealed: [UInt8], completion: @escaping StorageCompletion<Void>)

    /// Makes the pending secret the account's TOTP, with `step` as its last accepted step; false when nothing was
    /// pending.
    func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?,
                     completion: @escaping StorageCompletion<Bool>)

    /// Records `step` as used, atomically, only if it is later than the last accepted step: true when it was,
    /// false for a replay (or when the account has no confirmed TOTP). Never refused by a budget.
    func acceptTOTPStep(of account: AccountID, step: Int64, completion: @escaping StorageCompletion<Bool>)

    /// Removes the account's TOTP, confirmed and pending.
    func removeTOTP(of account: AccountID, audit: AuditRecord?, mail: [QueuedMail],
                    completion: @escaping StorageCompletion<Void>)
}

/// An account's second factor and recovery state.
public struct AccountSecurity: Equatable, Sendable {
    /// The confirmed TOTP secret, when log-in needs a code.
    public var totp: TOTPSeal?
    /// A secret enrolled but not confirmed yet.
    public var pendingTOTP: [UInt8]?
    public var recoveryCodesLeft: Int

    public init(totp: TOTPSeal?, pendingTOTP: [UInt8]?, recoveryCodesLeft: Int) {
        self.totp = totp
        self.pendingTOTP = pendingTOTP
        self.recoveryCodesLeft = recoveryCodesLeft
    }
}

/// One live session token of an account, as `session.list` shows it (never the token itself).
public struct StoredSession: Equatable, Sendable {
    public var tokenHash: [UInt8]
    /// Unix milliseconds, by the backend's clock.
    public var createdAtMs: Int64
    public var lastUsedAtMs: Int64
    /// What the connection that logged in said in `session.hello` `client`.
    public var client: String?

    public init(tokenHash: [UInt8], createdAtMs: Int64, lastUsedAtMs: Int64, client: String?) {
        self.tokenHash = tokenHash
        self.createdAtMs = createdAtMs
        self.lastUsedAtMs = lastUsedAtMs
        self.client = client
    }
}

/// What a deletion removed: the account (for the live `available` and the log) and the tokens it revoked.
public struct DeletedAccount: Equatable, Sendable {
    public var account: Account
    public var revokedTokens: [[UInt8]]

    public init(account: Account, revokedTokens: [[UInt8]]) {
        self.account = account
        self.revokedTokens = revokedTokens
    }
}

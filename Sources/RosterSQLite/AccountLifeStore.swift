import RosterCore
import RosterStorage

/// The life of an account after sign-up over `users`, `session_tokens`, `recovery_codes`, `totp` and
/// `login_failures`. Every write is one durable transaction, so a crash keeps all of it or none.
public struct AccountLifeStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    /// The account's TOTP state and count of unused recovery codes; nil when there is no such account.
    public func security(userID: Int64) throws(StoreError) -> AccountSecurity? {
        let find = try database.cached("""
            SELECT t.sealed, t.pending, t.last_step, (SELECT count(*) FROM recovery_codes r WHERE r.user_id = u.id)
            FROM users u LEFT JOIN totp t ON t.user_id = u.id WHERE u.id = ?
            """)
        defer { find.reset() }
        do {
            try find.bind(userID, at: 1)
            guard try find.step() else { return nil }
            return AccountSecurity(totp: Self.seal(find, sealed: 0, lastStep: 2),
                                   pendingTOTP: find.isNull(at: 1) ? nil : find.blob(at: 1),
                                   recoveryCodesLeft: find.int(at: 3))
        } catch {
            throw error.relabelled("read account security")
        }
    }

    /// Sets the password hash and deletes every token of the account but `keeping`; the hashes deleted.
    public func changePassword(userID: Int64, hash: String, keeping: [UInt8]?) throws(UserStoreError) -> [[UInt8]] {
        guard StoredPasswordHash.isStorable(hash) else { throw .notArgon2idHash }
        let revoked: [[UInt8]]?
        do {
            revoked = try database.transaction { () throws(StoreError) -> [[UInt8]]? in
                guard try setPasswordHash(hash, userID: userID) else { return nil }
                return try deleteTokens(userID: userID, except: keeping)
            }
        } catch {
            throw .store(error.relabelled("change password"))
        }
        guard let revoked else { throw .notFound }
        return revoked
    }

    /// Sets or removes the email, unverified unless it is the one the account has; `.taken(.email)` when another
    /// account holds it; nil when the account is gone.
    public func changeEmail(userID: Int64, to email: String?) throws(UserStoreError) -> UserRecord? {
        let outcome: Result<UserRecord?, UserStoreError>
        do {
            outcome = try database.transaction { () throws(StoreError) -> Result<UserRecord?, UserStoreError> in
                // Under BEGIN IMMEDIATE's write lock, as registration checks; the UNIQUE constraint is the backstop.
                if let email {
                    let other = try database.cached("SELECT 1 FROM users WHERE email = ? AND id <> ?")
                    defer { other.reset() }
                    try other.bind(email, at: 1)
                    try other.bind(userID, at: 2)
                    if try other.step() { return .failure(.taken(.email)) }
                }
                let update = try database.cached("""
                    UPDATE users SET email_verified = CASE WHEN email IS ?1 THEN email_verified ELSE 0 END, email = ?1
                    WHERE id = ?2
                    """)
                try update.bind(email, at: 1)
                try update.bind(userID, at: 2)
                try update.run()
                guard database.changes > 0 else { return .success(nil) }
                return .success(try UserStore(database: database).user(id: userID))
            }
        } catch where error.isConstraintUnique {
            throw .taken(.email)
        } catch {
            throw .store(error.relabelled("change email"))
        }
        return try outcome.get()
    }

    /// Deletes the account (its contacts, tokens, recovery codes, TOTP, mailed codes, passkeys and passkey user
    /// handle go with it, by the foreign keys), its queued mails that carry a code, and the failed log-ins under
    /// `failureKeys`; nil when there was no such account.
    public func delete(userID: Int64, failureKeys: [String]) throws(StoreError) -> (UserRecord, [[UInt8]])? {
        do {
            return try database.transaction { () throws(StoreError) -> (UserRecord, [[UInt8]])? in
                guard let record = try UserStore(database: database).user(id: userID) else { return nil }
                let tokens = try deleteTokens(userID: userID, except: nil)
                let failures = try database.cached("DELETE FROM login_failures WHERE key = ?")
                for key in failureKeys {
                    try failures.bind(key, at: 1)
                    try failures.run()
                }
                try MailStore(database: database).dropCodeMails(of: userID)
                let user = try database.cached("DELETE FROM users WHERE id = ?")
                try user.bind(userID, at: 1)
                try user.run()
                return (record, tokens)
            }
        } catch {
            throw error.relabelled("delete account")
        }
    }

    /// The account's tokens used within the last `idleLimitMs` before `now`, oldest first.
    public func sessions(userID: Int64, now: Int64, idleLimitMs: Int64) throws(StoreError) -> [StoredSession] {
        let list = try database.cached("""
            SELECT token_hash, created_at, last_used_at, client FROM session_tokens
            WHERE user_id = ? AND last_used_at > ? ORDER BY created_at, token_hash
            """)
        defer { list.reset() }
        do {
            // Alive while `now - last_used_at < idleLimitMs`, as `SessionTokenStore.resume` counts it.
            try list.bind(userID, at: 1)
            try list.bind(Saturating.subtract(now, idleLimitMs), at: 2)
            var sessions: [StoredSession] = []
            while try list.step() {
                sessions.append(StoredSession(tokenHash: list.blob(at: 0), createdAtMs: list.int64(at: 1),
                                              lastUsedAtMs: list.int64(at: 2), client: list.string(at: 3)))
            }
            return sessions
        } catch {
            throw error.relabelled("list sessions")
        }
    }

    /// Deletes every token of the account but `keeping`; the hashes deleted.
    public func revokeTokens(userID: Int64, except keeping: [UInt8]?) throws(StoreError) -> [[UInt8]] {
        do {
            return try database.transaction { () throws(StoreError) -> [[UInt8]] in
                try deleteTokens(userID: userID, except: keeping)
            }
        } catch {
            throw error.relabelled("revoke session tokens")
        }
    }

    /// Replaces every recovery code of the account.
    public func replaceRecoveryCodes(userID: Int64, hashes: [[UInt8]]) throws(StoreError) {
        do {
            try database.transaction { () throws(StoreError) in
                let clear = try database.cached("DELETE FROM recovery_codes WHERE user_id = ?")
                try clear.bind(userID, at: 1)
                try clear.run()
                let insert = try database.cached("INSERT INTO recovery_codes(code_hash, user_id) VALUES (?, ?)")
                for hash in hashes {
                    try insert.bind(hash, at: 1)
                    try insert.bind(userID, at: 2)
                    try insert.run()
                }
            }
        } catch {
            throw error.relabelled("replace recovery codes")
        }
    }

    /// Whether the account has an unused recovery code with this hash.
    public func holdsRecoveryCode(userID: Int64, codeHash: [UInt8]) throws(StoreError) -> Bool {
        let find = try database.cached("SELECT 1 FROM recovery_codes WHERE user_id = ? AND code_hash = ?")
        defer { find.reset() }
        do {
            try find.bind(userID, at: 1)
            try find.bind(codeHash, at: 2)
            return try find.step()
        } catch {
            throw error.relabelled("read recovery code")
        }
    }

    /// Deletes the code, sets the password hash and deletes every token of the account; the hashes deleted, or nil
    /// (nothing changed) when the account has no such code.
    public func redeemRecoveryCode(userID: Int64, codeHash: [UInt8], newHash: String) throws(UserStoreError) -> [[UInt8]]? {
        guard StoredPasswordHash.isStorable(newHash) else { throw .notArgon2idHash }
        do {
            return try database.transaction { () throws(StoreError) -> [[UInt8]]? in
                let use = try database.cached("DELETE FROM recovery_codes WHERE user_id = ? AND code_hash = ?")
                try use.bind(userID, at: 1)
                try use.bind(codeHash, at: 2)
                try use.run()
                guard database.changes > 0, try setPasswordHash(newHash, userID: userID) else { return nil }
                return try deleteTokens(userID: userID, except: nil)
            }
        } catch {
            throw .store(error.relabelled("redeem recovery code"))
        }
    }

    /// Tries the account's mailed recovery code; a right one is used up, the password hash set and every token
    /// deleted (their hashes answered), in one transaction; a wrong one costs a try.
    public func redeemMailedCode(userID: Int64, codeHash: [UInt8], nowMs: Int64,
                                 newHash: String) throws(UserStoreError) -> MailedCodeRedemption {
        guard StoredPasswordHash.isStorable(newHash) else { throw .notArgon2idHash }
        do {
            return try database.transaction { () throws(StoreError) -> MailedCodeRedemption in
                switch try MailStore(database: database).tryCode(codeHash, of: userID, purpose: .recover, nowMs: nowMs) {
                case .noLiveCode: return .noLiveCode
                case .wrong(let left): return .wrong(triesLeft: left)
                case .right:
                    guard try setPasswordHash(newHash, userID: userID) else { return .noLiveCode }
                    return .redeemed(revokedTokens: try deleteTokens(userID: userID, except: nil))
                }
            }
        } catch {
            throw .store(error.relabelled("redeem mailed code"))
        }
    }

    /// Stores a pending secret beside (or instead of) a confirmed one.
    public func storePendingTOTP(userID: Int64, sealed: [UInt8]) throws(StoreError) {
        try write("store pending TOTP", """
            INSERT INTO totp(user_id, pending) VALUES (?, ?) ON CONFLICT(user_id) DO UPDATE SET pending = excluded.pending
            """, [.integer(userID), .blob(sealed)])
    }

    /// The pending secret becomes the confirmed one with `step` as its last step; false when none was pending.
    public func confirmTOTP(userID: Int64, step: Int64) throws(StoreError) -> Bool {
        try write("confirm TOTP", """
            UPDATE totp SET sealed = pending, pending = NULL, last_step = ? WHERE user_id = ? AND pending IS NOT NULL
            """, [.integer(step), .integer(userID)]) > 0
    }

    /// Records `step` as used if it is later than the last one, in one statement, so two log-ins racing with one
    /// code cannot both win; false for a replay or an account without confirmed TOTP.
    public func acceptTOTPStep(userID: Int64, step: Int64) throws(StoreError) -> Bool {
        try write("accept TOTP step", """
            UPDATE totp SET last_step = ?
            WHERE user_id = ? AND sealed IS NOT NULL AND (last_step IS NULL OR last_step < ?)
            """, [.integer(step), .integer(userID), .integer(step)]) > 0
    }

    /// Removes the account's TOTP, confirmed and pending.
    public func removeTOTP(userID: Int64) throws(StoreError) {
        try write("remove TOTP", "DELETE FROM totp WHERE user_id = ?", [.integer(userID)])
    }

    // MARK: Helpers

    /// The confirmed seal in columns `sealed` and `lastStep` of the current row, nil when `sealed` is NULL.
    static func seal(_ row: Statement, sealed: Int, lastStep: Int) -> TOTPSeal? {
        row.isNull(at: sealed) ? nil
            : TOTPSeal(sealed: row.blob(at: sealed), lastStep: row.isNull(at: lastStep) ? nil : row.int64(at: lastStep))
    }

    /// One statement in its own transaction; the rows it changed.
    @discardableResult
    private func write(_ operation: String, _ sql: String, _ values: [SQLValue]) throws(StoreError) -> Int {
        do {
            return try database.transaction { () throws(StoreError) -> Int in
                let statement = try database.cached(sql)
                try statement.bind(values)
                try statement.run()
                return database.changes
            }
        } catch {
            throw error.relabelled(operation)
        }
    }

    /// Inside a transaction: whether the account was there.
    private func setPasswordHash(_ hash: String, userID: Int64) throws(StoreError) -> Bool {
        let update = try database.cached("UPDATE users SET password_hash = ? WHERE id = ?")
        try update.bind(hash, at: 1)
        try update.bind(userID, at: 2)
        try update.run()
        return database.changes > 0
    }

    /// Inside a transaction: deletes the account's tokens but `keeping`, answering their hashes.
    func deleteTokens(userID: Int64, except keeping: [UInt8]?) throws(StoreError) -> [[UInt8]] {
        let delete = try database.cached("DELETE FROM session_tokens WHERE user_id = ? AND token_hash IS NOT ? RETURNING token_hash")
        defer { delete.reset() }
        try delete.bind(userID, at: 1)
        if let keeping { try delete.bind(keeping, at: 2) } else { try delete.bindNull(at: 2) }
        var hashes: [[UInt8]] = []
        while try delete.step() { hashes.append(delete.blob(at: 0)) }
        return hashes
    }
}

/// Log-in tokens in `session_tokens`, keyed by the token's hash. A token expires after being
/// unused for the idle limit: it is expired once `now - last_used_at >= idleLimitMs`.
public struct SessionTokenStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    /// Whether `tokenHash` is still stored for `userID` and that account is not locked: what a session's queued
    /// write checks in its own transaction (see `SessionGrant`). An expired token that no purge deleted yet still
    /// counts, as it does for the session that holds it.
    public func holds(_ tokenHash: [UInt8], for userID: Int64) throws(StoreError) -> Bool {
        let find = try database.cached("""
            SELECT 1 FROM session_tokens t JOIN users u ON u.id = t.user_id
            WHERE t.token_hash = ? AND t.user_id = ? AND u.locked_at IS NULL
            """)
        defer { find.reset() }
        try find.bind(tokenHash, at: 1)
        try find.bind(userID, at: 2)
        return try find.step()
    }

    /// Records a new token for `userID`, used for the first time at `now`, with the client that logged in. With
    /// `maxTokens`, first deletes the user's least recently used tokens so that it holds at most that many with
    /// the new one (ties by creation, then by hash, so the choice is the same on every backend); the hashes
    /// deleted, oldest first.
    @discardableResult
    public func insert(tokenHash: [UInt8], userID: Int64, client: String? = nil, now: Int64,
                       maxTokens: Int? = nil) throws(StoreError) -> [[UInt8]] {
        do {
            return try database.transaction { () throws(StoreError) -> [[UInt8]] in
                var revoked: [[UInt8]] = []
                if let maxTokens { revoked = try pushOut(userID: userID, keeping: max(0, maxTokens - 1), sparing: tokenHash) }
                let insert = try database.cached("""
                    INSERT INTO session_tokens(token_hash, user_id, created_at, last_used_at, client) VALUES (?, ?, ?, ?, ?)
                    """)
                try insert.bind(tokenHash, at: 1)
                try insert.bind(userID, at: 2)
                try insert.bind(now, at: 3)
                try insert.bind(now, at: 4)
                try insert.bind(client, at: 5)
                try insert.run()
                try touchLastLogin(userID: userID, now: now)
                return revoked
            }
        } catch {
            throw error.relabelled("insert session token")
        }
    }

    /// Deletes all but the `keeping` most recently used tokens of the user, never `sparing` (the hash about to be
    /// stored: should it be there already, the insert fails and takes nothing with it); their hashes, oldest first.
    private func pushOut(userID: Int64, keeping: Int, sparing: [UInt8]) throws(StoreError) -> [[UInt8]] {
        let oldest = try database.cached("""
            SELECT token_hash FROM session_tokens WHERE user_id = ?1 AND token_hash <> ?3
            ORDER BY last_used_at, created_at, token_hash
            LIMIT max(0, (SELECT count(*) FROM session_tokens WHERE user_id = ?1 AND token_hash <> ?3) - ?2)
            """)
        defer { oldest.reset() }
        try oldest.bind(userID, at: 1)
        try oldest.bind(Int64(keeping), at: 2)
        try oldest.bind(sparing, at: 3)
        var hashes: [[UInt8]] = []
        while try oldest.step() { hashes.append(oldest.blob(at: 0)) }
        oldest.reset()
        for hash in hashes { try delete(hash) }
        return hashes
    }

    /// The token's user, marking the token used at `now`; nil for an unknown token, or an expired
    /// one, which is deleted.
    public func resume(tokenHash: [UInt8], now: Int64, idleLimitMs: Int64) throws(StoreError) -> UserRecord? {
        do {
            return try database.transaction { () throws(StoreError) -> UserRecord? in
                let find = try database.cached("""
                    SELECT t.last_used_at, u.id, u.canonical, u.display, u.email, u.password_hash, u.created_at,
                        u.email_verified, u.locked_at IS NOT NULL
                    FROM session_tokens t JOIN users u ON u.id = t.user_id
                    WHERE t.token_hash = ?
                    """)
                defer { find.reset() }
                try find.bind(tokenHash, at: 1)
                guard try find.step() else { return nil }
                let lastUsed = find.int64(at: 0)
                var user = UserRecord(row: find, offset: 1)
                user.locked = find.int64(at: 8) != 0
                find.reset()
                // A locked account's token stays as it is, dead, until the unlock deletes it.
                if user.locked { return user }

                if Saturating.subtract(now, lastUsed) >= idleLimitMs {
                    try delete(tokenHash)
                    return nil
                }
                // max() keeps last use from moving backwards if the wall clock steps back.
                let touch = try database.cached("""
                    UPDATE session_tokens SET last_used_at = max(last_used_at, ?) WHERE token_hash = ?
                    """)
                try touch.bind(now, at: 1)
                try touch.bind(tokenHash, at: 2)
                try touch.run()
                try touchLastLogin(userID: user.id, now: now)
                return user
            }
        } catch {
            throw error.relabelled("resume session token")
        }
    }

    /// A log-in or a resume: `admin.users.list`'s `last_login_at` (one row by its key, in the same transaction).
    private func touchLastLogin(userID: Int64, now: Int64) throws(StoreError) {
        let touch = try database.cached("UPDATE users SET last_login_at = max(coalesce(last_login_at, 0), ?) WHERE id = ?")
        try touch.bind(now, at: 1)
        try touch.bind(userID, at: 2)
        try touch.run()
    }

    /// Deletes the token; true when it existed.
    @discardableResult
    public func revoke(tokenHash: [UInt8]) throws(StoreError) -> Bool {
        do {
            return try database.transaction { () throws(StoreError) -> Bool in
                try delete(tokenHash)
                return database.changes > 0
            }
        } catch {
            throw error.relabelled("revoke session token")
        }
    }

    /// Deletes every token of `userID` (after a password change); returns how many.
    @discardableResult
    public func revokeAll(userID: Int64) throws(StoreError) -> Int {
        do {
            return try database.transaction { () throws(StoreError) -> Int in
                let delete = try database.cached("DELETE FROM session_tokens WHERE user_id = ?")
                try delete.bind(userID, at: 1)
                try delete.run()
                return database.changes
            }
        } catch {
            throw error.relabelled("revoke session tokens")
        }
    }

    /// Deletes every token expired at `now`; returns how many.
    @discardableResult
    public func purgeExpired(now: Int64, idleLimitMs: Int64) throws(StoreError) -> Int {
        do {
            return try database.transaction { () throws(StoreError) -> Int in
                let purge = try database.cached("DELETE FROM session_tokens WHERE last_used_at <= ?")
                try purge.bind(Saturating.subtract(now, idleLimitMs), at: 1)
                try purge.run()
                return database.changes
            }
        } catch {
            throw error.relabelled("purge session tokens")
        }
    }

    /// The number of stored tokens, expired or not.
    public func count() throws(StoreError) -> Int {
        let statement = try database.cached("SELECT count(*) FROM session_tokens")
        defer { statement.reset() }
        do {
            return try statement.step() ? statement.int(at: 0) : 0
        } catch {
            throw error.relabelled("count session tokens")
        }
    }

    private func delete(_ tokenHash: [UInt8]) throws(StoreError) {
        let delete = try database.cached("DELETE FROM session_tokens WHERE token_hash = ?")
        try delete.bind(tokenHash, at: 1)
        try delete.run()
    }
}

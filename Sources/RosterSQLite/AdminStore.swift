import RosterStorage

/// The administrator's reads and writes over `users`, `session_tokens` and `login_failures`. Every
/// write is one durable transaction.
public struct AdminStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    private static let summaryColumns = """
        u.id, u.canonical, u.display, u.email, u.password_hash, u.created_at, u.email_verified, u.last_login_at,
        u.locked_at, u.locked_reason, EXISTS(SELECT 1 FROM totp t WHERE t.user_id = u.id AND t.sealed IS NOT NULL)
        """

    /// A `LIKE` condition on username or email for `query` as a substring (`%` and `_` taken as themselves);
    /// `LIKE` ignores ASCII case, as the columns' `NOCASE` does.
    private static let matching = "(?1 = '' OR u.canonical LIKE ?2 ESCAPE '\\' OR u.email LIKE ?2 ESCAPE '\\')"

    /// Accounts by canonical username, `limit` after `offset`, and how many match.
    public func list(query: String, limit: Int, offset: Int) throws(StoreError) -> AccountPage {
        let pattern = "%" + Self.escapedForLike(query) + "%"
        let count = try database.cached("SELECT count(*) FROM users u WHERE \(Self.matching)")
        defer { count.reset() }
        let page = try database.cached("""
            SELECT \(Self.summaryColumns) FROM users u WHERE \(Self.matching)
            ORDER BY u.canonical LIMIT ?3 OFFSET ?4
            """)
        defer { page.reset() }
        do {
            return try database.transaction { () throws(StoreError) -> AccountPage in
                try count.bind(query, at: 1)
                try count.bind(pattern, at: 2)
                let total = try count.step() ? count.int(at: 0) : 0
                try page.bind(query, at: 1)
                try page.bind(pattern, at: 2)
                try page.bind(Int64(max(0, limit)), at: 3)
                try page.bind(Int64(max(0, offset)), at: 4)
                var items: [AccountSummary] = []
                while try page.step() { items.append(Self.summary(page)) }
                return AccountPage(items: items, total: total)
            }
        } catch {
            throw error.relabelled("list accounts")
        }
    }

    /// The account with this canonical username or email (ignoring ASCII case).
    public func summary(_ identifier: AccountIdentifier) throws(StoreError) -> AccountSummary? {
        let (condition, key): (String, String) = switch identifier {
        case .username(let name): ("u.canonical = ?", name)
        case .email(let email): ("u.email = ?", email)
        }
        let find = try database.cached("SELECT \(Self.summaryColumns) FROM users u WHERE \(condition)")
        defer { find.reset() }
        do {
            try find.bind(key, at: 1)
            return try find.step() ? Self.summary(find) : nil
        } catch {
            throw error.relabelled("read account summary")
        }
    }

    /// Sets the lock (its first time kept) and its reason; false when there is no such account.
    public func lock(userID: Int64, reason: String?, now: Int64) throws(StoreError) -> Bool {
        do {
            return try database.transaction { () throws(StoreError) -> Bool in
                let lock = try database.cached(
                    "UPDATE users SET locked_at = coalesce(locked_at, ?), locked_reason = ? WHERE id = ?")
                try lock.bind(now, at: 1)
                try lock.bind(reason, at: 2)
                try lock.bind(userID, at: 3)
                try lock.run()
                return database.changes > 0
            }
        } catch {
            throw error.relabelled("lock account")
        }
    }

    /// Clears the lock and deletes the account's tokens; false when there is no such account.
    public func unlock(userID: Int64) throws(StoreError) -> Bool {
        do {
            return try database.transaction { () throws(StoreError) -> Bool in
                let unlock = try database.cached("UPDATE users SET locked_at = NULL, locked_reason = NULL WHERE id = ?")
                try unlock.bind(userID, at: 1)
                try unlock.run()
                guard database.changes > 0 else { return false }
                _ = try AccountLifeStore(database: database).deleteTokens(userID: userID, except: nil)
                return true
            }
        } catch {
            throw error.relabelled("unlock account")
        }
    }

    /// Deletes every failure row of `keys`.
    public func resetFailures(keys: [String]) throws(StoreError) {
        do {
            try database.transaction { () throws(StoreError) in
                let delete = try database.cached("DELETE FROM login_failures WHERE key = ?")
                for key in keys {
                    try delete.bind(key, at: 1)
                    try delete.run()
                }
            }
        } catch {
            throw error.relabelled("reset failures")
        }
    }

    private static func summary(_ row: Statement) -> AccountSummary {
        AccountSummary(account: Account(UserRecord(row: row, offset: 0), locked: !row.isNull(at: 8)),
                       lastLoginAtMs: row.isNull(at: 7) ? nil : row.int64(at: 7),
                       lockedAtMs: row.isNull(at: 8) ? nil : row.int64(at: 8),
                       lockedReason: row.string(at: 9), totp: row.int64(at: 10) != 0)
    }

    static func escapedForLike(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}

extension Account {
    init(_ record: UserRecord, locked: Bool) {
        var record = record
        record.locked = locked
        self.init(record)
    }
}

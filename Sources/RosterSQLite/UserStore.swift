import RosterStorage

/// Account reads and writes over `users`. Every write is its own durable transaction.
public struct UserStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    /// Stores a new account and returns it with its id.
    ///
    /// A clash is reported as `.taken(.username)` before `.taken(.email)` when both collide,
    /// because the username is what the register form checks first.
    public func insertUser(canonical: String, display: String, email: String?, passwordHash: String,
                           createdAt: Int64) throws(UserStoreError) -> UserRecord {
        guard StoredPasswordHash.isStorable(passwordHash) else { throw .notArgon2idHash }
        let outcome: Result<UserRecord, UserStoreError>
        do {
            outcome = try database.transaction { () throws(StoreError) -> Result<UserRecord, UserStoreError> in
                // Checked under BEGIN IMMEDIATE's write lock, so no other writer can slip in
                // between this check and the insert; the UNIQUE constraints remain the backstop.
                if try usernameExists(canonical) { return .failure(.taken(.username)) }
                if let email, try emailExists(email) { return .failure(.taken(.email)) }
                let insert = try database.cached("""
                    INSERT INTO users(canonical, display, email, password_hash, created_at)
                    VALUES (?, ?, ?, ?, ?)
                    """)
                try insert.bind(canonical, at: 1)
                try insert.bind(display, at: 2)
                try insert.bind(email, at: 3)
                try insert.bind(passwordHash, at: 4)
                try insert.bind(createdAt, at: 5)
                try insert.run()
                return .success(UserRecord(id: database.lastInsertRowID, canonical: canonical, display: display,
                                           email: email, passwordHash: passwordHash, createdAt: createdAt))
            }
        } catch where error.isConstraintUnique {
            throw .taken(clashingField(canonical: canonical))
        } catch {
            throw .store(error.relabelled("insert user"))
        }
        return try outcome.get()
    }

    /// The account whose canonical username equals `canonical`, ignoring ASCII case.
    public func user(canonical: String) throws(StoreError) -> UserRecord? {
        try fetchOne("SELECT \(UserRecord.columns) FROM users WHERE canonical = ?", canonical, "find user")
    }

    /// The account with this e-mail address, ignoring ASCII case.
    public func user(email: String) throws(StoreError) -> UserRecord? {
        try fetchOne("SELECT \(UserRecord.columns) FROM users WHERE email = ?", email, "find user")
    }

    /// The account with this id.
    public func user(id: Int64) throws(StoreError) -> UserRecord? {
        let statement = try database.cached("SELECT \(UserRecord.columns) FROM users WHERE id = ?")
        defer { statement.reset() }
        do {
            try statement.bind(id, at: 1)
            return try statement.step() ? UserRecord(row: statement) : nil
        } catch {
            throw error.relabelled("find user")
        }
    }

    /// The account with this canonical username (ignoring ASCII case), its hash and its confirmed TOTP.
    public func credential(canonical: String) throws(StoreError) -> Credential? {
        try fetchCredential("u.canonical = ?", .text(canonical))
    }

    /// The account with this e-mail address (ignoring ASCII case), its hash and its confirmed TOTP.
    public func credential(email: String) throws(StoreError) -> Credential? {
        try fetchCredential("u.email = ?", .text(email))
    }

    /// The account with this id, its hash and its confirmed TOTP.
    public func credential(id: Int64) throws(StoreError) -> Credential? {
        try fetchCredential("u.id = ?", .integer(id))
    }

    /// True when an account has this canonical username, ignoring ASCII case.
    public func usernameExists(_ canonical: String) throws(StoreError) -> Bool {
        try exists("SELECT 1 FROM users WHERE canonical = ?", canonical, "check username")
    }

    /// True when an account has this e-mail address, ignoring ASCII case.
    public func emailExists(_ email: String) throws(StoreError) -> Bool {
        try exists("SELECT 1 FROM users WHERE email = ?", email, "check email")
    }

    /// Replaces an account's password hash (after a password change or a `needsRehash` upgrade).
    public func updatePasswordHash(userID: Int64, hash: String) throws(UserStoreError) {
        guard StoredPasswordHash.isStorable(hash) else { throw .notArgon2idHash }
        let changed: Int
        do {
            changed = try database.transaction { () throws(StoreError) -> Int in
                let update = try database.cached("UPDATE users SET password_hash = ? WHERE id = ?")
                try update.bind(hash, at: 1)
                try update.bind(userID, at: 2)
                try update.run()
                return database.changes
            }
        } catch {
            throw .store(error.relabelled("update password hash"))
        }
        if changed == 0 { throw .notFound }
    }

    /// The number of accounts.
    public func userCount() throws(StoreError) -> Int {
        let statement = try database.cached("SELECT count(*) FROM users")
        defer { statement.reset() }
        do {
            return try statement.step() ? statement.int(at: 0) : 0
        } catch {
            throw error.relabelled("count users")
        }
    }

    /// Every canonical username, ASCII letters lower-cased (the column compares ignoring ASCII case), for an
    /// in-memory directory. Reads one snapshot; at a million accounts this takes about a second.
    public func allCanonicalUsernames() throws(StoreError) -> Set<String> {
        let statement = try database.cached("SELECT canonical FROM users")
        defer { statement.reset() }
        var names = Set<String>(minimumCapacity: max(0, try userCount()))
        do {
            while try statement.step() {
                if let name = statement.string(at: 0) { names.insert(UsernameKey.folded(name)) }
            }
        } catch {
            throw error.relabelled("list usernames")
        }
        return names
    }

    // MARK: Helpers

    private func clashingField(canonical: String) -> AccountField {
        // Reached only if the pre-check missed a clash (a writer outside BEGIN IMMEDIATE); if the
        // username lookup itself fails, username is the likelier culprit.
        if let exists = try? usernameExists(canonical), !exists { return .email }
        return .username
    }

    /// One read, the TOTP row joined, so a log-in learns whether it needs a code without a second query.
    private func fetchCredential(_ condition: String, _ key: SQLValue) throws(StoreError) -> Credential? {
        let statement = try database.cached("""
            SELECT \(UserRecord.columns), t.sealed, t.last_step, u.locked_at IS NOT NULL
            FROM users u LEFT JOIN totp t ON t.user_id = u.id
            WHERE \(condition)
            """)
        defer { statement.reset() }
        do {
            try statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            var record = UserRecord(row: statement)
            record.locked = statement.int64(at: 9) != 0
            return Credential(account: Account(record), passwordHash: record.passwordHash,
                              totp: AccountLifeStore.seal(statement, sealed: 7, lastStep: 8))
        } catch {
            throw error.relabelled("find credential")
        }
    }

    private func fetchOne(_ sql: String, _ key: String, _ operation: String) throws(StoreError) -> UserRecord? {
        let statement = try database.cached(sql)
        defer { statement.reset() }
        do {
            try statement.bind(key, at: 1)
            return try statement.step() ? UserRecord(row: statement) : nil
        } catch {
            throw error.relabelled(operation)
        }
    }

    private func exists(_ sql: String, _ key: String, _ operation: String) throws(StoreError) -> Bool {
        let statement = try database.cached(sql)
        defer { statement.reset() }
        do {
            try statement.bind(key, at: 1)
            return try statement.step()
        } catch {
            throw error.relabelled(operation)
        }
    }
}

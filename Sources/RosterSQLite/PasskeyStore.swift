import RosterCore
import RosterStorage

/// Passkeys and WebAuthn user handles over `passkeys` and `passkey_handles`. Each write is one transaction of its
/// own, or joins the write that encloses it (`Database.enclosingTransaction`, with its audit entry). The daemon is
/// the file's only writer and its writes take turns, so a count read in a write's transaction is the count it
/// writes against: the cap and the sign count need no more than that.
public struct PasskeyStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    private static let columnNames = ["credential_id", "account_id", "algorithm", "public_key", "sign_count",
                                      "transports", "name", "created_at", "last_used_at"]
    static let columns = columnNames.joined(separator: ", ")
    /// `columns` of the table named `p`, where a join would make `created_at` ambiguous.
    private static let joinedColumns = columnNames.map { "p." + $0 }.joined(separator: ", ")

    /// `PasskeyStorage.passkeyUserHandle`: the account's handle, `candidate` stored first when it has none; nil
    /// when the account is gone.
    public func userHandle(of account: Int64, candidate: [UInt8]) throws(StoreError) -> [UInt8]? {
        do {
            return try database.transaction { () throws(StoreError) -> [UInt8]? in
                let insert = try database.cached("""
                    INSERT INTO passkey_handles(account_id, handle) SELECT id, ? FROM users WHERE id = ?
                    ON CONFLICT(account_id) DO NOTHING
                    """)
                try insert.bind(candidate, at: 1)
                try insert.bind(account, at: 2)
                try insert.run()
                let held = try database.cached("SELECT handle FROM passkey_handles WHERE account_id = ?")
                defer { held.reset() }
                try held.bind(account, at: 1)
                return try held.step() ? held.blob(at: 0) : nil
            }
        } catch {
            throw error.relabelled("store the passkey user handle")
        }
    }

    /// The account `handle` belongs to.
    public func account(forHandle handle: [UInt8]) throws(StoreError) -> Account? {
        let statement = try database.cached("""
            SELECT \(Self.ownerColumns) FROM passkey_handles h JOIN users u ON u.id = h.account_id WHERE h.handle = ?
            """)
        defer { statement.reset() }
        try statement.bind(handle, at: 1)
        return try statement.step() ? Self.owner(statement, offset: 0) : nil
    }

    /// The account's passkeys, oldest first.
    public func passkeys(of account: Int64) throws(StoreError) -> [StoredPasskey] {
        let statement = try database.cached("""
            SELECT \(Self.columns) FROM passkeys WHERE account_id = ? ORDER BY created_at, credential_id
            """)
        defer { statement.reset() }
        try statement.bind(account, at: 1)
        var passkeys: [StoredPasskey] = []
        while try statement.step() { passkeys.append(try Self.passkey(statement)) }
        return passkeys
    }

    /// The passkey with this credential id and the account that owns it.
    public func passkey(credentialID: [UInt8]) throws(StoreError) -> OwnedPasskey? {
        let statement = try database.cached("""
            SELECT \(Self.joinedColumns), \(Self.ownerColumns) FROM passkeys p JOIN users u ON u.id = p.account_id
            WHERE p.credential_id = ?
            """)
        defer { statement.reset() }
        try statement.bind(credentialID, at: 1)
        guard try statement.step() else { return nil }
        return OwnedPasskey(passkey: try Self.passkey(statement), account: Self.owner(statement, offset: 9))
    }

    /// `PasskeyStorage.addPasskey`: the account, the credential id, then the cap, then the row stamped `now`, in
    /// one transaction.
    public func add(_ passkey: StoredPasskey, limit: Int, now: Int64) throws(StoreError) -> PasskeyAddition {
        do {
            return try database.transaction { () throws(StoreError) -> PasskeyAddition in
                guard try UserStore(database: database).user(id: passkey.account) != nil else { return .gone }
                let held = try database.cached("SELECT 1 FROM passkeys WHERE credential_id = ?")
                defer { held.reset() }
                try held.bind(passkey.credentialID, at: 1)
                if try held.step() { return .duplicate }
                held.reset()
                let count = try database.cached("SELECT count(*) FROM passkeys WHERE account_id = ?")
                defer { count.reset() }
                try count.bind(passkey.account, at: 1)
                guard try count.step(), count.int(at: 0) < limit else { return .full }
                count.reset()
                var stored = passkey
                stored.createdMs = now
                stored.lastUsedMs = nil
                let insert = try database.cached("INSERT INTO passkeys(\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
                try insert.bind(Self.values(stored))
                try insert.run()
                return .added(stored)
            }
        } catch {
            throw error.relabelled("add a passkey")
        }
    }

    /// Deletes the account's passkey with this credential id; false when it has none.
    public func remove(of account: Int64, credentialID: [UInt8]) throws(StoreError) -> Bool {
        let delete = try database.cached("DELETE FROM passkeys WHERE credential_id = ? AND account_id = ?")
        try delete.bind(credentialID, at: 1)
        try delete.bind(account, at: 2)
        try delete.run()
        return database.changes > 0
    }

    /// `PasskeyStorage.usePasskey`: one UPDATE whose condition is the counter rule, then the row as it stands.
    public func use(credentialID: [UInt8], signCount: UInt32, usedMs: Int64) throws(StoreError) -> PasskeyUse {
        do {
            return try database.transaction { () throws(StoreError) -> PasskeyUse in
                let update = try database.cached("""
                    UPDATE passkeys SET sign_count = ?1, last_used_at = ?2
                    WHERE credential_id = ?3 AND ((sign_count = 0 AND ?1 = 0) OR ?1 > sign_count)
                    """)
                try update.bind(Int64(signCount), at: 1)
                try update.bind(usedMs, at: 2)
                try update.bind(credentialID, at: 3)
                try update.run()
                let used = database.changes > 0
                let row = try database.cached("SELECT \(Self.columns) FROM passkeys WHERE credential_id = ?")
                defer { row.reset() }
                try row.bind(credentialID, at: 1)
                guard try row.step() else { return .gone }
                let passkey = try Self.passkey(row)
                return used ? .used(passkey) : .counterWentBack(stored: passkey.signCount)
            }
        } catch {
            throw error.relabelled("record a passkey log-in")
        }
    }

    // MARK: Rows

    /// `UserRecord.columns` of `u`, then whether it is locked.
    private static let ownerColumns = """
        u.id, u.canonical, u.display, u.email, u.password_hash, u.created_at, u.email_verified, u.locked_at IS NOT NULL
        """

    private static func owner(_ row: Statement, offset: Int) -> Account {
        var record = UserRecord(row: row, offset: offset)
        record.locked = row.int64(at: offset + 7) != 0
        return Account(record)
    }

    /// A passkey from `columns`, at the row's start.
    static func passkey(_ row: Statement) throws(StoreError) -> StoredPasskey {
        guard let transports = row.string(at: 5).flatMap(PasskeyTransports.decoded),
              let signCount = UInt32(exactly: row.int64(at: 4)) else {
            throw .unreadableValue(operation: "read a passkey")
        }
        return StoredPasskey(credentialID: row.blob(at: 0), account: row.int64(at: 1), algorithm: row.int(at: 2),
                             publicKey: row.blob(at: 3), signCount: signCount, transports: transports,
                             name: row.string(at: 6) ?? "", createdMs: row.int64(at: 7),
                             lastUsedMs: row.isNull(at: 8) ? nil : row.int64(at: 8))
    }

    /// The values of `columns` for `passkey`.
    static func values(_ passkey: StoredPasskey) -> [SQLValue] {
        [.blob(passkey.credentialID), .integer(passkey.account), .integer(Int64(passkey.algorithm)),
         .blob(passkey.publicKey), .integer(Int64(passkey.signCount)),
         .text(PasskeyTransports.encoded(passkey.transports)), .text(passkey.name), .integer(passkey.createdMs),
         passkey.lastUsedMs.map(SQLValue.integer) ?? .null]
    }
}

import RosterCore
import RosterStorage

/// App passwords over `app_passwords`. Each write is one transaction of its own, or joins the write that encloses
/// it (`Database.enclosingTransaction`, with its audit entry). The daemon is the file's only writer and its writes
/// take turns, so a count read in a write's transaction is the count it writes against: the cap needs no more.
public struct AppPasswordStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    static let columns = "id, account_id, name, hash, created_at, last_used_at"

    /// The account's app passwords, oldest first.
    public func appPasswords(of account: Int64) throws(StoreError) -> [StoredAppPassword] {
        let statement = try database.cached("""
            SELECT \(Self.columns) FROM app_passwords WHERE account_id = ? ORDER BY created_at, id
            """)
        defer { statement.reset() }
        try statement.bind(account, at: 1)
        var rows: [StoredAppPassword] = []
        while try statement.step() { rows.append(Self.appPassword(statement)) }
        return rows
    }

    /// `AppPasswordStorage.addAppPassword`: the account, then the cap, then the row stamped `now`, in one
    /// transaction.
    public func add(_ appPassword: StoredAppPassword, limit: Int, now: Int64) throws(StoreError) -> AppPasswordAddition {
        do {
            return try database.transaction { () throws(StoreError) -> AppPasswordAddition in
                guard try UserStore(database: database).user(id: appPassword.account) != nil else { return .gone }
                let count = try database.cached("SELECT count(*) FROM app_passwords WHERE account_id = ?")
                defer { count.reset() }
                try count.bind(appPassword.account, at: 1)
                guard try count.step(), count.int(at: 0) < limit else { return .full }
                count.reset()
                var stored = appPassword
                stored.createdMs = now
                stored.lastUsedMs = nil
                let insert = try database.cached("INSERT INTO app_passwords(\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)")
                try insert.bind(Self.values(stored))
                try insert.run()
                return .added(stored)
            }
        } catch {
            throw error.relabelled("add an app password")
        }
    }

    /// Deletes the account's app password with this id; false when it has none.
    public func remove(of account: Int64, id: String) throws(StoreError) -> Bool {
        let delete = try database.cached("DELETE FROM app_passwords WHERE id = ? AND account_id = ?")
        try delete.bind(id, at: 1)
        try delete.bind(account, at: 2)
        try delete.run()
        return database.changes > 0
    }

    /// Stores a log-in's time as the app password's last use; false when it is gone.
    public func touch(of account: Int64, id: String, usedMs: Int64) throws(StoreError) -> Bool {
        let update = try database.cached("UPDATE app_passwords SET last_used_at = ? WHERE id = ? AND account_id = ?")
        try update.bind(usedMs, at: 1)
        try update.bind(id, at: 2)
        try update.bind(account, at: 3)
        try update.run()
        return database.changes > 0
    }

    // MARK: Rows

    /// An app password from `columns`, at the row's start.
    static func appPassword(_ row: Statement) -> StoredAppPassword {
        StoredAppPassword(id: row.string(at: 0) ?? "", account: row.int64(at: 1), name: row.string(at: 2) ?? "",
                          hash: row.blob(at: 3), createdMs: row.int64(at: 4),
                          lastUsedMs: row.isNull(at: 5) ? nil : row.int64(at: 5))
    }

    /// The values of `columns` for `appPassword`.
    static func values(_ appPassword: StoredAppPassword) -> [SQLValue] {
        [.text(appPassword.id), .integer(appPassword.account), .text(appPassword.name), .blob(appPassword.hash),
         .integer(appPassword.createdMs), appPassword.lastUsedMs.map(SQLValue.integer) ?? .null]
    }
}

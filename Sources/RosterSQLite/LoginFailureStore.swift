/// Failed log-in attempts in `login_failures`, so the rate limit survives a restart.
///
/// Keys are chosen by the caller (for example "account:alice1" or "uid:1000"); times are Unix ms.
/// The sliding-window policy itself lives with the caller.
public struct LoginFailureStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    /// Durably records one failure for `key` at time `at`.
    public func record(key: String, at: Int64) throws(StoreError) {
        try record(keys: [key], at: at)
    }

    /// Durably records one failure under each of `keys` (an account and a peer, say) in one transaction.
    public func record(keys: [String], at: Int64) throws(StoreError) {
        do {
            try database.transaction { () throws(StoreError) in
                let insert = try database.cached("INSERT INTO login_failures(key, at) VALUES (?, ?)")
                for key in keys {
                    try insert.bind(key, at: 1)
                    try insert.bind(at, at: 2)
                    try insert.run()
                }
            }
        } catch {
            throw error.relabelled("record login failure")
        }
    }

    /// How many failures `key` has at or after `since`, and the time of the oldest of them.
    public func failures(key: String, since: Int64) throws(StoreError) -> (count: Int, oldest: Int64?) {
        let statement = try database.cached("SELECT count(*), min(at) FROM login_failures WHERE key = ? AND at >= ?")
        defer { statement.reset() }
        do {
            try statement.bind(key, at: 1)
            try statement.bind(since, at: 2)
            guard try statement.step() else { return (0, nil) }
            return (statement.int(at: 0), statement.isNull(at: 1) ? nil : statement.int64(at: 1))
        } catch {
            throw error.relabelled("count login failures")
        }
    }

    /// The times of `key`'s failures at or after `since`, oldest first. With more failures than the
    /// burst in the window, the limit lifts when the `count - burst + 1`-th oldest ages out, not
    /// the oldest, so a precise `retry_after_ms` needs the list.
    public func failureTimes(key: String, since: Int64) throws(StoreError) -> [Int64] {
        let statement = try database.cached("SELECT at FROM login_failures WHERE key = ? AND at >= ? ORDER BY at")
        defer { statement.reset() }
        do {
            try statement.bind(key, at: 1)
            try statement.bind(since, at: 2)
            var times: [Int64] = []
            while try statement.step() { times.append(statement.int64(at: 0)) }
            return times
        } catch {
            throw error.relabelled("list login failures")
        }
    }

    /// Deletes every failure (of any key) older than `olderThan`; returns how many.
    @discardableResult
    public func prune(olderThan: Int64) throws(StoreError) -> Int {
        do {
            return try database.transaction { () throws(StoreError) -> Int in
                let delete = try database.cached("DELETE FROM login_failures WHERE at < ?")
                try delete.bind(olderThan, at: 1)
                try delete.run()
                return database.changes
            }
        } catch {
            throw error.relabelled("prune login failures")
        }
    }

    /// Forgets every failure of `key` (for example after a successful log-in).
    public func clear(key: String) throws(StoreError) {
        do {
            try database.transaction { () throws(StoreError) in
                let delete = try database.cached("DELETE FROM login_failures WHERE key = ?")
                try delete.bind(key, at: 1)
                try delete.run()
            }
        } catch {
            throw error.relabelled("clear login failures")
        }
    }
}

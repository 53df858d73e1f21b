/// Checks that a database is Roster's and brings its schema up to date, over a blocking connection, before the
/// daemon serves (and in `--copy-database`). Under a session advisory lock, so that daemons starting together
/// take turns: the second finds the first's migrations recorded and applies nothing.
enum PostgreSQLMigrator {
    /// Why a database was not migrated.
    enum Failure: Error, Equatable {
        /// Tables that are not Roster's (or Roster's without `roster_migrations`): never adopted.
        case notOurs(tables: [String])
        /// `roster_migrations` records names this rosterd does not know, or in another order: a newer rosterd's
        /// database, or an edited history.
        case unknownHistory(applied: [String])
        /// The server refused a statement (the lock, the check, or a migration named here).
        case failed(step: String, PGFailure)
    }

    /// Applies every migration not yet recorded, each in its own transaction with its record, stamped with the
    /// database's clock (or `now`). Returns the names this call applied.
    @discardableResult
    static func migrate(_ connection: PGBlockingConnection, now: PGValue = .null,
                        migrations: [PostgreSQLSchema.Migration] = PostgreSQLSchema.migrations) throws(Failure) -> [String] {
        // A daemon that hangs while holding the lock must not hang every other daemon's start: wait a minute at most.
        try run(connection, "bound the wait for the migration lock", "SET lock_timeout = 60000")
        try run(connection, "take the migration lock", "SELECT pg_advisory_lock($1::bigint)",
                [.int(PostgreSQLSchema.advisoryLockKey)])
        defer {
            _ = try? connection.execute("SELECT pg_advisory_unlock($1::bigint)", [.int(PostgreSQLSchema.advisoryLockKey)])
        }
        let tables = try run(connection, "list tables", PostgreSQLSchema.tablesSQL).rows.compactMap { $0.text(0) }
        var applied: [String]?
        if tables.contains("roster_migrations") {
            applied = try run(connection, "read roster_migrations", "SELECT name FROM roster_migrations ORDER BY position")
                .rows.compactMap { $0.text(0) }
        }
        let history: [String]
        switch PostgreSQLSchema.identity(tables: tables, applied: applied) {
        case .foreign(let tables): throw .notOurs(tables: tables)
        case .empty: history = []
        case .roster(let names): history = names
        }
        guard let pending = PostgreSQLSchema.pending(after: history, in: migrations) else {
            throw .unknownHistory(applied: history)
        }
        var done: [String] = []
        for (offset, migration) in pending.enumerated() {
            let position = history.count + offset + 1
            do throws(PGFailure) {
                _ = try connection.execute("BEGIN")
                if position == 1 {
                    _ = try connection.execute("""
                        CREATE TABLE IF NOT EXISTS roster_migrations(
                            position integer PRIMARY KEY,
                            name text NOT NULL UNIQUE,
                            applied_at bigint NOT NULL
                        )
                        """)
                }
                for statement in migration.statements { _ = try connection.execute(statement) }
                _ = try connection.execute("""
                    INSERT INTO roster_migrations(position, name, applied_at) VALUES ($1::integer, $2::text, \(PostgreSQLQueries.now(3)))
                    """, [.int(Int64(position)), .text(migration.name), now])
                _ = try connection.execute("COMMIT")
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw .failed(step: "migration \(migration.name)", error)
            }
            done.append(migration.name)
        }
        return done
    }

    @discardableResult
    private static func run(_ connection: PGBlockingConnection, _ step: String, _ sql: String,
                            _ params: [PGValue] = []) throws(Failure) -> PGResult {
        do throws(PGFailure) {
            return try connection.execute(sql, params)
        } catch {
            throw .failed(step: step, error)
        }
    }
}

/// Applies named, append-only schema migrations and records them in `schema_migrations`.
public enum Migrator {
    /// A migration: a stable name (never reused or renamed) and the SQL that applies it.
    public typealias Migration = (name: String, sql: String)

    /// Applies every migration in `migrations` not yet recorded, each in its own transaction,
    /// stamping it with `now` (Unix ms). Returns the names applied by this call (empty when up to date).
    ///
    /// The list must extend the database's history: an applied name missing from the list, or a new
    /// name placed before an applied one, throws instead of guessing.
    @discardableResult
    public static func migrate(_ database: Database, migrations: [Migration], now: Int64) throws(StoreError) -> [String] {
        try database.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations(
                name TEXT PRIMARY KEY,
                applied_at INTEGER NOT NULL
            ) STRICT
            """)
        let names = migrations.map(\.name)
        var seen = Set<String>()
        for name in names where !seen.insert(name).inserted {
            throw .duplicateMigration(name: name)
        }

        let applied = try appliedNames(database)
        for name in applied where !seen.contains(name) {
            throw .unknownAppliedMigration(name: name)
        }
        // Applied names must be exactly the list's first entries; a gap means a migration was
        // inserted into history rather than appended.
        let appliedSet = Set(applied)
        for name in names.prefix(applied.count) where !appliedSet.contains(name) {
            throw .migrationOrderChanged(name: name)
        }

        var newlyApplied: [String] = []
        for migration in migrations.dropFirst(applied.count) {
            let ran = try database.transaction { () throws(StoreError) -> Bool in
                // Another process may have migrated between the read above and this write lock.
                let check = try database.prepare("SELECT 1 FROM schema_migrations WHERE name = ?")
                try check.bind(migration.name, at: 1)
                if try check.step() { return false }
                try database.execute(migration.sql)
                let record = try database.prepare("INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)")
                try record.bind(migration.name, at: 1)
                try record.bind(now, at: 2)
                try record.run()
                return true
            }
            if ran { newlyApplied.append(migration.name) }
        }
        return newlyApplied
    }

    /// Names of applied migrations, in the order they were applied.
    public static func appliedNames(_ database: Database) throws(StoreError) -> [String] {
        let statement = try database.prepare("SELECT name FROM schema_migrations ORDER BY rowid")
        var names: [String] = []
        while try statement.step() {
            if let name = statement.string(at: 0) { names.append(name) }
        }
        return names
    }
}

/// Roster's schema history. Append only: a shipped migration is never edited, renamed or reordered.
public enum RosterSchema {
    /// Every migration, oldest first.
    public static let migrations: [Migrator.Migration] = [
        (name: "0001_users", sql: """
            CREATE TABLE users(
                id INTEGER PRIMARY KEY,
                canonical TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK(canonical <> ''),
                display TEXT NOT NULL,
                email TEXT UNIQUE COLLATE NOCASE CHECK(email <> ''),
                password_hash TEXT NOT NULL CHECK(password_hash GLOB '$argon2id$*'),
                created_at INTEGER NOT NULL
            ) STRICT;
            """),
        // WITHOUT ROWID: the 32-byte hash is the only lookup key, so the table is its own index.
        (name: "0002_session_tokens", sql: """
            CREATE TABLE session_tokens(
                token_hash BLOB PRIMARY KEY CHECK(length(token_hash) = 32),
                user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER NOT NULL
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX session_tokens_user ON session_tokens(user_id);
            CREATE INDEX session_tokens_last_used ON session_tokens(last_used_at);
            """),
        (name: "0003_login_failures", sql: """
            CREATE TABLE login_failures(
                key TEXT NOT NULL,
                at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX login_failures_key_at ON login_failures(key, at);
            CREATE INDEX login_failures_at ON login_failures(at);
            """),
        // Search keys are computed when a contact is written (pinyin costs ~130 µs a name), so loading a user's
        // index is a plain read, never a recomputation.
        (name: "0004_contacts", sql: """
            CREATE TABLE contacts(
                id INTEGER PRIMARY KEY,
                user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                name TEXT NOT NULL CHECK(length(name) BETWEEN 1 AND 200),
                phone TEXT CHECK(phone <> ''),
                email TEXT CHECK(email <> ''),
                note TEXT CHECK(note <> ''),
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                key_folded TEXT NOT NULL,
                key_initials TEXT NOT NULL,
                key_pinyin TEXT NOT NULL,
                key_pinyin_initials TEXT NOT NULL,
                key_hangul_initials TEXT NOT NULL,
                key_phone_digits TEXT NOT NULL
            ) STRICT;
            CREATE INDEX contacts_user ON contacts(user_id, id);
            """),
    ]

    /// Opens the database at `path` and brings its schema up to date, stamping new migrations with `now`.
    public static func open(path: String, now: Int64, busyTimeoutMs: Int32 = 5_000) throws(StoreError) -> Database {
        let database = try Database(path: path, busyTimeoutMs: busyTimeoutMs)
        try Migrator.migrate(database, migrations: migrations, now: now)
        return database
    }
}

import RosterStorage

/// Roster's schema history. Append only: a shipped migration is never edited, renamed or reordered.
public enum RosterSchema {
    /// `PRAGMA application_id` of a Roster database: ASCII "RSTR". It marks the file as ours, so that another
    /// application's SQLite file is refused instead of being migrated into a Roster database.
    public static let applicationID: Int32 = 0x5253_5452

    static var applicationIDText: String { hex(applicationID) }

    static func hex(_ id: Int32) -> String {
        let digits = String(UInt32(bitPattern: id), radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// Every migration, oldest first: one a `SchemaStep`, in the steps' order.
    public static let migrations: [Migrator.Migration] = SchemaStep.allCases.compactMap(migration(for:))

    /// The migration SQLite records for `step`: every step has its own.
    public static func migration(for step: SchemaStep) -> Migrator.Migration? {
        switch step {
        case .users:
            (name: "0001_users", sql: """
            CREATE TABLE users(
                id INTEGER PRIMARY KEY,
                canonical TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK(canonical <> ''),
                display TEXT NOT NULL,
                email TEXT UNIQUE COLLATE NOCASE CHECK(email <> ''),
                password_hash TEXT NOT NULL CHECK(password_hash GLOB '$argon2id$*'),
                created_at INTEGER NOT NULL
            ) STRICT;
            """)
        // WITHOUT ROWID: the 32-byte hash is the only lookup key, so the table is its own index.
        case .sessionTokens:
            (name: "0002_session_tokens", sql: """
            CREATE TABLE session_tokens(
                token_hash BLOB PRIMARY KEY CHECK(length(token_hash) = 32),
                user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER NOT NULL
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX session_tokens_user ON session_tokens(user_id);
            CREATE INDEX session_tokens_last_used ON session_tokens(last_used_at);
            """)
        case .loginFailures:
            (name: "0003_login_failures", sql: """
            CREATE TABLE login_failures(
                key TEXT NOT NULL,
                at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX login_failures_key_at ON login_failures(key, at);
            CREATE INDEX login_failures_at ON login_failures(at);
            """)
        // Search keys are computed when a contact is written (pinyin costs ~130 µs a name), so loading a user's
        // index is a plain read, never a recomputation.
        case .contacts:
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
            """)
        // An import finds exact duplicates through this index, a few rows per imported card, instead of
        // reading the whole address book for every import.
        case .contactsByFoldedName:
            (name: "0005_contacts_by_folded_name", sql: """
            CREATE INDEX contacts_user_folded ON contacts(user_id, key_folded);
            """)
        // A token remembers the client that logged in, for `session.list`. Recovery codes are stored
        // as keyed hashes only and deleted when used; a TOTP row holds the sealed secrets (`pending` until
        // confirmed) and the last step a code was accepted for. Both go with their account.
        case .accountLife:
            (name: "0006_account_life", sql: """
            ALTER TABLE session_tokens ADD COLUMN client TEXT;
            CREATE TABLE recovery_codes(
                code_hash BLOB PRIMARY KEY CHECK(length(code_hash) = 32),
                user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX recovery_codes_user ON recovery_codes(user_id);
            CREATE TABLE totp(
                user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                sealed BLOB CHECK(length(sealed) > 0),
                pending BLOB CHECK(length(pending) > 0),
                last_step INTEGER CHECK(last_step >= 0),
                CHECK(sealed IS NOT NULL OR pending IS NOT NULL)
            ) STRICT;
            """)
        // A lock is its time and reason (null: unlocked); the last log-in or resume is kept for the
        // administrator's list. No index: `admin.users.list` reads by username, which `canonical` has.
        case .adminUsers:
            (name: "0007_admin_users", sql: """
            ALTER TABLE users ADD COLUMN last_login_at INTEGER;
            ALTER TABLE users ADD COLUMN locked_at INTEGER;
            ALTER TABLE users ADD COLUMN locked_reason TEXT CHECK(length(locked_reason) <= 200);
            """)
        // The audit log, append-only (a trigger refuses UPDATE; only pruning deletes). AUTOINCREMENT so
        // that an id is never handed out twice, even after the newest entries were pruned: followers de-duplicate
        // by id. No foreign key: a deleted account's entries stay, findable by its username (NOCASE, as `users`).
        // Newest first is by id, with a username or an event through its index; pruning is by time.
        case .audit:
            (name: "0008_audit", sql: """
            CREATE TABLE audit_log(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                time_ms INTEGER NOT NULL,
                event TEXT NOT NULL CHECK(event <> ''),
                username TEXT COLLATE NOCASE CHECK(username <> ''),
                peer_uid INTEGER NOT NULL CHECK(peer_uid BETWEEN 0 AND 4294967295),
                peer_pid INTEGER NOT NULL,
                client TEXT,
                outcome TEXT NOT NULL CHECK(outcome IN ('succeeded', 'failed')),
                reason TEXT,
                suppressed INTEGER NOT NULL DEFAULT 0 CHECK(suppressed >= 0)
            ) STRICT;
            CREATE INDEX audit_log_username ON audit_log(username, id);
            CREATE INDEX audit_log_event ON audit_log(event, id);
            CREATE INDEX audit_log_time ON audit_log(time_ms);
            CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
            BEGIN
                SELECT RAISE(ABORT, 'audit_log is append-only');
            END;
            """)
        // The address of the person a trusted gateway (roster-web) spoke for, canonical; null when the
        // connection spoke for itself, as every entry before this did. No CHECK: the server canonicalises it, and a
        // refused value would fail the write the entry records (a log-in, say) rather than the entry alone.
        // A lock's reason and time are 0007_admin_users' already.
        case .auditRemote:
            (name: "0009_audit_remote", sql: """
            ALTER TABLE audit_log ADD COLUMN remote TEXT;
            """)
        // The check value of the key file the database was first served with (`KeyCheck`): one row, written by
        // the first daemon, compared at every start, which refuses another key. A file copied to a host without
        // its key file, or with another, would otherwise be served with a new key that opens none of its secrets.
        case .keyCheck:
            (name: "0010_key_check", sql: """
            CREATE TABLE key_check(
                id INTEGER PRIMARY KEY CHECK(id = 1),
                value TEXT NOT NULL CHECK(value <> ''),
                created_ms INTEGER NOT NULL
            ) STRICT;
            """)
        // Whether a code mailed to the account's email came back (reset whenever the email changes); the outbox;
        // and the mailed codes. The outbox has no foreign key: a deletion's notice outlives its account. A row is
        // `queued` until handed off (`sent`) or given up on (`failed`); a queued row is due from
        // `next_attempt_at`, and while a daemon hands it off, `claimant` holds it until `claim_expires_at`, after
        // which any daemon may claim it again. The message is sealed with the daemon's key (it may hold a code).
        // AUTOINCREMENT: an id is never handed out twice, so a daemon finishing a hand-off never marks a newer row.
        // A mailed code is its keyed hash, one per account and purpose (a new one replaces it), and goes with its
        // account; a used or dead one is kept, with no tries left, for its creation time.
        case .mail:
            (name: "0011_mail", sql: """
            ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0 CHECK(email_verified IN (0, 1));
            CREATE TABLE mail_outbox(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                account_id INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK(kind <> ''),
                recipient TEXT NOT NULL CHECK(recipient <> ''),
                message BLOB NOT NULL CHECK(length(message) > 0),
                status TEXT NOT NULL CHECK(status IN ('queued', 'sent', 'failed')),
                attempts INTEGER NOT NULL DEFAULT 0 CHECK(attempts >= 0),
                next_attempt_at INTEGER,
                claimant TEXT,
                claim_expires_at INTEGER,
                last_error TEXT,
                queued_at INTEGER NOT NULL,
                sent_at INTEGER,
                CHECK((status = 'queued') = (next_attempt_at IS NOT NULL)),
                CHECK((claimant IS NULL) = (claim_expires_at IS NULL))
            ) STRICT;
            CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, id) WHERE status = 'queued';
            CREATE INDEX mail_outbox_account ON mail_outbox(account_id) WHERE status = 'queued';
            CREATE INDEX mail_outbox_status ON mail_outbox(status, id);
            CREATE TABLE mail_codes(
                account_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL CHECK(purpose <> ''),
                code_hash BLOB NOT NULL CHECK(length(code_hash) = 32),
                expires_at INTEGER NOT NULL,
                tries_left INTEGER NOT NULL CHECK(tries_left >= 0),
                email TEXT NOT NULL COLLATE NOCASE CHECK(email <> ''),
                created_at INTEGER NOT NULL,
                PRIMARY KEY(account_id, purpose)
            ) STRICT, WITHOUT ROWID;
            """)
        // An account's WebAuthn user handle, made once and then what its authenticators hold, so it is unique in
        // the database (a discoverable log-in finds its account by it alone); and its passkeys, keyed by the
        // credential id, which is unique across accounts (an authenticator's credential is one account's). Both
        // go with their account. `transports` is `PasskeyTransports`' JSON text; `sign_count` is WebAuthn's
        // unsigned 32-bit counter, which only moves forward.
        case .passkeys:
            (name: "0012_passkeys", sql: """
            CREATE TABLE passkey_handles(
                account_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                handle BLOB NOT NULL UNIQUE CHECK(length(handle) BETWEEN 1 AND 64)
            ) STRICT;
            CREATE TABLE passkeys(
                credential_id BLOB PRIMARY KEY CHECK(length(credential_id) BETWEEN 1 AND 1023),
                account_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                algorithm INTEGER NOT NULL,
                public_key BLOB NOT NULL CHECK(length(public_key) > 0),
                sign_count INTEGER NOT NULL CHECK(sign_count BETWEEN 0 AND 4294967295),
                transports TEXT NOT NULL,
                name TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX passkeys_account ON passkeys(account_id, created_at);
            """)
        // How a `login` entry's log-in was proved (`LoginMethod`'s text); null on every other entry and on every
        // entry before this. No CHECK, as for `remote`: a refused value would fail the log-in the entry records,
        // and a text this rosterd does not know (a newer one's method) reads back as no method.
        case .auditMethod:
            (name: "0013_audit_method", sql: """
            ALTER TABLE audit_log ADD COLUMN method TEXT;
            """)
        // Every contact gets a uid (`roster-contact-<id>` for those stored before, as export already wrote) and a
        // revision from its owner's change sequence (`contact_books.revision`, the newest one given; the old
        // contacts take their ids, which only grew). `card` holds a card exactly as a client sent it, NULL
        // where the fields are the whole card. A removal leaves a tombstone with its revision for
        // `contacts.changes`; `forgotten` is the newest revision of a tombstone pruned, below which a change
        // token is too old.
        case .contactCards:
            (name: "0014_contact_cards", sql: """
            ALTER TABLE contacts ADD COLUMN uid TEXT NOT NULL DEFAULT '';
            ALTER TABLE contacts ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE contacts ADD COLUMN card TEXT;
            UPDATE contacts SET uid = 'roster-contact-' || id, revision = id;
            CREATE UNIQUE INDEX contacts_user_uid ON contacts(user_id, uid);
            CREATE INDEX contacts_user_revision ON contacts(user_id, revision);
            CREATE TABLE contact_books(
                user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                revision INTEGER NOT NULL,
                forgotten INTEGER NOT NULL DEFAULT 0
            ) STRICT;
            INSERT INTO contact_books(user_id, revision) SELECT user_id, max(id) FROM contacts GROUP BY user_id;
            CREATE TABLE contact_tombstones(
                user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                uid TEXT NOT NULL,
                revision INTEGER NOT NULL,
                removed_at INTEGER NOT NULL,
                PRIMARY KEY(user_id, uid)
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX contact_tombstones_user_revision ON contact_tombstones(user_id, revision);
            CREATE INDEX contact_tombstones_removed ON contact_tombstones(removed_at);
            """)
        // An account's app passwords (protocol.md "App passwords"), each a keyed hash of a secret the owner was
        // shown once, under a random id unique across the database; they go with their account. Numbered 0015:
        // 0014 is the contacts' CardDAV step, which lands before this one in the list (the migrator goes by the
        // list's order and names, never by the number).
        case .appPasswords:
            (name: "0015_app_passwords", sql: """
            CREATE TABLE app_passwords(
                id TEXT PRIMARY KEY CHECK(length(id) BETWEEN 1 AND 64),
                account_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                hash BLOB NOT NULL CHECK(length(hash) = 32),
                created_at INTEGER NOT NULL,
                last_used_at INTEGER
            ) STRICT, WITHOUT ROWID;
            CREATE INDEX app_passwords_account ON app_passwords(account_id, created_at);
            """)
        }
    }

    /// The checks of `open` that only read (`StoreError.refused`): the file, its directory and its file system
    /// accept writes, and the file is empty, Roster's, or adoptable. They come before the daemon makes its lock
    /// file, so that another application's database is refused without a new file beside it.
    public static func preflight(path: String) throws(StoreError) {
        try DatabaseCheck.requireWritable(path)
        _ = try DatabaseCheck.identity(ofFileAt: path, migrations: migrations)
    }

    /// Opens the database at `path`, checks it, and brings its schema up to date, stamping new migrations with `now`.
    ///
    /// In order, each refusal (`StoreError.refused`) leaving the file as it was: the file and its directory must
    /// be writable; the file must be empty, carry Roster's application id, or hold exactly the schema of Roster's
    /// migrations (a database from before the id, which is then adopted); and it must pass `PRAGMA quick_check`.
    public static func open(path: String, now: Int64, busyTimeoutMs: Int32 = 5_000) throws(StoreError) -> Database {
        try openChecked(path: path, now: now, busyTimeoutMs: busyTimeoutMs).database
    }

    /// `open`, and which integrity check it ran: after a clean shutdown (`CleanShutdown`'s mark, which this
    /// removes) the light one, otherwise `quick_check`.
    public static func openChecked(path: String, now: Int64,
                                   busyTimeoutMs: Int32 = 5_000) throws(StoreError) -> (database: Database, check: StartCheck) {
        try DatabaseCheck.requireWritable(path)
        let identity = try DatabaseCheck.identity(ofFileAt: path, migrations: migrations)
        let check: StartCheck = try CleanShutdown.take(DatabaseFiles(path: path)) ? .light : .quickCheck
        let database: Database
        do throws(StoreError) {
            database = try Database(path: path, busyTimeoutMs: busyTimeoutMs)
        } catch {
            throw DatabaseCheck.refusal(for: error, path: path)
        }
        guard !database.isReadOnly else {
            database.close()
            throw .refused(DatabaseRefusal(.notWritable, path: path, detail: "SQLite could open it only read-only"))
        }
        do throws(StoreError) {
            switch check {
            case .quickCheck: try DatabaseCheck.requireIntact(database, path: path)
            case .light: try DatabaseCheck.requireWholePages(database, path: path)
            }
            if identity != .roster {
                try database.execute("PRAGMA application_id=\(applicationID)")
            }
            try Migrator.migrate(database, migrations: migrations, now: now)
        } catch {
            database.close()
            throw error
        }
        return (database, check)
    }
}

/// The integrity check a start ran, as its log line names it.
public enum StartCheck: String, Sendable {
    /// `PRAGMA quick_check`: every page read and every record decoded.
    case quickCheck = "quick_check"
    /// After a clean shutdown, with the file as that shutdown left it: the identity and schema checks every start
    /// makes, and that the file holds whole pages (`page_count` × `page_size` is its size), without quick_check.
    case light = "light (clean shutdown)"
}

import CSQLite
import RosterCore
import RosterStorage

/// One SQLite database as an end of `rosterd --copy-database`: offline, blocking, on a connection of its own.
///
/// Either end holds the `DatabaseLock` for the copy's whole life, so neither can be a database a running daemon
/// serves: a daemon writing to the source would answer writes that the copy then misses, and one serving the
/// target would keep a username directory the copy makes stale. A source must be Roster's (checked like a
/// daemon's file, undamaged, at this build's schema) and is only read, in one snapshot; a target may be missing or
/// empty (it is then created and migrated) or Roster's, and the driver refuses one that holds rows.
public final class SQLiteCopy: CopySource, CopyTarget {
    /// The database file, as it was named.
    public let path: String
    private let database: Database
    /// nil for a backup's partial file, which no daemon can be serving: only this copy knows its name.
    private let lock: DatabaseLock?
    /// Whether the copy's one write transaction is open (from the first `write` to `finish`).
    private var copying = false

    private init(path: String, database: Database, lock: DatabaseLock?) {
        self.path = path
        self.database = database
        self.lock = lock
    }

    /// A copy that stopped before `finish` is rolled back here: closing with the transaction open undoes it, as
    /// SQLite's journal does for a process killed midway.
    deinit {
        if copying { try? database.execute("ROLLBACK") }
        database.close()
        lock?.release()
    }

    /// The database at `path` to copy from: it must exist and be Roster's; nothing is ever written to it.
    public static func source(path: String) throws(CopyError) -> SQLiteCopy {
        let identity = try storing(path) { () throws(StoreError) in
            try DatabaseCheck.identity(ofFileAt: path, migrations: RosterSchema.migrations)
        }
        guard identity != .empty else { throw .failed("\(path) holds no Roster database") }
        let lock = try locking(path)
        // Read-write without create, as an offline backup opens it: SQLite's locking and WAL recovery work as for
        // any reader, and a missing file is not made.
        let database = try storing(path) { () throws(StoreError) in try Database(opening: path, flags: SQLITE_OPEN_READWRITE) }
        do throws(CopyError) {
            try storing(path) { () throws(StoreError) in try DatabaseCheck.requireIntact(database, path: path) }
            let applied = try storing(path) { () throws(StoreError) in try Migrator.appliedNames(database) }
            let known = RosterSchema.migrations.map(\.name)
            if applied != known {
                throw .failed(known.starts(with: applied)
                    ? "\(path) has an older schema than this rosterd's: start rosterd on it once (it migrates at start), "
                        + "stop it, then copy"
                    : "\(path) has migrations this rosterd does not know: copy it with the rosterd that made it")
            }
        } catch {
            database.close()
            throw error
        }
        return SQLiteCopy(path: path, database: database, lock: lock)
    }

    /// The database at `path` to copy into, created and migrated (its migrations stamped `now`) if missing or empty.
    public static func target(path: String, now: Int64) throws(CopyError) -> SQLiteCopy {
        try storing(path) { () throws(StoreError) in try RosterSchema.preflight(path: path) }
        let lock = try locking(path)
        let database = try storing(path) { () throws(StoreError) in try RosterSchema.open(path: path, now: now) }
        return SQLiteCopy(path: path, database: database, lock: lock)
    }

    /// A backup's partial file as a copy's target: `database` is open on it (no lock, no journal), and is given
    /// Roster's id and schema here, its migrations stamped `now`.
    static func partial(_ database: Database, now: Int64) throws(StoreError) -> SQLiteCopy {
        try database.execute("PRAGMA application_id=\(RosterSchema.applicationID)")
        try Migrator.migrate(database, migrations: RosterSchema.migrations, now: now)
        return SQLiteCopy(path: database.path, database: database, lock: nil)
    }

    // MARK: CopySource and CopyTarget

    public func counts() throws(CopyError) -> CopyCounts {
        try storing(path) { () throws(StoreError) in try storedCounts() }
    }

    /// `counts`, with SQLite's own error.
    func storedCounts() throws(StoreError) -> CopyCounts {
        func count(_ table: String) throws(StoreError) -> Int {
            let statement = try database.prepare("SELECT count(*) FROM \(table)")
            return try statement.step() ? statement.int(at: 0) : 0
        }
        return CopyCounts(accounts: try count("users"), tokens: try count("session_tokens"),
                          failures: try count("login_failures"), contacts: try count("contacts"),
                          recoveryCodes: try count("recovery_codes"), totp: try count("totp"),
                          audit: try count("audit_log"), mail: try count("mail_outbox"),
                          mailCodes: try count("mail_codes"), passkeys: try count("passkeys"),
                          passkeyHandles: try count("passkey_handles"), appPasswords: try count("app_passwords"))
    }

    /// Accounts, tokens, failed log-ins, contacts, recovery codes, TOTP rows, audit entries, the outbox, the mailed
    /// codes, the passkeys, the passkey user handles, then the app passwords, each in the order they were stored, all from one read
    /// transaction: one snapshot however long the copy takes.
    public func readAll(batchSize: Int, _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError) {
        let size = max(1, batchSize)
        try storing(path) { () throws(StoreError) in try database.execute("BEGIN DEFERRED") }
        defer { try? database.execute("ROLLBACK") }
        try stream("SELECT \(UserRecord.columns), last_login_at, locked_at, locked_reason FROM users ORDER BY id", size,
                   body, row: { row in
            let record = UserRecord(row: row)
            return CopiedAccount(account: Account(id: record.id, username: record.canonical, display: record.display,
                                                  email: record.email, createdAtMs: record.createdAt,
                                                  locked: !row.isNull(at: 8), emailVerified: record.emailVerified),
                                 passwordHash: record.passwordHash, lastLoginAtMs: row.isNull(at: 7) ? nil : row.int64(at: 7),
                                 lockedAtMs: row.isNull(at: 8) ? nil : row.int64(at: 8), lockedReason: row.string(at: 9))
        }, batch: CopyBatch.accounts)
        try stream("""
            SELECT token_hash, user_id, created_at, last_used_at, client FROM session_tokens ORDER BY user_id, created_at
            """, size, body, row: { row in
            CopiedToken(hash: row.blob(at: 0), account: row.int64(at: 1), createdAtMs: row.int64(at: 2),
                        lastUsedAtMs: row.int64(at: 3), client: row.string(at: 4))
        }, batch: CopyBatch.tokens)
        try stream("SELECT key, at FROM login_failures ORDER BY rowid", size, body, row: { row in
            CopiedFailure(key: row.string(at: 0) ?? "", atMs: row.int64(at: 1))
        }, batch: CopyBatch.failures)
        try stream("SELECT \(ContactStore.columns), card FROM contacts ORDER BY id", size, body, row: { row in
            (account: row.int64(at: 1), contact: ContactStore.record(row), card: row.string(at: 16))
        }, batch: CopyBatch.contacts)
        try stream("SELECT user_id, code_hash FROM recovery_codes ORDER BY user_id, code_hash", size, body, row: { row in
            CopiedRecoveryCode(account: row.int64(at: 0), hash: row.blob(at: 1))
        }, batch: CopyBatch.recoveryCodes)
        try stream("SELECT user_id, sealed, pending, last_step FROM totp ORDER BY user_id", size, body, row: { row in
            CopiedTOTP(account: row.int64(at: 0), sealed: row.isNull(at: 1) ? nil : row.blob(at: 1),
                       pending: row.isNull(at: 2) ? nil : row.blob(at: 2),
                       lastStep: row.isNull(at: 3) ? nil : row.int64(at: 3))
        }, batch: CopyBatch.totp)
        try stream("SELECT \(AuditLogStore.columns) FROM audit_log ORDER BY id", size, body, row: { row throws(StoreError) in
            try AuditLogStore.entry(row)
        }, batch: CopyBatch.audit)
        try stream("SELECT \(Self.outboxColumns) FROM mail_outbox ORDER BY id", size, body, row: { row throws(StoreError) in
            guard let kind = row.string(at: 2).flatMap(MailKindName.init(rawValue:)),
                  let status = row.string(at: 5).flatMap(MailStatus.init(rawValue:)) else {
                throw .unreadableValue(operation: "read an outbox row")
            }
            return CopiedMail(id: row.int64(at: 0), account: row.int64(at: 1), kind: kind, recipient: row.string(at: 3) ?? "",
                              sealedMessage: row.blob(at: 4), status: status, attempts: row.int(at: 6),
                              nextAttemptAtMs: optionalInteger(row, 7), claimant: row.string(at: 8),
                              claimExpiresAtMs: optionalInteger(row, 9), lastError: row.string(at: 10),
                              queuedAtMs: row.int64(at: 11), sentAtMs: optionalInteger(row, 12))
        }, batch: CopyBatch.mail)
        try stream("SELECT \(Self.mailCodeColumns) FROM mail_codes ORDER BY account_id, purpose", size, body,
                   row: { row throws(StoreError) in
            guard let purpose = row.string(at: 1).flatMap(MailCodePurpose.init(rawValue:)) else {
                throw .unreadableValue(operation: "read a mailed code")
            }
            return CopiedMailCode(account: row.int64(at: 0), purpose: purpose, code: StoredMailCode(
                codeHash: row.blob(at: 2), expiresAtMs: row.int64(at: 3), triesLeft: row.int(at: 4),
                email: row.string(at: 5) ?? "", createdAtMs: row.int64(at: 6)))
        }, batch: CopyBatch.mailCodes)
        try stream("SELECT \(PasskeyStore.columns) FROM passkeys ORDER BY account_id, created_at, credential_id", size, body,
                   row: { row throws(StoreError) in try PasskeyStore.passkey(row) }, batch: CopyBatch.passkeys)
        try stream("SELECT account_id, handle FROM passkey_handles ORDER BY account_id", size, body,
                   row: { row throws(StoreError) in CopiedPasskeyHandle(account: row.int64(at: 0), handle: row.blob(at: 1)) },
                   batch: CopyBatch.passkeyHandles)
        try stream("SELECT \(AppPasswordStore.columns) FROM app_passwords ORDER BY account_id, created_at, id", size, body,
                   row: { row throws(StoreError) in AppPasswordStore.appPassword(row) }, batch: CopyBatch.appPasswords)
    }

    private static let outboxColumns = """
        id, account_id, kind, recipient, message, status, attempts, next_attempt_at, claimant, claim_expires_at,
        last_error, queued_at, sent_at
        """
    private static let mailCodeColumns = "account_id, purpose, code_hash, expires_at, tries_left, email, created_at"

    private func optionalInteger(_ row: Statement, _ column: Int) -> Int64? {
        row.isNull(at: column) ? nil : row.int64(at: column)
    }

    /// Every batch of a copy in one write transaction, opened by the first and committed by `finish`, every id
    /// kept as it was: a copy that fails midway (a row refused, a full disk, the process killed) leaves the target
    /// as empty as it found it, so that the same copy can simply be run again.
    public func write(_ batch: CopyBatch) throws(CopyError) {
        try storing(path) { () throws(StoreError) in
            if !copying {
                try database.execute("BEGIN IMMEDIATE")
                copying = true
            }
            try insertRows(batch)
        }
    }

    public func keyCheckValue() throws(CopyError) -> String? {
        try storing(path) { () throws(StoreError) in try database.pragmaValue("SELECT value FROM key_check WHERE id = 1") }
    }

    public func storeKeyCheckValue(_ value: String) throws(CopyError) {
        try storing(path) { () throws(StoreError) in
            if !copying {
                try database.execute("BEGIN IMMEDIATE")
                copying = true
            }
            let upsert = try database.prepare("""
                INSERT INTO key_check(id, value, created_ms)
                VALUES (1, ?, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
                ON CONFLICT(id) DO UPDATE SET value = excluded.value
                """)
            try upsert.bind(value, at: 1)
            try upsert.run()
        }
    }

    /// One batch in a transaction of its own, with SQLite's own error (a backup's partial file, which is removed
    /// whole when it fails, tells a full disk from other failures).
    func insert(_ batch: CopyBatch) throws(StoreError) {
        try database.transaction { () throws(StoreError) in try insertRows(batch) }
    }

    private func insertRows(_ batch: CopyBatch) throws(StoreError) {
        switch batch {
        case .accounts(let rows):
            try insertEach("""
                INSERT INTO users(\(UserRecord.columns), last_login_at, locked_at, locked_reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, rows) { row in
                [.integer(row.account.id), .text(row.account.username), .text(row.account.display),
                 optional(row.account.email), .text(row.passwordHash), .integer(row.account.createdAtMs),
                 .integer(row.account.emailVerified ? 1 : 0), row.lastLoginAtMs.map(SQLValue.integer) ?? .null, row.lockedAtMs.map(SQLValue.integer) ?? .null,
                 optional(row.lockedReason)]
            }
        case .tokens(let rows):
            try insertEach("""
                INSERT INTO session_tokens(token_hash, user_id, created_at, last_used_at, client) VALUES (?, ?, ?, ?, ?)
                """, rows) { row in
                [.blob(row.hash), .integer(row.account), .integer(row.createdAtMs), .integer(row.lastUsedAtMs),
                 optional(row.client)]
            }
        case .failures(let rows):
            try insertEach("INSERT INTO login_failures(key, at) VALUES (?, ?)", rows) { row in
                [.text(row.key), .integer(row.atMs)]
            }
        case .contacts(let rows):
            try insertEach("""
                INSERT INTO contacts(\(ContactStore.columns), card) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, rows) { (account, stored, card) in
                let contact = stored.contact
                let keys = stored.keys
                return [.integer(contact.id), .integer(account), .text(contact.name), optional(contact.phone),
                        optional(contact.email), optional(contact.note), .integer(contact.createdAt),
                        .integer(contact.updatedAt), .text(keys.folded), .text(keys.initials), .text(keys.pinyin),
                        .text(keys.pinyinInitials), .text(keys.hangulInitials), .text(keys.phoneDigits),
                        .text(contact.uid), .integer(contact.revision), optional(card)]
            }
        case .recoveryCodes(let rows):
            try insertEach("INSERT INTO recovery_codes(user_id, code_hash) VALUES (?, ?)", rows) { row in
                [.integer(row.account), .blob(row.hash)]
            }
        case .totp(let rows):
            try insertEach("INSERT INTO totp(user_id, sealed, pending, last_step) VALUES (?, ?, ?, ?)", rows) { row in
                [.integer(row.account), row.sealed.map(SQLValue.blob) ?? .null,
                 row.pending.map(SQLValue.blob) ?? .null, row.lastStep.map(SQLValue.integer) ?? .null]
            }
        case .audit(let entries):
            try AuditLogStore(database: database).insertCopied(entries)
        case .mail(let rows):
            try insertEach("INSERT INTO mail_outbox(\(Self.outboxColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           rows) { row in
                [.integer(row.id), .integer(row.account), .text(row.kind.rawValue), .text(row.recipient),
                 .blob(row.sealedMessage), .text(row.status.rawValue), .integer(Int64(row.attempts)),
                 row.nextAttemptAtMs.map(SQLValue.integer) ?? .null, optional(row.claimant),
                 row.claimExpiresAtMs.map(SQLValue.integer) ?? .null, optional(row.lastError), .integer(row.queuedAtMs),
                 row.sentAtMs.map(SQLValue.integer) ?? .null]
            }
        case .mailCodes(let rows):
            try insertEach("INSERT INTO mail_codes(\(Self.mailCodeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)", rows) { row in
                [.integer(row.account), .text(row.purpose.rawValue), .blob(row.code.codeHash),
                 .integer(row.code.expiresAtMs), .integer(Int64(row.code.triesLeft)), .text(row.code.email),
                 .integer(row.code.createdAtMs)]
            }
        case .passkeys(let rows):
            try insertEach("INSERT INTO passkeys(\(PasskeyStore.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows,
                           values: PasskeyStore.values)
        case .passkeyHandles(let rows):
            try insertEach("INSERT INTO passkey_handles(account_id, handle) VALUES (?, ?)", rows) { row in
                [.integer(row.account), .blob(row.handle)]
            }
        case .appPasswords(let rows):
            try insertEach("INSERT INTO app_passwords(\(AppPasswordStore.columns)) VALUES (?, ?, ?, ?, ?, ?)", rows,
                           values: AppPasswordStore.values)
        }
    }

    /// Commits the copy's transaction; SQLite hands out ids above the largest stored one by itself, so what is left
    /// is to fold the WAL into the file, so the copy is whole in `path` alone.
    public func finish() throws(CopyError) {
        try storing(path) { () throws(StoreError) in
            if copying {
                // Each owner's change sequence goes on from the newest revision copied (the tombstones stay behind:
                // a sync from before the copy is past the book's revision, so it starts again from scratch).
                try database.execute("""
                    INSERT INTO contact_books(user_id, revision) SELECT user_id, max(revision) FROM contacts
                    GROUP BY user_id ON CONFLICT(user_id) DO NOTHING
                    """)
                try database.execute("COMMIT")
                copying = false
            }
            _ = try database.pragmaValue("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    // MARK: Internals

    /// Runs the one INSERT `sql` once for each of `rows`, bound to its `values`.
    private func insertEach<Row>(_ sql: String, _ rows: [Row], values: (Row) -> [SQLValue]) throws(StoreError) {
        let insert = try database.prepare(sql)
        for row in rows {
            try insert.bind(values(row))
            try insert.run()
        }
    }

    private func optional(_ text: String?) -> SQLValue { text.map(SQLValue.text) ?? .null }

    /// Hands `body` the rows of `sql`, made into values by `row`, in batches of `size` wrapped by `batch`.
    private func stream<Row>(_ sql: String, _ size: Int, _ body: (CopyBatch) throws(CopyError) -> Void,
                             row: (Statement) throws(StoreError) -> Row, batch: ([Row]) -> CopyBatch) throws(CopyError) {
        let statement = try storing(path) { () throws(StoreError) in try database.prepare(sql) }
        var rows: [Row] = []
        rows.reserveCapacity(size)
        while try storing(path, { () throws(StoreError) in try statement.step() }) {
            rows.append(try storing(path) { () throws(StoreError) in try row(statement) })
            if rows.count == size {
                try body(batch(rows))
                rows.removeAll(keepingCapacity: true)
            }
        }
        if !rows.isEmpty { try body(batch(rows)) }
    }

    private static func locking(_ path: String) throws(CopyError) -> DatabaseLock {
        do throws(DatabaseLock.Failure) {
            return try DatabaseLock.acquire(databasePath: path)
        } catch {
            throw .failed("\(path): \(error)")
        }
    }

    private func storing<T>(_ path: String, _ work: () throws(StoreError) -> T) throws(CopyError) -> T {
        try Self.storing(path, work)
    }

    private static func storing<T>(_ path: String, _ work: () throws(StoreError) -> T) throws(CopyError) -> T {
        do throws(StoreError) {
            return try work()
        } catch {
            throw .failed("\(path): \(error)")
        }
    }
}

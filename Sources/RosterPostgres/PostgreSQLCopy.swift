import RosterCore
import RosterStorage

/// A PostgreSQL database as `rosterd --copy-database` reads or writes it: offline, over one blocking connection.
/// Opening checks that the database is Roster's (or empty) and brings its schema up to date, as a daemon's start
/// does. Reading takes one snapshot (a read-only repeatable-read transaction) for every table, through cursors,
/// so a copy is consistent even while daemons keep writing; writing puts every batch in one transaction, opened by
/// the first and committed by `finish`, in plain multi-row INSERTs that keep every id, so that a copy that stops
/// midway (a refused row, a full disk, the process killed) leaves the target as empty as it found it.
public final class PostgreSQLCopy: CopySource, CopyTarget, SnapshotSource {
    /// Rows per INSERT statement (the widest, a contact, binds 14 parameters a row: well inside 65,535).
    static let insertChunk = 1_000

    private let connection: PGBlockingConnection
    private let label: String
    /// Whether the copy's one write transaction is open (from the first `write` to `finish`).
    private var copying = false

    /// `statementTimeoutMs` bounds each statement (a cursor's page) on this connection: a backup inside a running
    /// daemon must not wait for ever on a server that stopped answering. An offline copy sets none.
    public init(conninfo: String, statementTimeoutMs: Int? = nil) throws(CopyError) {
        label = "postgresql:\(Conninfo.masked(conninfo))"
        do throws(PGFailure) {
            connection = try PGBlockingConnection(conninfo: conninfo)
        } catch {
            throw .failed(PostgreSQLOpenFailure.cannotConnect(conninfo: Conninfo.masked(conninfo), error).description)
        }
        do throws(PostgreSQLMigrator.Failure) {
            try PostgreSQLMigrator.migrate(connection)
        } catch {
            connection.close()
            throw .failed(PostgreSQLOpenFailure(error).description)
        }
        if let statementTimeoutMs { try run("bound its statements", "SET statement_timeout = \(max(1, statementTimeoutMs))") }
    }

    /// A copy that stopped before `finish` is rolled back (closing the session would roll it back too).
    deinit {
        if copying { _ = try? connection.execute("ROLLBACK") }
        connection.close()
    }

    public func counts() throws(CopyError) -> CopyCounts {
        let row = try run("count rows", Self.countsSQL).rows.first
        return CopyCounts(accounts: Int(row?.int(0) ?? 0), tokens: Int(row?.int(1) ?? 0), failures: Int(row?.int(2) ?? 0),
                          contacts: Int(row?.int(3) ?? 0), recoveryCodes: Int(row?.int(4) ?? 0), totp: Int(row?.int(5) ?? 0),
                          audit: Int(row?.int(6) ?? 0), mail: Int(row?.int(7) ?? 0), mailCodes: Int(row?.int(8) ?? 0),
                          passkeys: Int(row?.int(9) ?? 0), passkeyHandles: Int(row?.int(10) ?? 0),
                          appPasswords: Int(row?.int(11) ?? 0))
    }

    private static let countsSQL = """
        SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM session_tokens),
               (SELECT count(*) FROM login_failures), (SELECT count(*) FROM contacts),
               (SELECT count(*) FROM recovery_codes), (SELECT count(*) FROM totp), (SELECT count(*) FROM audit_log),
               (SELECT count(*) FROM mail_outbox), (SELECT count(*) FROM mail_codes), (SELECT count(*) FROM passkeys),
               (SELECT count(*) FROM passkey_handles), (SELECT count(*) FROM app_passwords)
        """

    public func readAll(batchSize: Int, _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError) {
        try readSnapshot(batchSize: batchSize, counted: { _ in }, body)
    }

    /// The counts are the first statement of the read-only repeatable-read transaction, so they are the snapshot's
    /// own: what a backup taken while daemons keep writing must hold exactly.
    public func readSnapshot(batchSize: Int, counted: (CopyCounts) throws(CopyError) -> Void,
                             _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError) {
        let size = max(1, batchSize)
        try run("begin the snapshot", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do throws(CopyError) {
            try counted(try counts())
            // The credential's columns (no TOTP: those rows are copied on their own), then the last log-in and the lock.
            try read("""
                SELECT \(PostgreSQLQueries.userColumns), NULL::bytea, NULL::bigint, locked_at IS NOT NULL, email_verified,
                    last_login_at, locked_at, locked_reason
                FROM users ORDER BY id
                """, size) { rows throws(CopyError) in
                try body(.accounts(try rows.map { row throws(CopyError) in
                    guard let credential = PostgreSQLStorage.credential(row) else { throw self.unreadable("an account") }
                    return CopiedAccount(account: credential.account, passwordHash: credential.passwordHash,
                                         lastLoginAtMs: row.int(10), lockedAtMs: row.int(11), lockedReason: row.text(12))
                }))
            }
            try read("SELECT token_hash, user_id, created_at, last_used_at, client FROM session_tokens ORDER BY token_hash",
                     size) { rows throws(CopyError) in
                try body(.tokens(try rows.map { row throws(CopyError) in
                    guard let hash = row.bytes(0), let account = row.int(1), let created = row.int(2),
                          let used = row.int(3) else { throw self.unreadable("a session token") }
                    return CopiedToken(hash: hash, account: account, createdAtMs: created, lastUsedAtMs: used,
                                       client: row.text(4))
                }))
            }
            try read("SELECT key, at FROM login_failures ORDER BY at, key", size) { rows throws(CopyError) in
                try body(.failures(try rows.map { row throws(CopyError) in
                    guard let key = row.text(0), let at = row.int(1) else { throw self.unreadable("a failed log-in") }
                    return CopiedFailure(key: key, atMs: at)
                }))
            }
            try read("""
                SELECT user_id, \(PostgreSQLQueries.contactColumns), \(PostgreSQLQueries.keyColumns), card FROM contacts
                ORDER BY id
                """, size) { rows throws(CopyError) in
                try body(.contacts(try rows.map { row throws(CopyError) in
                    guard let owner = row.int(0), let contact = row.contact(from: 1) else { throw self.unreadable("a contact") }
                    return (account: owner, contact: StoredContact(contact: contact, keys: row.searchKeys(from: 10)),
                            card: row.text(16))
                }))
            }
            try read("SELECT user_id, code_hash FROM recovery_codes ORDER BY user_id, code_hash", size) { rows throws(CopyError) in
                try body(.recoveryCodes(try rows.map { row throws(CopyError) in
                    guard let account = row.int(0), let hash = row.bytes(1) else { throw self.unreadable("a recovery code") }
                    return CopiedRecoveryCode(account: account, hash: hash)
                }))
            }
            try read("SELECT user_id, sealed, pending, last_step FROM totp ORDER BY user_id", size) { rows throws(CopyError) in
                try body(.totp(try rows.map { row throws(CopyError) in
                    guard let account = row.int(0) else { throw self.unreadable("a TOTP row") }
                    return CopiedTOTP(account: account, sealed: row.bytes(1), pending: row.bytes(2), lastStep: row.int(3))
                }))
            }
            // The audit log, oldest first, ids and times as they were.
            try read("SELECT \(PostgreSQLQueries.auditColumns) FROM audit_log ORDER BY id", size) { rows throws(CopyError) in
                try body(.audit(try rows.map { row throws(CopyError) in
                    guard let entry = row.auditEntry() else { throw self.unreadable("an audit entry") }
                    return entry
                }))
            }
            try read("SELECT \(Self.outboxColumns) FROM mail_outbox ORDER BY id", size) { rows throws(CopyError) in
                try body(.mail(try rows.map { row throws(CopyError) in
                    guard let id = row.int(0), let account = row.int(1),
                          let kind = row.text(2).flatMap(MailKindName.init(rawValue:)), let recipient = row.text(3),
                          let message = row.bytes(4), let status = row.text(5).flatMap(MailStatus.init(rawValue:)),
                          let attempts = row.int(6), let queued = row.int(11) else { throw self.unreadable("an outbox row") }
                    return CopiedMail(id: id, account: account, kind: kind, recipient: recipient, sealedMessage: message,
                                      status: status, attempts: Int(attempts), nextAttemptAtMs: row.int(7),
                                      claimant: row.text(8), claimExpiresAtMs: row.int(9), lastError: row.text(10),
                                      queuedAtMs: queued, sentAtMs: row.int(12))
                }))
            }
            try read("SELECT \(Self.mailCodeColumns) FROM mail_codes ORDER BY account_id, purpose", size) { rows throws(CopyError) in
                try body(.mailCodes(try rows.map { row throws(CopyError) in
                    guard let account = row.int(0), let purpose = row.text(1).flatMap(MailCodePurpose.init(rawValue:)),
                          let hash = row.bytes(2), let expires = row.int(3), let left = row.int(4), let email = row.text(5),
                          let created = row.int(6) else { throw self.unreadable("a mailed code") }
                    return CopiedMailCode(account: account, purpose: purpose, code: StoredMailCode(
                        codeHash: hash, expiresAtMs: expires, triesLeft: Int(left), email: email, createdAtMs: created))
                }))
            }
            try read("""
                SELECT \(PostgreSQLQueries.passkeyColumns) FROM passkeys ORDER BY account_id, created_at, credential_id
                """, size) { rows throws(CopyError) in
                try body(.passkeys(try rows.map { row throws(CopyError) in
                    guard let passkey = row.passkey() else { throw self.unreadable("a passkey") }
                    return passkey
                }))
            }
            try read("SELECT account_id, handle FROM passkey_handles ORDER BY account_id", size) { rows throws(CopyError) in
                try body(.passkeyHandles(try rows.map { row throws(CopyError) in
                    guard let account = row.int(0), let handle = row.bytes(1) else {
                        throw self.unreadable("a passkey user handle")
                    }
                    return CopiedPasskeyHandle(account: account, handle: handle)
                }))
            }
            try read("""
                SELECT \(PostgreSQLQueries.appPasswordColumns) FROM app_passwords ORDER BY account_id, created_at, id
                """, size) { rows throws(CopyError) in
                try body(.appPasswords(try rows.map { row throws(CopyError) in
                    guard let appPassword = row.appPassword() else { throw self.unreadable("an app password") }
                    return appPassword
                }))
            }
            try run("end the snapshot", "COMMIT")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    public func write(_ batch: CopyBatch) throws(CopyError) {
        let statements: [PGStatement]
        switch batch {
        case .accounts(let accounts):
            statements = Self.inserts(accounts, table: "users", columns: [
                ("id", "bigint"), ("canonical", "text"), ("username_key", "text"), ("display", "text"), ("email", "text"),
                ("email_key", "text"), ("password_hash", "text"), ("created_at", "bigint"), ("last_login_at", "bigint"),
                ("locked_at", "bigint"), ("locked_reason", "text"), ("email_verified", "boolean"),
            ]) { copied in
                let account = copied.account
                return [.int(account.id), .text(account.username), .text(UsernameKey.folded(account.username)),
                        .text(account.display), .optional(account.email), .optional(account.email.map(UsernameKey.folded)),
                        .text(copied.passwordHash), .int(account.createdAtMs), copied.lastLoginAtMs.map(PGValue.int) ?? .null,
                        copied.lockedAtMs.map(PGValue.int) ?? .null, .optional(copied.lockedReason),
                        .bool(account.emailVerified)]
            }
        case .tokens(let tokens):
            statements = Self.inserts(tokens, table: "session_tokens", columns: [
                ("token_hash", "bytea"), ("user_id", "bigint"), ("created_at", "bigint"), ("last_used_at", "bigint"),
                ("client", "text"),
            ]) { [.bytes($0.hash), .int($0.account), .int($0.createdAtMs), .int($0.lastUsedAtMs), .optional($0.client)] }
        case .failures(let failures):
            statements = Self.inserts(failures, table: "login_failures", columns: [("key", "text"), ("at", "bigint")]) {
                [.text($0.key), .int($0.atMs)]
            }
        case .contacts(let contacts):
            statements = Self.inserts(contacts, table: "contacts", columns: [
                ("id", "bigint"), ("user_id", "bigint"), ("name", "text"), ("phone", "text"), ("email", "text"),
                ("note", "text"), ("created_at", "bigint"), ("updated_at", "bigint"), ("key_folded", "text"),
                ("key_initials", "text"), ("key_pinyin", "text"), ("key_pinyin_initials", "text"),
                ("key_hangul_initials", "text"), ("key_phone_digits", "text"), ("uid", "text"), ("revision", "bigint"),
                ("card", "text"),
            ]) { owned in
                let contact = owned.contact.contact
                let keys = owned.contact.keys
                return [.int(contact.id), .int(owned.account), .text(contact.name), .optional(contact.phone),
                        .optional(contact.email), .optional(contact.note), .int(contact.createdAt), .int(contact.updatedAt),
                        .text(keys.folded), .text(keys.initials), .text(keys.pinyin), .text(keys.pinyinInitials),
                        .text(keys.hangulInitials), .text(keys.phoneDigits), .text(contact.uid), .int(contact.revision), .optional(owned.card)]
            }
        case .recoveryCodes(let codes):
            statements = Self.inserts(codes, table: "recovery_codes", columns: [("user_id", "bigint"), ("code_hash", "bytea")]) {
                [.int($0.account), .bytes($0.hash)]
            }
        case .totp(let rows):
            statements = Self.inserts(rows, table: "totp", columns: [
                ("user_id", "bigint"), ("sealed", "bytea"), ("pending", "bytea"), ("last_step", "bigint"),
            ]) { [.int($0.account), $0.sealed.map(PGValue.bytes) ?? .null, $0.pending.map(PGValue.bytes) ?? .null,
                  $0.lastStep.map(PGValue.int) ?? .null] }
        case .audit(let entries):
            statements = Self.inserts(entries, table: "audit_log", columns: [
                ("id", "bigint"), ("time_ms", "bigint"), ("event", "text"), ("username", "text"), ("peer_uid", "bigint"),
                ("peer_pid", "integer"), ("client", "text"), ("outcome", "text"), ("reason", "text"), ("suppressed", "bigint"),
                ("remote", "text"), ("method", "text"),
            ]) { entry in
                // A NUL (SQLite holds one) becomes U+FFFD here, as in every entry this backend writes.
                let record = AuditWrite.storable(entry.record)
                return [.int(entry.id), .int(entry.timeMs), .text(record.event.rawValue), .optional(record.username),
                        .int(Int64(record.peer.uid)), .int(Int64(record.peer.pid)), .optional(record.peer.client),
                        .text(record.outcome.rawValue), .optional(record.reason), .int(Int64(record.suppressed)),
                        .optional(record.peer.remote), .optional(record.method?.rawValue)]
            }
        case .mail(let rows):
            statements = Self.inserts(rows, table: "mail_outbox", columns: [
                ("id", "bigint"), ("account_id", "bigint"), ("kind", "text"), ("recipient", "text"), ("message", "bytea"),
                ("status", "text"), ("attempts", "integer"), ("next_attempt_at", "bigint"), ("claimant", "text"),
                ("claim_expires_at", "bigint"), ("last_error", "text"), ("queued_at", "bigint"), ("sent_at", "bigint"),
            ]) { [.int($0.id), .int($0.account), .text($0.kind.rawValue), .text($0.recipient), .bytes($0.sealedMessage),
                  .text($0.status.rawValue), .int(Int64($0.attempts)), $0.nextAttemptAtMs.map(PGValue.int) ?? .null,
                  .optional($0.claimant), $0.claimExpiresAtMs.map(PGValue.int) ?? .null, .optional($0.lastError),
                  .int($0.queuedAtMs), $0.sentAtMs.map(PGValue.int) ?? .null] }
        case .mailCodes(let rows):
            statements = Self.inserts(rows, table: "mail_codes", columns: [
                ("account_id", "bigint"), ("purpose", "text"), ("code_hash", "bytea"), ("expires_at", "bigint"),
                ("tries_left", "integer"), ("email", "text"), ("created_at", "bigint"),
            ]) { [.int($0.account), .text($0.purpose.rawValue), .bytes($0.code.codeHash), .int($0.code.expiresAtMs),
                  .int(Int64($0.code.triesLeft)), .text($0.code.email), .int($0.code.createdAtMs)] }
        case .passkeys(let rows):
            statements = Self.inserts(rows, table: "passkeys", columns: [
                ("credential_id", "bytea"), ("account_id", "bigint"), ("algorithm", "bigint"), ("public_key", "bytea"),
                ("sign_count", "bigint"), ("transports", "text"), ("name", "text"), ("created_at", "bigint"),
                ("last_used_at", "bigint"),
            ]) { [.bytes($0.credentialID), .int($0.account), .int(Int64($0.algorithm)), .bytes($0.publicKey),
                  .int(Int64($0.signCount)), .text(PasskeyTransports.encoded($0.transports)), .text($0.name),
                  .int($0.createdMs), $0.lastUsedMs.map(PGValue.int) ?? .null] }
        case .passkeyHandles(let rows):
            statements = Self.inserts(rows, table: "passkey_handles", columns: [("account_id", "bigint"), ("handle", "bytea")]) {
                [.int($0.account), .bytes($0.handle)]
            }
        case .appPasswords(let rows):
            statements = Self.inserts(rows, table: "app_passwords", columns: [
                ("id", "text"), ("account_id", "bigint"), ("name", "text"), ("hash", "bytea"), ("created_at", "bigint"),
                ("last_used_at", "bigint"),
            ]) { [.text($0.id), .int($0.account), .text($0.name), .bytes($0.hash), .int($0.createdMs),
                  $0.lastUsedMs.map(PGValue.int) ?? .null] }
        }
        guard !statements.isEmpty else { return }
        // PostgreSQL's text holds no NUL (SQLite's does): a copy that would cut a value short stops instead.
        for statement in statements {
            for case .text(let text) in statement.params where !PGText.storable(text) {
                throw .failed("\(label): a row holds a NUL character in a text field, which PostgreSQL cannot store")
            }
        }
        if !copying {
            try run("begin the copy", "BEGIN")
            copying = true
        }
        do throws(CopyError) {
            for statement in statements { try run("write a batch", statement.sql, statement.params) }
        } catch {
            _ = try? connection.execute("ROLLBACK")
            copying = false
            throw error
        }
    }

    public func keyCheckValue() throws(CopyError) -> String? {
        try run("read the key check", "SELECT value FROM roster_key_check WHERE id = 1").rows.first?.text(0)
    }

    public func storeKeyCheckValue(_ value: String) throws(CopyError) {
        if !copying {
            try run("begin the copy", "BEGIN")
            copying = true
        }
        do throws(CopyError) {
            try run("store the key check", """
                INSERT INTO roster_key_check(id, value, created_at) VALUES (1, $1::text, \(PostgreSQLQueries.now(2)))
                ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value
                """, [.text(value), .null])
        } catch {
            _ = try? connection.execute("ROLLBACK")
            copying = false
            throw error
        }
    }

    /// Moves each id sequence past the ids copied, so the daemon's next account, contact, audit entry or mail gets
    /// a new one (an audit id is never reused: entries are paged and followed by it; nor a mail's: a daemon
    /// finishing a hand-off must not mark another row), then commits the copy's transaction.
    public func finish() throws(CopyError) {
        for table in ["users", "contacts", "audit_log", "mail_outbox"] {
            try run("move the \(table) id sequence", """
                SELECT setval(pg_get_serial_sequence('\(table)', 'id'), COALESCE(max(id), 0) + 1, false) FROM \(table)
                """)
        }
        // Each owner's change sequence goes on from the newest revision copied (as SQLite's copy does).
        try run("start the contact books", """
            INSERT INTO contact_books(user_id, revision) SELECT user_id, max(revision) FROM contacts GROUP BY user_id
            ON CONFLICT (user_id) DO NOTHING
            """)
        if copying {
            try run("commit the copy", "COMMIT")
            copying = false
        }
    }

    private static let outboxColumns = """
        id, account_id, kind, recipient, message, status, attempts, next_attempt_at, claimant, claim_expires_at,
        last_error, queued_at, sent_at
        """
    private static let mailCodeColumns = "account_id, purpose, code_hash, expires_at, tries_left, email, created_at"

    // MARK: Helpers

    /// Multi-row INSERTs of `rows`, `insertChunk` at a time, every value a cast parameter.
    private static func inserts<Row>(_ rows: [Row], table: String, columns: [(name: String, type: String)],
                                     _ values: (Row) -> [PGValue]) -> [PGStatement] {
        stride(from: 0, to: rows.count, by: insertChunk).map { start in
            var params: [PGValue] = []
            var tuples: [String] = []
            for row in rows[start..<min(rows.count, start + insertChunk)] {
                let first = params.count + 1
                params += values(row)
                tuples.append("(" + columns.enumerated().map { "$\(first + $0.offset)::\($0.element.type)" }
                    .joined(separator: ", ") + ")")
            }
            return PGStatement("INSERT INTO \(table)(\(columns.map(\.name).joined(separator: ", "))) VALUES "
                               + tuples.joined(separator: ", "), params)
        }
    }

    /// Reads `sql` through a cursor, `size` rows at a time, handing each non-empty batch to `body`.
    private func read(_ sql: String, _ size: Int, _ body: ([PGRow]) throws(CopyError) -> Void) throws(CopyError) {
        try run("open a cursor", "DECLARE roster_copy NO SCROLL CURSOR FOR \(sql)")
        while true {
            let rows = try run("read rows", "FETCH FORWARD \(size) FROM roster_copy").rows
            if rows.isEmpty { break }
            try body(rows)
            if rows.count < size { break }
        }
        try run("close a cursor", "CLOSE roster_copy")
    }

    @discardableResult
    private func run(_ step: String, _ sql: String, _ params: [PGValue] = []) throws(CopyError) -> PGResult {
        do throws(PGFailure) {
            return try connection.execute(sql, params)
        } catch {
            throw .failed("\(label): cannot \(step): \(PostgreSQLOpenFailure.words(error))")
        }
    }

    private func unreadable(_ what: String) -> CopyError {
        .failed("\(label): \(what) could not be read (a column is NULL or not of its type)")
    }
}

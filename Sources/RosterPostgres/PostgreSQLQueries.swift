import RosterCore
import RosterStorage

/// Every statement `PostgreSQLStorage` sends, each with its parameters bound (never spliced), and each parameter
/// cast to its type so that no statement depends on what the server would infer.
///
/// Time: every "now" is `COALESCE($1, the database's clock)`: `$1` is NULL in production, so that every daemon
/// of a site stamps, idles and windows by the one clock they share, and a manual clock's reading in the tests,
/// with one SQL text for both. Statements that others must hear of carry their `pg_notify` in the statement
/// itself (a data-modifying CTE), so the notification commits exactly with the change, in one round trip.
enum PostgreSQLQueries {
    /// The database's clock in Unix ms, unless parameter `n` holds a reading.
    static func now(_ n: Int) -> String {
        "COALESCE($\(n)::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)"
    }

    /// The widest span (ms) a statement subtracts from now: a limit from configuration may be anything, and
    /// bigint arithmetic that overflows is an error, not a clamp (as `Saturating` does for SQLite).
    static func span(_ milliseconds: Int64) -> PGValue {
        .int(min(max(milliseconds, 0), 1_000_000_000_000_000))
    }

    static let userColumns = "id, canonical, display, email, password_hash, created_at"

    // MARK: Accounts

    static func usernameTaken(_ canonical: String) -> PGStatement {
        PGStatement("SELECT EXISTS (SELECT 1 FROM users WHERE username_key = $1::text)",
                    [.text(UsernameKey.folded(canonical))])
    }

    static func emailTaken(_ email: String) -> PGStatement {
        PGStatement("SELECT EXISTS (SELECT 1 FROM users WHERE email_key = $1::text)", [.text(UsernameKey.folded(email))])
    }

    /// The account, its hash and its confirmed TOTP (`credentialColumns`): a log-in learns whether it needs a
    /// code in the same round trip.
    static func user(_ identifier: AccountIdentifier) -> PGStatement {
        let (column, key) = switch identifier {
        case .username(let canonical): ("username_key", UsernameKey.folded(canonical))
        case .email(let email): ("email_key", UsernameKey.folded(email))
        }
        return PGStatement("""
            SELECT \(credentialColumns) FROM users u LEFT JOIN totp t ON t.user_id = u.id WHERE u.\(column) = $1::text
            """, [.text(key)])
    }

    /// One row (id, created_at, then the entry's stamp) when the account was created, its mails queued with it; none when a unique key was
    /// held already, which the insert then leaves alone (`ON CONFLICT DO NOTHING`): of two daemons inserting one
    /// name at the same instant, the second waits for the first's commit and gets no row (nor an entry).
    static func createAccount(_ account: NewAccount, now: PGValue, notification: String, audit: AuditWrite?,
                              mail: [QueuedMail]) -> PGStatement {
        var params: [PGValue] = [now, .text(account.username), .text(UsernameKey.folded(account.username)),
                                 .text(account.display), .optional(account.email),
                                 .optional(account.email.map(UsernameKey.folded)), .text(account.passwordHash),
                                 .text(notification)]
        let mailCTEs = Self.queuedMail(mail, source: MailSource(from: "FROM added", account: "added.id"), now: now,
                                       params: &params)
        let auditCTE = Self.audited(audit, time: .column("added.created_at"), source: "FROM added", params: &params)
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            added AS (
                INSERT INTO users(canonical, username_key, display, email, email_key, password_hash, created_at)
                SELECT $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, clock.ms FROM clock
                ON CONFLICT DO NOTHING
                RETURNING id, created_at),
            \(mailCTEs)
            \(auditCTE)
            SELECT added.id, added.created_at, pg_notify('\(ChangeNotification.channel)', $8::text), a.id, a.time_ms
            FROM added LEFT JOIN audited a ON true
            """, params)
    }

    /// Which field of a refused registration is held: (username, email).
    static func clash(_ account: NewAccount) -> PGStatement {
        PGStatement("""
            SELECT EXISTS (SELECT 1 FROM users WHERE username_key = $1::text),
                   EXISTS (SELECT 1 FROM users WHERE email_key = $2::text)
            """, [.text(UsernameKey.folded(account.username)), .optional(account.email.map(UsernameKey.folded))])
    }

    static func replacePasswordHash(_ hash: String, of account: AccountID) -> PGStatement {
        PGStatement("UPDATE users SET password_hash = $1::text WHERE id = $2::bigint", [.text(hash), .int(account)])
    }

    /// A page of the username directory: keys after `after`, in key order.
    static func usernameKeys(after: String, limit: Int) -> PGStatement {
        PGStatement("SELECT username_key FROM users WHERE username_key > $1::text ORDER BY username_key LIMIT $2::bigint",
                    [.text(after), .int(Int64(limit))])
    }

    static let userCount = PGStatement("SELECT count(*) FROM users")

    static let counts = PGStatement("""
        SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM contacts),
            (SELECT count(*) FROM mail_outbox WHERE status = 'queued'),
            (SELECT count(*) FROM mail_outbox WHERE status = 'failed'),
            (SELECT count(*) FROM mail_outbox WHERE status = 'sent')
        """)

    // MARK: Session tokens

    /// One row: the entry's stamp.
    static func storeToken(_ hash: [UInt8], for account: AccountID, client: String?, now: PGValue,
                           audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [now, .bytes(hash), .int(account), .optional(client)]
        let auditCTE = Self.audited(audit, time: .column("stored.created_at"), source: "FROM stored", params: &params)
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            login AS (
                UPDATE users SET last_login_at = GREATEST(COALESCE(last_login_at, 0), clock.ms) FROM clock
                WHERE id = $3::bigint),
            stored AS (
                INSERT INTO session_tokens(token_hash, user_id, created_at, last_used_at, client)
                SELECT $2::bytea, $3::bigint, clock.ms, clock.ms, $4::text FROM clock
                RETURNING created_at),
            \(auditCTE)
            SELECT a.id, a.time_ms FROM stored LEFT JOIN audited a ON true
            """, params)
    }

    /// Locks the account's row until the transaction ends (no row when it is gone).
    static func lockAccount(_ account: AccountID) -> PGStatement {
        PGStatement("SELECT 1 FROM users WHERE id = $1::bigint FOR UPDATE", [.int(account)])
    }

    /// Rows (hash, announcement, then the entry's stamp) of the account's tokens deleted so that `keeping` are
    /// left, least recently used first (ties by creation, then hash, as SQLite's), never `sparing` (the hash being
    /// stored, so a duplicate fails its insert and takes nothing with it); each is announced as a
    /// revocation, and the entry is written once when any went. No row when none did.
    static func pushOutTokens(of account: AccountID, keeping: Int, sparing: [UInt8], announcing prefix: String,
                              now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.int(account), .int(Int64(max(0, keeping))), .text(prefix), .bytes(sparing)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "WHERE EXISTS (SELECT 1 FROM gone)", params: &params)
        return PGStatement("""
            WITH doomed AS (
                SELECT token_hash FROM session_tokens WHERE user_id = $1::bigint AND token_hash <> $4::bytea
                ORDER BY last_used_at, created_at, token_hash
                LIMIT GREATEST(0, (SELECT count(*) FROM session_tokens
                                   WHERE user_id = $1::bigint AND token_hash <> $4::bytea) - $2::bigint)),
            gone AS (
                DELETE FROM session_tokens t USING doomed d WHERE t.token_hash = d.token_hash RETURNING t.token_hash),
            \(auditCTE)
            SELECT g.token_hash, pg_notify('\(ChangeNotification.channel)', $3::text || encode(g.token_hash, 'hex')),
                a.id, a.time_ms
            FROM gone g LEFT JOIN audited a ON true
            """, params)
    }

    /// A resume, in one transaction: an idled-out token is deleted (so it stays dead if the clock steps back),
    /// then a live one's last use moves to now (never backwards), as does its account's last log-in, and its
    /// account comes back (id, canonical, display, email, created_at, locked, email_verified, then the entry's
    /// stamp). A locked
    /// account's token is left as it is, dead until the unlock deletes it, and its resume writes no entry.
    static func resumeToken(_ hash: [UInt8], idleLimitMs: Int64, now: PGValue, audit: AuditWrite?) -> [PGStatement] {
        var params: [PGValue] = [.bytes(hash), now]
        let auditCTE = Self.audited(audit, time: .column("clock.ms"), source: "FROM clock, found WHERE NOT found.locked",
                                    username: "found.canonical", params: &params)
        return [PGStatement("DELETE FROM session_tokens WHERE token_hash = $1::bytea AND \(Self.now(2)) - last_used_at >= $3::bigint",
                            [.bytes(hash), now, span(idleLimitMs)]),
                PGStatement("""
            WITH clock AS (SELECT \(Self.now(2)) AS ms),
            found AS (
                SELECT u.id, u.canonical, u.display, u.email, u.created_at, u.locked_at IS NOT NULL AS locked,
                    u.email_verified
                FROM session_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1::bytea),
            touched AS (
                UPDATE session_tokens t SET last_used_at = GREATEST(t.last_used_at, clock.ms) FROM clock, found
                WHERE t.token_hash = $1::bytea AND NOT found.locked),
            login AS (
                UPDATE users u SET last_login_at = GREATEST(COALESCE(u.last_login_at, 0), clock.ms) FROM clock, found
                WHERE u.id = found.id AND NOT found.locked),
            \(auditCTE)
            SELECT f.id, f.canonical, f.display, f.email, f.created_at, f.locked, f.email_verified, a.id, a.time_ms
            FROM found f LEFT JOIN audited a ON true
            """, params)]
    }

    /// One row (the entry's stamp last) when the token was there (and the others are told).
    static func revokeToken(_ hash: [UInt8], notification: String, now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.bytes(hash), .text(notification)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM gone", params: &params)
        return PGStatement("""
            WITH gone AS (DELETE FROM session_tokens WHERE token_hash = $1::bytea RETURNING 1),
            \(auditCTE)
            SELECT pg_notify('\(ChangeNotification.channel)', $2::text), a.id, a.time_ms FROM gone LEFT JOIN audited a ON true
            """, params)
    }

    static func purgeTokens(idleLimitMs: Int64, now: PGValue) -> PGStatement {
        PGStatement("DELETE FROM session_tokens WHERE last_used_at <= \(Self.now(1)) - $2::bigint", [now, span(idleLimitMs)])
    }

    // MARK: Failed log-ins

    /// Rows (now, key, at) of the keys' failures within the window, oldest first; one row with NULLs when none,
    /// so that now always comes back.
    static func recentFailures(keys: [String], windowMs: Int64, now: PGValue) -> PGStatement {
        // The window's first millisecond, as `LoginRateLimit.windowStart` counts it.
        let list = keys.indices.map { "$\($0 + 3)::text" }.joined(separator: ", ")
        return PGStatement("""
            SELECT clock.ms, f.key, f.at FROM (SELECT \(Self.now(1)) AS ms) clock
            LEFT JOIN login_failures f ON f.key IN (\(keys.isEmpty ? "NULL" : list)) AND f.at >= clock.ms - $2::bigint
            ORDER BY f.at
            """, [now, span(windowMs - 1)] + keys.map(PGValue.text))
    }

    /// One row: the entry's stamp. With no key, only the entry is written.
    static func recordFailure(keys: [String], now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [now] + keys.map(PGValue.text)
        let values = keys.indices.map { "($\($0 + 2)::text)" }.joined(separator: ", ")
        let recorded = keys.isEmpty ? "" : """
            recorded AS (
                INSERT INTO login_failures(key, at) SELECT k.key, clock.ms FROM (VALUES \(values)) AS k(key), clock),
            """
        let auditCTE = Self.audited(audit, time: .column("clock.ms"), source: "FROM clock", params: &params)
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            \(recorded)
            \(auditCTE)
            SELECT a.id, a.time_ms FROM clock LEFT JOIN audited a ON true
            """, params)
    }

    static func pruneFailures(windowMs: Int64, now: PGValue) -> PGStatement {
        PGStatement("DELETE FROM login_failures WHERE at < \(Self.now(1)) - $2::bigint", [now, span(windowMs)])
    }

    // MARK: Contacts

    static let contactColumns = "id, name, phone, email, note, created_at, updated_at, uid, revision"
    static let keyColumns = "key_folded, key_initials, key_pinyin, key_pinyin_initials, key_hangul_initials, key_phone_digits"

    static func searchKeys(of user: AccountID) -> PGStatement {
        PGStatement("SELECT id, \(keyColumns) FROM contacts WHERE user_id = $1::bigint ORDER BY id", [.int(user)])
    }

    static func contacts(_ ids: [Int64], of user: AccountID) -> PGStatement {
        PGStatement("SELECT \(contactColumns) FROM contacts WHERE user_id = $1::bigint AND id = ANY($2::bigint[])",
                    [.int(user), .text(PGArrayLiteral.integers(ids))])
    }

    static func contactPage(of user: AccountID, after: Int64, limit: Int) -> PGStatement {
        PGStatement("""
            SELECT \(contactColumns) FROM contacts WHERE user_id = $1::bigint AND id > $2::bigint ORDER BY id LIMIT $3::bigint
            """, [.int(user), .int(after), .int(Int64(limit))])
    }

    /// The contact as it stands, to patch, with its sent card after `contactColumns`.
    static func contact(_ id: Int64, of user: AccountID) -> PGStatement {
        PGStatement("SELECT \(contactColumns), card FROM contacts WHERE user_id = $1::bigint AND id = $2::bigint",
                    [.int(user), .int(id)])
    }

    /// The contact under `uid`, with its sent card after `contactColumns`.
    static func contact(uid: String, of user: AccountID) -> PGStatement {
        PGStatement("SELECT \(contactColumns), card FROM contacts WHERE user_id = $1::bigint AND uid = $2::text",
                    [.int(user), .text(uid)])
    }

    /// The CTE `book`: the user's next `count` revisions taken (the last one as `revision`), the book's row locked
    /// until the transaction ends, so that one user's revisions commit in the order they were taken.
    static func bookTaken(user: Int, count: String, from sources: String = "session") -> String {
        """
        book AS (INSERT INTO contact_books(user_id, revision) SELECT $\(user)::bigint, \(count) FROM \(sources)
            ON CONFLICT (user_id) DO UPDATE SET revision = contact_books.revision + excluded.revision
            RETURNING revision)
        """
    }

    /// The book (revision, forgotten watermark, the newest revision of a tombstone past its keep), the contacts
    /// and the tombstones above `since`, at most `limit + 1` of each: read in this order, so the book's revision
    /// is never ahead of the rows read after it.
    static func changes(of user: AccountID, since: Int64?, limit: Int, now: PGValue) -> [PGStatement] {
        let after = PGValue.int(since ?? 0)
        return [
            PGStatement("""
                SELECT b.revision, greatest(b.forgotten, coalesce((SELECT max(revision) FROM contact_tombstones
                    WHERE user_id = $1::bigint AND removed_at < \(Self.now(2)) - $3::bigint), 0))
                FROM contact_books b WHERE b.user_id = $1::bigint
                """, [.int(user), now, .int(ContactChangesRule.tombstoneKeepMs)]),
            PGStatement("""
                SELECT \(contactColumns) FROM contacts WHERE user_id = $1::bigint AND revision > $2::bigint
                ORDER BY revision LIMIT $3::bigint
                """, [.int(user), after, .int(Int64(limit + 1))]),
            PGStatement("""
                SELECT uid, revision FROM contact_tombstones WHERE user_id = $1::bigint AND revision > $2::bigint
                    AND $4::boolean ORDER BY revision LIMIT $3::bigint
                """, [.int(user), after, .int(Int64(limit + 1)), .bool(since != nil)]),
        ]
    }

    /// The cards under `uids`, in no order, each with its sent card after `contactColumns`.
    static func cards(_ uids: [String], of user: AccountID) -> PGStatement {
        PGStatement("SELECT \(contactColumns), card FROM contacts WHERE user_id = $1::bigint AND uid = ANY($2::text[])",
                    [.int(user), .text(PGArrayLiteral.texts(uids))])
    }

    /// Rows (id, created_at) of the contacts inserted, one per draft, all stamped with one now; the owner's other
    /// daemons are told.
    /// Rows (id, created_at, revision, uid) of the contacts inserted, one per row, all stamped with one now and given
    /// the user's next revisions in the order given (a uid taken already inserts nothing: no row for it); the
    /// owner's other daemons are told.
    static func insertContacts(_ rows: ArraySlice<NewContactRow>, for user: AccountID,
                               session: SessionGrant, now: PGValue, notification: String) -> PGStatement {
        var params: [PGValue] = [now, .int(user), .text(notification), sessionToken(session), .int(Int64(rows.count))]
        var tuples: [String] = []
        tuples.reserveCapacity(rows.count)
        for (offset, row) in rows.enumerated() {
            let first = params.count + 1
            params += fields(row.draft, row.keys)
                + [.text(row.uid), .optional(row.card), .int(Int64(offset + 1)), .optional(row.fallbackUID)]
            let casts = ["text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "bigint",
                         "text"]
            tuples.append("(" + casts.enumerated().map { "$\(first + $0.offset)::\($0.element)" }.joined(separator: ", ") + ")")
        }
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            \(sessionHeld(session, user: 2, token: 4)),
            \(bookTaken(user: 2, count: "$5::bigint")),
            given AS (SELECT * FROM (VALUES \(tuples.joined(separator: ", ")))
                AS v(name, phone, email, note, k1, k2, k3, k4, k5, k6, uid, card, ord, fallback)),
            v AS (SELECT g.name, g.phone, g.email, g.note, g.k1, g.k2, g.k3, g.k4, g.k5, g.k6, g.card, g.ord,
                CASE WHEN g.fallback IS NOT NULL AND EXISTS (SELECT 1 FROM contacts c WHERE c.user_id = $2::bigint
                    AND c.uid = g.uid) THEN g.fallback ELSE g.uid END AS uid FROM given g),
            forgotten AS (DELETE FROM contact_tombstones t USING v, session WHERE t.user_id = $2::bigint AND t.uid = v.uid),
            added AS (
                INSERT INTO contacts(user_id, name, phone, email, note, created_at, updated_at, \(keyColumns), uid, card,
                    revision)
                SELECT $2::bigint, v.name, v.phone, v.email, v.note, clock.ms, clock.ms, v.k1, v.k2, v.k3, v.k4, v.k5, v.k6,
                    v.uid, v.card, book.revision - $5::bigint + v.ord
                FROM clock, book, v ORDER BY v.ord
                ON CONFLICT (user_id, uid) DO NOTHING
                RETURNING id, created_at, revision, uid)
            SELECT id, created_at, revision, uid, pg_notify('\(ChangeNotification.channel)', $3::text) FROM added
            """, params)
    }

    /// The CTE `session`: one row while the session's token is still stored for the user `$user`, whose account
    /// is not locked, with both rows share-locked until the transaction ends, so a revocation (the token deleted,
    /// the account locked or deleted, here or on another daemon) either committed first and leaves it empty (READ
    /// COMMITTED reads a row again after waiting for its lock) or waits until this write has committed. The
    /// account's row is locked first, as every write of an account and its tokens takes them. A session without
    /// a token is one row, always (only the daemon's own flag ends it; see `SessionGrant`).
    static func sessionHeld(_ session: SessionGrant, user: Int, token: Int) -> String {
        guard session.tokenHash != nil else { return "session AS (SELECT 1 AS held WHERE $\(token)::bytea IS NULL)" }
        return """
            session AS (SELECT 1 AS held FROM users u JOIN session_tokens t ON t.user_id = u.id
                WHERE u.id = $\(user)::bigint AND u.locked_at IS NULL AND t.token_hash = $\(token)::bytea
                FOR SHARE OF u, t)
            """
    }

    static func sessionToken(_ session: SessionGrant) -> PGValue {
        session.tokenHash.map(PGValue.bytes) ?? .null
    }

    /// Writes `draft` over the contact only if it still reads as `current` (compare and set: a writer on another
    /// daemon may have come between the read and this write); one row (updated_at) when it did.
    /// Writes `draft` (and `card`) over the contact only if it is still at `current`'s revision (compare and set:
    /// a writer on another daemon may have come between the read and this write), with the user's next revision;
    /// one row (updated_at, revision) when it did, (null, null) when it lost the race, none without the session.
    static func updateContact(_ current: Contact, to draft: ContactDraft, keys: ContactSearchKeys, card: String?,
                              of user: AccountID, session: SessionGrant, now: PGValue, notification: String) -> PGStatement {
        PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            \(sessionHeld(session, user: 3, token: 16)),
            target AS (SELECT id FROM contacts WHERE id = $2::bigint AND user_id = $3::bigint AND revision = $4::bigint
                FOR UPDATE),
            \(bookTaken(user: 3, count: "1", from: "session, target")),
            changed AS (
                UPDATE contacts SET name = $5::text, phone = $6::text, email = $7::text, note = $8::text,
                    updated_at = clock.ms, key_folded = $9::text, key_initials = $10::text, key_pinyin = $11::text,
                    key_pinyin_initials = $12::text, key_hangul_initials = $13::text, key_phone_digits = $14::text,
                    card = $17::text, revision = book.revision
                FROM clock, book, target
                WHERE contacts.id = target.id
                RETURNING updated_at, contacts.revision)
            SELECT c.updated_at, c.revision, CASE WHEN c.updated_at IS NOT NULL THEN pg_notify('\(ChangeNotification.channel)', $15::text) END
            FROM session LEFT JOIN changed c ON true
            """, [now, .int(current.id), .int(user), .int(current.revision)] + fields(draft, keys)
                + [.text(notification), sessionToken(session), .optional(card)])
    }

    /// Removes the contact only if it is still at `revision`, leaving its tombstone at the user's next revision and
    /// forgetting the user's tombstones past their keep. No row without the session; otherwise one, saying
    /// whether it was removed.
    static func removeContact(_ current: Contact, of user: AccountID, session: SessionGrant, now: PGValue,
                              notification: String) -> PGStatement {
        PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            \(sessionHeld(session, user: 3, token: 6)),
            gone AS (DELETE FROM contacts USING session WHERE id = $2::bigint AND user_id = $3::bigint
                AND revision = $4::bigint RETURNING uid),
            \(bookTaken(user: 3, count: "1", from: "session, gone")),
            kept AS (INSERT INTO contact_tombstones(user_id, uid, revision, removed_at)
                SELECT $3::bigint, gone.uid, book.revision, clock.ms FROM gone, book, clock
                ON CONFLICT (user_id, uid) DO UPDATE SET revision = excluded.revision, removed_at = excluded.removed_at
                RETURNING 1 AS one),
            old AS (DELETE FROM contact_tombstones t USING gone, clock WHERE t.user_id = $3::bigint
                AND t.removed_at < clock.ms - $7::bigint RETURNING t.revision),
            forgot AS (UPDATE contact_books b SET forgotten = greatest(b.forgotten, (SELECT max(revision) FROM old))
                WHERE b.user_id = $3::bigint AND EXISTS (SELECT 1 FROM old))
            SELECT g.uid IS NOT NULL, CASE WHEN g.uid IS NOT NULL THEN pg_notify('\(ChangeNotification.channel)', $5::text) END
            FROM session LEFT JOIN gone g ON true
            """, [now, .int(current.id), .int(user), .int(current.revision), .text(notification), sessionToken(session),
                  .int(ContactChangesRule.tombstoneKeepMs)])
    }

    /// The user's contacts whose folded name is one of `folded`: the only ones an import's card can duplicate.
    static func possibleDuplicates(of user: AccountID, folded: [String]) -> PGStatement {
        PGStatement("SELECT name, phone, email, note FROM contacts WHERE user_id = $1::bigint AND key_folded = ANY($2::text[])",
                    [.int(user), .text(PGArrayLiteral.texts(folded))])
    }

    private static func fields(_ draft: ContactDraft, _ keys: ContactSearchKeys) -> [PGValue] {
        [.text(draft.name), .optional(draft.phone), .optional(draft.email), .optional(draft.note), .text(keys.folded),
         .text(keys.initials), .text(keys.pinyin), .text(keys.pinyinInitials), .text(keys.hangulInitials),
         .text(keys.phoneDigits)]
    }
}

/// What PostgreSQL's `text` cannot hold: a NUL, which libpq's text parameters would silently cut the value at.
/// A value holding one is refused before it is sent, never stored shortened.
enum PGText {
    static func storable(_ texts: String?...) -> Bool {
        texts.allSatisfy { text in text.map { !$0.utf8.contains(0) } ?? true }
    }

    static func storable(_ draft: ContactDraft) -> Bool {
        storable(draft.name, draft.phone, draft.email, draft.note)
    }
}

/// PostgreSQL's array input syntax, for one parameter holding a list (`= ANY($n::text[])`).
enum PGArrayLiteral {
    static func integers(_ values: [Int64]) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    /// Every element quoted, `"` and `\` escaped, so no text can end an element or the array.
    static func texts(_ values: [String]) -> String {
        var out = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { out += "," }
            out += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { out += "\\" }
                out.unicodeScalars.append(character)
            }
            out += "\""
        }
        return out + "}"
    }
}

extension PGRow {
    /// A contact from `PostgreSQLQueries.contactColumns`, starting at `first`.
    func contact(from first: Int = 0) -> Contact? {
        guard let id = int(first), let name = text(first + 1), let created = int(first + 5),
              let updated = int(first + 6) else { return nil }
        return Contact(id: id, draft: ContactDraft(name: name, phone: text(first + 2), email: text(first + 3),
                                                   note: text(first + 4)),
                       createdAt: created, updatedAt: updated, uid: text(first + 7), revision: int(first + 8) ?? 0)
    }

    /// Search keys from `PostgreSQLQueries.keyColumns`, starting at `first`.
    func searchKeys(from first: Int) -> ContactSearchKeys {
        ContactSearchKeys(folded: text(first) ?? "", initials: text(first + 1) ?? "", pinyin: text(first + 2) ?? "",
                          pinyinInitials: text(first + 3) ?? "", hangulInitials: text(first + 4) ?? "",
                          phoneDigits: text(first + 5) ?? "")
    }
}
